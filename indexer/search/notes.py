"""Notes as an agent reads them: one note named by id, path or title; its outline; its text by section or line
range, a page at a time; its links both ways, bounded; and the project's frontmatter keys.

Every answer here has a cap it states and says when it cut (`next_offset`, `truncated`), so that no note, however
long, fills an agent's context. documents.py holds the full views the window uses.
"""
from __future__ import annotations

import difflib
import json
from collections import Counter

from ..contract.limits import DIRECTIONS
from ..errors import DocumentNotFound, InvalidQuery
from ..text.readable import display_title
from ..contract.answers import counted
from . import chunk_reads, note_reads
from .documents import backlinks, outgoing_links, project_links, resolve_link, sections, summaries, text_lines
from .index import ProjectIndex
from .note_text import file_text
from .links import file_stem

DEFAULT_MAX_CHARS = 8_000  # about 2,000 tokens a page
MAX_CHARS = 40_000
OUTLINE_CAP = 60
LINKS_CAP = 50
FRONTMATTER_VALUE_CHARS = 300
PROPERTY_SAMPLES = 5


def nearly_named(index: ProjectIndex, ref: str, most: int = 3) -> list[str]:
    """The paths of the notes whose path, file name or title is closest to REF (a typo, a folder guessed wrong),
    closest first; none when nothing is close."""
    key = ref.lower().strip().removesuffix(".md")[:200]
    if not key:
        return []
    names: dict[str, str] = {}  # a name as written lowercase -> the path it belongs to
    for d in project_links(index)[0]:
        path = d["rel_path"]
        for name in (path.lower().removesuffix(".md"), file_stem(path.lower()), (d["title"] or "").strip().lower()):
            names.setdefault(name, path)
    close = difflib.get_close_matches(key, list(names), n=most * 3, cutoff=0.75)
    return list(dict.fromkeys(names[name] for name in close))[:most]


def resolve_note(index: ProjectIndex, note: str):
    """The document row a reference names: a document id, a relative path, a file name or a title (link rules)."""
    ref = (note or "").strip()
    if not ref:
        raise InvalidQuery("Name the note: its path (such as 'Projects/Garden plan.md'), title or id.")
    at_path = note_reads.document_at(index, ref.lstrip("/"))
    found = at_path or resolve_link(index, ref) or ref.lower()
    row = note_reads.document(index, found)
    if row is None:
        near = nearly_named(index, ref)
        hint = (f"did you mean {' or '.join(repr(p) for p in near)}? If not, search for it and pass a result's path."
                if near else "search for it first, and pass a result's path.")
        raise DocumentNotFound(f"No note in project '{index.name}' has the path, title or id '{ref[:200]}'; {hint}")
    if not at_path and row["document_id"] != ref:  # named by title or file name: say when more than one has it
        key = ref.lower().removesuffix(".md")
        docs = project_links(index)[0]
        same = [d["rel_path"] for d in docs if (d["title"] or "").strip().lower() == key
                or file_stem(d["rel_path"].lower()) == key]
        if len(same) > 1:
            shown = ", ".join(f"'{p}'" for p in sorted(same)[:5]) + (" …" if len(same) > 5 else "")
            raise InvalidQuery(f"{len(same)} notes in project '{index.name}' are called '{ref[:200]}': {shown}; "
                               "pass the path of the one you mean.")
    return row


def note_info(index: ProjectIndex, note: str) -> dict:
    """A note's metadata, frontmatter (long values cut), outline (capped) and how many links it has each way."""
    row = resolve_note(index, note)
    document_id = row["document_id"]
    info = summaries(index, [row])[0]
    outline = _outline(index, document_id)
    _, row_of, resolver = project_links(index)
    return {
        "project": index.name, "id": document_id, "path": info["path"], "title": info["title"],
        "file_type": info["file_type"], "tags": info["tags"], "created": info["created"],
        "modified": info["modified"], "bytes": info["size"], "frontmatter": _bounded(json.loads(row["frontmatter"])),
        "outline": outline[:OUTLINE_CAP], "outline_total": len(outline),
        "links": len(note_reads.links_from(index, document_id)),
        "backlinks": len(backlinks(index, row, row_of[document_id], resolver)),
        "warnings": json.loads(row["warnings"])[:5],
    }


