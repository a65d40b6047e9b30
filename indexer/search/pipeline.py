"""The one way a spec-000 search runs (hybrid, semantic, recency, keyword, tag), over one project or all of them.

A SearchRequest comes in; its query is parsed once (query.py); each project's legs rank it and return their
records (records.py); the ranking becomes chunk hits or note hits (hits.py), explained from the records when asked;
the answer is the response every surface renders. vault_search (vault.py) is the other pipeline.
"""
from __future__ import annotations

from ..errors import EmbeddingsUnavailable, InvalidQuery
from ..contract.limits import EMPTY_QUERY
from . import chunk_reads
from .explain import annotate, explain_document, ordinal
from .hits import chunk_hits, envelope, note_hits
from .across import asking, meaning_index
from .hybrid import KEYWORD_POOL, hybrid
from .index import ProjectIndex
from .keyword import keyword_search
from .query import Query
from .records import KeywordLeg, MeaningLeg, Ranking
from .reasons import across_rows, empty_reason, excluded_notice
from .switching import switch_notice
from .semantic import DIRECT_THRESHOLD, HYBRID_THRESHOLD, recency_search, semantic_search, unavailable
from .spelling import corrected
from .tags import listed_by, tag_reason, tag_search

# When nothing reaches semantic search's threshold, the best chunks above this floor are offered apart, as weaker
# matches (a question worded unlike any note often peaks at 0.3-0.45 with this model; under 0.25 is noise).
WEAKER_FLOOR = 0.25
HYBRID_WEAKER_FLOOR = 0.15  # hybrid's floor is 0.3: what it offers apart when nothing reaches it
WEAKER_LIMIT = 5
GROUP_POOL = 4  # a grouped search ranks this many chunks per document asked for, then keeps the best of each


def search(indexes: list[ProjectIndex], request) -> dict:
    """Run one request over its projects; with scope 'all', merged by score, a project without a model answering
    by keyword for itself only."""
    query = Query.of(request)
    rows = request.limit + 1  # one row past the limit is ranked, to say whether the limit cut the list (`more`)
    pool = rows * GROUP_POOL if request.group else rows
    merged, unavailable_in, extra = [], [], {}
    available = True
    listing = request.mode == "tag" or not query.meaning.strip()  # tags alone: the tagged documents, newest first
    if request.mode in ("keyword", "hybrid") and query.terms and not listing:
        for index in indexes:
            query.named(index)  # each term's titles and paths, asked once for every leg of each project
        # Never "corrected" into the notes' language: a word of another language is no typo of theirs.
        if request.correct and not any(asking(index, query).wanted for index in indexes):
            query, extra = corrected(indexes, query)
    if not listing and request.mode != "keyword":  # each project as this question's meaning is searched there
        indexes = [meaning_index(index, query) for index in indexes]
    for index in indexes:
        allowed = query.allowed(index) if query.narrowed else None
        # Asked once, before the ranking: a model that finishes loading during it must not label an answer the
        # ranking gave by keyword as one searched by meaning too (the window would never search it again).
        ready = index.semantic_available if not listing and request.mode != "keyword" else None
        if listing:
            if allowed is None:
                raise InvalidQuery("Tag search needs at least one tag: give tags_all or tags_any."
                                   if request.mode == "tag" else EMPTY_QUERY)
            results, ranking = tag_search(index, allowed, pool, query.filters.get("file", ()), listed_by(query)), None
            extra["matching_documents"] = extra.get("matching_documents", 0) + len(allowed)  # the true total
        elif allowed is not None and not allowed:
            results, ranking = [], Ranking(request.mode, [])
        else:
            # With explain_document the legs are read whole, so that the report reads the same ranking as the hits.
            ranking = rank(index, query, request.mode, None if request.explain_document else pool,
                           ordered=request.explain, fallback=request.scope == "all")
        # Keyword and tag searches never load the model to say whether they could have searched by meaning.
        available = index.embedder.now.ready if ranking is None or request.mode == "keyword" else ready
        if ranking is not None:
            terms = _terms(query, request.mode) if available else query.terms
            results = chunk_hits(index, ranking.ranked[:pool], terms, ranking.cosines(), ranking.partial,
                                 documents=rows if request.group else None, across=ranking.unreadable)
        if request.scope == "all" and not available and request.mode not in ("tag", "keyword"):
            unavailable_in.append(index.name)
        if request.explain and ranking is not None:
            annotate(index, ranking, results, _terms(query, request.mode), query.allowed_chunks(index))
        if request.explain_document and request.scope != "all":
            extra["explain_document"] = _document_report(index, query, request, ranking, results)
        merged += results
    if request.scope == "all":
        merged.sort(key=lambda r: -r["score"])
    if request.group:
        merged, extra["grouped"] = note_hits(merged, rows), "document"
    else:
        merged = merged[:rows]
    more, merged = len(merged) > request.limit, merged[:request.limit]
    if request.scope == "all" and request.explain:
        for place, r in enumerate(merged, start=1):
            r["explain"]["rank"] = place
    if not merged and request.mode in ("semantic", "recency", "hybrid") and (request.scope == "all" or available):
        extra.update(_weaker(indexes, query, request))
    if not listing:
        if across := across_rows(indexes, query):  # asked in another language than some project's notes
            extra["across"] = across
        if not merged:  # never an empty answer without a reason
            extra["empty_reason"] = empty_reason(indexes, query, request, available,
                                                 indexes[0].embedder.now.why_not if not available else None)
    notices = [excluded_notice(indexes[0], query) if request.scope != "all" else None, switch_notice(indexes)]
    if notices := [n for n in notices if n]:
        extra["notice"] = " ".join(notices)
    if request.mode in ("keyword", "hybrid"):
        behind = [(index.name, *chunk_reads.substring_backlog(index)) for index in indexes]
        behind = [(name, left, total) for name, left, total in behind if left]
        if behind:
            name, left, total = behind[0]
            extra["substring_notice"] = (
                f"Matches inside words are still being indexed in {name} ({total - left:,} of {total:,} passages "
                "so far, a few minutes after a big folder is added): whole words, titles and meaning are searched "
                "in full already, and this search found what the index holds.")
    if request.mode not in ("keyword", "tag") and (unavailable_in or not available):
        missing = [i for i in indexes if i.name in unavailable_in] or indexes  # each project has its model
        extra["semantic_reason"] = missing[0].embedder.now.why_not
    if request.scope == "all":
        return envelope(merged, request.mode, query.text, not unavailable_in, request.limit, more, scope="all",
                        projects=[i.name for i in indexes], keyword_only_projects=unavailable_in, **extra)
    return envelope(merged, request.mode, query.text, available, request.limit, more, project=indexes[0].name,
                    **extra)


