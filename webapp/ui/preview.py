"""A safe preview of a document as Obsidian's reading view shows it: markdown rendered (tables, footnotes, task
lists, strikethrough, wikilinks and embeds that open the note in the window, callouts), its raw HTML kept to a small
allow-list, and nothing that reaches the network.

The preview is built passage by passage (a passage is one section of a chunk), so that a search result can open
the document at the passage it matched: that passage is marked and the panel scrolls to it.

Safety: markdown-it renders what the note says; nh3 (the ammonia sanitiser) then keeps only the tags and attributes
of ALLOWED below. `<script>`, `<style>`, `<button>`, `<iframe>`, forms, event handlers (`onerror=`…), inline
styles and any link that is not http(s), mailto or the app's own (`javascript:`, `obsidian:`, `data:`) never pass.
An image becomes its alt text: a remote picture would reach the network when the preview opens.
"""
from __future__ import annotations

import re
import textwrap
from typing import Callable

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markupsafe import Markup, escape
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from indexer import shown_alt, without_hidden

PREVIEW_CHARS = 60_000
MARKDOWN_TYPES = {"md", "txt"}
ALLOWED = {
    "a": {"href", "title", "class"}, "abbr": {"title"}, "b": set(), "blockquote": {"class"}, "br": set(),
    "code": {"class"}, "dd": set(), "del": set(), "details": set(), "div": {"class"}, "dl": set(), "dt": set(),
    "em": set(), "h1": set(), "h2": set(), "h3": set(), "h4": set(), "h5": set(), "h6": set(), "hr": set(),
    "i": set(), "input": {"type", "checked", "disabled", "class"}, "kbd": set(), "li": {"class"}, "mark": set(),
    "ol": {"start", "class"}, "p": {"class"}, "pre": set(), "s": set(), "section": {"class"}, "small": set(),
    "span": {"class"}, "strong": set(), "sub": set(), "summary": set(), "sup": {"class"}, "table": set(),
    "tbody": set(), "td": {"align"}, "th": {"align"}, "thead": set(), "tr": set(), "u": set(), "ul": {"class"},
}
SCHEMES = {"http", "https", "mailto"}
_CALLOUT = re.compile(r"<blockquote>\s*<p>\[!([A-Za-z0-9_-]+)\][+-]?[ \t]*([^<\n]*)(?:\n|<br />\n)?")

LinkHref = Callable[[str], str | None]


def preview(content: str, file_type: str, passages: list[dict] | None = None, match: int | None = None,
            link_href: LinkHref | None = None) -> Markup:
    """The document as HTML, one block per passage; passage number `match` is marked as the match. link_href
    turns a wikilink's target into the address that opens that note in the window (None: not indexed)."""
    parts = [p for p in passages or [] if p["start"] < PREVIEW_CHARS] or [{"start": 0, "end": len(content)}]
    html, open_table = [], ""
    for i, part in enumerate(parts):
        text = content[part["start"]:min(part["end"], PREVIEW_CHARS)]
        # A chunk cut inside a table starts with bare rows: they go on under the header the passage above showed.
        header = open_table if text.lstrip(" ").startswith("|") else ""
        if file_type in MARKDOWN_TYPES:
            open_table = _open_table(header + text)
        body = render(header + text, file_type, link_href)
        if header:  # drawn as the same table going on: no header again, no gap above it
            body = Markup(_THEAD.sub("", str(body).replace("<table>", '<table class="continued">', 1), count=1))
        if i == match:
            html.append(Markup('<div class="passage match" id="match" tabindex="-1">%s</div>') % body)
        else:
            html.append(Markup('<div class="passage">%s</div>') % body)
    return Markup("").join(html)


_DELIMITER_ROW = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_THEAD = re.compile(r"<thead>.*?</thead>\s*", re.S)
_TABLE_LOOKBACK = 2_000  # lines of a passage searched upwards for the header of the table it ends in


