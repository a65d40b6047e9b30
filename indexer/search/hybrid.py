"""Hybrid search, the default: keyword and semantic together, a chunk found by both boosted above the rest.

The scores are spec 000's: found by both legs 1 + similarity, by the keyword leg alone 1.0, by meaning alone its
similarity (at least 0.3). Within them, two rules decide the order (chosen on SciFact and the graded vault
questions, tests/bench/bench_quality.py and bench_vault_questions.py):

- A long question rarely has every word in one chunk. When no chunk does, the PARTIAL_POOL chunks that BM25 ranks
  best for some of the words count as found by both legs, but only when meaning found them as strongly as semantic
  search alone requires (0.5): a chunk that merely shares a few words with a question must not outrank one that
  answers it. When some chunk does hold every word (a note's own title typed in), partial matches stay out.
- Chunks found by the keyword leg alone tie at 1.0 and keep that leg's order: titles holding more of the words
  first (spec 000: title matches above content matches), then chunks holding more of them, then newer ones.

One implementation reads the legs only as far as the first `limit` results need (see `hybrid`); with no limit
(explain_document) or with `ordered` (explain) the keyword leg is read in its own order to KEYWORD_POOL, so that
every result's place in it is known.
"""
from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

from . import chunk_reads as reads
from .index import ProjectIndex
from .keyword import keyword_matching, keyword_search
from .records import KeywordLeg, MeaningLeg, Ranking
from .semantic import DIRECT_THRESHOLD, HYBRID_THRESHOLD, unavailable

# The keyword leg is read in its own order up to this many chunks when every result's place in it must be known.
KEYWORD_POOL = 5000
PARTIAL_POOL = 20
PARTIAL_MIN_SIMILARITY = DIRECT_THRESHOLD
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skmemory-hybrid")


def hybrid(index: ProjectIndex, query, limit: int | None, allowed: set[str] | None = None,
           chunk_ids: list[str] | None = None, ordered: bool = False) -> Ranking:
    """The first `limit` chunks of hybrid's ranking (None: every chunk that scores), with its legs' records.

    The keyword leg is probed beside the semantic scan. When it finds fewer chunks than the probe (most questions),
    they are merged whole with the best chunks by meaning beyond them. When it finds more (a common word), none of
    them is fetched whole: a chunk found by both legs scores 1 + similarity, above any other, so the semantic leg is
    read best first and each stretch of it asked which of its chunks keyword search would find, until `limit` are
    found or the leg ends (under 0.3); only then are the keyword leg's other chunks (1.0, in its order) and the rest
    of the semantic leg needed. Without the model: the keyword leg alone.
    """
    whole = limit is None
    probe = KEYWORD_POOL if whole or ordered else 4 * limit + 64
    if not index.semantic_available:
        hits = keyword_search(index, query, KEYWORD_POOL if whole else limit, allowed)
        return Ranking("hybrid", hits, KeywordLeg([cid for cid, _, _ in hits], query.terms),
                       MeaningLeg([], HYBRID_THRESHOLD, error=unavailable(index)), whole=whole)
    keyword_future = _pool.submit(keyword_search, index, query, probe, allowed)  # beside the scan
    vector = query.vector(index)
    k = None if whole else 4 * limit + 64
    top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)
    keyword_hits = keyword_future.result()
    keyword = KeywordLeg([cid for cid, _, _ in keyword_hits], query.terms)
    meaning = MeaningLeg(top, HYBRID_THRESHOLD, vector)
    if len(keyword_hits) < probe or probe == KEYWORD_POOL:  # the whole keyword leg (as far as KEYWORD_POOL)
        semantic = _beyond(index, vector, set(keyword.chunks), limit, chunk_ids, top, k)
        partial = partial_matches(index, query, PARTIAL_POOL, allowed) if semantic and not keyword_hits else []
        meaning.similarity = _similarities(index, vector, semantic, keyword.chunks + partial)
        ranked, counted = _merge(keyword_hits, partial, sorted(semantic + list(meaning.similarity.items()),
                                                                key=lambda hit: (-hit[1], hit[0])))
        return Ranking("hybrid", ranked if whole else ranked[:limit], keyword, meaning, partial=counted, whole=whole)
    while True:
        matched = keyword_matching(index, query, [cid for cid, _ in top])
        both = [(cid, sim) for cid, sim in top if cid in matched]
        if len(both) >= limit or len(top) < k:
            break
        k *= 4
        top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)
    meaning.hits = top
    ranked = [(cid, 1.0 + sim, "hybrid") for cid, sim in both]
    if len(ranked) < limit:  # the semantic leg was read to its end: every other keyword match is under 0.3
        found = {cid for cid, _ in both}
        ranked += [(cid, 1.0, "keyword") for cid, _, _ in keyword_search(index, query, limit + len(found), allowed)
                   if cid not in found]
        ranked += [(cid, sim, "semantic") for cid, sim in top if cid not in matched]
    return Ranking("hybrid", ranked[:limit], keyword, meaning)


def partial_matches(index: ProjectIndex, query, limit: int, allowed: set[str] | None) -> list[str]:
    """The chunks BM25 ranks best for any of the query's words (stemmed), best first."""
    if not query.fts.any_match or limit <= 0:
        return []
    try:
        return reads.bm25_chunk_ids(index, query.fts.any_match, limit, allowed)
    except sqlite3.OperationalError:  # parse_query only emits valid syntax; a partial leg is never worth a failure
        return []


def _beyond(index: ProjectIndex, vector, found: set[str], limit: int | None, chunk_ids: list[str] | None,
            top: list[tuple[str, float]], k: int | None) -> list[tuple[str, float]]:
    """The best `limit` chunks by meaning (at least 0.3) that are not in `found` (None: all of them), from `top`
    (the best k) and further down the leg when those do not hold enough."""
    while True:
        others = [hit for hit in top if hit[0] not in found]
        if k is None or len(others) >= limit or len(top) < k:
            return others if limit is None else others[:limit]
        k *= 4
        top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)


def _similarities(index: ProjectIndex, vector, hits: list[tuple[str, float]], chunk_ids: list[str]
                  ) -> dict[str, float]:
    """The similarity of each of these chunks (not among hits) that reaches the semantic leg's threshold."""
    have = {cid for cid, _ in hits}
    ids, sims = index.cache.similarities(vector, [cid for cid in dict.fromkeys(chunk_ids) if cid not in have])
    return {cid: float(sim) for cid, sim in zip(ids, sims.tolist()) if sim >= HYBRID_THRESHOLD}


def _merge(keyword_hits, partial, semantic_hits) -> tuple[list[tuple[str, float, str]], dict[str, int]]:
    """The merged ranking, and the partial matches it counted as found by both (with their BM25 rank)."""
    sims = dict(semantic_hits)
    merged: list[tuple[str, float, str]] = []
    counted: dict[str, int] = {}
    for cid, _, _ in keyword_hits:
        merged.append((cid, 1.0 + sims.pop(cid), "hybrid") if cid in sims else (cid, 1.0, "keyword"))
    for bm25_rank, cid in enumerate(partial, start=1):
        if sims.get(cid, 0.0) >= PARTIAL_MIN_SIMILARITY:
            counted[cid] = bm25_rank
            merged.append((cid, 1.0 + sims.pop(cid), "hybrid"))
    merged += [(cid, sim, "semantic") for cid, sim in sims.items()]
    merged.sort(key=lambda s: -s[1])  # stable: keyword-only ties keep the keyword leg's order (titles first)
    return merged, counted
