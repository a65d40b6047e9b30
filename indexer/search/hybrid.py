"""Hybrid search, the default: keyword and semantic together, a chunk found by both boosted above the rest.

The scores keep spec 000's shape: found by the keyword side alone 1.0, by meaning alone its similarity (at least
0.3), found by both at least 1.0 and boosted. What boosts a chunk found by both is its note's place in the engine's
best ranking of notes, vault_search's fusion (vault.rank_notes): the note's BM25 for the question's words (all of
them, then some), its best passage by meaning and its first passage by meaning, each over its leg's best, fused as
the best leg plus 0.3 of the mean of the others. So

    score = 1 + (note score + name bonus) x similarity / the note's best similarity + CHUNK_WEIGHT x similarity

- The note score is that fusion (0 to 1.3); the name bonus is TITLE_BONUS[2] (1.0) when the whole query is the
  note's title, an alias or its file name, TITLE_BONUS[1] (0.5) when it stands whole inside one: the note named
  what you typed comes first.
- The note's best passage by meaning carries the whole note score; its other passages a share of it, as close as
  they are in meaning to the best one, so that a grouped search's pool holds many notes, not one note's passages.

Found by the keyword side means spec 000's keyword search (every word in the text, the title or the path, titles
first), or BM25 finding every word in its title, headings, text or properties, or, for a question, some of its words
(stemmed; the commonest words of a big project left out: Query.any_match): a question rarely has every word in one
passage, and these partial matches are how the words of a question count at all. A chunk found by meaning without
any of the words stays semantic, under every chunk that has them.

The rule was chosen on the tuning half of the graded questions (tests/bench/questions) and SciFact; the held-out
half is reported beside it. Without the model: the keyword side alone.
"""
from __future__ import annotations

import heapq
import sqlite3
from concurrent.futures import ThreadPoolExecutor

from ..text.boilerplate import mostly_shared
from . import chunk_reads as reads
from .across import asking, names_across
from .grammar import CHUNK_WEIGHT, TITLE_BONUS
from .index import ProjectIndex
from .keyword import keyword_search
from .records import KeywordLeg, MeaningLeg, Ranking
from .semantic import HYBRID_THRESHOLD, unavailable
from .vault import LEG_CHUNKS, rank_notes

# The keyword leg is read in its own order up to this many chunks when every result's place in it must be known.
KEYWORD_POOL = 5000
# How deep hybrid reads each leg of the note ranking (vault_search reads LEG_CHUNKS): every keystroke of the window
# runs it. Unchanged at this depth: the graded questions, both halves, and SciFact (tests/bench).
LEG_DEPTH = 1000
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="skmemory-hybrid")


