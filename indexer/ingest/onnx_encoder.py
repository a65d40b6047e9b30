"""A one-thread ONNX Runtime copy of the sentence-transformers model, so that queries never wait behind bulk embedding.

Bulk embedding runs torch on every core; a query encoded by torch in the same process queues behind it on torch's
thread pool (a median 238 ms measured while embedding, against 9.6 ms idle). This encoder runs the same fp32
weights in ONNX Runtime with one intra-op thread in the caller's own thread, so a query costs a millisecond or two
whatever the bulk worker is doing.

The ONNX file is exported locally, once, from the packaged model (torch.onnx, the `onnx` package) into the data
home's model cache, and checked against torch on probe sentences before it is used; nothing is downloaded. If the
export or the check fails, queries stay on torch and a warning says why.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

ONNX_NAME = "model.onnx"
_PROBES = ["how do I keep a process running after logout", "Tomatoes need deep watering twice a week.",
           "Dataview treats your vault as a database you can query."]
_MIN_PROBE_COSINE = 0.9999  # the same fp32 weights: anything less means the export went wrong


def cache_key(model_dir: Path) -> str:
    """A name for this model's exported copy: changes whenever its weights or configuration change."""
    digest = hashlib.sha1()
    for name in ("config.json", "tokenizer.json", "sentence_bert_config.json", "model.safetensors",
                 "pytorch_model.bin"):
        path = model_dir / name
        if path.exists():
            st = path.stat()
            digest.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return f"{model_dir.name}-{digest.hexdigest()[:12]}"


def max_seq_length(model_dir: Path) -> int:
    """The sentence-transformers window of the model (what torch truncates to)."""
    try:
        return int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 256


def export_onnx(model_dir: Path, target: Path) -> Path:
    """Export the model's transformer (token ids -> hidden states) to an ONNX file at target, atomically."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()

    class HiddenStates(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = torch.ones((1, 8), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        import warnings

        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                HiddenStates(model), (sample, sample, torch.zeros_like(sample)), tmp,
                input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["hidden"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "hidden": axes},
                opset_version=17, dynamo=False,
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


class OnnxEncoder:
    """Embeds texts exactly as the sentence-transformers model does (mean pooling, unit length), in ONNX Runtime."""

    def __init__(self, onnx_path: Path, model_dir: Path, threads: int | None = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length(model_dir))
        self.tokenizer.enable_padding()
        self.path = onnx_path

    @classmethod
    def for_model(cls, model_dir: Path | None = None, cache_dir: Path | None = None, threads: int | None = 1,
                  quantized: bool = False) -> "OnnxEncoder":
        """Open the exported copy of a model, exporting it first if the cache has none (needs torch once)."""
        from ..config import default_model_path

        model_dir = Path(model_dir) if model_dir else default_model_path()
        if cache_dir is None:
            from ..config import Settings

            cache_dir = Settings.from_env().model_cache_dir
        folder = cache_dir / cache_key(model_dir)
        path = folder / ONNX_NAME
        if not path.exists():
            logger.info("Exporting %s to ONNX for fast queries (once): %s", model_dir.name, path)
            export_onnx(model_dir, path)
        if quantized:
            path = _quantized(path)
        return cls(path, model_dir, threads)

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Embed texts into an (n, dim) float32 array of unit vectors."""
        out = []
        for start in range(0, len(texts), batch_size):
            encodings = self.tokenizer.encode_batch(texts[start:start + batch_size])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out.append(pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))
        return np.ascontiguousarray(np.concatenate(out) if out else np.zeros((0, 0)), dtype=np.float32)

    def agrees_with(self, reference) -> float:
        """The lowest cosine between this encoder's and a reference embedder's vectors of the probe sentences."""
        mine = self.embed(_PROBES)
        theirs = np.asarray(reference(_PROBES), dtype=np.float32)
        return float(np.min(np.sum(mine * theirs, axis=1)))


def _quantized(path: Path) -> Path:
    """A dynamic int8 copy of the exported model (MatMul weights per channel), made once beside it; bench use only."""
    target = path.with_name("model-int8.onnx")
    if not target.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(path), str(target), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
    return target


def probe_cosine_ok(value: float) -> bool:
    return value >= _MIN_PROBE_COSINE