def read_note(index: ProjectIndex, note: str, max_bytes: int, section: str | None = None,
              start_line: int | None = None, end_line: int | None = None, offset: int = 0,
              max_chars: int = DEFAULT_MAX_CHARS) -> dict:
    """A page of a note's text: the whole file, one section (by heading) or a line range, from `offset` characters
    in, at most max_chars; `next_offset` continues it (None at the end)."""
    if not 1 <= max_chars <= MAX_CHARS:
        raise InvalidQuery(f"max_chars must be from 1 to {MAX_CHARS:,}; pages continue with next_offset.")
    if offset < 0:
        raise InvalidQuery("offset must be 0 or more: the next_offset of the page before.")
    if section and (start_line or end_line):
        raise InvalidQuery("Give a section or a line range, not both.")
    row = resolve_note(index, note)
    document_id, rel = row["document_id"], row["rel_path"]
    lines = _file_lines(index, rel, max_bytes)
    if lines is None:  # a PDF or another file without text lines: its indexed text, without line numbers
        if section or start_line or end_line:
            raise InvalidQuery(f"'{rel}' is a {row['file_type']} file without text lines; read it without a section "
                               "or line range, a page at a time.")
        text = "\n\n".join(c["content"] for c in chunk_reads.document_chunks(index, document_id))
        first = last = None
    else:
        first, last = _range(index, document_id, rel, lines, section, start_line, end_line)
        text = "\n".join(lines[first - 1:last])
    if offset > len(text):
        raise InvalidQuery(f"offset {offset:,} is past the end of this text ({len(text):,} characters).")
    page = text[offset:offset + max_chars]
    if offset + len(page) < len(text):
        cut = page.rfind("\n")
        if cut > len(page) // 2:  # end the page at a line's end when one is near
            page = page[:cut + 1]
    end = offset + len(page)
    answer = {"project": index.name, "path": rel, "title": display_title(row["title"]), "section": section or None,
              "offset": offset, "next_offset": end if end < len(text) else None, "total_chars": len(text),
              "max_chars": max_chars, "text": page}
    if first is not None:
        page_first = first + text.count("\n", 0, offset)
        answer.update({"lines": [page_first, page_first + page.rstrip("\n").count("\n")], "total_lines": len(lines)})
    return answer


def note_links(index: ProjectIndex, note: str, direction: str = "both", limit: int = LINKS_CAP) -> dict:
    """A note's outgoing links (resolved to paths where they name an indexed note) and its backlinks, each list
    at most `limit` long, with the totals."""
    if direction not in DIRECTIONS:
        raise InvalidQuery(f"direction must be both, outgoing or backlinks, not '{str(direction)[:40]}'.")
    if not 1 <= limit <= 500:
        raise InvalidQuery("limit must be from 1 to 500.")
    row = resolve_note(index, note)
    document_id = row["document_id"]
    answer: dict = {"project": index.name, "path": row["rel_path"], "title": display_title(row["title"])}
    if direction in ("both", "outgoing"):
        outgoing = [{"target": link["target"], "path": link.get("path")}
                    for link in outgoing_links(index, row)]
        answer.update({"outgoing": outgoing[:limit], "outgoing_total": len(outgoing)})
    if direction in ("both", "backlinks"):
        _, row_of, resolver = project_links(index)
        linking = backlinks(index, row, row_of[document_id], resolver)
        answer.update({"backlinks": [{"path": b["path"], "title": b["title"]} for b in linking[:limit]],
                       "backlinks_total": len(linking)})
    answer["truncated"] = any(answer.get(f"{k}_total", 0) > limit for k in ("outgoing", "backlinks"))
    answer["more"] = answer["truncated"]  # the one word every list answer says it with
    return answer