def hybrid(index: ProjectIndex, query, limit: int | None, allowed: set[str] | None = None,
           chunk_ids: list[str] | None = None, ordered: bool = False) -> Ranking:
    """The first `limit` chunks of hybrid's ranking (None: every chunk that scores), with its legs' records.

    The keyword side is read beside the note ranking (vault.rank_notes, whose meaning scan hybrid's semantic leg
    shares); then each chunk close enough in meaning is asked whether it holds the words, and scored by its note.
    Without the model: the keyword side alone.
    """
    whole = limit is None
    query = names_across(index, query, asking(index, query)) or query  # across languages: its names alone
    probe = KEYWORD_POOL if whole or ordered else 4 * limit + 64
    if not index.semantic_available:  # the keyword side alone, then the chunks with some of the words (BM25)
        want = KEYWORD_POOL if whole else limit
        hits = keyword_side(index, query, want, allowed)
        some = [cid for cid in partial_matches(index, query, want, allowed) if cid not in set(hits)]
        some = some[:want - len(hits)]
        return Ranking("hybrid", [(cid, 1.0, "keyword") for cid in hits + some], KeywordLeg(hits, query.terms),
                       MeaningLeg([], HYBRID_THRESHOLD, error=unavailable(index)),
                       partial={cid: rank for rank, cid in enumerate(some, start=1)}, whole=whole)
    keyword_future = _pool.submit(keyword_side, index, query, probe, allowed)  # beside the scan
    # The note ranking always hears the notes with some of the words, whatever the limit (rank_notes adds them when
    # fewer than `limit` notes hold all of them): a result must not depend on how many were asked for.
    notes = rank_notes(index, query, KEYWORD_POOL, whole=whole, depth=LEG_DEPTH)
    keyword = KeywordLeg(keyword_future.result(), query.terms)
    vector = notes.vector if notes.vector is not None else query.vector(index)
    top = notes.scan.get("hits", [])
    if whole and len(top) >= LEG_CHUNKS:  # every chunk that scores: the rest of the leg too
        top = index.cache.search(vector, HYBRID_THRESHOLD, None, chunk_ids=chunk_ids)
    meaning = MeaningLeg(top, HYBRID_THRESHOLD, vector)
    meaning.similarity = _similarities(index, vector, top, keyword.chunks)  # keyword chunks further down the leg
    sims = dict(top) | meaning.similarity
    owners = notes.scan.get("owners", {})
    if missing := [cid for cid in sims if cid not in owners]:
        owners = owners | reads.owners(index, missing)
        if gone := {cid for cid in missing if cid not in owners}:  # deleted since the scan: answered without them
            sims = {cid: sim for cid, sim in sims.items() if cid not in gone}
            top = [(cid, sim) for cid, sim in top if cid not in gone]
            meaning.similarity = {cid: sim for cid, sim in meaning.similarity.items() if cid not in gone}
    # Which chunks hold the words: those the note ranking's BM25 legs read (every word, then some of them; the best
    # LEG_CHUNKS of each), so a question's OR is not read a second time.
    rowid = notes.scan.get("rowids", {})
    every, some = notes.scan.get("every_word", {}), notes.scan.get("some_words", {})
    full = set(keyword.chunks) | {cid for cid in sims if rowid.get(cid) in every}
    partial = {cid: some[rowid[cid]] for cid in sims if cid not in full and rowid.get(cid) in some}
    fused = {c.document_id: c for c in notes.fused}
    # Across languages, a passage in another language than the question can never hold its words: judged by meaning
    # alone, as if it held them (vault_search's legs count a leg that cannot see a note the same way).
    unreadable = index.unreadable_by_words(sims) if hasattr(index, "unreadable_by_words") else set()
    best: dict[str, float] = {}
    for cid, sim in sims.items():
        if cid in full or cid in partial or cid in unreadable:
            doc = owners[cid][0]
            best[doc] = max(best.get(doc, 0.0), sim)
    scored, boosts = [], {}
    for cid, sim in sims.items():
        if cid not in full and cid not in partial and cid not in unreadable:
            continue
        doc = owners[cid][0]
        c = fused.get(doc)
        name = c.name if c else 0
        note = c.score - TITLE_BONUS[name] if c else 0.0
        share = sim / best[doc]
        boosts[cid] = (name, note, share)
        scored.append((cid, 1.0 + (note + TITLE_BONUS[name]) * share + CHUNK_WEIGHT * sim, "hybrid"))
    if found := _named_by_words(index, vector, keyword.chunks, sims, fused, best, scored, boosts):
        owners, sims = owners | {cid: owner for cid, (owner, _) in found.items()}, sims | {
            cid: sim for cid, (_, sim) in found.items()}
        meaning.similarity.update({cid: sim for cid, (_, sim) in found.items()})  # the window shows how close
    scored.sort(key=lambda s: (-s[1], s[0]))
    scored = _boilerplate_last(index, scored, boosts, sims, {cid: owners[cid][0] for cid in boosts}, limit)
    both = set(boosts)
    partial = {cid: rank for cid, rank in partial.items() if cid in both}
    answered = {owners[cid][0] for cid in both}
    meaning_only = {owners[cid][0] for cid, _ in top if cid not in both} - answered
    alone = _keyword_alone(index, notes, keyword.chunks, both, answered, meaning_only, partial,
                           None if whole else probe)
    ranked = scored + [(cid, 1.0, "keyword") for cid in alone]
    ranked += [(cid, sim, "semantic") for cid, sim in top if cid not in both]
    return Ranking("hybrid", ranked if whole else ranked[:limit], keyword, meaning, partial=partial, boosts=boosts,
                   whole=whole, unreadable=unreadable & both)


