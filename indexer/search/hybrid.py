"""Hybrid search, the default: keyword and semantic together, a chunk found by both boosted above the rest."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from .index import ProjectIndex
from .keyword import keyword_search
from .semantic import HYBRID_THRESHOLD

# The keyword leg is uncapped up to this many chunks so that overlap with the semantic leg is seen in full.
KEYWORD_POOL = 5000
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skmemory-hybrid")


def hybrid_search(index: ProjectIndex, query: str, limit: int = 20, document_ids: set[str] | None = None,
                  chunk_ids: list[str] | None = None) -> tuple[list[tuple[str, float, str]], bool]:
    """Merge keyword and semantic results; return (scored chunks, whether semantic search was available).

    Found by both: 'hybrid', score 1 + similarity (so at least 1.0). Keyword only: 'keyword', 1.0.
    Semantic only: 'semantic', its similarity (at least 0.3). Without embeddings: keyword alone.
    """
    keyword_future = _pool.submit(keyword_search, index, query, KEYWORD_POOL, document_ids)
    semantic_hits: list[tuple[str, float]] | None = None
    if index.semantic_available:
        vector = index.embed_query(query)
        semantic_hits = index.cache.search(vector, HYBRID_THRESHOLD, None, chunk_ids=chunk_ids)
    keyword_hits = keyword_future.result()
    if semantic_hits is None:
        return keyword_hits[:limit], False
    sims = dict(semantic_hits)
    merged: list[tuple[str, float, str]] = []
    for cid, _, _ in keyword_hits:
        if cid in sims:
            merged.append((cid, 1.0 + sims.pop(cid), "hybrid"))
        else:
            merged.append((cid, 1.0, "keyword"))
    merged += [(cid, sim, "semantic") for cid, sim in sims.items()]
    merged.sort(key=lambda s: -s[1])  # stable: keyword-only ties keep the keyword ranking
    return merged[:limit], True