def properties(index: ProjectIndex, prefix: str = "", limit: int = 50) -> dict:
    """The frontmatter keys notes use, most used first, each with how many notes have it and its commonest values."""
    if not 1 <= limit <= 500:
        raise InvalidQuery("limit must be from 1 to 500.")

    def build():
        notes: Counter[str] = Counter()
        values: dict[str, Counter[tuple]] = {}  # (type, value): True and 1 are one key to a Counter
        for raw in note_reads.frontmatters(index):
            try:
                front = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(front, dict):
                continue
            for key, value in front.items():
                notes[key] += 1
                seen = values.setdefault(key, Counter())
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, (str, int, float, bool)) and str(item).strip():
                        # Kept as the note has it (a boolean stays true, a number stays 3), so that a value shown
                        # here, sent back to a property filter as it is, finds the notes it came from.
                        seen[(type(item).__name__, item[:80] if isinstance(item, str) else item)] += 1
        return notes, values

    notes, values = index.kept("properties", build)
    wanted = prefix.strip().lower()
    keys = [k for k, _ in notes.most_common() if k.lower().startswith(wanted)]
    return {"project": index.name, **counted(keys, len(keys) > limit, len(keys)), "properties": [
        {"key": k, "notes": notes[k], "values": [v for (_, v), _ in values[k].most_common(PROPERTY_SAMPLES)],
         "distinct_values": len(values[k])} for k in keys[:limit]]}


def _file_lines(index: ProjectIndex, rel: str, max_bytes: int) -> list[str] | None:
    """The file's lines where a reader may see the whole file (note_text.py), else None."""
    text = file_text(index, rel, max_bytes)
    if text is None:
        return None  # documents without text lines, and mind maps: the file holds private notes the index never does
    lines = text_lines(text)
    if text.endswith("\n") and lines:
        lines[-1] += "\n"  # kept, so that a page that reaches the end is the file's text exactly
    return lines


def _range(index: ProjectIndex, document_id: str, rel: str, lines: list[str], section: str | None,
           start_line: int | None, end_line: int | None) -> tuple[int, int]:
    total = max(len(lines), 1)
    if section:
        outline = _outline(index, document_id)
        wanted = section.strip().lstrip("#").strip().lower()
        at = next((i for i, o in enumerate(outline) if o["heading"].strip().lower() == wanted), None)
        if at is None:
            at = next((i for i, o in enumerate(outline) if wanted in o["heading"].lower()), None)
        if at is None:
            headings = ", ".join(f"'{o['heading']}'" for o in outline[:12]) or "none"
            raise InvalidQuery(f"'{rel}' has no section '{section[:80]}'; its headings: {headings}.")
        head = outline[at]
        after = next((o["line"] for o in outline[at + 1:] if o["level"] <= head["level"]), total + 1)
        return head["line"], max(head["line"], after - 1)
    first, last = start_line or 1, end_line or total
    if first < 1 or last < 1:
        raise InvalidQuery("Line numbers start at 1.")
    if first > total:
        raise InvalidQuery(f"start_line {first} is past the end of '{rel}', which has {len(lines)} lines.")
    if last < first:
        raise InvalidQuery(f"end_line ({last}) comes before start_line ({first}); give a range such as 10 to 40.")
    return first, min(last, total)


def _outline(index: ProjectIndex, document_id: str) -> list[dict]:
    return sections(chunk_reads.document_chunks(index, document_id))[0]


def _bounded(front: dict) -> dict:
    """Frontmatter with long text values cut (an agent reads the note for the rest)."""
    out = {}
    for key, value in list(front.items())[:40]:
        if isinstance(value, str) and len(value) > FRONTMATTER_VALUE_CHARS:
            value = value[:FRONTMATTER_VALUE_CHARS] + "…"
        elif isinstance(value, (list, dict)) and len(json.dumps(value, default=str)) > FRONTMATTER_VALUE_CHARS * 2:
            value = json.dumps(value, default=str)[:FRONTMATTER_VALUE_CHARS * 2] + "…"
        out[key] = value
    return out


__all__ = ["resolve_note", "note_info", "read_note", "note_links", "properties"]
