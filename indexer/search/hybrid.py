"""Hybrid search, the default: keyword and semantic together, a chunk found by both boosted above the rest.

The scores are spec 000's: found by both legs 1 + similarity, by the keyword leg alone 1.0, by meaning alone its
similarity (at least 0.3). Within them, two rules decide the order (chosen on SciFact and the graded vault
questions, tests/bench/bench_quality.py and bench_vault_questions.py):

- A long question rarely has every word in one chunk. When no chunk does, the keyword leg takes the PARTIAL_POOL
  chunks that BM25 ranks best for some of the words instead; such a chunk counts as found by both legs only when
  meaning found it strongly too, as strongly as semantic search alone requires (0.5). It never scores 1.0 on
  words alone: a chunk that merely shares a few words with a question must not outrank one that answers it. And
  when some chunk does hold every word (a note's own title typed in), partial matches stay out, or "Sep 23rd,
  2020" would outrank the journal page "Sep 14th, 2020" that was asked for. (A floor of 0.4 gained SciFact
  another 1.5 points of nDCG@10 but cost the graded vault questions a point of MRR.)
- Chunks found by the keyword leg alone tie at 1.0 and keep that leg's order: titles holding more of the words
  first (spec 000: title matches above content matches), then chunks holding more of them, then newer ones.
"""
from __future__ import annotations

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor

from .explain import Trace
from .fts_query import BM25_RANK, parse_query
from .index import ProjectIndex
from .keyword import keyword_matching, keyword_search, parse_terms
from .semantic import DIRECT_THRESHOLD, HYBRID_THRESHOLD

# The keyword leg is uncapped up to this many chunks so that overlap with the semantic leg is seen in full.
KEYWORD_POOL = 5000
PARTIAL_POOL = 20
PARTIAL_MIN_SIMILARITY = DIRECT_THRESHOLD
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skmemory-hybrid")


def partial_matches(index: ProjectIndex, query: str, limit: int, document_ids: set[str] | None) -> list[str]:
    """The chunks BM25 ranks best for any of the query's words (stemmed), best first."""
    match = parse_query(query).any_match
    if not match or limit <= 0:
        return []
    clause, params = "", [match]
    if document_ids is not None:
        clause = " AND c.document_id IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(sorted(document_ids)))
    try:
        rows = index.sql(f"""SELECT c.chunk_id FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid
                             WHERE chunks_bm25 MATCH ?{clause} ORDER BY {BM25_RANK}, f.rowid
                             LIMIT ?""", [*params, limit])
    except sqlite3.OperationalError:  # parse_query only emits valid syntax; a partial leg is never worth a failure
        return []
    return [r[0] for r in rows]


def hybrid_search(index: ProjectIndex, query: str, limit: int | None = 20, document_ids: set[str] | None = None,
                  chunk_ids: list[str] | None = None, trace: Trace | None = None,
                  ) -> tuple[list[tuple[str, float, str]], bool]:
    """Merge keyword and semantic results; return (scored chunks, whether semantic search was available).

    Found by both: 'hybrid', score 1 + similarity (so at least 1.0). Keyword only: 'keyword', 1.0.
    Semantic only: 'semantic', its similarity (at least 0.3). Without embeddings: keyword alone.
    limit None keeps every chunk (explain_document uses that); a trace records each leg.
    """
    if limit is not None and trace is None and index.semantic_available:
        return top_hybrid(index, query, limit, document_ids, chunk_ids), True
    keyword_future = _pool.submit(keyword_search, index, query, KEYWORD_POOL, document_ids)
    semantic_hits: list[tuple[str, float]] | None = None
    vector = None
    if index.semantic_available:
        vector = index.embed_query(query)
        semantic_hits = index.cache.search(vector, HYBRID_THRESHOLD, None, chunk_ids=chunk_ids)
    keyword_hits = keyword_future.result()
    # Only asked when no chunk holds every word: a common word in a long question would cost a large OR query.
    partial = partial_matches(index, query, PARTIAL_POOL, document_ids) if semantic_hits and not keyword_hits else []
    if trace is not None:
        trace.terms, trace.threshold, trace.vector = parse_terms(query), HYBRID_THRESHOLD, vector
        trace.keyword, trace.semantic = [cid for cid, _, _ in keyword_hits], semantic_hits
        if semantic_hits is None:
            trace.semantic_error = f"the embedding model is unavailable ({index.embedder.error})"
    if semantic_hits is None:
        merged = keyword_hits
    else:
        merged = _merge(keyword_hits, partial, semantic_hits, trace)
    if trace is not None:
        trace.ranked = merged
    return (merged if limit is None else merged[:limit]), semantic_hits is not None


