"""Semantic search: the query embedded with the local model and compared exactly with every chunk vector."""
from __future__ import annotations

import math
import time

import numpy as np

from .explain import Trace
from .index import ProjectIndex

DIRECT_THRESHOLD = 0.5  # minimum similarity for semantic search on its own
HYBRID_THRESHOLD = 0.3  # minimum similarity for the semantic leg of hybrid search
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_WEIGHT = 0.2


def semantic_search(index: ProjectIndex, query: str, limit: int = 20, min_similarity: float = DIRECT_THRESHOLD,
                    chunk_ids: list[str] | None = None, query_vector: np.ndarray | None = None,
                    trace: Trace | None = None) -> list[tuple[str, float, str]]:
    """Rank chunks by cosine similarity to the query; raises EmbeddingsUnavailable rather than falling back."""
    vector = index.embed_query(query) if query_vector is None else query_vector
    hits = index.cache.search(vector, min_similarity, limit, chunk_ids=chunk_ids)
    if trace is not None:
        trace.semantic, trace.threshold, trace.vector = hits, min_similarity, vector
        trace.ranked = [(cid, sim, "semantic") for cid, sim in hits]
    return [(cid, sim, "semantic") for cid, sim in hits]


def recency_score(similarity: float, age_days: float, half_life_days: float = RECENCY_HALF_LIFE_DAYS,
                  weight: float = RECENCY_WEIGHT) -> float:
    """Blend similarity with freshness: (1 - weight) * similarity + weight * 0.5 ** (age_days / half_life_days)."""
    freshness = math.pow(0.5, max(age_days, 0.0) / half_life_days) if half_life_days > 0 else 0.0
    return (1.0 - weight) * similarity + weight * freshness


def recency_search(index: ProjectIndex, query: str, limit: int = 20, min_similarity: float = DIRECT_THRESHOLD,
                   half_life_days: float = RECENCY_HALF_LIFE_DAYS, weight: float = RECENCY_WEIGHT,
                   chunk_ids: list[str] | None = None, now: float | None = None,
                   trace: Trace | None = None) -> list[tuple[str, float, str]]:
    """Semantic search re-ranked by recency: of two chunks equally similar, the more recently changed wins."""
    vector = index.embed_query(query)
    hits = index.cache.search(vector, min_similarity, None, chunk_ids=chunk_ids)
    if trace is not None:
        trace.semantic, trace.threshold, trace.vector = hits, min_similarity, vector
    if not hits:
        return []
    modified = _modified_of(index, [cid for cid, _ in hits])
    now = now or time.time()
    scored = [
        (cid, recency_score(sim, (now - modified.get(cid, now)) / 86400.0, half_life_days, weight), "recency")
        for cid, sim in hits
    ]
    scored.sort(key=lambda s: -s[1])
    if trace is not None:
        trace.ranked, trace.recency_rule = scored, (weight, half_life_days)
        for cid, sim in hits:
            age = max((now - modified.get(cid, now)) / 86400.0, 0.0)
            trace.recency[cid] = (sim, age, math.pow(0.5, age / half_life_days) if half_life_days > 0 else 0.0)
    return scored[:limit]


def _modified_of(index: ProjectIndex, chunk_ids: list[str]) -> dict[str, float]:
    return {r[0]: r[1] for r in index.sql_in(
        "SELECT c.chunk_id, d.modified FROM chunks c JOIN documents d USING (document_id) WHERE c.chunk_id IN ({ids})",
        chunk_ids)}
