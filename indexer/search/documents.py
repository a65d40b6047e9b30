"""Documents as the Files tab, the Document Info Panel and `get_document` see them: lists, one document with its
outline and links both ways, and the documents related to one."""
from __future__ import annotations

import json

import numpy as np

from ..errors import DocumentNotFound, InvalidQuery
from ..text.readable import display_title
from . import chunk_reads, note_reads
from ..contract.rows import DocumentRow
from ..contract.answers import counted
from .hits import chunk_hits, chunk_sections, envelope, iso, note_hits, section_texts
from .index import ProjectIndex
from .note_text import file_text
from .keyword import keyword_search
from .links import LinkResolver, file_stem, link_key
from .query import Query
from .semantic import HYBRID_THRESHOLD


def list_documents(index: ProjectIndex, folder: str = "", tag: str | None = None, limit: int = 200,
                   offset: int = 0, name: str = "") -> dict:
    """List documents by path, optionally under a folder, with a tag (and its sub-tags), or named (any part of the
    path or title, any case); `total` counts them all, `documents` is the page from offset."""
    folder = folder.strip("/")
    tag = tag.strip().lstrip("#").lower() if tag else None
    name = name.strip()
    total = note_reads.count_listed(index, folder, tag, name)
    rows = note_reads.listed(index, folder, tag, limit, offset, name)
    return {"project": index.name, **counted(rows, offset + len(rows) < total, total), "offset": offset,
            "documents": summaries(index, rows)}


def summaries(index: ProjectIndex, rows: list) -> list[dict]:
    """Each document row as the API lists it, with its tags (read in one query for all of them)."""
    tags = note_reads.tags_of(index, [r["document_id"] for r in rows])
    return [DocumentRow(
        document_id=r["document_id"], project=index.name, title=display_title(r["title"]), path=r["rel_path"],
        absolute_path=str(index.root / r["rel_path"]), file_type=r["file_type"], size=r["size"],
        tags=tags.get(r["document_id"], []), created=r["created"], modified=iso(r["modified"]),
    ) for r in rows]


def document_row(index: ProjectIndex, document_id: str):
    """A document's row, or DocumentNotFound."""
    row = note_reads.document(index, document_id)
    if row is None:
        raise DocumentNotFound(f"No document with id '{document_id}' in project '{index.name}'.")
    return row


def document_lines(index: ProjectIndex, document_id: str, start: int, end: int, max_bytes: int) -> dict:
    """A document with `content` exactly lines start..end of its file as it is now (1-based, inclusive)."""
    info = summaries(index, [document_row(index, document_id)])[0]
    rel = info["path"]
    if end < start:
        raise InvalidQuery(f"end_line ({end}) comes before start_line ({start}); give a range such as 10 to 40.")
    # Search results give file line numbers (`lines`), so a range reads the file, not the joined chunks: only where
    # a reader may see the whole file (a mind map's holds private notes and attachments the index never does).
    text = file_text(index, rel, max_bytes)
    if text is None:
        what = ("a mind map; read its nodes without start_line and end_line (private notes are never returned)"
                if info["file_type"].startswith("mindmap") else f"a {info['file_type']} file without text lines; "
                "leave out start_line and end_line to get its indexed text")
        raise InvalidQuery(f"'{rel}' is {what}.")
    lines = text_lines(text)
    if start > max(len(lines), 1):
        raise InvalidQuery(f"start_line {start} is past the end of '{rel}', which has {len(lines)} lines.")
    end = min(end, len(lines))
    return {**get_document(index, document_id), "content": "\n".join(lines[start - 1:end]) + (
        "\n" if end == len(lines) and text.endswith("\n") else ""), "lines": [start, end], "total_lines": len(lines)}


