"""The semantic leg: the query embedded with the local model and compared exactly with every chunk vector; and its
recency variant, which blends similarity with how recently a note changed."""
from __future__ import annotations

import math
import time

from . import chunk_reads as reads
from .index import ProjectIndex
from .records import MeaningLeg, Ranking

DIRECT_THRESHOLD = 0.5  # minimum similarity for semantic search on its own
HYBRID_THRESHOLD = 0.3  # minimum similarity for the semantic leg of hybrid search
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_WEIGHT = 0.2


def unavailable(index: ProjectIndex) -> str:
    """Why the semantic leg cannot run, as explain says it."""
    return index.embedder.now.why_not


def semantic_search(index: ProjectIndex, query, limit: int | None = 20, min_similarity: float = DIRECT_THRESHOLD,
                    chunk_ids: list[str] | None = None) -> Ranking:
    """Rank chunks by cosine similarity to the query (raises EmbeddingsUnavailable rather than falling back)."""
    vector = query.vector(index)
    hits = index.cache.search(vector, min_similarity, limit, chunk_ids=chunk_ids)
    return Ranking("semantic", [(cid, sim, "semantic") for cid, sim in hits],
                   meaning=MeaningLeg(hits, min_similarity, vector), whole=limit is None)


def recency_score(similarity: float, age_days: float, half_life_days: float = RECENCY_HALF_LIFE_DAYS,
                  weight: float = RECENCY_WEIGHT) -> float:
    """Blend similarity with freshness: (1 - weight) * similarity + weight * 0.5 ** (age_days / half_life_days)."""
    freshness = math.pow(0.5, max(age_days, 0.0) / half_life_days) if half_life_days > 0 else 0.0
    return (1.0 - weight) * similarity + weight * freshness


def recency_search(index: ProjectIndex, query, limit: int | None = 20, min_similarity: float = DIRECT_THRESHOLD,
                   chunk_ids: list[str] | None = None, half_life_days: float = RECENCY_HALF_LIFE_DAYS,
                   weight: float = RECENCY_WEIGHT, now: float | None = None) -> Ranking:
    """Semantic search re-ranked by recency: of two chunks equally similar, the more recently changed wins."""
    vector = query.vector(index)
    hits = index.cache.search(vector, min_similarity, None, chunk_ids=chunk_ids)
    ranking = Ranking("recency", [], meaning=MeaningLeg(hits, min_similarity, vector),
                      recency_rule=(weight, half_life_days), whole=limit is None)
    if not hits:
        return ranking
    modified = reads.modified_of_chunks(index, [cid for cid, _ in hits])
    now = now or time.time()
    for cid, sim in hits:
        age = max((now - modified.get(cid, now)) / 86400.0, 0.0)
        fresh = math.pow(0.5, age / half_life_days) if half_life_days > 0 else 0.0
        ranking.recency[cid] = (sim, age, fresh)
    scored = [(cid, recency_score(sim, (now - modified.get(cid, now)) / 86400.0, half_life_days, weight), "recency")
              for cid, sim in hits]
    scored.sort(key=lambda s: -s[1])
    ranking.ranked = scored if limit is None else scored[:limit]
    return ranking
