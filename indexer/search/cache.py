"""The in-memory vector cache: every chunk vector of a project as one float32 matrix, searched exactly."""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

import numpy as np

logger = logging.getLogger(__name__)

Loader = Callable[[], tuple[list[str], np.ndarray]]


class VectorCache:
    """A project's chunk vectors in memory: loaded once, then kept current one change at a time."""

    def __init__(self, loader: Loader):
        self._loader = loader
        self._lock = threading.RLock()
        self._loaded = False
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)  # capacity rows; the first len(_ids) are live
        self.load_seconds: float | None = None
        self.version = 0  # counts changes since loading: what was built from the vectors is stale when it moves

    @property
    def loaded(self) -> bool:
        return self._loaded

    def __len__(self) -> int:
        self.ensure_loaded()
        return len(self._ids)

    def __contains__(self, chunk_id: str) -> bool:
        """Whether this chunk has a vector here (semantic search can see it)."""
        self.ensure_loaded()
        with self._lock:
            return chunk_id in self._row

    def ensure_loaded(self) -> None:
        """Load every vector from the store on first use."""
        with self._lock:
            if self._loaded:
                return
            started = time.perf_counter()
            ids, vectors = self._loader()
            self._ids = list(ids)
            self._row = {cid: i for i, cid in enumerate(self._ids)}
            self._matrix = np.ascontiguousarray(vectors, dtype=np.float32)
            self._loaded = True
            self.load_seconds = time.perf_counter() - started
            logger.info("Loaded %d vectors in %.2f s", len(self._ids), self.load_seconds)

    def apply(self, added_ids: list[str], added: np.ndarray | None, removed_ids: list[str]) -> None:
        """Add or replace vectors and drop removed ones, without reloading (a no-op until first load)."""
        with self._lock:
            if not self._loaded:
                return
            self.version += 1
            try:
                for cid in removed_ids:
                    self._remove(cid)
                if added_ids and added is not None:
                    self._add(added_ids, np.asarray(added, dtype=np.float32))
            except Exception:
                # Never serve a half-updated cache: the next search reloads it from the store.
                logger.exception("Vector cache update failed; it will reload")
                self._loaded = False

    def _remove(self, cid: str) -> None:
        row = self._row.pop(cid, None)
        if row is None:
            return
        last = len(self._ids) - 1
        if row != last:  # move the last row into the hole
            moved = self._ids[last]
            self._ids[row] = moved
            self._row[moved] = row
            self._matrix[row] = self._matrix[last]
        self._ids.pop()

    def _add(self, ids: list[str], vectors: np.ndarray) -> None:
        fresh = []
        for cid, vec in zip(ids, vectors):
            row = self._row.get(cid)
            if row is not None:
                self._matrix[row] = vec
            else:
                fresh.append((cid, vec))
        if not fresh:
            return
        need = len(self._ids) + len(fresh)
        if self._matrix.shape[0] < need or self._matrix.shape[1] != vectors.shape[1]:
            capacity = max(need, int(self._matrix.shape[0] * 1.5) + 64)
            grown = np.zeros((capacity, vectors.shape[1]), dtype=np.float32)
            if self._ids:
                grown[: len(self._ids)] = self._matrix[: len(self._ids)]
            self._matrix = grown
        for cid, vec in fresh:
            self._row[cid] = len(self._ids)
            self._matrix[len(self._ids)] = vec
            self._ids.append(cid)

    def similarities(self, query: np.ndarray, chunk_ids: list[str] | None = None) -> tuple[list[str], np.ndarray]:
        """Return (ids, cosine similarity of each to the query): all chunks, or only the given ids."""
        self.ensure_loaded()
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        with self._lock:
            n = len(self._ids)
            if n == 0:
                return [], np.zeros(0, dtype=np.float32)
            if chunk_ids is None:
                return list(self._ids), self._matrix[:n] @ q
            rows = [(cid, self._row[cid]) for cid in chunk_ids if cid in self._row]
            if not rows:
                return [], np.zeros(0, dtype=np.float32)
            idx = np.fromiter((r for _, r in rows), dtype=np.int64, count=len(rows))
            return [cid for cid, _ in rows], self._matrix[idx] @ q

    def search(self, query: np.ndarray, min_similarity: float, limit: int | None = None,
               chunk_ids: list[str] | None = None) -> list[tuple[str, float]]:
        """Return (chunk id, similarity) at or above min_similarity, best first: exact, every vector compared."""
        ids, sims = self.similarities(query, chunk_ids)
        if not ids:
            return []
        keep = np.flatnonzero(sims >= min_similarity)
        if limit is not None and len(keep) > limit:
            top = np.argpartition(-sims[keep], limit - 1)[:limit]
            keep = keep[top]
        order = keep[np.argsort(-sims[keep], kind="stable")]
        return [(ids[i], float(sims[i])) for i in order]

    def vector(self, chunk_id: str) -> np.ndarray | None:
        self.ensure_loaded()
        with self._lock:
            row = self._row.get(chunk_id)
            return None if row is None else self._matrix[row].copy()
