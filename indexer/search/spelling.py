"""A word that matches nothing, corrected against the project's own vocabulary ("kanbn" -> "kanban").

A word of four letters or more that no title, path or chunk holds, and that is not a word the model knows whole
(one word piece: "story", "gates"; a real word the notes happen not to use is left alone), is compared with the
words the notes hold (the `words` index, unstemmed) that start with the same letter: at most one edit for a word of
up to nine letters, two for a longer one (an edit is a letter missing, added, wrong or two letters swapped). The
closest wins, then the word more notes hold. The search runs with the corrected words and says so; asking with
correct=false searches the words as typed. Each word is corrected on its own ("obsidain sync" -> "obsidian sync").

A word the notes do hold, but rarely (RARE_HOLDERS passages or fewer), that is a slip of the fingers away (two letters
swapped, a letter doubled) from a word they hold FAR_MORE times as often, is searched as typed and the answer offers
the other: `did_you_mean` ("zettlekasten", a misspelling three
notes share, beside "zettelkasten" in a hundred).
"""
from __future__ import annotations

import re

from . import chunk_reads as reads
from ..text.language import script_counts
from .index import ProjectIndex

MIN_LENGTH = 4
RARE_HOLDERS = 3
FAR_MORE = 10


def correctable(term: str) -> bool:
    """Whether a word may be corrected at all: letters of one script, and none of Chinese or Japanese (a run of them
    is a sentence, not a word: one character away is another sentence)."""
    if len(term) < MIN_LENGTH or not term.isalpha():
        return False
    scripts = set(script_counts(term))
    return len(scripts) == 1 and not scripts & {"han", "kana", "hangul"}


def _same_script(a: str, b: str) -> bool:
    """Whether two words are written in the same script (a Russian word is never corrected to a Latin one)."""
    return set(script_counts(a)) == set(script_counts(b))


def max_edits(word: str) -> int:
    """How many edits a word of this length may be away from what was meant."""
    return 1 if len(word) <= 9 else 2


def distance(a: str, b: str, limit: int) -> int:
    """Edits from a to b (missing, added or wrong letters, two letters swapped), or limit + 1 once past limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before, row = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


def suggestion(indexes: list[ProjectIndex], word: str) -> str | None:
    """The word of the notes closest to `word` within its edits (then the most used), or None."""
    best = _neighbours(indexes, word)[1]
    return best[2] if best else None


def _neighbours(indexes: list[ProjectIndex], word: str) -> tuple[int, tuple | None]:
    """How many passages hold the word itself, and (edits, -holders, word) of its closest other word, or None."""
    limit, best, own = max_edits(word), None, 0
    for index in indexes:
        for candidate, holders in reads.vocabulary_from(index, word[0], len(word) - limit, len(word) + limit):
            if candidate == word:
                own += holders
                continue
            if not candidate.isalpha() or not _same_script(word, candidate):
                continue
            edits = distance(word, candidate, limit)
            if edits <= limit:
                key = (edits, -holders, candidate)
                best = key if best is None or key < best else best
    return own, best


def _known_whole(indexes: list[ProjectIndex], word: str) -> bool:
    """Whether the model's vocabulary holds the word as one piece: a real word, whatever the notes make of it."""
    return bool(indexes) and indexes[0].counter.exact and len(indexes[0].counter.pieces(word)) == 1


def _slip(typed: str, other: str) -> bool:
    """Whether one word is the other with a slip of the fingers: two letters swapped ("zettlekasten"), or a letter
    doubled or left single ("ggroups"). Other edits between two words the notes hold are too often two real words:
    asked of 3,000 of tldr-en's rare words, the first nine offers without this rule held six such pairs ("trading",
    "tracing"; "unblock", "unlock"; "derailed", "detailed"); with it there were two offers, both slips."""
    if len(typed) == len(other):
        diff = [i for i, (a, b) in enumerate(zip(typed, other)) if a != b]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and typed[diff[0]] == other[diff[1]] \
            and typed[diff[1]] == other[diff[0]]
    short, long = sorted((typed, other), key=len)
    if len(long) - len(short) != 1:
        return False
    return any(long[:i] + long[i + 1:] == short and long[i] == long[i - 1] for i in range(1, len(long)))


def better_words(indexes: list[ProjectIndex], query) -> dict[str, str]:
    """{typed word: a far more common close word} for each word of the query the notes hold only rarely."""
    offers = {}
    for i, term in enumerate(query.terms):
        if not correctable(term):
            continue
        if any(titled or pathed for titled, pathed in (query.named(index)[i] for index in indexes)):
            continue  # a note's name: tldr's `ggroups` is no misspelling of "groups"
        if not 0 < sum(reads.word_holders(index, term.lower()) for index in indexes) <= RARE_HOLDERS:
            continue  # most words: one look-up, no comparison with the vocabulary
        if _known_whole(indexes, term):
            continue  # "trading" is a word, not a misspelling of "tracing"
        own, best = _neighbours(indexes, term.lower())
        if best and 0 < own <= RARE_HOLDERS and -best[1] >= FAR_MORE * own and _slip(term.lower(), best[2]):
            offers[term] = best[2]
    return offers


def corrections(indexes: list[ProjectIndex], query) -> dict[str, str]:
    """{typed word: correction} for each word of the query that no project holds anywhere and that the notes
    hold a close word for."""
    fixes = {}
    for i, term in enumerate(query.terms):
        if not correctable(term):
            continue  # a phrase, a number, an id, a short word, a CJK sentence: searched as typed
        if _known_whole(indexes, term):
            continue  # a word the model knows whole is a word, not a typo
        if any(query.held(index, i) for index in indexes):
            continue
        fixed = suggestion(indexes, term)
        if fixed:
            fixes[term] = fixed
    return fixes


def corrected_text(text: str, fixes: dict[str, str]) -> str:
    """The query with each corrected word replaced (whole words, any case)."""
    for typed, fixed in fixes.items():
        text = re.sub(rf"(?<!\w){re.escape(typed)}(?!\w)", fixed, text, flags=re.IGNORECASE)
    return text


def corrected(indexes: list[ProjectIndex], query) -> tuple[object, dict]:
    """The query with each word that matches nothing corrected, and what the answer says of it: `corrected`, else
    `did_you_mean` for rare words beside far commoner ones ({} when neither)."""
    fixes = corrections(indexes, query)
    if not fixes:
        offers = better_words(indexes, query)
        return query, ({"did_you_mean": {"query": corrected_text(query.text, offers), "words": offers}} if offers
                       else {})
    text = corrected_text(query.text, fixes)
    return (type(query).parse(text, query.tags_all, query.tags_any, query.filters),
            {"corrected": {"original": query.text, "query": text, "words": fixes}})

