"""The vector cache: every chunk vector of a project, searched exactly through its int8 codes (compact.py).

A scan reads the codes (one byte per dimension), and only the vectors whose error bound lets them reach the answer
are rescored from their float32 originals: the result is the float32 exact search's, at a quarter of the reading.
With a folder (a project's writer) the rows live in memory-mapped files there (vector_rows.FileRows), so loading
is mapping them and only the codes stay resident; without one (a read-only view) they are held in memory.
"""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

from .compact import SCANNER, SLACK, approximate, quantize
from .vector_rows import FileRows, MemoryRows

logger = logging.getLogger(__name__)

Loader = Callable[[], tuple[list[str], np.ndarray]]
# Rescored first when a limit is asked: the limit and this many more of the best approximations. Their k-th best
# exact score is the floor every other candidate's bound must reach.
FIRST_GUESS = 32
SUBSET_GATHER = 0.25  # a subset of at most this share of the rows is scanned alone; a larger one within a full scan


class VectorCache:
    """A project's chunk vectors: loaded (or mapped) once, then kept current one change at a time."""

    def __init__(self, loader: Loader, folder: Path | None = None,
                 generation: Callable[[], str | None] | None = None):
        self._loader = loader
        self._folder = folder
        self._generation = generation or (lambda: None)
        self._lock = threading.RLock()
        self._loaded = False
        self._rows: MemoryRows | FileRows | None = None
        self._row: dict[str, int] = {}
        self._worst = (0.0, 0.0)  # the largest coding loss r and coded length b of any row: the error bound's terms
        self.load_seconds: float | None = None
        self.loaded_from: str | None = None  # "files" (mapped), "rebuilt" (written to files) or "memory"
        self.version = 0  # counts changes since loading: what was built from the vectors is stale when it moves

    @property
    def loaded(self) -> bool:
        return self._loaded

    @property
    def persistent(self) -> bool:
        """Whether the rows live in files of the index folder (else in memory)."""
        self.ensure_loaded()
        return self._rows.persistent

    def __len__(self) -> int:
        self.ensure_loaded()
        return len(self._rows.ids)

    def __contains__(self, chunk_id: str) -> bool:
        """Whether this chunk has a vector here (semantic search can see it)."""
        self.ensure_loaded()
        with self._lock:
            return chunk_id in self._row

    def with_vectors(self, chunk_ids: list[str]) -> set[str]:
        """Which of these chunks have a vector here."""
        self.ensure_loaded()
        with self._lock:
            return {cid for cid in chunk_ids if cid in self._row}

    def ensure_loaded(self) -> None:
        """Map the kept files, or load every vector from the store (and keep files of them), on first use."""
        with self._lock:
            if self._loaded:
                return
            started = time.perf_counter()
            self._rows, self.loaded_from = self._open_rows()
            self._row = {cid: i for i, cid in enumerate(self._rows.ids)}
            n = len(self._row)
            self._worst = (float(self._rows.loss[:n].max(initial=0.0)), float(self._rows.length[:n].max(initial=0.0)))
            self._loaded = True
            self.load_seconds = time.perf_counter() - started
            logger.info("Loaded %d vectors in %.2f s (%s)", len(self._row), self.load_seconds, self.loaded_from)

    def _open_rows(self) -> tuple[MemoryRows | FileRows, str]:
        loaded = None
        if self._folder is not None:
            try:
                rows = FileRows.open(self._folder, self._generation())
                how = "files"
                if rows is None:
                    loaded = self._loader()
                    rows, how = FileRows.create(self._folder, *loaded), "rebuilt"
                rows.mark_in_use()
                return rows, how
            except (OSError, ValueError) as exc:  # a full disk, an odd id: memory serves, as it always did
                logger.warning("Keeping vectors in memory: the files in %s cannot be used (%s)", self._folder, exc)
        ids, vectors = loaded or self._loader()
        return MemoryRows(ids, vectors), "memory"

    def close(self) -> None:
        """Flush the kept files and mark them current, so that the next start maps them (the writer is closing)."""
        with self._lock:
            if self._loaded and self._rows is not None:
                try:
                    self._rows.close(self._generation())
                except Exception:  # unflushed files are rebuilt at the next start; never fail a close on them
                    logger.exception("Closing the vector files failed; they will be rebuilt")
            self._loaded = False
            self._rows = None

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
                self._rows.close(None)
                self._loaded = False

    def _remove(self, cid: str) -> None:
        row = self._row.pop(cid, None)
        if row is None:
            return
        last = len(self._rows.ids) - 1
        if row != last:  # move the last row into the hole
            moved = self._rows.ids[last]
            self._rows.move(last, row)
            self._row[moved] = row
        self._rows.truncate(last)

    def _add(self, ids: list[str], vectors: np.ndarray) -> None:
        if vectors.ndim != 2 or len(vectors) != len(ids):
            raise ValueError(f"{len(ids)} ids and vectors of shape {vectors.shape}")
        if vectors.shape[1] != self._rows.dim:
            if self._rows.ids:
                raise ValueError(f"{vectors.shape[1]}-dimensional vectors for a cache of {self._rows.dim}")
            self._rows.close(None)  # still empty: start again at the new dimension
            empty = np.zeros((0, vectors.shape[1]), dtype=np.float32)
            if self._rows.persistent:
                self._rows = FileRows.create(self._folder, [], empty)
                self._rows.mark_in_use()
            else:
                self._rows = MemoryRows([], empty)
        codes, params = quantize(vectors)
        if len(params):
            self._worst = (max(self._worst[0], float(params[:, 1].max())),
                           max(self._worst[1], float(params[:, 2].max())))
        fresh = [i for i, cid in enumerate(ids) if cid not in self._row]
        self._rows.reserve(len(self._rows.ids) + len(fresh))
        for i, cid in enumerate(ids):
            row = self._row.get(cid)
            if row is None:
                row = self._row[cid] = len(self._rows.ids)
            self._rows.put(row, cid, vectors[i], codes[i], params[i])

    # --- search -------------------------------------------------------------------------------------------------

    def similarities(self, query: np.ndarray, chunk_ids: list[str]) -> tuple[list[str], np.ndarray]:
        """Return (ids, exact cosine similarity of each to the query) for those of these chunks that have a vector."""
        ids, vectors = self.vectors(chunk_ids)
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        return ids, (vectors @ q if ids else np.zeros(0, dtype=np.float32))

    def search(self, query: np.ndarray, min_similarity: float, limit: int | None = None,
               chunk_ids: list[str] | None = None) -> list[tuple[str, float]]:
        """Return (chunk id, similarity) at or above min_similarity, best first: exact, every vector compared."""
        self.ensure_loaded()
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        with self._lock:
            n = len(self._rows.ids)
            rows = None if chunk_ids is None else self._rows_of(chunk_ids)
            if n == 0 or (rows is not None and not len(rows)):
                return []
            approx, length, loss = self._approximate(q, n, rows)
            # No row's approximation is further than this from its exact similarity (compact.py's bound, with the
            # worst loss and length of any row, so that it costs no pass of its own).
            bound = np.float32(self._worst[0] * length + self._worst[1] * loss + SLACK)
            local = np.flatnonzero(approx >= np.float32(min_similarity) - bound)  # could reach the threshold
            if limit is not None and len(local) > limit + FIRST_GUESS:
                guess = local[np.argpartition(-approx[local], limit + FIRST_GUESS - 1)[:limit + FIRST_GUESS]]
                kth = np.partition(self._exact(guess, rows, q), -limit)[-limit]
                local = local[approx[local] >= kth - bound]  # below the k-th exact score so far: not in the top k
            exact = self._exact(local, rows, q)
            keep = exact >= min_similarity
            local, exact = local[keep], exact[keep]
            if limit is not None and len(local) > limit:
                top = np.argpartition(-exact, limit - 1)[:limit]
                local, exact = local[top], exact[top]
            found = local if rows is None else rows[local]
            hits = [(self._rows.ids[r], float(s)) for r, s in zip(found.tolist(), exact.tolist())]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))  # equal scores (the same text twice) in a fixed order
        return hits

    def _approximate(self, q: np.ndarray, n: int, rows: np.ndarray | None) -> tuple[np.ndarray, float, float]:
        if rows is not None and len(rows) <= SUBSET_GATHER * n:
            return approximate(self._rows.codes[rows], self._rows.scale[rows], q)
        approx, length, loss = approximate(self._rows.codes[:n], self._rows.scale[:n], q)
        return (approx if rows is None else approx[rows]), length, loss

    def _exact(self, local: np.ndarray, rows: np.ndarray | None, q: np.ndarray) -> np.ndarray:
        if not len(local):
            return np.zeros(0, dtype=np.float32)
        return self._rows.full(local if rows is None else rows[local]) @ q

    def _rows_of(self, chunk_ids: list[str]) -> np.ndarray:
        found = [self._row[cid] for cid in chunk_ids if cid in self._row]
        return np.fromiter(found, dtype=np.int64, count=len(found))

    def vector(self, chunk_id: str) -> np.ndarray | None:
        self.ensure_loaded()
        with self._lock:
            row = self._row.get(chunk_id)
            return None if row is None else self._rows.full(np.array([row]))[0]

    def vectors(self, chunk_ids: list[str]) -> tuple[list[str], np.ndarray]:
        """The vectors of those of these chunks that have one, in one read: (ids, (n, dimension) float32)."""
        self.ensure_loaded()
        with self._lock:
            rows = self._rows_of(chunk_ids)
            return [self._rows.ids[r] for r in rows.tolist()], self._rows.full(rows)

    def sample(self, count: int, seed: int = 59) -> np.ndarray:
        """Up to `count` of the vectors, a seeded draw (all of them when there are fewer): where they lie."""
        self.ensure_loaded()
        with self._lock:
            n = len(self._rows.ids)
            if not n:
                return np.zeros((0, self._rows.dim), dtype=np.float32)
            rows = np.arange(n) if n <= count else np.sort(np.random.default_rng(seed).choice(n, count, replace=False))
            return self._rows.full(rows)

    @property
    def scan_backend(self) -> str:
        return SCANNER.backend