def _named_by_words(index: ProjectIndex, vector, keyword: list[str], sims: dict, fused: dict, best: dict,
                    scored: list, boosts: dict) -> dict[str, tuple[tuple[str, int], float]]:
    """The note whose name is what was typed, found by its words but by no passage close in meaning (a person's
    handle, "istfredy"), scores by its first passage on the keyword side as if that were its best by meaning: the
    note named so comes first, not under a list of people that names it too (measured on a real vault: 2 of 150
    titles). Returns each such passage's (owner, similarity)."""
    named = {doc for doc, c in fused.items() if c.name == 2 and doc not in best}
    if not named:
        return {}
    owner = reads.owners(index, [cid for cid in keyword if cid not in sims])
    picked = {}
    for cid in keyword:
        doc = owner.get(cid, (None,))[0]
        if doc in named:
            named.discard(doc)
            picked[cid] = owner[cid]
    known = dict(zip(*_similarity_pairs(index, vector, list(picked))))
    found = {}
    for cid in picked:
        sim = known.get(cid, 0.0)  # 0 for a passage not embedded yet
        c, found[cid] = fused[picked[cid][0]], (picked[cid], sim)
        boosts[cid] = (c.name, c.score - TITLE_BONUS[c.name], 1.0)
        scored.append((cid, 1.0 + c.score + CHUNK_WEIGHT * sim, "hybrid"))
    return found


def _keyword_alone(index: ProjectIndex, notes, keyword: list[str], both: set[str], answered: set[str],
                   meaning_only: set[str], partial: dict[str, int], limit: int | None) -> list[str]:
    """The chunks found by the keyword side alone (1.0), in their notes' order in the note ranking: the keyword
    side's chunks, and the best passage by BM25 of each other note that holds some of the question's words
    (recorded in `partial` with its BM25 rank) and that the note ranking puts above every note found by meaning
    alone: a note with a few of the words, and nothing close in meaning, must not push down a note that is."""
    fused = {c.document_id: (place, c.score) for place, c in enumerate(notes.fused)}
    alone = [cid for cid in keyword if cid not in both]
    first_meaning = min((fused[doc][0] for doc in meaning_only if doc in fused), default=len(fused))
    legs = [(rank, hit) for rank, hit in enumerate(notes.legs.get("bm25", []), start=1)
            if hit[0] not in answered and fused.get(hit[0], (len(fused),))[0] < first_meaning]
    at = reads.chunk_ids_at(index, [hit[1] for _, hit in legs]) if legs else {}
    have = set(alone)
    owner = {cid: doc for cid, (doc, _) in reads.owners(index, alone).items()} if alone else {}
    ranks = {}
    for rank, (doc, rowid, _) in legs:
        cid = at.get(rowid)
        if cid and cid not in have and cid not in both:
            have.add(cid)
            alone.append(cid)
            owner[cid], ranks[cid] = doc, rank
    never = (len(fused), 0.0)
    alone = sorted(alone, key=lambda cid: (-fused.get(owner.get(cid), never)[1], fused.get(owner.get(cid), never)[0]))
    alone = alone[:limit]
    partial |= {cid: ranks[cid] - notes.strict for cid in alone if ranks.get(cid, 0) > notes.strict}
    return alone


