"""Why each result ranked: the legs that found it, its rank and raw score in each, the fused score and its terms.

A search returns, beside its ranking, the records of the legs it was merged from (records.py); the functions here
read them, after the ranking is done, into each result's `explain` and, for one named document, into
`explain_document`: where the document ranked in every leg, or which filter, threshold or limit kept it out.
Nothing here changes an order.

Every leg is described the same way: {"found": bool, "rank": 1-based place among the documents that leg found
(None when it did not find it), its raw score, and "why" (a sentence) when it did not}.
"""
from __future__ import annotations

import json

import numpy as np

from . import chunk_reads, note_reads
from ..contract.filters import FILTERS
from .filters import allowed_documents
from .grammar import CHUNK_WEIGHT, TITLE_BONUS, held_words
from .index import ProjectIndex
from .records import MeaningLeg, Ranking, VaultRanking
from .tags import tag_reason

ORDINAL_SUFFIX = {1: "st", 2: "nd", 3: "rd"}


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else ORDINAL_SUFFIX.get(n % 10, 'th')}"


def _document_ranks(chunk_ids: list[str], document_of: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Each document's 1-based rank among the documents of an ordered chunk list, with its best chunk."""
    out: dict[str, tuple[int, str]] = {}
    for cid in chunk_ids:
        doc = document_of.get(cid)
        if doc is not None and doc not in out:
            out[doc] = (len(out) + 1, cid)
    return out


# --- spec-000 modes: hybrid, keyword, semantic, recency, tag ----------------------------------------------------

def meaning_ranks(index: ProjectIndex, leg: MeaningLeg, chunk_ids: list[str], scope: list[str] | None
                  ) -> dict[str, tuple[int, float]]:
    """The place and similarity in the semantic leg of each of these chunks that reached its threshold.

    The leg's record holds its best chunks as far as the search read them; a chunk further down (one the merge
    asked about) is placed by reading the leg on, once, as far as the least similar of them."""
    known = {cid: (rank, sim) for rank, (cid, sim) in enumerate(leg.hits, start=1)}
    deeper = [leg.similarity[cid] for cid in chunk_ids if cid not in known and cid in leg.similarity]
    if deeper and leg.vector is not None:
        hits = index.cache.search(leg.vector, min(deeper), None, chunk_ids=scope)
        known = {cid: (rank, sim) for rank, (cid, sim) in enumerate(hits, start=1)} | known
    return known


NAME_MATCHES = {2: "the query is its title, an alias or its file name", 1: "the query stands whole in its title",
                0: "no name match"}


def _rule(search_type: str, similarity: float | None, ranking: Ranking, recency=None, boost=None,
          score: float | None = None, partial: bool = False, across: bool = False) -> str:
    threshold = ranking.meaning.threshold if ranking.meaning else None
    if search_type == "hybrid":
        name, note, share = boost or (0, 0.0, 1.0)
        found = ("found by its meaning across languages (the passage is in another language than the question, so "
                 "no word of it can match: it is scored as if it held them)" if across
                 else "found by its words and its meaning")
        return (f"{found}: 1 + (note score {note:.4f} + name {TITLE_BONUS[name]:g} "
                f"({NAME_MATCHES[name]})) × {share:.4f} (its similarity over its note's best) + {CHUNK_WEIGHT:g} "
                f"× similarity {similarity:.4f} = {score:.4f}; the note score fuses the note's legs as vault_search "
                f"does (BM25 for the words, best passage and first passage by meaning: the best leg + 0.3 × the "
                f"others' mean)")
    if search_type == "keyword" and partial:
        return ("found by some of the words alone (no passage of its note is close in meaning): 1.0, in the note "
                "ranking's order, below every note found both ways")
    if search_type == "keyword":
        return ("found by its words alone: 1.0, in the note ranking's order (title matches first, then passages "
                "holding more of the words)")
    if search_type == "recency" and recency:
        sim, age, fresh = recency
        weight, half_life = ranking.recency_rule
        return (f"recency: {1 - weight:g} × similarity {sim:.4f} + {weight:g} × freshness {fresh:.4f} "
                f"(changed {age:.0f} days ago, half-life {half_life:g} days)")
    if search_type == "tag":
        return "tag match: 1.0, newest first"
    return f"found by meaning alone: its similarity {similarity:.4f} (at least {threshold})"


def annotate(index: ProjectIndex, ranking: Ranking, results: list[dict], terms: list[str],
             scope: list[str] | None) -> None:
    """Give each spec-000 result its `explain`: the legs that found its chunk, their ranks and scores, the rule."""
    keyword_rank = ranking.keyword.ranks() if ranking.keyword else {}
    meaning = ranking.meaning
    semantic = meaning_ranks(index, meaning, [r["chunk_id"] for r in results], scope) if meaning else {}
    for place, r in enumerate(results, start=1):
        cid = r["chunk_id"]
        words = held_words(terms, r.get("content"), r.get("title"), r.get("path"))
        legs = {}
        if ranking.keyword is not None:
            if cid in keyword_rank:
                legs["keyword"] = {"found": True, "rank": keyword_rank[cid], "score": 1.0,
                                   "title": held_words(terms, r.get("title"))}
            elif cid in ranking.partial:
                legs["keyword"] = {"found": True, "rank": None, "bm25_rank": ranking.partial[cid], "score": None,
                                   "partial": True, "why": f"holds {len(words)} of the "
                                                           f"{sum(len(t) > 1 for t in terms)} words; "
                                                           f"{ordinal(ranking.partial[cid])} by BM25 among such chunks"}
            else:
                missing = [t for t in terms if t not in words and len(t) > 1]
                legs["keyword"] = {"found": False, "rank": None, "score": None,
                                   "why": f"its text, title and path lack {_quoted(missing)}" if missing
                                   else "not among the keyword leg's chunks"}
        if meaning is not None:
            if cid in semantic:
                legs["semantic"] = {"found": True, "rank": semantic[cid][0], "similarity": round(semantic[cid][1], 4),
                                    "threshold": meaning.threshold}
            else:
                legs["semantic"] = {"found": False, "rank": None, "similarity": None, "threshold": meaning.threshold,
                                    "why": meaning.error or f"similarity under {meaning.threshold}"}
        sim = semantic[cid][1] if cid in semantic else r["score"]
        boost = ranking.boosts.get(cid) if r["search_type"] == "hybrid" else None
        r["explain"] = {"mode": ranking.mode, "rank": place, "search_type": r["search_type"], "score": r["score"],
                        "legs": legs, "rule": _rule(r["search_type"], sim, ranking, ranking.recency.get(cid), boost,
                                                    r["score"], cid in ranking.partial, bool(r.get("across"))),
                        "matched_words": words}
        if boost is not None:
            r["explain"]["boost"] = {"name": boost[0], "name_bonus": TITLE_BONUS[boost[0]],
                                     "note_score": round(boost[1], 4), "share": round(boost[2], 4)}


def _quoted(words: list[str]) -> str:
    return ", ".join(f"'{w}'" for w in words)


def _unknown(index: ProjectIndex, document_id: str) -> dict:
    return {"document_id": document_id, "found": False, "rank": None, "returned": False, "legs": {},
            "verdict": f"There is no document '{document_id}' in project '{index.name}'; "
                       "copy a document_id from a result."}


def best_similarity(index: ProjectIndex, vector, chunk_ids: list[str]) -> tuple[str | None, float | None]:
    """The document chunk most similar to the query vector, and its similarity."""
    if vector is None or not chunk_ids:
        return None, None
    ids, sims = index.cache.similarities(vector, chunk_ids)
    if not ids:
        return None, None
    i = int(np.argmax(sims))
    return ids[i], float(sims[i])


def explain_document(index: ProjectIndex, ranking: Ranking, document_id: str, limit: int, terms: list[str],
                     tag_filter: tuple | None = None) -> dict:
    """Where one document ranked in each leg of a spec-000 search, or what kept it out.

    `ranking` is the search's own, ranked without a limit (a search asked to explain a document reads its legs
    whole), so a document past the limit still gets its place; tag_filter is the search's (tags_all, tags_any)
    when it had one.
    """
    row = note_reads.document(index, document_id)
    if row is None:
        return _unknown(index, document_id)
    out = {"document_id": document_id, "title": row["title"], "path": row["rel_path"]}
    if tag_filter is not None:
        reason = tag_reason(index, document_id, *tag_filter)
        if reason:
            return {**out, "found": False, "rank": None, "returned": False, "legs": {}, "removed_by": "tags",
                    "verdict": reason[0].upper() + reason[1:] + "."}
    chunks = chunk_reads.document_chunk_texts(index, document_id)
    if not chunks:
        return {**out, "found": False, "rank": None, "returned": False, "legs": {},
                "verdict": "It has no indexed text (an empty file, or one whose text could not be extracted)."}
    document_of = {cid: document_id for cid, _, _ in chunks}
    keyword, meaning = ranking.keyword, ranking.meaning
    others = chunk_reads.documents_of(index, [cid for cid, _, _ in ranking.ranked] + (keyword.chunks if keyword else [])
                                      + [cid for cid, _ in (meaning.hits if meaning else [])])
    others.update(document_of)
    legs = {}
    if keyword is not None:
        ranks = _document_ranks(keyword.chunks, others)
        if document_id in ranks:
            legs["keyword"] = {"found": True, "rank": ranks[document_id][0], "score": 1.0}
        else:
            title_path = f"{row['title']}\n{row['rel_path']}"
            present = [t for t in terms if any(t in (c + "\n" + title_path).lower() for _, _, c in chunks)]
            missing = [t for t in terms if t not in present]
            partial = [cid for cid, _, _ in chunks if cid in ranking.partial]
            legs["keyword"] = {"found": False, "rank": None, "score": None,
                               "why": (f"no chunk holds every word: {_quoted(missing)} "
                                       f"{'is' if len(missing) == 1 else 'are'} missing from the document") if missing
                               else "no single chunk holds every word together (they are spread over chunks)"}
            if partial:
                legs["keyword"]["partial"] = True
                legs["keyword"]["bm25_rank"] = min(ranking.partial[c] for c in partial)
    if meaning is not None:
        ranks = _document_ranks([cid for cid, _ in meaning.hits], others)
        if document_id in ranks:
            rank, cid = ranks[document_id]
            sim = dict(meaning.hits)[cid]
            legs["semantic"] = {"found": True, "rank": rank, "similarity": round(sim, 4),
                                "threshold": meaning.threshold}
        else:
            _, sim = best_similarity(index, meaning.vector, list(document_of))
            legs["semantic"] = {"found": False, "rank": None, "threshold": meaning.threshold,
                                "similarity": None if sim is None else round(sim, 4),
                                "why": meaning.error or (
                                    "its chunks wait for embeddings" if sim is None else
                                    f"its best chunk's similarity {sim:.4f} is under the threshold "
                                    f"{meaning.threshold}")}
    ranks = _document_ranks([cid for cid, _, _ in ranking.ranked], others)
    if document_id not in ranks:
        return {**out, "found": False, "rank": None, "returned": False, "legs": legs,
                "verdict": "No leg found it; see each leg's why."}
    rank, cid = ranks[document_id]
    score, search_type = next((s, t) for c, s, t in ranking.ranked if c == cid)
    returned = any(c in document_of for c, _, _ in ranking.ranked[:limit])
    place = next(i for i, (c, _, _) in enumerate(ranking.ranked, start=1) if c == cid)
    verdict = (f"Its best chunk ranked {ordinal(place)} of {len(ranking.ranked)} (as {search_type}, score "
               f"{score:.4f}); the document came {ordinal(rank)}")
    verdict += "." if returned else f": past the limit of {limit} results, so it was not returned."
    return {**out, "found": True, "rank": rank, "chunk_rank": place, "returned": returned, "chunk_id": cid,
            "search_type": search_type, "score": round(score, 4), "legs": legs, "verdict": verdict}


# --- vault_search ------------------------------------------------------------------------------------------------

LEG_NAMES = ("bm25", "meaning", "first_chunk")


def _leg_entry(ranking: VaultRanking, leg: str, candidate) -> dict:
    """What one leg says about a fused note: its rank and raw score there, and what it gave the fused score."""
    i = LEG_NAMES.index(leg)
    entry: dict = {"found": False, "rank": None}
    for rank, hit in enumerate(ranking.legs.get(leg) or [], start=1):
        if hit[0] == candidate.document_id:
            entry = {"found": True, "rank": rank, "score" if leg == "bm25" else "similarity": round(float(hit[2]), 4)}
            if leg == "bm25":
                entry["matched"] = "every word" if rank <= ranking.strict else "some of the words"
            break
    if i < len(candidate.parts):
        entry["contribution"] = round(candidate.parts[i], 6)
    if i < len(candidate.blind) and candidate.blind[i]:
        entry["blind"] = True
        entry["why"] = ("no vector to compare: the note has no text for the model, or it waits to be embedded; "
                        "the leg counts as the mean of the others")
    elif not entry["found"]:
        entry["why"] = (ranking.semantic_error if leg != "bm25" and ranking.semantic_error
                        else _not_found(leg, ranking.threshold))
    return entry


def fusion_rule(ranking: VaultRanking, candidate, k: int, bonus: float, weights: dict, floor: float) -> str:
    """The fused score written out with this note's numbers (and the name bonus when the query names the note);
    floor is what a meaning leg's scores are divided by at least."""
    rule = _fused_rule(ranking, candidate, k, bonus, weights, floor)
    if candidate.name:
        rule += (f"; + name {TITLE_BONUS[candidate.name]:g} ({NAME_MATCHES[candidate.name]}) = "
                 f"{candidate.score:.4f}")
    return rule


def _fused_rule(ranking: VaultRanking, candidate, k: int, bonus: float, weights: dict, floor: float) -> str:
    legs = [leg for leg in LEG_NAMES if leg in ranking.legs]
    parts = list(zip(legs, candidate.parts))
    if ranking.fusion == "rrf":
        terms = [f"1/({k} + {_rank_in(ranking, leg, candidate.document_id)})" if not blind else f"{p:.6f} (mean)"
                 for (leg, p), blind in zip(parts, candidate.blind) if p]
        return f"reciprocal rank fusion: {' + '.join(terms) or '0'} = {sum(p for _, p in parts):.6f}"
    if ranking.fusion == "max_min":
        ordered = sorted(parts, key=lambda p: -p[1])
        rest = [p for _, p in ordered[1:]]
        mean = sum(rest) / max(len(rest), 1)
        return (f"best leg {ordered[0][1]:.4f} ({ordered[0][0]}) + {bonus} × mean of the others "
                f"({', '.join(f'{p:.4f}' for p in rest)}) = {ordered[0][1] + bonus * mean:.4f}; "
                f"each leg's score is divided by that leg's best (a meaning leg's by at least {floor:g})")
    w = weights[len(parts)]
    return (f"weighted sum: {' + '.join(f'{wi} × {p:.4f} ({leg})' for wi, (leg, p) in zip(w, parts))} = "
            f"{sum(wi * p for wi, (_, p) in zip(w, parts)):.4f}")


def _rank_in(ranking: VaultRanking, leg: str, document_id: str) -> int | None:
    return next((rank for rank, hit in enumerate(ranking.legs.get(leg) or [], start=1) if hit[0] == document_id), None)


def vault_explain(ranking: VaultRanking, candidate, rule: str, matched: list[str]) -> dict:
    """One vault_search result's `explain`."""
    legs = {leg: _leg_entry(ranking, leg, candidate) for leg in _legs_of(ranking)}
    out = {"fusion": ranking.fusion, "fused_rank": ranking.fused_rank.get(candidate.document_id),
           "legs": legs, "score": round(candidate.score, 6), "rule": rule, "matched_words": matched}
    if candidate.document_id in ranking.rerank:
        out["reranked"] = {"probability": round(ranking.rerank[candidate.document_id], 4),
                           "rule": "w(r) × 1/r + (1 - w(r)) × probability; w = 0.75 to rank 3, 0.60 to 10, else 0.40"}
    return out


def _legs_of(ranking: VaultRanking) -> list[str]:
    """The legs this search ran, and the meaning leg when the model kept it from running (to say so)."""
    return [leg for leg in LEG_NAMES if leg in ranking.legs or (leg == "meaning" and ranking.semantic_error)]


def _not_found(leg: str, threshold: float) -> str:
    return {"bm25": "no chunk holds the words", "meaning": f"no chunk reaches similarity {threshold}",
            "first_chunk": f"its first chunk does not reach similarity {threshold}"}[leg]


def filter_reasons(index: ProjectIndex, filters: dict, document_id: str) -> list[str]:
    """Each filter that leaves this document out, as 'filters.<key> = <value>' with what the note has instead (the
    filter's own explanation, contract/filters.py's record)."""
    row = note_reads.document(index, document_id)
    reasons = []
    for key, value in filters.items():
        allowed = allowed_documents(index, {key: value})
        if allowed is None or document_id in allowed:
            continue
        explain = FILTERS[key].explain
        has = explain(index, row, value) if explain else ""
        reasons.append(f"filters.{key} = {json.dumps(value, default=str)} leaves it out{has}")
    return reasons


def vault_explain_document(index: ProjectIndex, ranking: VaultRanking, document_id: str, limit: int,
                           filters: dict, allowed: set[str] | None, fts_match: str) -> dict:
    """Where one note ranked in each vault_search leg, or which filter, threshold or limit kept it out."""
    row = note_reads.document(index, document_id)
    if row is None:
        return _unknown(index, document_id)
    out = {"document_id": document_id, "title": row["title"], "path": row["rel_path"]}
    if allowed is not None and document_id not in allowed:
        reasons = filter_reasons(index, filters, document_id)
        return {**out, "found": False, "rank": None, "returned": False, "legs": {}, "removed_by": reasons,
                "verdict": "Removed by the filters before any leg ran: " + "; ".join(reasons) + "."}
    chunks = chunk_reads.document_chunk_texts(index, document_id)
    fused = ranking.fused
    place = next((i for i, c in enumerate(fused, start=1) if c.document_id == document_id), None)
    candidate = fused[place - 1] if place else None
    legs = {}
    for leg in _legs_of(ranking):
        entry = _leg_entry(ranking, leg, candidate) if candidate else {"found": False, "rank": None}
        if not entry["found"] and not entry.get("blind"):
            if leg == "bm25":
                entry["why"] = _bm25_why(index, ranking.words, fts_match, document_id)
            elif ranking.semantic_error:
                entry["why"] = ranking.semantic_error
            else:
                ids = [cid for cid, ordinal, _ in chunks if leg == "meaning" or ordinal == 0]
                _, sim = best_similarity(index, ranking.vector, ids)
                entry["similarity"] = None if sim is None else round(sim, 4)
                what = "its best chunk's" if leg == "meaning" else "its first chunk's"
                entry["why"] = ("it has no vector to compare (no text for the model, or it waits to be embedded)"
                                if sim is None else f"{what} similarity {sim:.4f} is under {ranking.threshold}")
        legs[leg] = entry
    if candidate is None:
        return {**out, "found": False, "rank": None, "returned": False, "legs": legs,
                "verdict": "No leg found it; see each leg's why."}
    returned = place <= limit
    verdict = f"It ranked {ordinal(place)} of {len(fused)} notes (score {candidate.score:.4f})"
    verdict += "." if returned else f": past the limit of {limit}, so it was not returned."
    return {**out, "found": True, "rank": place, "fused_rank": ranking.fused_rank.get(document_id),
            "returned": returned,
            "score": round(candidate.score, 6), "legs": legs, "verdict": verdict}


def _bm25_why(index: ProjectIndex, words: list[str], match: str, document_id: str) -> str:
    if not match:
        return "the query has no words to match"
    missing = []
    for word in words:
        # fts.words are runs of letters and digits, so each is its own FTS5 phrase (as the parse made it)
        if not chunk_reads.bm25_holds_in_document(index, f'"{word}"', document_id):
            missing.append(word)
    if missing and len(missing) == len(words):
        return f"none of its chunks holds any of the words ({_quoted(missing)})"
    if missing:
        return (f"no chunk holds every word: {_quoted(missing)} {'is' if len(missing) == 1 else 'are'} missing; "
                "notes with only some of the words join this leg when fewer notes than the limit hold them all")
    return "no single chunk holds every word together (they are spread over chunks)"