def _open_table(text: str) -> str:
    """The header and delimiter rows of the table text ends inside, or '' where its last line is not a table row."""
    block = []
    for line in reversed(text.rstrip("\n").split("\n")[-_TABLE_LOOKBACK:]):
        if not line.strip() or "|" not in line:
            break
        block.append(line)
    block.reverse()
    for i in range(len(block) - 1, 0, -1):
        if _DELIMITER_ROW.match(block[i]):
            return f"{block[i - 1]}\n{block[i]}\n"
    return ""


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


def render(text: str, file_type: str, link_href: LinkHref | None = None) -> Markup:
    """Markdown as sanitised HTML, anything else as escaped text."""
    if file_type not in MARKDOWN_TYPES:
        return Markup("<pre>") + escape(text) + Markup("</pre>")
    # A passage can start inside an indented outline (Logseq, tabs and spaces mixed): without its common indent
    # it is a list, not code.
    html = _MARKDOWN.render(textwrap.dedent(without_hidden(text).expandtabs(4)), {"link_href": link_href})
    html = _CALLOUT.sub(_callout, html)
    return Markup(sanitise(html))


def sanitise(html: str) -> str:
    """Keep only the allow-listed tags, attributes and link schemes (nh3: event handlers, scripts and styles go)."""
    return nh3.clean(html, tags=set(ALLOWED), attributes=ALLOWED, url_schemes=SCHEMES, link_rel="noopener noreferrer",
                     clean_content_tags={"script", "style", "iframe", "object", "embed", "template", "textarea",
                                         "select", "noscript", "svg", "math"})


def _callout(match: re.Match) -> str:
    kind = match.group(1).lower()
    title = match.group(2).strip() or kind.capitalize()
    return (f'<blockquote class="callout callout-{escape(kind)}"><p class="callout-title">{title}</p><p>')


def parse_lines(raw: str) -> tuple[int, int] | None:
    """'12-20' (a result's lines) as (12, 20); anything else as None, so a bad link still opens the document."""
    first, _, last = (raw or "").partition("-")
    try:
        start, end = int(first), int(last or first)
    except ValueError:
        return None
    return (start, end) if 0 < start <= end else None


# --- markdown-it with the rules a vault needs ---------------------------------------------------------------

def _markdown() -> MarkdownIt:
    """The parser, built once; each render passes the document's link_href in its env."""
    md = (MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
          .enable(["table", "strikethrough"]).use(footnote_plugin).use(tasklists_plugin))
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.add_render_rule("wikilink", lambda self, tokens, idx, options, env: _render_wikilink(tokens[idx],
                                                                                           env.get("link_href")))
    md.add_render_rule("image", _render_image)
    return md


_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    match = _WIKILINK.match(state.src, state.pos)
    if not match:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        inner = match.group(2)
        target, _, alias = inner.partition("|")
        token.meta = {"embed": bool(match.group(1)), "target": target.rstrip("\\").strip(),
                      "label": (alias or target.replace("#", " › ")).strip()}
    state.pos = match.end()
    return True


def _render_wikilink(token, link_href: LinkHref | None) -> str:
    target, label, embed = token.meta["target"], token.meta["label"], token.meta["embed"]
    href = link_href(target) if link_href else None
    text = escape(("↪ " if embed else "") + label)
    if href is None:
        return f'<span class="wikilink unresolved" title="Not an indexed note">{text}</span>'
    return f'<a class="wikilink{" embed" if embed else ""}" href="{escape(href)}">{text}</a>'


def _render_image(self, tokens, idx, options, env) -> str:
    """An image as its alt text: a badge or a screenshot's file name gives nothing."""
    token = tokens[idx]
    alt = self.renderInline(token.children or [], options, env) if token.children else token.content
    alt = shown_alt(alt, token.attrGet("src") or "")
    if not alt.strip():
        return ""
    return f'<span class="image-alt" title="An image (not loaded in the preview)">{alt}</span>'


_MARKDOWN = _markdown()
