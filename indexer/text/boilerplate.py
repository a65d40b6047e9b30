"""Text that many notes of a project share (a footer, a banner, a licence block) says nothing about any one of them.

Every paragraph of a note is keyed when the note is indexed (paragraph_keys) and the store keeps which notes hold
each key. A paragraph is keyed as a person sees it, with its links, URLs, HTML tags and comments masked: a footer
whose "edit this note" link holds the note's own path is one text in every note, not one per note. A paragraph that
SHARED_NOTES notes or more hold is shared; a passage whose text is mostly shared (SHARED_SHARE of its characters) is
boilerplate, and never speaks for its note while the note has another passage that matched (hybrid ranks it last
within its note, so it is not the best passage, the snippet, MCP's heading or get_context's item). The counts follow
the vault as it changes: a footer becomes boilerplate as the fifth note gains it, with no note indexed again.
"""
from __future__ import annotations

import functools
import hashlib
import re

MIN_CHARS = 24  # a shorter paragraph (a heading, "See also") is shared by chance, not boilerplate
SHARED_NOTES = 5
SHARED_SHARE = 0.6
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_PARAGRAPH_KEPT = re.compile(r"(\n[ \t]*\n)")
_HEADING = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?#{1,6}(?:[ \t]|$)")
# What differs from note to note in a text that is the same to a reader: where links point, URLs, markup.
# Each with the text it needs to be there, so that most paragraphs (plain prose) are keyed without a pattern run:
# this runs for every paragraph of every note indexed.
_MASKS = (
    ("%%", re.compile(r"%%.*?%%", re.S), " "),  # an Obsidian comment
    ("<!--", re.compile(r"<!--.*?-->", re.S), " "),
    ("](", re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)"), r" \1 "),  # [text](url "title"), ![alt](url): the text
    ("[[", re.compile(r"!?\[\[[^\]\n]*\]\]"), " link "),  # [[a wikilink|its alias]]: where it points differs
    ("<", re.compile(r"<[a-zA-Z/!][^>\n]*>"), " "),  # an HTML tag
    ("://", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+"), " url "),
)


@functools.lru_cache(maxsize=4096)  # as a question is typed, each keystroke's results hold the same passages again
def paragraph_keys(text: str) -> tuple[tuple[str, int], ...]:
    """(key, length) of each paragraph of a chunk's text long enough to count: its words, lowercase."""
    return tuple(key for key in map(_key, _PARAGRAPH.split(text)) if key is not None)


def _key(block: str) -> tuple[str, int] | None:
    if len(block) < MIN_CHARS:  # its words are no longer than the block
        return None
    for marker, pattern, mask in _MASKS:
        if marker in block:
            block = pattern.sub(mask, block)
    words = " ".join(block.lower().split())
    if len(words) < MIN_CHARS:
        return None
    return hashlib.sha1(words.encode("utf-8")).hexdigest()[:16], len(words)


def without_shared(text: str, shared: set[str]) -> str:
    """The text without its shared paragraphs, or the text itself when nothing else is left (a note that is only
    its footer still shows it)."""
    if not shared or not any(key in shared for key, _ in paragraph_keys(text)):
        return text
    kept = [block for block in _PARAGRAPH.split(text) if (_key(block) or ("",))[0] not in shared]
    rest = "\n\n".join(kept)
    return rest if rest.strip() else text


def mostly_shared(text: str, shared: set[str]) -> bool:
    """Whether most of a chunk's text is paragraphs that many notes share."""
    keys = paragraph_keys(text)
    total = sum(n for _, n in keys) or 1
    return bool(keys) and sum(n for k, n in keys if k in shared) >= SHARED_SHARE * total


def blank_shared(text: str, shared: set[str] | frozenset[str]) -> str:
    """The text with its shared paragraphs blanked line for line (a line number still points at the file's line): what
    a note says of its own, for its mentions and its rare words."""
    if not shared or not any(key in shared for key, _ in paragraph_keys(text)):
        return text
    parts = _PARAGRAPH_KEPT.split(text)  # paragraphs at even places, the blank lines between them at odd ones
    return "".join("\n" * part.count("\n") if i % 2 == 0 and (_key(part) or ("",))[0] in shared else part
                   for i, part in enumerate(parts))


def only_shared(text: str, shared: set[str] | frozenset[str]) -> bool:
    """Whether a passage says nothing of its own: beyond its headings, every paragraph is one that many notes share."""
    if not shared:
        return False
    own = [line for line in blank_shared(text, shared).split("\n") if line.strip() and not _HEADING.match(line)]
    return not own and any(key in shared for key, _ in paragraph_keys(text))
