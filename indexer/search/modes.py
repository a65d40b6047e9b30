"""One entry point per spec-000 mode over one project or all of them, returning the common response shape."""
from __future__ import annotations

from ..errors import EmbeddingsUnavailable, InvalidQuery
from ..limits import check_number, check_query
from .hybrid import hybrid_search
from .index import ProjectIndex
from .keyword import keyword_search, parse_terms
from .results import envelope, query_words, result_rows
from .semantic import recency_search, semantic_search
from .tags import chunks_of, documents_with_tags, tag_search

MODES = ("hybrid", "semantic", "recency", "keyword", "tag")


def check_request(query: str, mode: str, limit: int) -> None:
    """Refuse a request that cannot run, with a sentence that says what to change."""
    if mode not in MODES:
        raise InvalidQuery(f"Unknown search mode '{mode}'; use one of: {', '.join(MODES)}.")
    check_number("limit", limit)
    check_query(query)


def run_mode(index: ProjectIndex, query: str, mode: str, limit: int, tags_all=None, tags_any=None,
             fallback: bool = False) -> tuple[list[dict], bool]:
    """Search one project in one mode; return (results, semantic_available).

    Tags, when given, filter every mode. With fallback=True a semantic mode without a model answers with
    keyword search instead of raising (cross-project search uses this per project).
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
    if mode == "keyword":
        return result_rows(index, keyword_search(index, query, limit, docs), terms), index.semantic_available
    if mode == "hybrid":
        scored, available = hybrid_search(index, query, limit, docs, chunk_ids)
        return result_rows(index, scored, parse_terms(query)), available
    if not index.semantic_available:
        if fallback:
            return result_rows(index, keyword_search(index, query, limit, docs), parse_terms(query)), False
        raise EmbeddingsUnavailable(
            f"Semantic search needs the embedding model, which is unavailable: {index.embedder.error}. "
            "Use keyword or hybrid search, or fix the model (SKMEMORY_MODEL)."
        )
    if mode == "semantic":
        scored = semantic_search(index, query, limit, chunk_ids=chunk_ids)
    else:
        scored = recency_search(index, query, limit, chunk_ids=chunk_ids)
    return result_rows(index, scored, terms), True


def search(index: ProjectIndex, query: str, mode: str = "hybrid", limit: int = 20, tags_all=None, tags_any=None) -> dict:
    """Search one project; the response every surface renders."""
    check_request(query, mode, limit)
    results, available = run_mode(index, query, mode, limit, tags_all, tags_any)
    return envelope(results, mode, query, available, limit, project=index.name)


def search_all(indexes: list[ProjectIndex], query: str, mode: str = "hybrid", limit: int = 20,
               tags_all=None, tags_any=None) -> dict:
    """Search every project, merge by score; a project without a model answers by keyword for itself only."""
    check_request(query, mode, limit)
    merged: list[dict] = []
    unavailable: list[str] = []
    for index in indexes:
        results, available = run_mode(index, query, mode, limit, tags_all, tags_any, fallback=True)
        if not available and mode != "tag":
            unavailable.append(index.name)
        merged += results
    merged.sort(key=lambda r: -r["similarity"])
    return envelope(merged[:limit], mode, query, not unavailable, limit, scope="all",
                    projects=[i.name for i in indexes], keyword_only_projects=unavailable)
