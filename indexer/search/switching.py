"""A project moving to another model: meaning search answers throughout, by the model it is moving from.

A project's model changes when its notes' language does (text/language.py) or SKMEMORY_EMBED_MODEL does, and then
every passage is embedded again: minutes for a few thousand notes on two cores. The vectors of two models are never
compared (a question's vector and a passage's must come from one model), so the writer keeps the previous model's
vectors whole (previous_vectors, migration m021) until the last passage has its new one, and meanwhile each
question's meaning legs read those with the previous model's own query encoder, on the shared similarity scale
(model/scale.py). A passage deleted meanwhile leaves both sets; one saved meanwhile is found by its words until the
switch is done. In every vector mode: the previous vectors are searched exactly, from SQLite's copies, as a read-only
search reads them, whether the project's own search is the cache or Chroma's HNSW.
"""
from __future__ import annotations

import json
import threading
from typing import Callable

import numpy as np

from ..model.embeddings import Embedder, embedder_named
from ..model.scale import ScaledVectors
from . import chunk_reads as reads
from .cache import VectorCache
from .index import MeaningView, ProjectIndex


class PreviousVectors:
    """A project's previous model's vectors as search reads them during a switch: a vector cache loaded on the first
    question, kept until the switch is done (or another begins), and told of passages deleted meanwhile."""

    def __init__(self, embedders: Callable[[str], Embedder], state: Callable[[], str | None]):
        self._embedders = embedders  # each model's shared embedder (Home.embedder_for)
        self.state = state  # the switch the project is in now (its index_meta value), as its writer or reader knows
        self._lock = threading.Lock()
        self._cache: VectorCache | None = None
        self._built: str | None = None  # the switch (its meta) the cache was loaded for

    def cache(self, index: ProjectIndex, switch: str) -> VectorCache:
        with self._lock:
            if self._cache is None or self._built != switch:
                self._cache = VectorCache(lambda: _load(index))
                self._built = switch
            return self._cache

    def drop(self) -> None:
        """The switch is done: its vectors are freed."""
        with self._lock:
            self._cache, self._built = None, None

    def removed(self, chunk_ids: list[str]) -> None:
        """Passages deleted by the writer leave the loaded cache too (their rows went with them)."""
        with self._lock:
            cache = self._cache
        if cache is not None and chunk_ids and cache.loaded:
            cache.apply([], None, chunk_ids)

    def embedder(self, name: str) -> Embedder | None:
        return embedder_named(self._embedders, name)


def _load(index: ProjectIndex) -> tuple[list[str], np.ndarray]:
    rows = reads.previous_vectors(index)
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    width = max({len(r[1]) for r in rows}, key=[len(r[1]) for r in rows].count)
    rows = [r for r in rows if len(r[1]) == width]
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), width // 4)
    return [r[0] for r in rows], np.ascontiguousarray(matrix)


class PreviousView(MeaningView):
    """A project as the meaning legs see it during a switch: the previous model's vectors, read by that model."""

    space = ("previous",)

    def __init__(self, index: ProjectIndex, cache, embedder: Embedder, switch: dict):
        super().__init__(index, cache, embedder)
        self.switch = switch

    def notice(self) -> str:
        done, total = self.switch.get("done", 0), self.switch.get("total", 0)
        return (f"'{self.name}' is moving to {self._index.embedder.name} ({done:,} of {total:,} passages embedded "
                f"again): meanwhile its notes are searched by meaning with {self._embedder.name}, the model they "
                "were embedded by, and notes saved since are found by their words until it is done.")


def switching(index: ProjectIndex) -> dict | None:
    """The switch a project is in ({'name', 'fingerprint', 'key', 'done', 'total'}), None when it is in none: asked
    at every question of the project's writer (which knows it once written, before its model changes) or reader
    (which reads the index), never a value kept until the file's size or time moved, which could miss a switch that
    had just begun and search the old vectors with the new model; its progress kept until the writer commits."""
    raw = index.previous.state()
    try:
        kept = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(kept, dict) or not kept.get("name"):
        return None
    done, total = index.kept("model switch progress", lambda: reads.embedded_of(index))
    return {**kept, "key": raw, "done": done, "total": total}


def previous_index(index: ProjectIndex) -> PreviousView | None:
    """The project as a question's meaning legs search it during a switch; None when it is in none, or when the model
    it is moving from is not this SK Memory's any more (then the new vectors answer, as far as they are made)."""
    previous = getattr(index, "previous", None)
    if previous is None or isinstance(index, MeaningView):
        return None
    switch = switching(index)
    if switch is None:
        previous.drop()
        return None
    embedder = previous.embedder(switch["name"])
    if embedder is None:
        return None
    cache = previous.cache(index, switch["key"])
    return PreviousView(index, ScaledVectors(cache, lambda: embedder.scale), embedder, switch)


def switch_notice(indexes: list) -> str | None:
    """The sentence an answer carries when a project searched was between two models."""
    sentences = [index.notice() for index in indexes if isinstance(index, PreviousView)]
    return " ".join(sentences) or None
