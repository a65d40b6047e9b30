"""One entry point per spec-000 mode over one project or all of them, returning the common response shape."""
from __future__ import annotations

from ..errors import EmbeddingsUnavailable, InvalidQuery
from ..limits import check_number, check_query
from .explain import Trace, annotate, explain_document, ordinal, tag_reason
from .hybrid import KEYWORD_POOL, hybrid_search
from .index import ProjectIndex
from .keyword import keyword_search, parse_terms
from .results import GROUP_POOL, envelope, group_by_document, query_words, result_rows
from .semantic import DIRECT_THRESHOLD, recency_search, semantic_search
from .tags import chunks_of, documents_with_tags, tag_search

MODES = ("hybrid", "semantic", "recency", "keyword", "tag")
# When nothing reaches semantic search's threshold, the best chunks above this floor are offered apart, as weaker
# matches (a question worded unlike any note often peaks at 0.3-0.45 with this model; under 0.25 is noise).
WEAKER_FLOOR = 0.25
WEAKER_LIMIT = 5


def check_request(query: str, mode: str, limit: int) -> None:
    """Refuse a request that cannot run, with a sentence that says what to change."""
    if mode not in MODES:
        raise InvalidQuery(f"Unknown search mode '{mode}'; use one of: {', '.join(MODES)}.")
    check_number("limit", limit)
    check_query(query)


def run_mode(index: ProjectIndex, query: str, mode: str, limit: int | None, tags_all=None, tags_any=None,
             fallback: bool = False, trace: Trace | None = None) -> tuple[list[dict], bool]:
    """Search one project in one mode; return (results, semantic_available).

    Tags, when given, filter every mode. With fallback=True a semantic mode without a model answers with
    keyword search instead of raising (cross-project search uses this per project). A trace records what each
    leg found (for explain); limit None ranks everything (for explain_document).
    """
    docs = documents_with_tags(index, tags_all, tags_any)
    if mode == "tag":
        if docs is None:
            raise InvalidQuery("Tag search needs at least one tag: give tags_all or tags_any.")
        return tag_search(index, tags_all, tags_any, limit), index.embedder.state == "ready"
    if not (query or "").strip():
        if docs is not None:  # tags alone: a tag search
            return tag_search(index, tags_all, tags_any, limit), index.embedder.state == "ready"
        raise InvalidQuery("Type something to search for (the query is empty).")
    if docs is not None and not docs:
        return [], index.semantic_available
    chunk_ids = chunks_of(index, docs) if docs is not None else None
    terms = parse_terms(query) if mode in ("keyword", "hybrid") else query_words(query)
    if trace is not None:
        trace.terms = terms
    if mode == "keyword":
        return result_rows(index, _keyword(index, query, limit, docs, trace), terms), index.semantic_available
    if mode == "hybrid":
        scored, available = hybrid_search(index, query, limit, docs, chunk_ids, trace)
        return result_rows(index, scored, parse_terms(query)), available
    if not index.semantic_available:
        if fallback:
            if trace is not None:
                trace.semantic_error = f"the embedding model is unavailable ({index.embedder.error})"
            return result_rows(index, _keyword(index, query, limit, docs, trace), parse_terms(query)), False
        raise EmbeddingsUnavailable(
            f"Semantic search needs the embedding model, which is unavailable: {index.embedder.error}. "
            "Use keyword or hybrid search, or fix the model (SKMEMORY_MODEL)."
        )
    if mode == "semantic":
        scored = semantic_search(index, query, limit, chunk_ids=chunk_ids, trace=trace)
    else:
        scored = recency_search(index, query, limit, chunk_ids=chunk_ids, trace=trace)
    return result_rows(index, scored, terms), True


def _keyword(index: ProjectIndex, query: str, limit: int | None, docs, trace: Trace | None):
    scored = keyword_search(index, query, KEYWORD_POOL if limit is None else limit, docs)
    if trace is not None:
        trace.keyword, trace.ranked = [cid for cid, _, _ in scored], scored
    return scored