def _terms(query: Query, mode: str) -> list[str]:
    """The words a mode highlights and explains: the keyword leg's terms, or for meaning alone the query's words."""
    return query.terms if mode in ("keyword", "hybrid") else query.words


def rank(index: ProjectIndex, query: Query, mode: str, limit: int | None, ordered: bool = False,
         fallback: bool = False) -> Ranking:
    """One project's ranking in one mode (limit None: every chunk that scores). Semantic modes without the model
    raise, or with fallback answer by keyword."""
    allowed, chunks = query.allowed(index), query.allowed_chunks(index)
    if mode == "hybrid":
        return hybrid(index, query, limit, allowed, chunks, ordered)
    if mode == "keyword" or not index.semantic_available:
        if mode != "keyword" and not fallback:
            if index.embedder.now.loading:
                raise EmbeddingsUnavailable("Meaning search is still loading (the model loads once, when the server "
                                            "starts, and its first start on a computer also prepares it for this CPU: "
                                            "about a minute on two cores); ask again soon, or use hybrid or keyword "
                                            "search, which answer now.")
            raise EmbeddingsUnavailable(
                f"Semantic search needs the embedding model, which is unavailable: {index.embedder.now.reason}. "
                "Use keyword or hybrid search, or fix the model (SKMEMORY_MODEL).")
        hits = keyword_search(index, query, KEYWORD_POOL if limit is None else limit, allowed)
        meaning = None if mode == "keyword" else MeaningLeg([], None, error=unavailable(index))
        return Ranking(mode, hits, KeywordLeg([cid for cid, _, _ in hits], query.terms), meaning, whole=limit is None)
    if mode == "semantic":
        return semantic_search(index, query, limit, chunk_ids=chunks)
    return recency_search(index, query, limit, chunk_ids=chunks)


def _weaker(indexes: list[ProjectIndex], query: Query, request) -> dict:
    """The best chunks under the mode's threshold by meaning (down to WEAKER_FLOOR), kept apart from the results."""
    pool = WEAKER_LIMIT * GROUP_POOL if request.group else WEAKER_LIMIT
    floor, threshold = (HYBRID_WEAKER_FLOOR, HYBRID_THRESHOLD) if request.mode == "hybrid" else (WEAKER_FLOOR,
                                                                                                DIRECT_THRESHOLD)
    weaker: list[dict] = []
    for index in indexes:
        if not index.semantic_available:
            continue
        allowed = query.allowed(index)
        if allowed is not None and not allowed:
            continue
        ranking = semantic_search(index, query, pool, floor, chunk_ids=query.allowed_chunks(index))
        rows = chunk_hits(index, ranking.ranked, query.words, dict(ranking.meaning.hits))
        weaker += note_hits(rows, WEAKER_LIMIT) if request.group else rows[:WEAKER_LIMIT]
    if len(indexes) > 1:
        weaker.sort(key=lambda r: -r["score"])
    elif not weaker and indexes and query.allowed(indexes[0]) == set():
        return {}
    return {"threshold": threshold, "weaker_matches": weaker[:WEAKER_LIMIT]}


def _document_report(index: ProjectIndex, query: Query, request, ranking: Ranking | None, results: list[dict]
                     ) -> dict:
    """Where the request's explain_document ranked, or what kept it out, read from this search's own ranking."""
    document_id = request.explain_document
    tag_filter = (query.tags_all, query.tags_any) if query.tags_all or query.tags_any else None
    if ranking is None:  # a tag listing: newest first
        return _tag_report(index, query, document_id, request.limit, results)
    return explain_document(index, ranking, document_id, request.limit, _terms(query, request.mode), tag_filter)


def _tag_report(index: ProjectIndex, query: Query, document_id: str, limit: int, results: list[dict]) -> dict:
    everything = tag_search(index, query.allowed(index), None)
    place = next((i for i, r in enumerate(everything, start=1) if r["document_id"] == document_id), None)
    if place is None:
        reason = tag_reason(index, document_id, query.tags_all, query.tags_any) or "it is not in this project"
        return {"document_id": document_id, "found": False, "rank": None, "returned": False, "legs": {},
                "removed_by": "tags", "verdict": reason[0].upper() + reason[1:] + "."}
    returned = place <= limit and any(r["document_id"] == document_id for r in results)
    return {"document_id": document_id, "found": True, "rank": place, "returned": returned, "legs": {},
            "verdict": f"It has the tags and came {ordinal(place)} of {len(everything)}, newest first"
                       + ("." if returned else f": past the limit of {limit}, so it was not returned.")}