def text_lines(text: str) -> list[str]:
    """A file's lines as the index numbers them: split at "\n" alone (a line keeps its "\r"; U+2028, form feeds
    and the like are characters within a line), without the empty line after a final newline."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def get_document(index: ProjectIndex, document_id: str) -> dict:
    """A document's metadata, outline, links both ways and its chunks' text."""
    r = document_row(index, document_id)
    info = summaries(index, [r])[0]
    chunks = chunk_reads.document_chunks(index, document_id)
    outline, passages = sections(chunks)
    _, row_of, resolver = project_links(index)
    info.update({
        "frontmatter": json.loads(r["frontmatter"]), "warnings": json.loads(r["warnings"]),
        "outline": outline, "links": outgoing_links(index, r),
        "backlinks": backlinks(index, r, row_of[document_id], resolver),
        "content": "\n\n".join(c["content"] for c in chunks), "passages": passages,
    })
    return info


def sections(chunks: list) -> tuple[list[dict], list[dict]]:
    """A document's outline (each heading once, with its level and first line) and its passages (each section's
    heading path, lines and place in the chunks joined by blank lines), from its chunks in order."""
    outline, before = [], ()
    passages, at = [], 0
    for c in chunks:
        for section, text in section_texts(c["content"], chunk_sections(c)):
            start = at + section["offset"]
            passages.append({"heading_path": section["heading_path"], "lines": section["lines"],
                             "start": start, "end": start + len(text)})
            path = tuple(section["heading_path"])
            # A heading starts where the path changes: a section cut over two chunks keeps its path, while a
            # heading used twice ("## Notes" under two parents, or twice in a row of sections) appears twice.
            for depth in range(1, len(path) + 1):
                if path[:depth] != before[:depth]:
                    outline.append({"heading": path[depth - 1], "level": depth, "line": section["lines"][0]})
            before = path
        at += len(c["content"]) + 2
    return outline, passages


def outgoing_links(index: ProjectIndex, r) -> list[dict]:
    """A document's links (row r), each with the document it resolves to (document_id None when none)."""
    docs, _, resolver = project_links(index)
    outgoing = []
    for link in note_reads.links_from(index, r["document_id"]):
        row = resolver.resolve(link["target"], r["rel_path"])
        found = ({"document_id": docs[row]["document_id"], "path": docs[row]["rel_path"]}
                 if row is not None else {"document_id": None})
        outgoing.append({"target": link["target"], "kind": link["kind"], **found})
    return outgoing


def project_links(index: ProjectIndex) -> tuple[list, dict[str, int], LinkResolver]:
    """The project's documents, each one's row, and the resolver over them, built once per change of the index."""
    def build():
        docs = note_reads.catalogue(index)
        return (docs, {d["document_id"]: i for i, d in enumerate(docs)},
                LinkResolver([d["rel_path"] for d in docs], [d["title"] for d in docs]))

    return index.kept("links", build)


def resolve_link(index: ProjectIndex, target: str, from_path: str = "") -> str | None:
    """The document a link target names, seen from the document at from_path (search/links.py's rules)."""
    docs, _, resolver = project_links(index)
    row = resolver.resolve(target, from_path)
    return docs[row]["document_id"] if row is not None else None


def backlinks(index: ProjectIndex, r, me: int, resolver: LinkResolver) -> list[dict]:
    """The documents whose links resolve to this one (row `me` of the resolver), by the same rules as its own links
    (search/links.py)."""
    # Only a link that mentions the file name or the title can name this document; resolve just those.
    words = {file_stem(r["rel_path"]).lower(), r["title"].strip().lower()} - {""}
    if not words:
        return []
    candidates = note_reads.links_naming(index, r["document_id"], words)
    linking = {c["document_id"] for c in candidates if link_key(c["target"])
               and resolver.resolve(c["target"], c["rel_path"]) == me}
    return summaries(index, note_reads.documents(index, sorted(linking), by_path=True))


def related(index: ProjectIndex, document_id: str, limit: int = 8) -> dict:
    """Documents like this one: hybrid search on its own content (title as keywords, mean vector for meaning)."""
    r = document_row(index, document_id)
    chunk_ids = chunk_reads.document_chunk_ids(index, document_id)
    scored: dict[str, tuple[str, float, str]] = {}
    semantic = index.semantic_available
    sims: dict[str, float] = {}
    if semantic:
        vectors = [v for v in (index.cache.vector(c) for c in chunk_ids) if v is not None]
        if vectors:
            mean = np.mean(vectors, axis=0)
            mean /= np.linalg.norm(mean) or 1.0
            sims = dict(index.cache.search(mean, HYBRID_THRESHOLD, None))
    sims_all = dict(sims)
    title = Query.parse(f'"{r["title"]}"')
    for cid, _, _ in keyword_search(index, title, 500):
        scored[cid] = (cid, 1.0 + sims.pop(cid), "hybrid") if cid in sims else (cid, 1.0, "keyword")
    for cid, sim in sims.items():
        scored[cid] = (cid, sim, "semantic")
    ranked = sorted(scored.values(), key=lambda s: -s[1])
    head = ranked[: limit * 20]
    others = [row for row in chunk_hits(index, head, [r["title"]], {cid: sims_all[cid] for cid, _, _ in head
                                                                    if cid in sims_all})
              if row["document_id"] != document_id]
    found = note_hits(others, limit + 1)  # one past the limit: whether it cut the list
    results = [{**row, "reason": related_reason(row, r["title"])} for row in found[:limit]]
    return envelope(results, "hybrid", r["title"], semantic, limit, len(found) > limit, project=index.name,
                    document_id=document_id)


def related_reason(row: dict, title: str) -> str:
    """Why a document is related, in words: it names this one's title, it is close in meaning, or both."""
    meaning = f"close in meaning ({round((row['cosine'] or 0.0) * 100)}% similar)"
    if row["search_type"] == "keyword":
        return f"mentions “{title}”"
    return f"mentions “{title}” and is {meaning}" if row["search_type"] == "hybrid" else f"is {meaning}"
