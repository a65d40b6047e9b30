"""Hybrid search, the default: keyword and semantic together, a chunk found by both boosted above the rest.

The scores keep spec 000's shape: found by the keyword side alone 1.0, by meaning alone its similarity (at least
0.3), found by both at least 1.0 and boosted:

    1 + similarity + name bonus + STRENGTH_WEIGHT * word strength

- The name bonus is TITLE_BONUS[2] when the whole query is the note's title, an alias or its file name, and
  TITLE_BONUS[1] when it stands whole inside one: the note named what you typed comes first (a known item), above
  notes that merely mention it in a link.
- Word strength is how strongly the words match: the chunk's field-weighted BM25 (title, headings, text, the note's
  properties) over the best of the keyword side's chunks.

The keyword side holds the chunks where every word (stopwords left out) is in the text, the title or the path
(spec 000's substring match, in its order: titles first), and then those whose title, headings, text or properties
hold every word as BM25 reads them (stemmed: an id in the frontmatter, `running` for `runs`). A long question
rarely has every word in one chunk: when none does, the PARTIAL_POOL chunks BM25 ranks best for some of the words
count as found by both, but only when meaning found them as strongly as semantic search alone requires (0.5).

The legs are read only as far as the first `limit` results need (see `hybrid`); with no limit (explain_document) or
with `ordered` (explain) the keyword leg is read in its own order to KEYWORD_POOL, so that every result's place in
it is known. The rule is chosen on the graded vault questions and SciFact (tests/bench).
"""
from __future__ import annotations

import heapq

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
TITLE_BONUS = {2: 1.0, 1: 0.5, 0: 0.0}  # the query is the note's name (2), or stands whole inside it (1)
STRENGTH_WEIGHT = 0.3
STRENGTH_REFERENCE = 64  # word strength is measured against the best of the keyword side's first chunks
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skmemory-hybrid")


def hybrid(index: ProjectIndex, query, limit: int | None, allowed: set[str] | None = None,
           chunk_ids: list[str] | None = None, ordered: bool = False) -> Ranking:
    """The first `limit` chunks of hybrid's ranking (None: every chunk that scores), with its legs' records.

    The keyword side is probed beside the semantic scan. When it finds fewer chunks than the probe (most
    questions), they are merged whole with the best chunks by meaning beyond them. When it finds more (a common
    word), none of them is fetched whole: a chunk found by both scores over 1, above any other, so the semantic leg
    is read best first and each stretch of it asked which of its chunks the keyword side would find, until the
    `limit` best are certain (no chunk further down could outscore them) or the leg ends (under 0.3); the notes
    named by the query are asked for directly. Only then are the keyword side's other chunks (1.0, in its order)
    and the rest of the semantic leg needed. Without the model: the keyword side alone.
    """
    whole = limit is None
    probe = KEYWORD_POOL if whole or ordered else 4 * limit + 64
    if not index.semantic_available:
        hits = keyword_side(index, query, KEYWORD_POOL if whole else limit, allowed)
        return Ranking("hybrid", [(cid, 1.0, "keyword") for cid in hits], KeywordLeg(hits, query.terms),
                       MeaningLeg([], HYBRID_THRESHOLD, error=unavailable(index)), whole=whole)
    keyword_future = _pool.submit(keyword_side, index, query, probe, allowed)  # beside the scan
    vector = query.vector(index)
    k = None if whole else 4 * limit + 64
    top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)
    keyword = KeywordLeg(keyword_future.result(), query.terms)
    meaning = MeaningLeg(top, HYBRID_THRESHOLD, vector)
    if len(keyword.chunks) < probe or probe == KEYWORD_POOL:  # the whole keyword side (as far as KEYWORD_POOL)
        semantic = _beyond(index, vector, set(keyword.chunks), limit, chunk_ids, top, k)
        partial = partial_matches(index, query, PARTIAL_POOL, allowed) if semantic and not keyword.chunks else []
        meaning.similarity = _similarities(index, vector, semantic, keyword.chunks + partial)
        sims = dict(semantic) | meaning.similarity
        boosts = _boosts(index, query, [c for c in keyword.chunks + partial if c in sims],
                         _strength_scale(index, query, keyword.chunks or partial))
        ranked, counted = _merge(keyword.chunks, partial, sorted(sims.items(), key=lambda hit: (-hit[1], hit[0])),
                                 boosts)
        return Ranking("hybrid", ranked if whole else ranked[:limit], keyword, meaning, partial=counted,
                       boosts=boosts, whole=whole)
    named = _named_chunks(index, query, allowed)  # a note named by the query may lie far down the semantic leg
    named_sims = dict(zip(*_similarity_pairs(index, vector, named)))
    scale, boosts = _strength_scale(index, query, keyword.chunks), {}
    while True:
        matched = keyword_matching(index, query, [cid for cid, _ in top]) | bm25_matching(
            index, query, [cid for cid, _ in top])
        both = {cid: sim for cid, sim in top if cid in matched}
        both |= {cid: sim for cid, sim in named_sims.items() if sim >= HYBRID_THRESHOLD}
        boosts |= _boosts(index, query, [cid for cid in both if cid not in boosts], scale)  # each chunk once
        scores = sorted((1.0 + sim + _bonus(boosts.get(cid)) for cid, sim in both.items()), reverse=True)
        exhausted = len(top) < k
        # A chunk further down scores at most 1 + the last similarity read + the word strength bonus.
        if exhausted or (len(scores) >= limit and scores[limit - 1] >= 1.0 + top[-1][1] + STRENGTH_WEIGHT):
            break
        k *= 4
        top = index.cache.search(vector, HYBRID_THRESHOLD, k, chunk_ids=chunk_ids)
    meaning.hits = top
    meaning.similarity = {cid: sim for cid, sim in named_sims.items() if cid not in dict(top)}
    ranked = sorted(((cid, 1.0 + sim + _bonus(boosts.get(cid)), "hybrid") for cid, sim in both.items()),
                    key=lambda s: (-s[1], s[0]))
    if len(ranked) < limit:  # the semantic leg was read to its end: every other keyword match is under 0.3
        found = set(both)
        ranked += [(cid, 1.0, "keyword") for cid in keyword_side(index, query, limit + len(found), allowed)
                   if cid not in found]
        ranked += [(cid, sim, "semantic") for cid, sim in top if cid not in matched and cid not in found]
    return Ranking("hybrid", ranked[:limit], keyword, meaning, boosts=boosts)


