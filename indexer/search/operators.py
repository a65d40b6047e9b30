"""Obsidian's search operators, read out of what was typed before the words are parsed: people type them from habit
in every search box (Obsidian's own search and Omnisearch read them the same way).

    tag:#recipe   notes with that tag (nested tags too), as the tags filter
    path:Daily    notes whose path (folder and file name) holds the text, any case
    file:kanban   notes whose file name holds the text, any case
    -word         notes that do not hold the word ("-"quoted phrase"" too)
    a OR b        notes with a, or with b (each side is a search of its own; OR in capitals)
    "a phrase"    the words together (read by the word parser, grammar.py)
    /regex/       refused with a sentence: there is no regular-expression search

An operator's value may be quoted (`path:"Daily notes"`). What is left is the search's words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import InvalidQuery

TOKEN = re.compile(r'(?P<op>\b(?:tag|path|file):)?(?P<neg>-)?(?P<value>"[^"]*"?|\S+)')
REGEX = re.compile(r"^/.+/[a-z]*$")
REGEX_HELP = ("SK Memory does not search by regular expression ({text}). Type the words you are looking for, "
              'a "quoted phrase" for words together, or word* for words that start alike.')


@dataclass
class Operators:
    """What the operators of a query ask for, and the words left."""

    words: str
    tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)  # each side of a top-level OR, when there is one

    @property
    def filters(self) -> dict:
        """The operators that narrow the notes, as the engine's internal filters (filters.allowed_documents)."""
        found = {"path": self.paths, "file": self.files, "exclude": self.excluded}
        return {key: values for key, values in found.items() if values}


def read_operators(text: str) -> Operators:
    """Split Obsidian's operators from the words of a query (raises InvalidQuery for a /regex/)."""
    words: list[str] = []
    found = Operators("")
    for m in TOKEN.finditer(text or ""):
        op, negated, value = m.group("op"), m.group("neg"), m.group("value")
        plain = value.strip('"')
        if not op and not negated and REGEX.match(value):
            raise InvalidQuery(REGEX_HELP.format(text=value))
        if op and plain:
            {"tag:": found.tags, "path:": found.paths, "file:": found.files}[op].append(
                plain.lstrip("#") if op == "tag:" else plain.lower())
        elif negated and plain and not re.fullmatch(r"-+|\d.*", value):
            found.excluded.append(plain.lower())
        elif op is None:
            words.append(("-" if negated else "") + value)
    found.words = " ".join(words)
    if "OR" in words and words[0] != "OR" and words[-1] != "OR":
        sides, side = [], []
        for word in words:
            if word == "OR":
                sides.append(" ".join(side))
                side = []
            else:
                side.append(word)
        sides.append(" ".join(side))
        found.alternatives = [s for s in sides if s.strip()]
        if len(found.alternatives) < 2:
            found.alternatives = []
    return found
