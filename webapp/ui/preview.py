"""A safe preview of a document: markdown rendered with raw HTML off, remote images and unsafe links refused.

The preview is built passage by passage (a passage is one section of a chunk), so that a search result can open
the document at the passage it matched: that passage is marked and the panel scrolls to it.
"""
from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_md.disable("image")  # a remote image would reach the network when the preview opens
PREVIEW_CHARS = 60_000
MARKDOWN_TYPES = {"md", "txt"}


def preview(content: str, file_type: str, passages: list[dict] | None = None, match: int | None = None) -> Markup:
    """The document as HTML, one block per passage; passage number `match` is marked as the match."""
    parts = [p for p in passages or [] if p["start"] < PREVIEW_CHARS] or [{"start": 0, "end": len(content)}]
    html = []
    for i, part in enumerate(parts):
        body = render(content[part["start"]:min(part["end"], PREVIEW_CHARS)], file_type)
        if i == match:
            html.append(Markup('<div class="passage match" id="match" tabindex="-1">%s</div>') % body)
        else:
            html.append(Markup('<div class="passage">%s</div>') % body)
    return Markup("").join(html)


def matching_passage(parts: list[dict], at_lines: tuple[int, int] | None) -> int | None:
    """The passage whose lines are at_lines, or failing that the first that overlaps them."""
    if not at_lines:
        return None
    for i, part in enumerate(parts):
        if tuple(part.get("lines") or ()) == at_lines:
            return i
    for i, part in enumerate(parts):
        lines = part.get("lines")
        if lines and lines[0] <= at_lines[1] and at_lines[0] <= lines[1]:
            return i
    return None


def render(text: str, file_type: str) -> Markup:
    """Markdown as HTML (every user string escaped by the renderer), anything else as escaped text."""
    if file_type in MARKDOWN_TYPES:
        # html=False escapes any raw HTML; markdown-it's validateLink refuses javascript:, vbscript: and data: links.
        return Markup(_md.render(text))
    return Markup("<pre>") + escape(text) + Markup("</pre>")


def parse_lines(raw: str) -> tuple[int, int] | None:
    """'12-20' (a result's lines) as (12, 20); anything else as None, so a bad link still opens the document."""
    first, _, last = (raw or "").partition("-")
    try:
        start, end = int(first), int(last or first)
    except ValueError:
        return None
    return (start, end) if 0 < start <= end else None
