"""Agent context: the best chunks for a query, packed into a token budget, each with where it came from."""
from __future__ import annotations

from ..text.boilerplate import mostly_shared, without_shared
from . import pipeline
from ..contract.rows import ContextItem
from .hits import shared_in
from .index import ProjectIndex
from ..contract.request import SearchRequest
from ..contract.sibling_requests import ContextRequest

_SPECIAL_TOKENS = 2  # [CLS] and [SEP]: the counter adds them to every text, a context holds none


def build_context(indexes: list[ProjectIndex], request: ContextRequest, limit: int = 50) -> dict:
    """Pack the best chunks of one project (or, with scope 'all', of several, merged by score) for query into
    token_budget tokens of chunk text.

    The chunks are hybrid search's. The budget counts the word-piece tokens of each chunk's content (provenance is
    metadata beside it). A chunk that does not fit is skipped, never cut, and a smaller one further down may still
    fit.
    """
    query, token_budget = request.query, request.token_budget
    found = pipeline.search(indexes, SearchRequest(query, "hybrid", scope=request.scope, limit=limit))
    items, used, truncated = _pack(indexes[0].counter, _own_text(indexes, found["results"]), token_budget)
    return {"query": query, "token_budget": token_budget, "tokens_used": used, "items": items,
            "truncated": truncated, "more": truncated, "semantic_available": found["semantic_available"],
            **({"semantic_reason": found["semantic_reason"]} if "semantic_reason" in found else {})}


def _own_text(indexes: list[ProjectIndex], rows: list[dict]) -> list[dict]:
    """The rows without the paragraphs many notes share (a footer, a banner: text/boilerplate.py), and without the
    rows that hold nothing else: a context spends its budget on what each note says."""
    by_name = {index.name: index for index in indexes}
    shared = {name: shared_in(index, [r["content"] for r in rows if r["project"] == name])
              for name, index in by_name.items()}
    kept = []
    for r in rows:
        theirs = shared.get(r["project"], set())
        if theirs and mostly_shared(r["content"], theirs):
            continue
        kept.append({**r, "content": without_shared(r["content"], theirs)})
    return kept


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
        items.append(ContextItem(
            chunk_id=row["chunk_id"], document_id=row["document_id"], project=row["project"], title=row["title"],
            path=row["path"], absolute_path=row["absolute_path"], heading_path=row["heading_path"],
            lines=row["chunk_lines"], score=row["score"], search_type=row["search_type"], tokens=tokens,
            content=row["content"],
        ))
    return items, used, truncated
