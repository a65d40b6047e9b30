"""Link suggestions for one note (the Document Info Panel's, MCP `suggest_links`): the links it could have.

- **Unlinked mentions**: other notes whose title (or file name) the note's text names as words, on a line that does
  not link to them, with the line.
- **Close in meaning**: the notes `related` finds for the note's own text that it neither links to nor is linked
  from.

Each suggestion carries the link to paste, `[[wikilink]]` and `[text](path)`, and `style` says which this vault
writes (most of its links). SK Memory never writes to a note: a person copies the link.
"""
from __future__ import annotations

import posixpath
import re
from urllib.parse import quote

from ..text.inline import CODE_SPAN
from ..text.readable import display_text
from . import note_reads
from .documents import backlinks, project_links
from .index import ProjectIndex
from .note_text import own_text
from .notes import resolve_note
from .related import MAX_NAME_WORDS, NAME_WORD, note_names, related

MENTIONS_CAP = 20
CLOSE_CAP = 8
LINK_ON_LINE = re.compile(r"\[\[([^\]\n]+)\]\]|\[[^\]\n]*\]\(([^)\n]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def link_suggestions(index: ProjectIndex, note: str, max_bytes: int, limit: int = CLOSE_CAP) -> dict:
    """The links one note could have: unlinked mentions (with their lines) and notes close in meaning that no link
    joins to it, each with the link to copy."""
    row = resolve_note(index, note)
    me = row["document_id"]
    docs, row_of, resolver = project_links(index)
    linked = {docs[r]["document_id"] for r in (resolver.resolve(t, row["rel_path"])
                                               for t, _ in note_reads.links_from(index, me)) if r is not None}
    linking = {b["document_id"] for b in backlinks(index, row, row_of[me], resolver)} if me in row_of else set()
    text = own_text(index, row, max_bytes)
    mentions = _mentions(index, text, me, linked)
    answer = related([index], row["title"], text, None, limit + len(linked | linking) + len(mentions), {me})
    mentioned = {m["document_id"] for m in mentions}
    close = [r for r in answer["results"] if r["document_id"] not in linked | linking | mentioned][:limit]
    style = _style(index)
    return {
        "project": index.name, "document_id": me, "path": row["rel_path"], "title": row["title"], "style": style,
        "unlinked_mentions": [_with_links(m, row["rel_path"]) for m in mentions[:MENTIONS_CAP]],
        "mentions_total": len(mentions),
        "close_in_meaning": [_with_links({"document_id": r["document_id"], "title": r["title"], "path": r["path"],
                                          "similarity": r["similarity"], "reason": r["reason"]}, row["rel_path"])
                             for r in close],
        "semantic_available": answer["semantic_available"],
        **({"semantic_reason": answer["semantic_reason"]} if "semantic_reason" in answer else {}),
    }


def _mentions(index: ProjectIndex, text: str, me: str, linked: set[str]) -> list[dict]:
    """The notes the text names outside links and code on a line that does not link to them: the first such line of
    each (the names are related.py's, built once per change of the index)."""
    names = note_names(index)
    catalogue = {doc: (rel_path, title) for doc, rel_path, title in note_reads.catalogue(index)}
    found: dict[str, dict] = {}
    in_code = False
    for number, line in enumerate(text.split("\n"), start=1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code or not line.strip():
            continue
        bare = CODE_SPAN.sub(" ", LINK_ON_LINE.sub(" ", line))
        words = [w.lower() for w in NAME_WORD.findall(bare)]
        grams = {" ".join(words[i:i + n]) for n in range(1, MAX_NAME_WORDS + 1) for i in range(len(words) - n + 1)}
        for name in grams & names.keys():
            for doc in names[name]:
                if doc not in found and doc != me and doc not in linked and doc in catalogue:
                    rel_path, title = catalogue[doc]
                    shown = display_text(line) or " ".join(line.split())  # the line as read: no pipes or marks
                    found[doc] = {"document_id": doc, "title": title, "path": rel_path, "line": number,
                                  "text": shown[:200], "reason": f"names “{title}” without a link"}
    return sorted(found.values(), key=lambda m: (m["line"], m["path"]))


def _style(index: ProjectIndex) -> str:
    """How this vault links: 'wikilink' or 'markdown', by most of its links."""
    kinds = note_reads.link_kinds(index)
    return "markdown" if kinds.get("file", 0) > kinds.get("wikilink", 0) else "wikilink"


def _with_links(item: dict, from_path: str) -> dict:
    """A suggestion with the two ways to write its link."""
    name = posixpath.basename(item["path"])
    stem = name[:-3] if name.endswith(".md") else name  # Obsidian names a note without .md, other files with it
    wikilink = f"[[{stem}]]" if stem == item["title"] else f"[[{stem}|{item['title']}]]"
    relative = posixpath.relpath(item["path"], posixpath.dirname(from_path) or ".")
    return {**item, "wikilink": wikilink, "markdown_link": f"[{item['title']}]({quote(relative)})"}
