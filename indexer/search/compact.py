"""Exact search on compact vectors: int8 codes scanned, and only the vectors that could rank rescored in float32.

Each vector v is kept as int8 codes c with one scale s (s * c is v to within half a step per component), and with
two numbers that bound what the codes lose: r = |v - s c| and b = |s c|. A query q is coded the same way (q8, sq,
its own loss |eq|). The scan computes every approximate similarity s * sq * (c . q8) in integers, and

    |q . v - s * sq * (c . q8)|  <=  |q| r + b |eq|

(q . v = q . (v - s c) + (s c) . (q - sq q8) + s c . sq q8, and Cauchy-Schwarz on the first two terms). So after the
scan the vectors that could reach a threshold, or beat the k-th best exact score found so far, are known exactly;
rescoring them in float32 gives the answer a float32 scan of every vector gives, at a quarter of the memory read.
"""
from __future__ import annotations

import logging
import os
import threading

import numpy as np

logger = logging.getLogger(__name__)

STEPS = 127  # int8 codes run from -127 to 127, symmetric around 0
# Float32 rounding in the scan's products and in the rescoring itself; far above either, far below any real gap.
SLACK = 1e-5
QUANTIZE_BLOCK = 65_536  # rows quantized at a time: bounded temporaries, whatever the number of vectors
SCAN_BLOCK = 16_384  # rows per float32 block when numpy scans without ONNX Runtime


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (codes as uint8, each int8 code + 128; params (n, 3) float32: scale s, loss r, coded length b)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(vectors)
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    codes = np.empty((n, dim), dtype=np.uint8)
    params = np.empty((n, 3), dtype=np.float32)
    for start in range(0, n, QUANTIZE_BLOCK):
        block = vectors[start:start + QUANTIZE_BLOCK]
        peak = np.abs(block).max(axis=1) if dim else np.zeros(len(block), np.float32)
        scale = np.where(peak > 0, peak / STEPS, 1.0).astype(np.float32)
        coded = np.clip(np.rint(block / scale[:, None]), -STEPS, STEPS).astype(np.int8)
        approx = coded.astype(np.float32) * scale[:, None]
        params[start:start + len(block), 0] = scale
        params[start:start + len(block), 1] = np.linalg.norm(block - approx, axis=1)
        params[start:start + len(block), 2] = np.linalg.norm(approx, axis=1)
        codes[start:start + len(block)] = coded.view(np.uint8) ^ 0x80  # two's complement + 128: the sign bit flips
    return codes, params


class Scanner:
    """Integer dot products of uint8 codes with an int8 query: ONNX Runtime's MatMulInteger (VNNI/AMX where the CPU
    has them), or numpy in float32 blocks (exact: every sum stays under 2**24) when ONNX Runtime is missing."""

    def __init__(self, threads: int | None = None):
        self._session = None
        self._lock = threading.Lock()
        self._threads = threads or min(4, os.cpu_count() or 1)
        self.backend = "numpy"

    def dots(self, codes: np.ndarray, q8: np.ndarray) -> np.ndarray:
        """(codes - 128) . q8 for every row: exact integers (int32 from ONNX Runtime, float32 from numpy)."""
        if not len(codes):
            return np.zeros(0, dtype=np.float32)
        session = self._onnx()
        if session is not None:  # the kernel subtracts the zero point (128) itself
            return session.run(None, {"codes": codes, "query": q8.reshape(-1, 1)})[0].reshape(-1)
        out = np.empty(len(codes), dtype=np.float32)
        qf = q8.astype(np.float32)
        for start in range(0, len(codes), SCAN_BLOCK):
            out[start:start + SCAN_BLOCK] = codes[start:start + SCAN_BLOCK].astype(np.float32) @ qf
        return out - np.float32(128.0 * float(q8.astype(np.int64).sum()))

    def _onnx(self):
        if self._session is not None or self.backend == "unavailable":
            return self._session
        with self._lock:
            if self._session is None and self.backend != "unavailable":
                try:
                    self._session = _matmul_integer_session(self._threads)
                    self.backend = "onnxruntime"
                except Exception as exc:  # missing or broken: numpy gives the same integers, slower
                    logger.info("ONNX Runtime cannot scan vectors (%s); numpy does", exc)
                    self.backend = "unavailable"
        return self._session


def _matmul_integer_session(threads: int):
    import onnxruntime as ort
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["codes", "query", "zero"], ["dots"])], "scan",
        [helper.make_tensor_value_info("codes", TensorProto.UINT8, [None, None]),
         helper.make_tensor_value_info("query", TensorProto.INT8, [None, 1])],
        [helper.make_tensor_value_info("dots", TensorProto.INT32, [None, 1])],
        [helper.make_tensor("zero", TensorProto.UINT8, [], [128])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # readable by every onnxruntime this project allows
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle pool threads sleep instead of spinning: a scan is a millisecond, and spinning after every one doubled a
    # search's CPU time, which on a small machine is what concurrent searches queue for.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


SCANNER = Scanner()


def code_query(query: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """Return (q8, its scale, |q|, |q - scale q8|) for a query vector."""
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    peak = float(np.abs(q).max()) if len(q) else 0.0
    scale = peak / STEPS if peak > 0 else 1.0
    q8 = np.clip(np.rint(q / scale), -STEPS, STEPS).astype(np.int8)
    loss = float(np.linalg.norm(q - q8.astype(np.float32) * np.float32(scale)))
    return q8, scale, float(np.linalg.norm(q)), loss


def approximate(codes: np.ndarray, scale: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Every row's approximate similarity to the query, and the query's |q| and |eq| for the error bound
    |q| r + b |eq| (see the module's docstring)."""
    q8, q_scale, length, loss = code_query(query)
    approx = np.multiply(SCANNER.dots(codes, q8), scale, dtype=np.float32)
    approx *= np.float32(q_scale)
    return approx, length, loss