def search(index: ProjectIndex, query: str, mode: str = "hybrid", limit: int = 20, tags_all=None, tags_any=None,
           explain: bool = False, explain_document: str | None = None, group: bool = False) -> dict:
    """Search one project; the response every surface renders.

    explain adds to each result why it ranked (explain.py); explain_document=ID says where that document ranked
    in each leg, or which filter, threshold or limit kept it out. group=True lists documents rather than
    chunks (group_by_document). A semantic search that finds nothing at its threshold offers weaker_matches.
    """
    check_request(query, mode, limit)
    trace = Trace(mode) if explain else None
    results, available = run_mode(index, query, mode, _pool(limit, group), tags_all, tags_any, trace=trace)
    if explain:
        annotate(trace, results)
    extra = {}
    if explain_document:
        extra["explain_document"] = document_report(index, query, mode, limit, tags_all, tags_any,
                                                    str(explain_document), results)
    if group:
        results, extra["grouped"] = group_by_document(results, limit), "document"
    else:
        results = results[:limit]
    if not results and available and mode in ("semantic", "recency"):
        extra.update(weaker_matches(index, query, tags_all, tags_any, group))
    return envelope(results, mode, query, available, limit, project=index.name, **extra)


def _pool(limit: int, group: bool) -> int:
    return limit * GROUP_POOL if group else limit


def weaker_matches(index: ProjectIndex, query: str, tags_all, tags_any, group: bool) -> dict:
    """The best chunks under semantic search's threshold (down to WEAKER_FLOOR), kept apart from the results."""
    docs = documents_with_tags(index, tags_all, tags_any)
    if docs is not None and not docs:
        return {}
    chunk_ids = chunks_of(index, docs) if docs is not None else None
    scored = semantic_search(index, query, _pool(WEAKER_LIMIT, group), WEAKER_FLOOR, chunk_ids=chunk_ids)
    rows = result_rows(index, scored, query_words(query))
    rows = group_by_document(rows, WEAKER_LIMIT) if group else rows[:WEAKER_LIMIT]
    return {"threshold": DIRECT_THRESHOLD, "weaker_matches": rows}


def document_report(index: ProjectIndex, query: str, mode: str, limit: int, tags_all, tags_any, document_id: str,
                    results: list[dict]) -> dict:
    """Run the same search again without a limit and say where one document ranked, or what kept it out."""
    tag_filter = (tags_all, tags_any) if documents_with_tags(index, tags_all, tags_any) is not None else None
    if mode == "tag" or not (query or "").strip():
        return _tag_report(index, document_id, tags_all, tags_any, limit, results)
    full = Trace(mode)
    run_mode(index, query, mode, None, tags_all, tags_any, fallback=True, trace=full)
    return explain_document(index, full, document_id, limit, tag_filter)


def _tag_report(index: ProjectIndex, document_id: str, tags_all, tags_any, limit: int, results: list[dict]) -> dict:
    everything = tag_search(index, tags_all, tags_any, 10**9)
    place = next((i for i, r in enumerate(everything, start=1) if r["document_id"] == document_id), None)
    if place is None:
        reason = tag_reason(index, document_id, tags_all, tags_any) or "it is not in this project"
        return {"document_id": document_id, "found": False, "rank": None, "returned": False, "legs": {},
                "removed_by": "tags", "verdict": reason[0].upper() + reason[1:] + "."}
    returned = any(r["document_id"] == document_id for r in results)
    return {"document_id": document_id, "found": True, "rank": place, "returned": returned, "legs": {},
            "verdict": f"It has the tags and came {ordinal(place)} of {len(everything)}, newest first"
                       + ("." if returned else f": past the limit of {limit}, so it was not returned.")}


def search_all(indexes: list[ProjectIndex], query: str, mode: str = "hybrid", limit: int = 20,
               tags_all=None, tags_any=None, explain: bool = False, group: bool = False) -> dict:
    """Search every project, merge by score; a project without a model answers by keyword for itself only."""
    check_request(query, mode, limit)
    merged: list[dict] = []
    unavailable: list[str] = []
    for index in indexes:
        trace = Trace(mode) if explain else None
        results, available = run_mode(index, query, mode, _pool(limit, group), tags_all, tags_any, fallback=True,
                                      trace=trace)
        if explain:
            annotate(trace, results)
        if not available and mode != "tag":
            unavailable.append(index.name)
        merged += results
    merged.sort(key=lambda r: -r["similarity"])
    merged = group_by_document(merged, limit) if group else merged[:limit]
    for place, r in enumerate(merged, start=1):
        if explain:
            r["explain"]["rank"] = place
    extra = {"grouped": "document"} if group else {}
    if not merged and mode in ("semantic", "recency"):
        weaker = [w for index in indexes if index.semantic_available
                  for w in weaker_matches(index, query, tags_all, tags_any, group).get("weaker_matches", [])]
        weaker.sort(key=lambda r: -r["similarity"])
        extra.update(threshold=DIRECT_THRESHOLD, weaker_matches=weaker[:WEAKER_LIMIT])
    return envelope(merged, mode, query, not unavailable, limit, scope="all",
                    projects=[i.name for i in indexes], keyword_only_projects=unavailable, **extra)