def keyword_side(index: ProjectIndex, query, limit: int, allowed: set[str] | None) -> list[str]:
    """Hybrid's keyword side, best first: chunks holding every word in their text, title or path (spec 000's
    order), then chunks whose title, headings, text or properties hold every word as BM25 reads them."""
    found = [cid for cid, _, _ in keyword_search(index, query, limit, allowed)]
    if len(found) < limit and query.fts.match:
        have = set(found)
        found += [cid for cid, _ in _bm25(index, query.fts.match, limit, allowed) if cid not in have]
    return found[:limit]


def bm25_matching(index: ProjectIndex, query, chunk_ids: list[str]) -> set[str]:
    """Which of these chunks hold every word as BM25 reads them (title, headings, text, properties)."""
    if not query.fts.match or not chunk_ids:
        return set()
    return set(_quietly(reads.bm25_scores_of, index, query.fts.match, chunk_ids) or ())


def partial_matches(index: ProjectIndex, query, limit: int, allowed: set[str] | None) -> list[str]:
    """The chunks BM25 ranks best for any of the query's words (stemmed), best first."""
    if not query.fts.any_match or limit <= 0:
        return []
    if allowed is not None:  # the allowed notes' chunks, ranked by SQL
        return _quietly(reads.bm25_chunk_ids, index, query.any_match(index), limit, allowed) or []
    scores = _quietly(query.any_scores, index) or {}
    best = heapq.nsmallest(limit, scores.items(), key=lambda hit: (-hit[1], hit[0]))  # as ORDER BY rank, rowid
    at = reads.chunk_ids_at(index, [rowid for rowid, _ in best])
    return [at[rowid] for rowid, _ in best if rowid in at]


def _word_scores(index: ProjectIndex, query, chunk_ids: list[str]) -> dict[str, float]:
    """The BM25 score, for the query's words (any of them, or its one word), of each of these chunks that holds
    them; a question's OR is read once per search (Query.any_scores)."""
    if query.fts.any_match:
        scores = _quietly(query.any_scores, index) or {}
        return {cid: scores[rowid] for cid, rowid in reads.rowids_of(index, chunk_ids).items() if rowid in scores}
    if not query.fts.match:
        return {}
    return _quietly(reads.bm25_scores_of, index, query.fts.match, chunk_ids) or {}


