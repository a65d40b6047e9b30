"""Markdown inside a line: code fences, #tags, [[wikilinks]] and links to local files."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass
class Link:
    """An outgoing reference from a document: kind is 'wikilink', 'file' or 'related_to'."""

    target: str
    kind: str


FENCE_OPEN = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(`{3,}|~{3,})")  # Logseq puts fences after a bullet
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
WIKILINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
BRACKET_TAG = re.compile(r"(?<![^\s(])#\[\[([^\[\]\n]+?)\]\]")  # Logseq's #[[multi word tag]]
MARKDOWN_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*(<[^>\n]*>|[^\s)]+)[^)\n]*\)")
BARE_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://\S+")
TAG = re.compile(r"(?<![^\s(])#([\w\-/]+)")
HAS_LETTER = re.compile(r"[^\W\d]")  # a letter or underscore: '#123' is an issue number, not a tag
URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
HTML_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")  # a tag with its attributes: style="color: #573E7A" is no #tag
HTML_TAG_OPEN = re.compile(r"</?[a-zA-Z][^<>]*$")  # a tag whose attributes go on past the line
# A line that opens an HTML block (CommonMark's kind 6: a block-level tag first on the line): Obsidian reads no
# markdown in it, so no #tag, until the next blank line ("<td>--background-primary-alt: #1a1a1a</td>"). Indented
# four spaces or more after a blank line it is an indented code block, where Obsidian counts no tag either.
HTML_BLOCK = re.compile(r"^[ \t]*</?(?:address|article|aside|blockquote|body|caption|center|col|colgroup|dd|details|"
                        r"dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|header|hr|html|iframe|"
                        r"legend|li|main|menu|nav|ol|p|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul|"
                        r"style|script)(?=[\s/>]|$)", re.IGNORECASE)


def code_lines(lines: list[str]) -> list[bool]:
    """Return, for each line, whether it belongs to a fenced code block (fence lines included)."""
    flags: list[bool] = []
    fence = ""
    for line in lines:
        if fence:
            flags.append(True)
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            continue
        match = FENCE_OPEN.match(line)
        # A backtick "fence" with a backtick after it on the line is an inline code span (CommonMark).
        if match and match.group(1)[0] == "`" and "`" in line[match.end():]:
            match = None
        if match:
            fence = match.group(1)
        flags.append(bool(match))
    return flags


def wikilink_target(inner: str) -> str:
    """Return the note a wikilink's inside points at: without '|alias' and without '#heading'."""
    return inner.split("|", 1)[0].rstrip("\\").split("#", 1)[0].strip()


def normalise_tags(raw: Iterable[str]) -> list[str]:
    """Strip '#', lowercase, strip a trailing '/', drop empties and duplicates, keeping first-seen order."""
    seen: dict[str, None] = {}
    for tag in raw:
        tag = str(tag).strip().lstrip("#").lower().rstrip("/").strip()
        if tag:
            seen.setdefault(tag, None)
    return list(seen)


def dedupe_links(links: Iterable[Link]) -> list[Link]:
    """Drop repeated (target, kind) pairs, keeping first-seen order."""
    seen: dict[tuple[str, str], Link] = {}
    for link in links:
        seen.setdefault((link.target, link.kind), link)
    return list(seen.values())


def wikilinks_in(text: str) -> list[Link]:
    """Return every [[wikilink]] and ![[embed]] in text as a 'wikilink' Link."""
    links = []
    for match in WIKILINK.finditer(text):
        target = wikilink_target(match.group(1))
        if target:
            links.append(Link(target, "wikilink"))
    return links


def local_file_target(destination: str) -> str | None:
    """Return the local path a markdown link destination names, or None for URLs, anchors and page refs."""
    destination = destination.strip().removeprefix("<").removesuffix(">").strip()
    if not destination or destination.startswith(("#", "//", "[[", "((")) or URL_SCHEME.match(destination):
        return None
    path = unquote(re.split(r"[#?]", destination, maxsplit=1)[0]).strip()
    return path or None


def scan_lines(lines: list[str], in_code: list[bool] | None = None) -> tuple[list[str], list[Link]]:
    """Find the raw #tags and the links in markdown lines, ignoring code blocks, code spans, URLs and HTML tags with
    their attributes (as Obsidian counts tags)."""
    if in_code is None:
        in_code = code_lines(lines)
    tags: list[str] = []
    links: list[Link] = []
    in_tag = False  # inside an HTML tag whose attributes run over lines
    in_html = False  # inside an HTML block: no tags until a blank line
    for line, is_code in zip(lines, in_code):
        if is_code or not line.strip():
            in_html = False
            continue
        in_html = in_html or bool(HTML_BLOCK.match(line))
        if in_tag:
            end = line.find(">")
            if end < 0:
                continue
            line, in_tag = line[end + 1:], False
        if "<" in line:
            line = HTML_TAG.sub(" ", line)
            opened = HTML_TAG_OPEN.search(line)
            if opened:
                line, in_tag = line[:opened.start()], True
        if "`" in line:
            line = CODE_SPAN.sub(" ", line)
        if "[[" in line:
            tags.extend(match.group(1) for match in BRACKET_TAG.finditer(line))
            links.extend(wikilinks_in(line))
            line = WIKILINK.sub(" ", line)
        if "](" in line:
            for match in MARKDOWN_LINK.finditer(line):
                target = local_file_target(match.group(1))
                if target:
                    links.append(Link(target, "file"))
            line = MARKDOWN_LINK.sub(" ", line)
        if "#" in line and not in_html:
            if "://" in line:
                line = BARE_URL.sub(" ", line)
            tags.extend(m.group(1) for m in TAG.finditer(line) if HAS_LETTER.search(m.group(1)))
    return tags, links


def scan_text(text: str) -> tuple[list[str], list[Link]]:
    """Find the normalised tags and deduplicated links in a piece of markdown text."""
    tags, links = scan_lines(text.split("\n"))
    return normalise_tags(tags), dedupe_links(links)
