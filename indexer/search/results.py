"""The common result shape every search mode returns, and the snippet with the offsets of its matches."""
from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Iterable

from .index import ProjectIndex

SNIPPET_CHARS = 220


# What a result is made of: a chunk (c) with its document (d) and the document's tags.
RESULT_SELECT = """SELECT c.chunk_id, d.document_id, c.content, c.heading_path, c.start_line, c.end_line, c.sections,
                          d.title, d.rel_path, d.file_type, d.created, d.modified,
                          (SELECT group_concat(tag, char(31)) FROM tags t WHERE t.document_id = d.document_id) AS tags"""


def result_rows(index: ProjectIndex, scored: list[tuple[str, float, str]], terms: list[str]) -> list[dict]:
    """Turn (chunk_id, similarity, search_type) triples into result dicts, keeping their order."""
    if not scored:
        return []
    ids = [cid for cid, _, _ in scored]
    rows = {r["chunk_id"]: dict(r) for r in index.sql_in(
        f"{RESULT_SELECT} FROM chunks c JOIN documents d USING (document_id) WHERE c.chunk_id IN ({{ids}})", ids)}
    results = []
    for cid, similarity, search_type in scored:
        r = rows.get(cid)
        if r is None:  # deleted between ranking and fetching
            continue
        results.append(make_result(index, r, similarity, search_type, terms))
    return results


def make_result(index: ProjectIndex, r: dict, similarity: float, search_type: str, terms: list[str]) -> dict:
    """Build one result dict from a joined chunk-and-document row; heading, lines and snippet are the matching part's."""
    sections = chunk_sections(r)
    part, text = matching_section(r["content"], sections, terms)
    return {
        "chunk_id": r["chunk_id"],
        "document_id": r["document_id"],
        "content": r["content"],
        "document_title": r["title"],
        "relative_path": r["rel_path"],
        "absolute_path": str(index.root / r["rel_path"]),
        "file_type": r["file_type"],
        "similarity": round(float(similarity), 4),
        "search_type": search_type,
        "project": index.name,
        "tags": sorted(r["tags"].split("\x1f")) if r.get("tags") else [],
        "created": r["created"],
        "modified": iso(r["modified"]),
        "heading_path": part["heading_path"],
        "lines": part["lines"],
        "chunk_lines": [r["start_line"], r["end_line"]],
        **snippet(text, terms),
    }


def chunk_sections(r) -> list[dict]:
    """The sections a chunk row spans (heading_path, lines, offset); one for chunks cut before packing."""
    raw = r["sections"] if "sections" in r.keys() else None
    if raw:
        return json.loads(raw)
    heading = json.loads(r["heading_path"]) if r["heading_path"] else []
    return [{"heading_path": heading, "lines": [r["start_line"], r["end_line"]], "offset": 0}]


# Words too common to say which part of a chunk a query was about.
_STOPWORDS = frozenset("""a an and are as at be but by can did do does for from had has have how i if in is it its me my
no not of on or our out so that the their them then there these they this to was we went were what when where which
who why will with would you your""".split())
_HEADING_LINE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?#{1,6}(?:[ \t]|$)")


def section_texts(content: str, sections: list[dict]) -> list[tuple[dict, str]]:
    """Each section of a chunk with its own text, cut from the chunk's content at the sections' offsets."""
    return [(s, content[s["offset"]:(sections[i + 1]["offset"] if i + 1 < len(sections) else len(content))])
            for i, s in enumerate(sections)]


def matching_section(content: str, sections: list[dict], terms: Iterable[str]) -> tuple[dict, str]:
    """The part of a chunk a result should point at, with its text: the one matching most query terms.

    Without any matching term (a match by meaning alone), the first part with more than a heading line.
    """
    parts = section_texts(content, sections)
    if len(parts) == 1:
        return parts[0]
    words = [w for w in (t.lower() for t in terms if t) if w not in _STOPWORDS]
    if words:
        scored = [(sum(w in text.lower() for w in words), sum(text.lower().count(w) for w in words), -i)
                  for i, (_, text) in enumerate(parts)]
        best = max(range(len(parts)), key=lambda i: scored[i])
        if scored[best][0]:
            return parts[best]
    for section, text in parts:
        lines = [line for line in text.strip().split("\n") if line.strip()]
        if len(lines) > 1 or (lines and not _HEADING_LINE.match(lines[0])):
            return section, text
    return parts[0]


def iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch).isoformat(timespec="seconds") if epoch else None


def query_words(query: str) -> list[str]:
    """The words of a query worth highlighting (lowercase, 2+ characters)."""
    return [w for w in re.findall(r"\w[\w'-]*", query.lower()) if len(w) > 1]


def snippet(text: str, terms: Iterable[str], width: int = SNIPPET_CHARS) -> dict:
    """An excerpt around the first match: {"snippet": plain text, "highlights": [[start, end], ...]}.

    The highlights are character offsets into the snippet (end exclusive) of every match of a term; each surface
    marks them its own way (the HTML window escapes then wraps them in <mark>, the CLI bolds them).
    """
    terms = sorted({t for t in terms if t}, key=len, reverse=True)
    flat = " ".join(text.split())
    pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE) if terms else None
    first = pattern.search(flat) if pattern else None
    start = max(0, (first.start() if first else 0) - width // 3)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    excerpt = flat[start:start + width]
    prefix = "…" if start else ""
    suffix = "…" if start + width < len(flat) else ""
    spans = [[len(prefix) + m.start(), len(prefix) + m.end()] for m in pattern.finditer(excerpt)] if pattern else []
    return {"snippet": prefix + excerpt + suffix, "highlights": spans}


def marked_text(text: str, open_mark: str, close_mark: str) -> dict:
    """A snippet from text whose matches sit between two marker characters (as FTS5's snippet() leaves them)."""
    out, spans, at = [], [], 0
    for piece in re.split(f"([{re.escape(open_mark + close_mark)}])", text):
        if piece == open_mark:
            start = at
        elif piece == close_mark:
            spans.append([start, at])
        else:
            out.append(piece)
            at += len(piece)
    return {"snippet": "".join(out), "highlights": [s for s in spans if s[1] > s[0]]}


PASSAGE_FIELDS = ("chunk_id", "heading_path", "lines", "snippet", "highlights", "similarity", "search_type")
GROUP_POOL = 4  # a grouped search ranks this many chunks per document asked for, then keeps the best of each


def group_by_document(results: list[dict], limit: int) -> list[dict]:
    """One result per document, in the order of its best chunk; the rest of its chunks become more_passages.

    Each kept result gains "passages" (how many of its chunks matched) and "more_passages" (the others, best
    first, with their heading, lines, snippet and score but not their whole text).
    """
    groups: dict[tuple[str, str], dict] = {}
    for r in results:
        key = (r["project"], r["document_id"])
        if key in groups:
            groups[key]["more_passages"].append({k: r[k] for k in PASSAGE_FIELDS if k in r})
        elif len(groups) < limit:
            groups[key] = {**r, "more_passages": []}
    for g in groups.values():
        g["passages"] = 1 + len(g["more_passages"])
    return list(groups.values())


def envelope(results: list[dict], mode: str, query: str, semantic_available: bool, limit: int, **extra) -> dict:
    """Wrap results in the response every surface returns."""
    return {"query": query, "mode": mode, "semantic_available": semantic_available, "total": len(results),
            "limit": limit, "results": results, **extra}
