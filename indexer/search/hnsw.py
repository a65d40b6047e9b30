"""Semantic search through Chroma's HNSW index, for projects too big to hold (SKMEMORY_VECTOR_SEARCH=hnsw).

Opt-in: exact search (cache.py) is the default and the product's promise. Here SK Memory holds none of the vectors.
Each query asks Chroma for `ef` neighbours (hnswlib explores max(ef_search, neighbours asked), so this is the
query's ef_search, and unlike the collection's own setting it applies at once, on the embedded client and on a
Chroma server alike), rescores them exactly from SQLite's float32 copies and keeps the best. `ef` is the smallest
that finds 98% of the exact top 10 on a sample of the project's own vectors (calibration.py; status shows it).
Searches among few chunks (a tag filter's) and the similarities of given chunks are exact.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from ..store.database import connect
from . import chunk_reads as reads

Query = Callable[[np.ndarray, int], list[tuple[str, float]]]
HNSW_POOL = 1000  # the most neighbours a search answers with (a threshold alone, or a deeper leg, asks no more)
DEFAULT_EF = 128  # neighbours asked per query until the project's recall has been measured
SUBSET_EXACT = 20_000  # a search among at most this many chunks (a filter's) is exact, from SQLite's copies


class HnswVectors:
    """The vector cache's interface, answered by Chroma's HNSW index and SQLite's vector copies."""

    persistent = False
    loaded = True
    loaded_from = "hnsw"
    scan_backend = "hnsw"

    def __init__(self, query: Query, database: Path):
        self._query = query
        self._database = database
        self._local = threading.local()
        self.load_seconds = 0.0
        self.version = 0

    def sql(self, sql: str, params=()) -> list[sqlite3.Row]:
        """Run one SELECT on the project's SQLite file (chunk_reads.py asks the questions)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = connect(self._database, readonly=True)
        return conn.execute(sql, tuple(params)).fetchall()

    def ensure_loaded(self) -> None:
        """Nothing to load: Chroma holds the index."""

    def close(self) -> None:
        """Nothing to flush."""

    def apply(self, added_ids, added, removed_ids) -> None:
        self.version += 1  # Chroma and SQLite already hold the change; what was built from the vectors is stale

    def __len__(self) -> int:
        return reads.vector_count(self)

    def __contains__(self, chunk_id: str) -> bool:
        return bool(reads.stored_vectors(self, [chunk_id], ids_only=True))

    def with_vectors(self, chunk_ids: list[str]) -> set[str]:
        """Which of these chunks have a vector."""
        return {r[0] for r in reads.stored_vectors(self, chunk_ids, ids_only=True)}

    def vectors(self, chunk_ids: list[str]) -> tuple[list[str], np.ndarray]:
        return _matrix(reads.stored_vectors(self, chunk_ids))

    def vector(self, chunk_id: str) -> np.ndarray | None:
        ids, matrix = self.vectors([chunk_id])
        return matrix[0] if ids else None

    def similarities(self, query: np.ndarray, chunk_ids: list[str]) -> tuple[list[str], np.ndarray]:
        """Exact similarities of those of these chunks that have a vector, from SQLite's copies."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        ids, matrix = self.vectors(chunk_ids)
        return ids, (matrix @ q if len(ids) else np.zeros(0, dtype=np.float32))

    def search(self, query: np.ndarray, min_similarity: float, limit: int | None = None,
               chunk_ids: list[str] | None = None, ef: int | None = None) -> list[tuple[str, float]]:
        """The nearest chunks at or above min_similarity, best first: Chroma's HNSW, or exact among few chunks.
        ef overrides the measured ef_search (calibration.py measures each rung of its ladder so)."""
        if chunk_ids is not None and len(chunk_ids) <= SUBSET_EXACT:
            ids, sims = self.similarities(query, chunk_ids)
            hits = [(cid, float(s)) for cid, s in zip(ids, sims.tolist()) if s >= min_similarity]
        else:
            allowed = set(chunk_ids) if chunk_ids is not None else None
            want = min(limit, HNSW_POOL) if limit is not None else HNSW_POOL  # an approximate list ends sooner
            ask = max(want if allowed is None else want * 4, ef or self.ef)
            while True:
                found = [cid for cid, _ in self._query(np.asarray(query, dtype=np.float32), ask)]
                ids, sims = self.similarities(query, [c for c in found if allowed is None or c in allowed])
                hits = [(cid, float(s)) for cid, s in zip(ids, sims.tolist()) if s >= min_similarity]
                # Chroma answers nearest first: with every chunk given, or past the threshold, there is no more.
                if len(hits) >= want or len(found) < ask or len(hits) < len(ids):
                    break
                ask *= 4
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits if limit is None else hits[:limit]

    @property
    def ef(self) -> int:
        """Neighbours asked of Chroma per query: what the project's measurement chose, else DEFAULT_EF."""
        value = reads.index_meta(self, "hnsw_calibration")
        try:
            return int(json.loads(value)["ef_search"]) if value is not None else DEFAULT_EF
        except (ValueError, KeyError, TypeError):
            return DEFAULT_EF


def _matrix(rows) -> tuple[list[str], np.ndarray]:
    rows = [r for r in rows if r[1] is not None]
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    dim = len(rows[0][1]) // 4
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    return [r[0] for r in rows], matrix
