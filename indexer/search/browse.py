"""Listing notes by metadata alone: by tag, by folder, by property, most recently changed; same result shape as
vault_search."""
from __future__ import annotations

from ..errors import InvalidQuery
from ..limits import check_number
from . import chunk_reads, note_reads
from ..ingest.readable import display_text
from .filters import allowed_documents
from .hits import snippet
from .index import ProjectIndex
from .request import check_filters
from .tags import documents_with_tags, normalise
from .vault import CHARS_PER_TOKEN, note_results

PREVIEW_TOKENS = 30


def browse(index: ProjectIndex, filters: dict | None, order: str = "recent", limit: int = 20,
           within: set[str] | None = None, include_leading_callout: bool = False) -> dict:
    """List the notes the filters allow (and within, when given), in order, each with a preview of its start."""
    check_number("limit", limit)
    allowed = allowed_documents(index, check_filters(filters))
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
    return {"results": results, "total": total}


def search_by_tag(index: ProjectIndex, tags: list[str] | str, match: str = "all", filters: dict | None = None,
                  limit: int = 20) -> dict:
    """List notes with all (match='all') or any (match='any') of the tags, sub-tags included; newest first."""
    tags = [tags] if isinstance(tags, str) else tags
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags) or not normalise(tags):
        raise InvalidQuery("tags must be a list of one or more tags, such as [\"reference\"].")
    if match not in ("all", "any"):
        raise InvalidQuery(f"match must be 'all' or 'any', not {match!r}.")
    within = documents_with_tags(index, tags, None) if match == "all" else documents_with_tags(index, None, tags)
    return browse(index, filters, "recent", limit, within=within)


def search_by_folder(index: ProjectIndex, folder: str, filters: dict | None = None, limit: int = 50) -> dict:
    """List the notes in a folder and its subfolders, by path ('' is the whole project)."""
    if not isinstance(folder, str):
        raise InvalidQuery("folder must be a path inside the project, such as \"Projects\" (\"\" for all of it).")
    return browse(index, {**(filters or {}), "folder": folder}, "path", limit)


def search_by_property(index: ProjectIndex, properties: dict, filters: dict | None = None, limit: int = 20) -> dict:
    """List notes whose frontmatter has every key with the given value (string, number or boolean); newest first."""
    if not isinstance(properties, dict) or not properties:
        raise InvalidQuery("properties must name at least one frontmatter key and value, such as {\"status\": "
                           "\"active\"}.")
    return browse(index, {**(filters or {}), "properties": properties}, "recent", limit)


def recent_notes(index: ProjectIndex, filters: dict | None = None, limit: int = 20) -> dict:
    """List the most recently modified notes, optionally narrowed by the vault_search filters."""
    return browse(index, filters, "recent", limit)