def _bm25(index: ProjectIndex, match: str, limit: int, allowed: set[str] | None) -> list[tuple[str, float]]:
    return _quietly(reads.bm25_chunk_scores, index, match, limit, allowed) or []


def _quietly(read, *args):
    """A BM25 read, or None when FTS5 refuses the expression: parse_query only emits valid syntax, and a side of
    hybrid is never worth failing the search for."""
    try:
        return read(*args)
    except sqlite3.OperationalError:
        return None


def _named_chunks(index: ProjectIndex, query, allowed: set[str] | None) -> list[str]:
    """The chunks of the notes the query names (where a name bonus can be)."""
    docs = [doc for doc in query.named_documents(index) if allowed is None or doc in allowed]
    return reads.chunk_ids_of(index, sorted(docs)) if docs else []


def _strength_scale(index: ProjectIndex, query, reference: list[str]) -> float:
    """What word strength is measured against: the best BM25 for the words among the first STRENGTH_REFERENCE
    chunks of `reference` (the keyword side, or the partial matches). It does not depend on how far the legs were
    read, so every branch and limit scores a chunk alike."""
    strength = _word_scores(index, query, reference[:STRENGTH_REFERENCE]) if reference else {}
    return max([0.0, *strength.values()]) or 1.0


def _boosts(index: ProjectIndex, query, chunk_ids: list[str], scale: float) -> dict[str, tuple[int, float]]:
    """(name match, word strength) of each of these chunks: how the query names its note (Query.named_documents),
    and its BM25 for the words over `scale` (_strength_scale), at most 1."""
    if not chunk_ids:
        return {}
    named = query.named_documents(index)
    owner = reads.documents_of(index, chunk_ids) if named else {}
    strength = _word_scores(index, query, chunk_ids)
    return {cid: (named.get(owner.get(cid), 0), min(max(strength.get(cid, 0.0), 0.0) / scale, 1.0))
            for cid in chunk_ids}


def _bonus(boost: tuple[int, float] | None) -> float:
    return 0.0 if boost is None else TITLE_BONUS[boost[0]] + STRENGTH_WEIGHT * boost[1]


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


def _similarity_pairs(index: ProjectIndex, vector, chunk_ids: list[str]) -> tuple[list[str], list[float]]:
    if not chunk_ids:
        return [], []
    ids, sims = index.cache.similarities(vector, list(dict.fromkeys(chunk_ids)))
    return ids, [float(s) for s in sims.tolist()]


def _similarities(index: ProjectIndex, vector, hits: list[tuple[str, float]], chunk_ids: list[str]
                  ) -> dict[str, float]:
    """The similarity of each of these chunks (not among hits) that reaches the semantic leg's threshold."""
    have = {cid for cid, _ in hits}
    ids, sims = _similarity_pairs(index, vector, [cid for cid in chunk_ids if cid not in have])
    return {cid: sim for cid, sim in zip(ids, sims) if sim >= HYBRID_THRESHOLD}


def _merge(keyword: list[str], partial: list[str], semantic_hits, boosts: dict
           ) -> tuple[list[tuple[str, float, str]], dict[str, int]]:
    """The merged ranking, and the partial matches it counted as found by both (with their BM25 rank)."""
    sims = dict(semantic_hits)
    merged: list[tuple[str, float, str]] = []
    counted: dict[str, int] = {}
    for cid in keyword:
        merged.append((cid, 1.0 + sims.pop(cid) + _bonus(boosts.get(cid)), "hybrid") if cid in sims
                      else (cid, 1.0, "keyword"))
    for bm25_rank, cid in enumerate(partial, start=1):
        if sims.get(cid, 0.0) >= PARTIAL_MIN_SIMILARITY:
            counted[cid] = bm25_rank
            merged.append((cid, 1.0 + sims.pop(cid) + _bonus(boosts.get(cid)), "hybrid"))
    merged += [(cid, sim, "semantic") for cid, sim in sims.items()]
    merged.sort(key=lambda s: -s[1])  # stable: keyword-only ties keep the keyword side's order (titles first)
    return merged, counted
