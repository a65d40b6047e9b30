"""The bulk embedder on a CPU where OpenVINO is installed: a static int8 copy of the model, 1.3-1.6x ONNX Runtime's
dynamic int8 copy on the same passages one text per run, and 1.27x that again with short passages run together and
bf16 between the int8 layers where the CPU has it (docs/performance.md).

Static int8 quantises each layer's activations with scales measured once, on texts that ship with SK Memory (the
demo notes and the user docs), instead of per run: no scale is computed while embedding, and a text's vector is a
function of that text alone. The copy is made once per model, beside the exported ONNX file
(`model-int8-ov-ffn0.xml` / `.bin`), by NNCF's post-training quantisation with its transformer preset (which leaves the
attention scores and the normalisations in floating point) and the first layer's feed-forward output in fp32 (its
GELU's long tail; mean cosine to fp32 on 600 real passages 0.9952 -> 0.9961 for 0-6 % of the speed), and checked
against the fp32 model on probe sentences.

Neither OpenVINO nor NNCF may reach the network or write outside the model cache: NNCF's usage statistics (the
`openvino_telemetry` package, which would otherwise write a client id under ~/intel and post events) are never
imported.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from . import derived
from .onnx_encoder import _MIN_INT8_COSINE, OnnxEncoder, exported_onnx, model_words

logger = logging.getLogger(__name__)

OV_SUFFIX = "-int8-ov-ffn0"  # the copy's name says what it is: a new recipe makes a new file
# Texts run padded to a multiple of this many tokens: OpenVINO prepares its kernels anew for each input shape it has
# not seen, and a vault's passages come in every length from 1 to 256 tokens (tldr-en's 7,567 passages embedded at
# 0.66x ONNX Runtime's raw rate while it met new lengths; 16 shapes instead of 256 is most of that back).
PAD_TO = 16
# Texts of like length run together, up to RUN_TEXTS of them and RUN_TOKENS padded tokens a run: the scales are fixed,
# so a text's vector is the same alone or beside others (to the last bit, on 800 real passages), and a run of short
# passages keeps the cores busier than one (1.1-1.2x the texts/s at 4-8). The token cap keeps a run of long passages
# short: a search waits for the run in progress (Foreground), and 2 x 256 tokens is about as long as one text waited.
RUN_TEXTS = 8
RUN_TOKENS = 512
# OpenVINO keeps each compiled form of the copy here (one per machine and thread count, ~60 MB), beside the copy.
COMPILED_CACHE = "openvino-compiled"
CALIBRATION_TEXTS = 300  # passages of the built-in notes the activation scales are measured on
CALIBRATION_WORDS = 180  # the longest calibration passage, in words: about a passage of a real note at its longest


def available() -> bool:
    """Whether OpenVINO and NNCF are installed (without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("openvino", "nncf"))


