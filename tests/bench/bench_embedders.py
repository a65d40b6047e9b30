"""Every candidate bulk embedder on the same real chunks, in one run: chunks/s against torch fp32, and agreement.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_embedders.py ../shared/corpora/logseq-docs
    .venv/bin/python tests/bench/bench_embedders.py ../shared/corpora/britannica-10k --chunks 480 --rounds 3

The folder is indexed keyword-only into a temporary data home; a random sample of its chunks (the texts the
pipeline embeds) is embedded by each backend in turn, round after round, so that a busy machine slows every
backend alike: read the ratios. Prints the median chunks/s of each backend, its ratio to torch fp32 and the cosine
of its vectors to torch fp32's (mean and minimum). Backends:

    torch          sentence-transformers, fp32 (what bulk embedding was before the ONNX backends)
    torch-bf16     the same under CPU bf16 autocast
    onnx-unsorted  ONNX Runtime fp32, batches in the order given
    onnx           ONNX Runtime fp32, batches sorted by token count (the default bulk backend on CPU)
    onnx-int8      ONNX Runtime, dynamic int8 MatMul weights per channel, one text per run
    openvino-int8  OpenVINO, static int8 (NNCF, calibrated on the built-in notes), one text per run (the default)
    onnx-int8-fused   the same quantisation on the transformers optimizer's fused graph
    openvino       OpenVINO fp32 on the exported ONNX, sorted, when the `openvino` package imports

Quality of a backend on real questions is measured apart, by bench_quality.py with SKMEMORY_BULK_BACKEND set.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.home import Home  # noqa: E402

ALL = ["torch", "torch-bf16", "onnx-unsorted", "onnx", "onnx-int8", "onnx-int8-fused", "openvino", "openvino-int8"]


def sample_chunks(folder: Path, n: int, seed: int, keep: Path | None = None) -> list[str]:
    """n chunk texts the pipeline would embed, drawn at random from the folder's index (kept in keep, if given)."""
    with tempfile.TemporaryDirectory(prefix="skm-bench-emb-") as tmp:
        home = Home(Settings.from_env(keep or tmp))
        if not any(p.name == "bench" for p in home.registry.list()):
            home.add_project(folder, "bench")
        with home.open_project("bench", role="bench") as project:
            project.sync()
            texts = [r[0] for r in project.store.query(
                "SELECT embed_text FROM chunks WHERE NOT keyword_only AND embed_text != ''")]
    random.Random(seed).shuffle(texts)
    return texts[:n]


class Torch:
    def __init__(self, bf16: bool):
        from indexer.model.embeddings import Embedder

        self.embedder = Embedder(device="cpu", query_backend="torch", backend="torch")
        self.embedder.load()
        self.bf16 = bf16

    def embed(self, texts, batch_size):
        model = self.embedder._model
        if not self.bf16:
            return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_tensor=True,
                               show_progress_bar=False)
        return out.float().numpy()


def fused_graph(path: Path) -> Path:
    """The transformers optimizer's copy of an exported model, attention, layer norms and GELU fused (made once)."""
    target = path.with_name("fused.onnx")
    if not target.exists():
        from onnxruntime.transformers.optimizer import optimize_model

        optimize_model(str(path), model_type="bert", num_heads=12, hidden_size=384).save_model_to_file(str(target))
    return target


class Onnx:
    def __init__(self, settings: Settings, variant: str):
        from indexer.model.onnx_encoder import OnnxEncoder, quantized_copy

        self.sorted = variant != "onnx-unsorted"
        self.encoder = OnnxEncoder.for_model(settings.model_path, settings.model_cache_dir, threads=None,
                                             quantized=variant == "onnx-int8",
                                             workers=settings.embed_workers if variant == "onnx-int8" else 1)
        if variant == "onnx-int8-fused":
            self.encoder = OnnxEncoder(quantized_copy(fused_graph(self.encoder.path), self.encoder.model_dir),
                                       self.encoder.model_dir, threads=None, quantized=True)

    def embed(self, texts, batch_size):
        return self.encoder.embed(texts, batch_size=batch_size, sort=self.sorted)


class OpenVino:
    def __init__(self, settings: Settings):
        import openvino as ov
        from tokenizers import Tokenizer

        from indexer.model.onnx_encoder import OnnxEncoder, max_seq_length

        onnx = OnnxEncoder.for_model(settings.model_path, settings.model_cache_dir, threads=None)
        core = ov.Core()
        self.compiled = core.compile_model(core.read_model(str(onnx.path)), "CPU",
                                           {"PERFORMANCE_HINT": "THROUGHPUT"})
        self.tokenizer = Tokenizer.from_file(str(onnx.model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length(onnx.model_dir))
        self.tokenizer.enable_padding()

    def embed(self, texts, batch_size):
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = self.compiled({"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
            w = mask[:, :, None].astype(np.float32)
            pooled = (hidden * w).sum(1) / np.clip(w.sum(1), 1e-9, None)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def make(name: str, settings: Settings):
    if name.startswith("torch"):
        return Torch(bf16=name == "torch-bf16")
    if name == "openvino":
        return OpenVino(settings)
    if name == "openvino-int8":
        from indexer.model.openvino_encoder import OpenVinoEncoder

        return OpenVinoEncoder.for_model(settings.model_path, settings.model_cache_dir, workers=settings.embed_workers)
    return Onnx(settings, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a folder of notes, e.g. ../shared/corpora/logseq-docs")
    parser.add_argument("--chunks", type=int, default=480, help="chunks in the sample (default 480)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over every backend (default 3)")
    parser.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    parser.add_argument("--backends", default=",".join(ALL), help=f"comma-separated, of: {', '.join(ALL)}")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--home", type=Path, help="keep the keyword index here and reuse it next time")
    args = parser.parse_args()

    settings = Settings.from_env()
    texts = sample_chunks(args.path, args.chunks, args.seed, args.home)
    words = sorted(len(t.split()) for t in texts)
    print(f"{args.path.name}: {len(texts)} chunks, words p50 {words[len(words) // 2]}, "
          f"p90 {words[len(words) * 9 // 10]}")
    backends = {}
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        try:
            backends[name] = make(name, settings)
            backends[name].embed(texts[:args.batch], args.batch)  # warm up
        except Exception as exc:  # a backend that does not install or load is reported, not fatal
            print(f"{name}: unavailable ({type(exc).__name__}: {exc})")
            backends.pop(name, None)
    rates: dict[str, list[float]] = {name: [] for name in backends}
    vectors = {}
    for _ in range(args.rounds):
        for name, backend in backends.items():
            started = time.perf_counter()
            vectors[name] = np.asarray(backend.embed(texts, args.batch), dtype=np.float32)
            rates[name].append(len(texts) / (time.perf_counter() - started))
    base = statistics.median(rates["torch"]) if "torch" in rates else None
    print(f"{'backend':<17}{'chunks/s':>10}{'× torch':>9}{'cos mean':>10}{'cos min':>9}   rounds")
    for name, values in rates.items():
        rate = statistics.median(values)
        ratio = f"{rate / base:.2f}" if base else "-"
        if "torch" in vectors:
            cos = np.sum(vectors[name] * vectors["torch"], axis=1)
            agree = f"{cos.mean():10.4f}{cos.min():9.4f}"
        else:
            agree = f"{'-':>10}{'-':>9}"
        print(f"{name:<17}{rate:10.1f}{ratio:>9}{agree}   {', '.join(f'{v:.1f}' for v in values)}")


if __name__ == "__main__":
    main()