def _boilerplate_last(index: ProjectIndex, scored: list, boosts: dict, sims: dict, owner: dict[str, str],
                      head: int | None) -> list:
    """The ranking with each note's boilerplate passages (text many notes share: text/boilerplate.py) last within
    their note: a note whose best passage near the top is mostly a shared footer is represented by its best other
    passage, which then carries the note score (the footer keeps only its own 0.05 x similarity)."""
    top: dict[str, str] = {}
    for cid, _, _ in scored[:head]:
        top.setdefault(owner[cid], cid)
    boiler = boilerplate_chunks(index, list(top.values()))
    if not boiler:
        return scored
    docs = {owner[cid] for cid in boiler}
    others = [cid for cid, _, _ in scored if owner[cid] in docs and cid not in boiler]
    boiler |= boilerplate_chunks(index, others)
    rescored = {}
    for doc in docs:
        own = [cid for cid, _, _ in scored if owner[cid] == doc]
        kept = [cid for cid in own if cid not in boiler]
        if not kept:  # nothing but shared text matched: the note keeps it
            continue
        best = max(sims[cid] for cid in kept)
        for cid in own:
            name, note, _ = boosts[cid]
            share = 0.0 if cid in boiler else sims[cid] / best
            boosts[cid] = (name, note, share)
            rescored[cid] = 1.0 + (note + TITLE_BONUS[name]) * share + CHUNK_WEIGHT * sims[cid]
    scored = [(cid, rescored.get(cid, score), kind) for cid, score, kind in scored]
    return sorted(scored, key=lambda s: (-s[1], s[0]))


def boilerplate_chunks(index: ProjectIndex, chunk_ids: list[str]) -> set[str]:
    """Which of these chunks are mostly paragraphs that many notes hold (text/boilerplate.py)."""
    shared = reads.shared_paragraphs(index)
    if not chunk_ids or not shared:
        return set()
    return {cid for cid, text in reads.contents(index, chunk_ids).items() if mostly_shared(text, shared)}


def keyword_side(index: ProjectIndex, query, limit: int, allowed: set[str] | None) -> list[str]:
    """Hybrid's keyword side, best first: chunks holding every word in their text, title or path (spec 000's
    order), then chunks whose title, headings, text or properties hold every word as BM25 reads them."""
    found = [cid for cid, _, _ in keyword_search(index, query, limit, allowed)]
    if len(found) < limit and query.fts_for(index).match:
        have = set(found)
        found += [cid for cid, _ in _bm25(index, query.fts_for(index).match, limit, allowed) if cid not in have]
    return found[:limit]




def partial_matches(index: ProjectIndex, query, limit: int, allowed: set[str] | None) -> list[str]:
    """The chunks BM25 ranks best for any of the query's words (stemmed), best first: how a question is answered
    by its words while the model loads."""
    if not query.fts_for(index).any_match or limit <= 0:
        return []
    if allowed is not None:  # the allowed notes' chunks, ranked by SQL
        return _quietly(reads.bm25_chunk_ids, index, query.any_match(index), limit, allowed) or []
    scores = _quietly(query.any_scores, index) or {}
    best = heapq.nsmallest(limit, scores.items(), key=lambda hit: (-hit[1], hit[0]))  # as ORDER BY rank, rowid
    at = reads.chunk_ids_at(index, [rowid for rowid, _ in best])
    return [at[rowid] for rowid, _ in best if rowid in at]




def _bm25(index: ProjectIndex, match: str, limit: int, allowed: set[str] | None) -> list[tuple[str, float]]:
    return _quietly(reads.bm25_chunk_scores, index, match, limit, allowed) or []


def _quietly(read, *args):
    """A BM25 read, or None when FTS5 refuses the expression: parse_query only emits valid syntax, and a side of
    hybrid is never worth failing the search for."""
    try:
        return read(*args)
    except sqlite3.OperationalError:
        return None












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

