"""Tag search (AND and OR, hierarchical), the tag filter the other modes share, and tag counts."""
from __future__ import annotations

from collections.abc import Iterable

from . import chunk_reads
from . import note_reads as reads
from .hits import chunk_hit, shared_in
from .index import ProjectIndex
from .links import file_stem
from ..text.readable import cut_at_word


def normalise(tags: list[str] | None) -> list[str]:
    """Lowercase tags without a leading # or trailing /, dropping blanks."""
    return [t.strip().lstrip("#").rstrip("/").lower() for t in (tags or []) if t and t.strip().lstrip("#")]


def documents_with_tags(index: ProjectIndex, tags_all, tags_any) -> set[str] | None:
    """Return the document ids that have every tag of tags_all and one of tags_any; None when no tag is asked for.

    A tag matches itself and everything below it: `project` matches `project/alpha`.
    """
    return reads.documents_tagged(index, normalise(tags_all), normalise(tags_any))


def tag_search(index: ProjectIndex, documents: set[str], limit: int | None = 20, names: Iterable[str] = (),
               found_by: str = "tag") -> list[dict]:
    """These documents (the tag filter's), newest first, as hits of their first chunk (score 1.0); with `names` (what
    file: asked for), the notes whose file name is that text first, then those it starts, then the rest. Each row's
    search_type says what found it (`listed_by`: tag, path, file or filter)."""
    if not documents:
        return []
    rows = chunk_reads.first_chunk_hit_rows(index, documents)
    wanted = [n.strip().lower() for n in names if n.strip()]
    rows.sort(key=lambda r: (_name_rank(r["rel_path"], wanted), -(r["modified"] or 0), r["rel_path"]))
    shared = shared_in(index, [r["content"] or "" for r in rows[:limit]])
    results = []
    for row in rows[:limit]:
        row["content"] = row["content"] or ""
        row["heading_path"] = row["heading_path"] or "[]"
        row["start_line"], row["end_line"] = row["start_line"] or 1, row["end_line"] or 1
        result = chunk_hit(index, row, 1.0, found_by, [], shared=shared)
        result["snippet"] = cut_at_word(result["snippet"], 160)
        results.append(result)
    return results


def listed_by(query) -> str:
    """What a listing's rows were found by, as their badge says it: tags, else path: or file: (Obsidian's operators),
    else another filter."""
    if query.tags_all or query.tags_any:
        return "tag"
    return "file" if query.filters.get("file") else "path" if query.filters.get("path") else "filter"


def _name_rank(rel_path: str, wanted: list[str]) -> int:
    """0 when the file name (without its extension) is one of the wanted texts, 1 when it starts with one, 2 else."""
    if not wanted:
        return 0
    stem = file_stem(rel_path).lower()
    return 0 if stem in wanted else 1 if any(stem.startswith(w) for w in wanted) else 2


def tag_counts(index: ProjectIndex, text: str = "", limit: int = 50) -> list[dict]:
    """Return tags with their document counts, most used first; with text, the tags it names, best first.

    Text matches anywhere in any segment of a tag ("gar" finds `project/garden`); tags that start with it come
    first, then tags with a segment that starts with it, then the rest, each most used first.
    """
    p = text.strip().lstrip("#").rstrip("/").lower()
    if not p:
        return [{"tag": r["tag"], "count": r["n"]} for r in reads.most_used_tags(index, limit)]
    ranked = sorted(reads.tags_containing(index, p), key=lambda r: (_match_rank(r["tag"], p), -r["n"], r["tag"]))
    return [{"tag": r["tag"], "count": r["n"]} for r in ranked[:limit]]


def _match_rank(tag: str, text: str) -> int:
    """0 when the tag starts with text, 1 when one of its segments does, 2 when text is inside a segment."""
    if tag.startswith(text):
        return 0
    return 1 if any(segment.startswith(text) for segment in tag.split("/")) else 2


def tag_reason(index: ProjectIndex, document_id: str, tags_all, tags_any) -> str | None:
    """Why the tag filter leaves a document out (None when it lets it in)."""
    have = reads.tags_of(index, [document_id]).get(document_id, [])

    def has(tag: str) -> bool:  # the filter's own rule (a tag matches its sub-tags), asked of the filter itself
        return document_id in (documents_with_tags(index, [tag], None) or set())

    lacking = [t for t in normalise(tags_all) if not has(t)]
    wanted_any = normalise(tags_any)
    tags = f"its tags are {', '.join('#' + t for t in have)}" if have else "it has no tags"
    if lacking:
        return f"removed by the tag filter: it lacks {', '.join('#' + t for t in lacking)} ({tags})"
    if wanted_any and not any(has(t) for t in wanted_any):
        return f"removed by the tag filter: it has none of {', '.join('#' + t for t in wanted_any)} ({tags})"
    return None
