"""Listing notes by metadata alone: by tag, by folder, by property, most recently changed; same result shape as
vault_search."""
from __future__ import annotations

from ..errors import InvalidQuery
from . import chunk_reads, note_reads
from ..text.readable import display_text
from .filters import allowed_documents
from .hits import snippet
from .index import ProjectIndex
from ..contract.sibling_requests import ListingRequest
from ..contract.answers import counted
from .tags import documents_with_tags, normalise
from .vault import CHARS_PER_TOKEN, note_results

PREVIEW_TOKENS = 30


def browse(index: ProjectIndex, filters: dict, order: str = "recent", limit: int = 20,
           within: set[str] | None = None, include_leading_callout: bool = False) -> dict:
    """List the notes the (checked) filters allow (and within, when given), in order, each with a preview of its
    start."""
    allowed = allowed_documents(index, filters)
    if within is not None:
        allowed = within if allowed is None else allowed & within
    total = note_reads.count_allowed(index, allowed)
    ids = note_reads.allowed_in_order(index, allowed, order, limit)
    notes = note_results(index, ids, include_leading_callout)
    firsts = chunk_reads.first_chunk_texts(index, ids)
    results = []
    for doc in ids:
        if doc in notes:
            note = notes[doc]
            preview = snippet(display_text(firsts.get(doc, "")), [], PREVIEW_TOKENS * CHARS_PER_TOKEN)
            results.append({"path": note["path"], "title": note["title"], **preview,
                            **{k: v for k, v in note.items() if k not in ("path", "title")}})
    return {"results": results, **counted(results, total > len(ids), total)}


def list_notes(index: ProjectIndex, request: ListingRequest) -> dict:
    """List notes by tag (all or any, sub-tags included), by folder (by path), by property or most recent, each
    narrowed by the request's filters."""
    within = None
    if request.kind == "tag":
        tags = list(request.tags)
        if not normalise(tags):
            raise InvalidQuery("tags must be a list of one or more tags, such as [\"reference\"].")
        within = (documents_with_tags(index, tags, None) if request.match == "all" else
                  documents_with_tags(index, None, tags))
    return browse(index, request.checked_filters, request.order, request.limit, within=within)
