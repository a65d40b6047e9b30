"""Tag search (AND and OR, hierarchical) and the tag filter the other modes share."""
from __future__ import annotations

from ..errors import SKMemoryError
from .index import ProjectIndex
from .results import RESULT_SELECT, make_result


def normalise(tags: list[str] | None) -> list[str]:
    """Lowercase tags without a leading # or trailing /, dropping blanks."""
    return [t.strip().lstrip("#").rstrip("/").lower() for t in (tags or []) if t and t.strip().lstrip("#")]


def _docs_with_tag(index: ProjectIndex, tag: str) -> set[str]:
    # A tag matches itself and everything below it: `project` matches `project/alpha`.
    rows = index.sql("SELECT document_id FROM tags WHERE tag = ? OR substr(tag, 1, ?) = ?", (tag, len(tag) + 1, tag + "/"))
    return {r[0] for r in rows}


def documents_with_tags(index: ProjectIndex, tags_all: list[str] | None, tags_any: list[str] | None) -> set[str] | None:
    """Return the document ids that have every tag of tags_all and one of tags_any; None when no tag is asked for."""
    tags_all, tags_any = normalise(tags_all), normalise(tags_any)
    if not tags_all and not tags_any:
        return None
    docs: set[str] | None = None
    for tag in tags_all:
        found = _docs_with_tag(index, tag)
        docs = found if docs is None else docs & found
    if tags_any:
        either: set[str] = set()
        for tag in tags_any:
            either |= _docs_with_tag(index, tag)
        docs = either if docs is None else docs & either
    return docs or set()


def chunks_of(index: ProjectIndex, document_ids: set[str]) -> list[str]:
    """Return the chunk ids of these documents."""
    return [r[0] for r in index.sql_in("SELECT chunk_id FROM chunks WHERE document_id IN ({ids})", document_ids)]


def tag_search(index: ProjectIndex, tags_all: list[str] | None = None, tags_any: list[str] | None = None,
               limit: int = 20) -> list[dict]:
    """Find documents by tags: all of tags_all (AND) and at least one of tags_any (OR); newest first."""
    docs = documents_with_tags(index, tags_all, tags_any)
    if docs is None:
        raise SKMemoryError("Tag search needs at least one tag: give tags_all or tags_any.")
    if not docs:
        return []
    rows = index.sql_in(f"""{RESULT_SELECT} FROM documents d LEFT JOIN chunks c ON c.document_id = d.document_id
                                AND c.ordinal = (SELECT min(ordinal) FROM chunks WHERE document_id = d.document_id)
                             WHERE d.document_id IN ({{ids}})""", docs)
    rows.sort(key=lambda r: (-(r["modified"] or 0), r["rel_path"]))
    results = []
    for r in rows[:limit]:
        row = dict(r)
        row["content"] = row["content"] or ""
        row["heading_path"] = row["heading_path"] or "[]"
        row["start_line"], row["end_line"] = row["start_line"] or 1, row["end_line"] or 1
        result = make_result(index, row, 1.0, "tag", [])
        result["snippet"] = result["snippet"][:160]
        results.append(result)
    return results


def tag_counts(index: ProjectIndex, text: str = "", limit: int = 50) -> list[dict]:
    """Return tags with their document counts, most used first; with text, the tags it names, best first.

    Text matches anywhere in any segment of a tag ("gar" finds `project/garden`); tags that start with it come
    first, then tags with a segment that starts with it, then the rest, each most used first.
    """
    p = text.strip().lstrip("#").rstrip("/").lower()
    if not p:
        rows = index.sql("SELECT tag, count(*) AS n FROM tags GROUP BY tag ORDER BY n DESC, tag LIMIT ?", (limit,))
        return [{"tag": r["tag"], "count": r["n"]} for r in rows]
    rows = index.sql("SELECT tag, count(*) AS n FROM tags WHERE instr(tag, ?) > 0 GROUP BY tag", (p,))
    ranked = sorted(rows, key=lambda r: (_match_rank(r["tag"], p), -r["n"], r["tag"]))
    return [{"tag": r["tag"], "count": r["n"]} for r in ranked[:limit]]


def _match_rank(tag: str, text: str) -> int:
    """0 when the tag starts with text, 1 when one of its segments does, 2 when text is inside a segment."""
    if tag.startswith(text):
        return 0
    return 1 if any(segment.startswith(text) for segment in tag.split("/")) else 2
