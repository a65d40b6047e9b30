"""Text that many notes of a project share (a footer, a banner, a licence block) says nothing about any one of them.

Every paragraph of a note is keyed when the note is indexed (paragraph_keys) and the store keeps which notes hold
each key. A paragraph that SHARED_NOTES notes or more hold is shared; a passage whose text is mostly shared
(SHARED_SHARE of its characters) is boilerplate, and never speaks for its note while the note has another passage
that matched (hybrid ranks it last within its note, so it is not the best passage, the snippet, MCP's heading or
get_context's item). The counts follow the vault as it changes: a footer becomes boilerplate as the fifth note
gains it, with no note indexed again.
"""
from __future__ import annotations

import functools
import hashlib
import re

MIN_CHARS = 24  # a shorter paragraph (a heading, "See also") is shared by chance, not boilerplate
SHARED_NOTES = 5
SHARED_SHARE = 0.6
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


@functools.lru_cache(maxsize=4096)  # as a question is typed, each keystroke's results hold the same passages again
def paragraph_keys(text: str) -> tuple[tuple[str, int], ...]:
    """(key, length) of each paragraph of a chunk's text long enough to count: its words, lowercase."""
    return tuple(key for key in map(_key, _PARAGRAPH.split(text)) if key is not None)


def _key(block: str) -> tuple[str, int] | None:
    if len(block) < MIN_CHARS:  # its words are no longer than the block
        return None
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
