"""A safe preview of a document: markdown rendered with raw HTML off, remote images and unsafe links refused."""
from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_md.disable("image")  # a remote image would reach the network when the preview opens
PREVIEW_CHARS = 60_000
MARKDOWN_TYPES = {"md", "txt"}


def preview(content: str, file_type: str) -> Markup:
    """Markdown as HTML (every user string escaped by the renderer), anything else as escaped text."""
    text = content[:PREVIEW_CHARS]
    if file_type in MARKDOWN_TYPES:
        # html=False escapes any raw HTML; markdown-it's validateLink refuses javascript:, vbscript: and data: links.
        return Markup(_md.render(text))
    return Markup("<pre>") + escape(text) + Markup("</pre>")