def padded_width(tokens: int) -> int:
    """The length a text of this many tokens runs at: the next multiple of PAD_TO."""
    return -(-tokens // PAD_TO) * PAD_TO


@functools.cache
def precision() -> str:
    """What the layers left in floating point compute in: 'bf16' on a CPU with bfloat16 instructions (AVX-512 BF16 or
    AMX), where it is 1.07-1.12x f32 and changes no ranking (cosine to the f32 run 0.9995; against the fp32 model,
    95.4 % of 1,033 queries' top ten notes the same, f32's 95.5 %); else 'f32'. A property of the machine, read from
    the CPU's flags without loading OpenVINO, so the index fingerprint can say which vectors it holds."""
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace").split()
    except OSError:
        return "f32"
    return "bf16" if {"avx512_bf16", "amx_bf16"} & set(flags) else "f32"


class OpenVinoEncoder(OnnxEncoder):
    """The same embedding as OnnxEncoder (tokenizer, mean pooling, unit length), run by OpenVINO on its static int8
    copy, a few short texts of like length a run (RUN_TEXTS). The model is compiled once with one stream of one thread
    per worker, and each worker thread runs its own request: OpenVINO's own way to run texts side by side (two
    compiled copies, one per thread, ran no faster than one). It is compiled by the first worker to need it, so its
    threads keep that worker's priority."""

    def _open(self, path: Path, threads: int | None) -> None:
        ov = _openvino()
        self._core = ov.Core()
        self._model = self._core.read_model(str(path))
        self._threads = self.workers if self.workers > 1 else (threads or 1)  # one per stream, a stream per worker
        self._compiled = None
        self._compiling = threading.Lock()
        self._local = threading.local()

    def _reads_vectors(self) -> bool:
        return any("inputs_embeds" in port.get_names() for port in self._model.inputs)

    def _runs(self, order: list[int], tokens: list[list[int]], batch_size: int) -> list[list[int]]:
        """Consecutive texts of `order` (shortest first, as embed sorts them) a run, while the run holds at most
        RUN_TEXTS texts (and batch_size) and RUN_TOKENS tokens at its padded width."""
        runs: list[list[int]] = []
        run: list[int] = []
        width = 0  # the run's padded width
        for i in order:
            own = padded_width(len(tokens[i]))
            if run and (len(run) >= min(batch_size, RUN_TEXTS) or max(width, own) * (len(run) + 1) > RUN_TOKENS):
                runs.append(run)
                run, width = [], 0
            run.append(i)
            width = max(width, own)
        return runs + [run] if run else runs

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        width = ids.shape[1]
        padded = padded_width(width)
        if padded > width:  # masked tokens change nothing (the same vectors, to the last bit, on 600 passages)
            ids, mask = np.pad(ids, ((0, 0), (0, padded - width))), np.pad(mask, ((0, 0), (0, padded - width)))
        return self._run_padded(ids, mask)[:, :width]

    def _run_padded(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        inputs = self.inputs(ids, mask)
        request = getattr(self._local, "request", None)
        if request is None:
            # Each thread's first run, one thread at a time: the bindings set up their numpy bridge on first use,
            # and two threads doing so at once deadlocked (`skmemory index` stuck in its first two texts for good).
            with self._compiling:
                if self._compiled is None:
                    self._compiled = self._compile()
                request = self._local.request = self._compiled.create_infer_request()
                request.infer(inputs)
                return request.get_output_tensor(0).data
        request.infer(inputs)
        return request.get_output_tensor(0).data

    def release(self) -> bool:
        """Free the compiled model and each thread's request (the buffers a run of up to RUN_TOKENS tokens needs:
        260-280 MB after a vault was embedded, either model), until the next run compiles it again from OpenVINO's
        cache (0.09 s). A run in progress keeps its own request to the end. Returns whether anything was freed."""
        with self._compiling:
            if self._compiled is None:
                return False
            self._compiled = None
            self._local = threading.local()  # every thread's request goes with it
        return True

    def _compile(self):
        """The model compiled for this machine, read from OpenVINO's own cache of compiled models beside the copy
        (COMPILED_CACHE) after the first time: 0.09 s instead of 0.35-0.5 s, at every start of `skmemory index` or
        the server. A cache that cannot be written or read is dropped, and the model compiled as without one."""
        config = {"NUM_STREAMS": self.workers, "INFERENCE_NUM_THREADS": self._threads,
                  "INFERENCE_PRECISION_HINT": precision()}
        cache = self.path.parent / COMPILED_CACHE
        try:
            self._core.set_property({"CACHE_DIR": str(cache)})
            return self._core.compile_model(self._model, "CPU", config)
        except (RuntimeError, OSError) as exc:
            logger.info("Compiling %s without OpenVINO's cache of compiled models (%s)", self.path.name, exc)
            self._core.set_property({"CACHE_DIR": ""})
            shutil.rmtree(cache, ignore_errors=True)
            return self._core.compile_model(self._model, "CPU", config)

    @classmethod
    def for_model(cls, model_dir: Path | None = None, cache_dir: Path | None = None, threads: int | None = 1,
                  quantized: bool = True, workers: int = 1) -> "OpenVinoEncoder":
        """Open the static int8 copy of a model, making it first (once) from its exported ONNX file (`quantized` is
        OnnxEncoder.for_model's: this copy is always int8)."""
        model_dir, onnx_path = exported_onnx(model_dir, cache_dir)
        return cls(openvino_int8_copy(onnx_path, model_dir), model_dir, threads, quantized=True, workers=workers)


def openvino_paths(onnx_path: Path) -> list[Path]:
    """The static int8 OpenVINO copy of an exported model: its .xml and its .bin, beside it."""
    xml = onnx_path.with_name(f"{onnx_path.stem}{OV_SUFFIX}.xml")
    return [xml, xml.with_suffix(".bin")]


def openvino_int8_copy(onnx_path: Path, model_dir: Path) -> Path:
    """The static int8 OpenVINO copy of an exported model (`<stem>-int8-ov-ffn0.xml` and `.bin` beside it), made once,
    atomically (the .xml is renamed into place last), and checked against the fp32 file on the probe sentences."""
    target = openvino_paths(onnx_path)[0]
    derived.ensure(openvino_paths(onnx_path), lambda: _quantize(onnx_path, model_dir, target),
                   f"the static int8 copy of {model_words(model_dir)} for OpenVINO ({_estimate(model_dir)})", onnx_path)
    return target


def _estimate(model_dir: Path) -> str:
    """How long making the copy takes on two cores, by the model's depth: measured 23 s for all-MiniLM-L6-v2's six
    layers and 30-42 s for multilingual-e5-small's twelve (tests/bench/bench_model_copies.py)."""
    import json

    try:
        layers = int(json.loads((model_dir / "config.json").read_text())["num_hidden_layers"])
    except (OSError, ValueError, KeyError, TypeError):
        return "about a minute"
    return f"about {max(10, round(layers * 3.5, -1)):.0f} s"


def _quantize(onnx_path: Path, model_dir: Path, target: Path) -> None:
    ov = _openvino()
    nncf = _offline_nncf()
    encoder = OnnxEncoder(onnx_path, model_dir)  # its tokenizer, and the fp32 vectors the copy is checked against
    samples = [np.array([e.ids], dtype=np.int64) for e in encoder.tokenizer.encode_batch(calibration_texts())]
    dataset = nncf.Dataset(samples, lambda ids: encoder.inputs(ids, np.ones_like(ids)))
    model = ov.Core().read_model(str(onnx_path))
    first_feed_forward_out = [op.get_friendly_name() for op in model.get_ops() if op.get_type_name() == "MatMul"
                              and op.get_friendly_name().endswith("layer.0/output/dense/MatMul")]
    quantized = nncf.quantize(model, dataset, model_type=nncf.ModelType.TRANSFORMER, subset_size=len(samples),
                              ignored_scope=nncf.IgnoredScope(names=first_feed_forward_out, validate=False))
    fd, tmp = tempfile.mkstemp(prefix=".quantize-", suffix=".xml", dir=target.parent)
    os.close(fd)
    tmp_xml, tmp_bin = Path(tmp), Path(tmp).with_suffix(".bin")
    try:
        ov.save_model(quantized, str(tmp_xml), compress_to_fp16=False)
        agreement = OpenVinoEncoder(tmp_xml, model_dir, quantized=True).agrees_with(encoder.embed)
        if agreement < _MIN_INT8_COSINE:
            raise ValueError(f"OpenVINO's int8 copy's vectors differ too much from fp32's (cosine {agreement:.4f})")
        os.replace(tmp_bin, target.with_suffix(".bin"))
        os.replace(tmp_xml, target)
    finally:
        for path in (tmp_xml, tmp_bin):
            if path.exists():
                path.unlink()


def calibration_texts(limit: int = CALIBRATION_TEXTS) -> list[str]:
    """Passages of the notes that ship with SK Memory (the demo and the user docs), as the model reads them: each
    paragraph, and runs of consecutive paragraphs up to CALIBRATION_WORDS words, so that short and long passages
    both set the scales. The same texts on every machine, so the same model gets the same copy."""
    from ..text.readable import has_words, reader_text

    content = Path(__file__).resolve().parents[1] / "content"
    paragraphs: list[str] = []
    for path in sorted(content.rglob("*.md")):
        text = re.sub(r"\A---\n.*?\n---\n", "", path.read_text(encoding="utf-8"), flags=re.S)
        paragraphs += [p for p in (reader_text(block) for block in re.split(r"\n\s*\n", text)) if has_words(p)]
    texts = list(paragraphs)
    for start in range(len(paragraphs)):
        run: list[str] = []
        for paragraph in paragraphs[start:]:
            if sum(len(p.split()) for p in run) + len(paragraph.split()) > CALIBRATION_WORDS:
                break
            run.append(paragraph)
        if len(run) > 1:
            texts.append("\n\n".join(run))
    return texts[:limit]


@contextmanager
def _without_usage_statistics():
    """While OpenVINO's tools and NNCF are imported, `openvino_telemetry` cannot be: each then takes its own stub
    (NNCF would otherwise write a client id under ~/intel and post its events)."""
    if "openvino_telemetry" in sys.modules:
        yield
        return
    sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        yield
    finally:
        del sys.modules["openvino_telemetry"]


def _openvino():
    with _without_usage_statistics():
        import openvino
    return openvino


def _offline_nncf():
    """NNCF with its usage statistics left out and its progress bars off (they would draw on the server's console)."""
    with _without_usage_statistics():
        import nncf
        import openvino.tools.ovc  # noqa: F401  # what saving a model imports: its telemetry stub, now

        from nncf.common.logging import track_progress
    logging.getLogger("nncf").setLevel(logging.ERROR)
    if not getattr(track_progress.track, "_skmemory_quiet", False):
        shown = track_progress.track.__init__

        def quiet(self, *args, **kwargs):
            kwargs["disable"] = True
            shown(self, *args, **kwargs)

        track_progress.track.__init__ = quiet
        track_progress.track._skmemory_quiet = True
    return nncf
