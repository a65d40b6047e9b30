"""Tuning Chroma's HNSW index for SKMEMORY_VECTOR_SEARCH=hnsw: the smallest ef_search (neighbours asked per query,
then rescored exactly; see search/hnsw.py) whose recall@10 against exact search reaches the target on a sample of
queries, measured on the project's own vectors and kept in the index, where status reads it.

The collection's own ef_search setting is not used: Chroma applies a change to it only when it next loads the
index, which a Chroma server does not do while it runs (measured: recall unchanged after modify() on `chroma run`).
Asking for more neighbours widens the search at once (hnswlib explores max(ef_search, neighbours asked)).
"""
from __future__ import annotations

import json
import logging
import threading
import time

import numpy as np

from . import chunk_reads as reads
from .hnsw import HnswVectors

logger = logging.getLogger(__name__)

TARGET_RECALL = 0.98
SAMPLE = 50
EF_LADDER = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
TOP = 10
BLOCK = 20_000
REMEASURE_GROWTH = 0.1  # measured again once the number of vectors moved by more than this share


def calibration_due(project) -> bool:
    """Whether the project has vectors, none waiting, and no measurement of its current size."""
    counts = project.store.counts()
    if counts["pending"] or not counts["embedded"]:
        return False
    kept = project.store.meta("hnsw_calibration")
    if not kept:
        return True
    measured = json.loads(kept).get("vectors") or 0
    return abs(counts["embedded"] - measured) > REMEASURE_GROWTH * max(measured, 1)


def calibrate(project, sample: int = SAMPLE, target: float = TARGET_RECALL, seed: int = 0,
              stop: threading.Event | None = None) -> dict | None:
    """Find the smallest ef_search reaching `target` recall@10; keep (the search reads it) and return what was
    measured. The sample's queries are the normalised sums of two random chunks' vectors (a question between two
    notes); their exact top 10 comes from one pass over SQLite's float32 copies."""
    started = time.perf_counter()
    queries = _sample_queries(project, sample, seed)
    if queries is None:
        return None
    exact, vectors = _exact_top(project, queries)
    search = HnswVectors(project.query_vectors, project.store.path)  # what semantic search will ask, rung by rung
    ladder = []
    chosen = None
    for ef in EF_LADDER:
        if stop is not None and stop.is_set():
            return None
        recall = float(np.mean([len(set(truth) & {cid for cid, _ in search.search(q, -1.0, TOP, ef=ef)}) / len(truth)
                                for q, truth in zip(queries, exact) if truth]))
        ladder.append([ef, round(recall, 4)])
        chosen = (ef, recall)
        if recall >= target:
            break
    result = {"ef_search": chosen[0], "recall_at_10": round(chosen[1], 4), "target": target,
              "queries": len(queries), "vectors": vectors, "ladder": ladder,
              "seconds": round(time.perf_counter() - started, 1), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if chosen[1] < target:
        result["warning"] = (f"recall@10 reached only {chosen[1]:.3f} at ef_search {chosen[0]}, under the "
                             f"{target} wanted; exact search (SKMEMORY_VECTOR_SEARCH=exact) has none of this loss.")
    project.store.set_meta("hnsw_calibration", json.dumps(result))
    logger.info("HNSW of %s: ef_search %d gives recall@10 %.3f (%s)", project.name, chosen[0], chosen[1], ladder)
    return result


def _sample_queries(project, sample: int, seed: int) -> np.ndarray | None:
    rowids = reads.vector_rowids(project.store)
    if len(rowids) < 2:
        return None
    rng = np.random.default_rng(seed)
    picks = rng.choice(rowids, size=(sample, 2), replace=len(rowids) < 2 * sample)
    blobs = reads.vectors_by_rowid(project.store, [int(x) for x in picks.ravel()])
    pairs = np.stack([np.frombuffer(blobs[int(a)], np.float32) + np.frombuffer(blobs[int(b)], np.float32)
                      for a, b in picks])
    return pairs / np.linalg.norm(pairs, axis=1, keepdims=True)


def _exact_top(project, queries: np.ndarray) -> tuple[list[list[str]], int]:
    """Each query's exact top 10 chunk ids, from one pass over every stored vector; and how many there were."""
    best_ids = np.empty((len(queries), 0), dtype=object)
    best = np.empty((len(queries), 0), dtype=np.float32)
    last, total = 0, 0
    while True:
        rows = reads.vector_block(project.store, last, BLOCK)
        if not rows:
            break
        last, total = rows[-1][0], total + len(rows)
        matrix = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), -1)
        ids = np.array([r[1] for r in rows], dtype=object)
        sims = np.concatenate([best, queries @ matrix.T], axis=1)
        every = np.concatenate([best_ids, np.broadcast_to(ids, (len(queries), len(ids)))], axis=1)
        keep = np.argsort(-sims, axis=1, kind="stable")[:, :TOP]
        best = np.take_along_axis(sims, keep, axis=1)
        best_ids = np.take_along_axis(every, keep, axis=1)
    return [list(row) for row in best_ids], total
