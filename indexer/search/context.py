"""Agent context: the best chunks for a query, packed into a token budget, each with where it came from."""
from __future__ import annotations

import logging

from ..errors import EmbeddingsUnavailable, InvalidQuery
from .hybrid import hybrid_search
from .index import ProjectIndex
from .keyword import keyword_search, parse_terms
from ..limits import MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET, check_number, check_query
from .results import result_rows

logger = logging.getLogger(__name__)

_SPECIAL_TOKENS = 2  # [CLS] and [SEP]: the counter adds them to every text, a context holds none


def build_context(index: ProjectIndex, query: str, token_budget: int = 2000, limit: int = 50) -> dict:
    """Pack the best chunks of one project for query into token_budget tokens of chunk text."""
    return build_context_all([index], query, token_budget, limit)


def build_context_all(indexes: list[ProjectIndex], query: str, token_budget: int = 2000, limit: int = 50) -> dict:
    """Pack the best chunks of several projects, merged by score, into token_budget tokens of chunk text.

    The budget counts the word-piece tokens of each chunk's content (provenance is metadata beside it).
    A chunk that does not fit is skipped, never cut, and a smaller one further down may still fit.
    """
    _check(query, token_budget, limit)
    candidates: list[dict] = []
    available = True
    for index in indexes:
        rows, semantic = _ranked(index, query, limit)
        available = available and semantic
        candidates += rows
    candidates.sort(key=lambda r: -r["similarity"])  # stable: each project's own order survives ties
    items, used, truncated = _pack(indexes[0].counter, candidates[:limit], token_budget)
    return {"query": query, "token_budget": token_budget, "tokens_used": used, "items": items,
            "truncated": truncated, "semantic_available": available}


def _check(query: str, token_budget: int, limit: int) -> None:
    if not (query or "").strip():
        raise InvalidQuery("Type something to build context for (the query is empty).")
    check_query(query)
    check_number("token_budget", token_budget, MIN_TOKEN_BUDGET, MAX_TOKEN_BUDGET)
    check_number("limit", limit)


def _ranked(index: ProjectIndex, query: str, limit: int) -> tuple[list[dict], bool]:
    """Hybrid search, or keyword search alone when the model cannot embed the query."""
    try:
        scored, available = hybrid_search(index, query, limit)
    except EmbeddingsUnavailable as exc:
        logger.warning("Context for %r in %s falls back to keyword search: %s", query, index.name, exc)
        scored, available = keyword_search(index, query, limit), False
    return result_rows(index, scored, parse_terms(query)), available


def _overlaps(a: dict, b: dict) -> bool:
    return (a["project"], a["document_id"]) == (b["project"], b["document_id"]) and \
        a["lines"][0] <= b["lines"][1] and b["lines"][0] <= a["lines"][1]


def _pack(counter, rows: list[dict], budget: int) -> tuple[list[dict], int, bool]:
    """Keep rows in rank order while they fit; skip repeats of text already kept."""
    sizes = counter.count_many([r["content"] for r in rows])
    items: list[dict] = []
    seen_text: set[str] = set()
    used, truncated = 0, False
    for row, size in zip(rows, sizes):
        tokens = size - _SPECIAL_TOKENS
        text = " ".join(row["content"].split())
        if text in seen_text or any(_overlaps(row, kept) for kept in items):
            continue  # the same passage twice (overlapping pieces of one paragraph, or a copied note)
        if used + tokens > budget:
            truncated = True
            continue
        seen_text.add(text)
        used += tokens
        items.append({
            "project": row["project"], "document_id": row["document_id"], "chunk_id": row["chunk_id"],
            "title": row["document_title"], "relative_path": row["relative_path"],
            "absolute_path": row["absolute_path"], "heading_path": row["heading_path"], "lines": row["chunk_lines"],
            "score": row["similarity"], "search_type": row["search_type"], "tokens": tokens,
            "content": row["content"],
        })
    return items, used, truncated