def top_hybrid(index: ProjectIndex, query: str, limit: int, document_ids: set[str] | None,
               chunk_ids: list[str] | None) -> list[tuple[str, float, str]]:
    """The first `limit` chunks of the merge, each leg read only as far as they need.

    When keyword search finds few chunks (most questions), they are all merged with the best chunks by meaning
    beyond them. When it finds many (a common word), none of them is fetched whole: a chunk found by both legs
    scores 1 + similarity, above any other, so the semantic leg is read best first and each stretch of it asked
    which of its chunks keyword search would find, until `limit` are found or the leg ends (under 0.3); only then
    are the keyword leg's other chunks (1.0, in its order) and the rest of the semantic leg needed.
    """
    probe = 4 * limit + 64
    keyword_future = _pool.submit(keyword_search, index, query, probe, document_ids)  # beside the scan
    vector = index.embed_query(query)
    k = probe
    top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)
    keyword_hits = keyword_future.result()
    if len(keyword_hits) < probe:  # the whole keyword leg
        ids = [cid for cid, _, _ in keyword_hits]
        semantic = _beyond(index, vector, set(ids), limit, chunk_ids, top, k)
        partial = partial_matches(index, query, PARTIAL_POOL, document_ids) if semantic and not keyword_hits else []
        semantic = _with_similarities(index, vector, semantic, ids + partial)
        return _merge(keyword_hits, partial, semantic, None)[:limit]
    while True:
        matched = keyword_matching(index, query, [cid for cid, _ in top])
        both = [(cid, sim) for cid, sim in top if cid in matched]
        if len(both) >= limit or len(top) < k:
            break
        k *= 4
        top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)
    merged = [(cid, 1.0 + sim, "hybrid") for cid, sim in both]
    if len(merged) < limit:  # the semantic leg was read to its end: every other keyword match is under 0.3
        found = {cid for cid, _ in both}
        merged += [(cid, 1.0, "keyword") for cid, _, _ in keyword_search(index, query, limit + len(found), document_ids)
                   if cid not in found]
        merged += [(cid, sim, "semantic") for cid, sim in top if cid not in matched]
    return merged[:limit]


def _beyond(index: ProjectIndex, vector, found: set[str], limit: int, chunk_ids: list[str] | None,
            top: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The best `limit` chunks by meaning (at least 0.3) that are not in `found`, from `top` (the best k) and
    further down the leg when those do not hold enough."""
    while True:
        others = [hit for hit in top if hit[0] not in found]
        if len(others) >= limit or len(top) < k:
            return others[:limit]
        k *= 4
        top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)


def _with_similarities(index: ProjectIndex, vector, hits: list[tuple[str, float]], chunk_ids: list[str]
                       ) -> list[tuple[str, float]]:
    """hits, and each of these chunks whose similarity reaches the semantic leg's threshold, best first."""
    have = {cid for cid, _ in hits}
    ids, sims = index.cache.similarities(vector, [cid for cid in dict.fromkeys(chunk_ids) if cid not in have])
    extra = [(cid, float(sim)) for cid, sim in zip(ids, sims.tolist()) if sim >= HYBRID_THRESHOLD]
    return sorted(hits + extra, key=lambda hit: (-hit[1], hit[0]))


def _merge(keyword_hits, partial, semantic_hits, trace) -> list[tuple[str, float, str]]:
    sims = dict(semantic_hits)
    merged: list[tuple[str, float, str]] = []
    for cid, _, _ in keyword_hits:
        merged.append((cid, 1.0 + sims.pop(cid), "hybrid") if cid in sims else (cid, 1.0, "keyword"))
    for bm25_rank, cid in enumerate(partial, start=1):
        if sims.get(cid, 0.0) >= PARTIAL_MIN_SIMILARITY:
            if trace is not None:
                trace.partial[cid] = bm25_rank
            merged.append((cid, 1.0 + sims.pop(cid), "hybrid"))
    merged += [(cid, sim, "semantic") for cid, sim in sims.items()]
    merged.sort(key=lambda s: -s[1])  # stable: keyword-only ties keep the keyword leg's order (titles first)
    return merged
