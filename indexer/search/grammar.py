"""How what a user typed is read, every way a search reads it (query.py reads it once, with these): the keyword
leg's terms, the words to highlight in a match by meaning, the stopwords, and the FTS5 MATCH expression of the
BM25 legs.

The FTS5 expression never raises, whatever it is given.

Unquoted terms are AND-ed (the porter tokenizer stems them: `running` matches `runs`); "quoted text" is an exact
phrase; a term with punctuation inside (`vault-cortex`, `deploy/local`, `don't`) is the phrase of its words, which
is how the tokenizer split the note's text; `word*` is a prefix. `OR` and `NOT` in capitals between two terms are
operators; anything else FTS5 would read as syntax (stray quotes, brackets, `:`, `^`, `AND`, emoji) is dropped or
quoted away, so every emitted term is a double-quoted run of letters and digits.
"""
from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field

from ..text.segment import CJK_RUN, pairs, word_forms

# The unicode61 tokenizer's token characters are letters and digits; everything else separates words.
WORD = re.compile(r"[^\W_]+")
LEXEME = re.compile(r'(?P<phrase>"[^"]*(?:"|$))|(?P<bare>[^\s"]+)')
OPERATORS = ("AND", "OR", "NOT")
MAX_TERMS = 32
MAX_KEYWORD_TERMS = 12
# Words too common to say what a query is about.
STOPWORDS = frozenset("""a an and are as at be but by can did do does for from had has have how i if in is it its me my
no not of on or our out so that the their them then there these they this to was we went were what when where which
who why will with would you your""".split())
# Words too common in any text to be its "rare words" (a page's "his", "too", "per", "every"), beyond the stopwords.
COMMON_WORDS = STOPWORDS | frozenset("""about above after again against all also always am among an another any
anyone anything around away back because been before being below between both came come could day days down during
each easy either else enough even ever every few first found get gets getting give given go goes going gone good got
great had hardly he her here hers herself him himself his however into just keep know last least less let like little
made make makes many may maybe might mine more most much must myself need never new next nothing now off often old
once one only onto other others ought ours over own part per put rather really right same see seen shall she should
show since some something still such sure take than thing things think those though through thus till together too
took toward under until up upon us use used uses using very via want way ways well whether while whom whose within
without yes yet yours also able across actually already although another anyway became become else etc ie eg""".split())
# Particles a Chinese or Japanese pair holding one says little of (highlighted pairs leave them out).
PARTICLES = frozenset("的了是在和与或及也就都而着过吗呢吧啊一个这那有我你他をはがにでとものへやかなね")
_ENDINGS = r"(?:s|es|ed|d|ing|er|ers|'s|’s)?"  # what porter folds onto a term: "sync" holds in "syncing"


def whole_words(terms) -> re.Pattern | None:
    """One pattern that finds each term as a whole word (with the endings porter folds: "note" in "notes", never
    "his" in "This" or "para" in "separate"), and a CJK term as its characters; None without terms."""
    terms = sorted({t for t in terms if t and t.strip()}, key=len, reverse=True)
    if not terms:
        return None
    alternatives = [re.escape(t) if CJK_RUN.search(t) else rf"(?<![^\W_]){re.escape(t)}{_ENDINGS}(?![^\W_])"
                    for t in terms]
    return re.compile("|".join(alternatives), re.IGNORECASE)


def held_words(terms, *texts: str | None) -> list[str]:
    """The terms (longer than a letter) that occur as whole words in any of the texts, in the terms' order."""
    haystack = "\n".join(t for t in texts if t)
    return [t for t in terms if len(t) > 1 and whole_words([t]).search(haystack)]


# bm25() weights of the chunks_bm25 columns: title, heading path, chunk text, the note's properties (first chunk).
BM25_WEIGHTS = (4.0, 2.0, 1.0, 1.0)
BM25_RANK = f"bm25(chunks_bm25, {', '.join(map(str, BM25_WEIGHTS))})"


@dataclass(frozen=True)
class FtsQuery:
    """A query as FTS5 will run it: the MATCH expression ('' when nothing is searchable) and words to highlight."""

    match: str
    words: list[str] = field(default_factory=list)
    any_match: str = ""  # the positive terms OR-ed: notes with some of the words, to follow those with all of them
    positive: tuple[str, ...] = ()  # those terms, each as FTS5 reads it
    items: tuple = ()  # the terms and operators it was rendered from (for_languages renders them again)

    def __bool__(self) -> bool:
        return bool(self.match)

    @classmethod
    def render(cls, items: tuple, languages: tuple[str, ...]) -> "FtsQuery":
        parts: list[str] = []
        highlight: list[str] = []
        positive: list[str] = []
        negated = False
        for kind, value in items:
            if kind == "op":
                parts.append(value)
                negated = value == "NOT"
                continue
            words, prefix, phrase = value
            rendered = _render(list(words), prefix, phrase, languages)
            if not negated:
                highlight += [w for w in highlight_words(list(words)) if w not in highlight]
                positive.append(rendered)
            if parts and parts[-1] not in OPERATORS and (rendered.startswith("(") or parts[-1].endswith(")")):
                parts.append("AND")  # FTS5 reads two terms side by side as AND, but not beside a parenthesis
            parts.append(rendered)
            negated = False
        match = " ".join(parts)
        any_match = " OR ".join(positive) if len(positive) > 1 else ""
        return cls(match, highlight, "" if any_match == match else any_match, tuple(positive), items)

    def for_languages(self, languages: tuple[str, ...]) -> "FtsQuery":
        """The same query with each bare word also as its stems in these languages (text/segment.py)."""
        return FtsQuery.render(self.items, languages) if languages and self.items else self


def _term(words: list[str], prefix: bool) -> str:
    # Only letters and digits reach here, so the quotes need no escaping; "a b" is an adjacent-word phrase.
    return '"' + " ".join(words) + '"' + ("*" if prefix and len(words) == 1 else "")


_SCRIPT_PART = re.compile(rf"{CJK_RUN.pattern}|(?:(?!{CJK_RUN.pattern}).)+")


def _tokens(word: str) -> list[str]:
    """A word as the BM25 table's tokens: its CJK runs as character pairs (text/segment.py), the rest whole."""
    if not CJK_RUN.search(word):
        return [word]
    out: list[str] = []
    at = 0
    for m in CJK_RUN.finditer(word):
        if m.start() > at:
            out.append(word[at:m.start()])
        out += pairs(m.group(0))
        at = m.end()
    if at < len(word):
        out.append(word[at:])
    return out


def _render(words: list[str], prefix: bool, phrase: bool, languages: tuple[str, ...]) -> str:
    """One term of the MATCH expression: a phrase of the words' tokens; a bare CJK run as the OR of its character
    pairs (a question shares some of them with its answer, rarely all); a bare word with its stems in the project's
    stemmed languages as the OR of its forms."""
    tokens = [t for w in words for t in _tokens(w)]
    if phrase or len(words) > 1:
        return _term(tokens, False)
    if len(tokens) > 1 and all(CJK_RUN.search(t) for t in tokens):
        return "(" + " OR ".join(_term([t], False) for t in dict.fromkeys(tokens)) + ")"
    if len(tokens) > 1:  # letters and CJK in one word (解压zip文件): each script's part as if typed apart, as a
        # Chinese writer rarely puts spaces around a Latin word
        parts = [m.group(0) for m in _SCRIPT_PART.finditer(words[0])]
        return "(" + " AND ".join(_render([part], prefix and i == len(parts) - 1, False, languages)
                                  for i, part in enumerate(parts)) + ")"
    forms = word_forms(tokens[0], languages) if languages and not prefix else (tokens[0],)
    if len(forms) == 1:
        return _term(tokens, prefix)
    return "(" + " OR ".join(_term([f], False) for f in forms) + ")"


def highlight_words(words: list[str]) -> list[str]:
    """The words a match is marked by: a CJK run by its pairs without a particle (的, の, ...), others whole."""
    out: list[str] = []
    for w in words:
        if CJK_RUN.search(w):
            out += [t for t in _tokens(w) if not (len(t) == 2 and set(t) & PARTICLES) and t not in out]
        elif w not in out:
            out.append(w)
    return out


def _lex(text: str) -> list[tuple[str, object]]:
    """Split a query into ('term', (words, prefix, phrase)) and ('op', name) items, dropping what holds no words."""
    items: list[tuple[str, object]] = []
    for m in LEXEME.finditer(text):
        raw = m.group("phrase")
        if raw is not None:
            words = [w.lower() for w in WORD.findall(raw)]
            if words:
                items.append(("term", (tuple(words), False, True)))
            continue
        raw = m.group("bare")
        if raw in OPERATORS:
            items.append(("op", raw))
            continue
        words = [w.lower() for w in WORD.findall(raw)]
        if words:
            items.append(("term", (tuple(words), raw.endswith("*"), False)))
    return items


def parse_query(text: str | None) -> FtsQuery:
    """Turn what a user typed into an FTS5 MATCH expression and the words worth highlighting."""
    if not isinstance(text, str):
        return FtsQuery("")
    items: list[tuple[str, object]] = []  # the terms and operators kept, in order
    pending: str | None = None  # an operator waiting for its right-hand term
    skip_next = False  # a NOT with nothing before it: leave out the term it negates
    terms = 0
    for kind, value in _lex(text):
        if kind == "op":
            if value == "AND":  # AND is what adjacent terms already mean
                continue
            if items and pending is None:
                pending = value
            elif not items and value == "NOT":
                skip_next = True
            continue
        if skip_next:
            skip_next = False
            continue
        if terms == MAX_TERMS:
            break
        terms += 1
        if pending:
            items.append(("op", pending))
        items.append(("term", value))
        pending = None
    return FtsQuery.render(tuple(items), ())


def parse_terms(text: str) -> list[str]:
    """Split a query into the keyword leg's lowercase terms: "quoted phrases" stay whole, other words split on
    spaces, and where they change between Chinese or Japanese and other letters."""
    terms: list[str] = []
    for quoted, word in re.findall(r'"([^"]*)"|(\S+)', text or ""):
        term = (quoted if quoted else word).strip().lower()
        # a word that changes script (解压zip文件) is its parts, as if spaced: a Chinese writer rarely spaces them
        parts = [term] if quoted or not CJK_RUN.search(term) or CJK_RUN.fullmatch(term) else \
            [p for p in _SCRIPT_PART.findall(term) if WORD.search(p)]
        for part in parts:
            if part and part not in terms:
                terms.append(part)
    return terms[:MAX_KEYWORD_TERMS]


def query_words(text: str) -> list[str]:
    """The words of a query worth highlighting in a match by meaning (lowercase, 2+ characters)."""
    return [w for w in re.findall(r"\w[\w'-]*", text.lower()) if len(w) > 1]


def without_stopwords(text: str) -> tuple[str, list[str]]:
    """The query with its bare stopwords left out (a "quoted phrase" keeps its own, operators stay), and the words
    left out; the text unchanged when every word is a stopword ("how to" still searches for both)."""
    kept, dropped = [], []
    for m in LEXEME.finditer(text or ""):
        raw = m.group(0)
        bare = m.group("bare")
        word = "".join(WORD.findall(bare)).lower() if bare is not None else ""
        if bare is not None and bare not in OPERATORS and word in STOPWORDS and "".join(WORD.findall(bare)) == \
                bare.strip(".,;:!?()[]{}'\""):
            dropped.append(word)
        else:
            kept.append(raw)
    if not any(WORD.search(k) for k in kept if k not in OPERATORS):
        return text or "", []
    return " ".join(kept), dropped


def normal_words(text: str) -> str:
    """Text as its lowercase words without accents, one space apart: how a query is held against a note's name
    ("jose marti" names "José Martí.md", as the index's unicode61 tokenizer folds them too)."""
    return " ".join(WORD.findall(fold_accents((text or "").lower())))


def fold_accents(text: str) -> str:
    """The text with the accents of its Latin letters taken off (é -> e, ü -> u); other scripts stay as they are (a
    Japanese が is not か)."""
    if text.isascii():
        return text
    return "".join(_fold_latin(c) if "\u00c0" <= c <= "\u024f" or "\u1e00" <= c <= "\u1eff" else c for c in text)


@functools.lru_cache(maxsize=1024)
def _fold_latin(c: str) -> str:
    return "".join(d for d in unicodedata.normalize("NFD", c) if not unicodedata.combining(d)) or c


# What naming a note adds to its score, in hybrid and vault_search alike: the query is the note's name (2: its title,
# an alias or its file name), or stands whole inside it (1). The note named what you typed comes first (a known item).
TITLE_BONUS = {2: 1.0, 1: 0.5, 0: 0.0}
# Hybrid adds this much of a chunk's own similarity to its note's score: within a note, and between notes that score
# alike, the passage closer in meaning comes first.
CHUNK_WEIGHT = 0.05


def name_match(forms: tuple[str, ...], names: list[str]) -> int:
    """How a query (its normal_words forms) matches a note's names (title, aliases, file name): 2 when it is one of
    them, 1 when it stands whole inside one or starts one (`kanb` starts "Kanban", as Obsidian's quick switcher
    reads what is being typed), 0 otherwise."""
    named = [f" {normal_words(n)} " for n in names if n]
    forms = tuple(f for f in forms if f)
    if any(n.strip() == f for n in named for f in forms):
        return 2
    return 1 if any(f" {f} " in n or n.startswith(f" {f}") for n in named for f in forms) else 0


def aliases(frontmatter: str | None) -> list[str]:
    """A note's aliases from its frontmatter JSON (aliases: or alias:, a list or one string)."""
    try:
        meta = json.loads(frontmatter or "{}")
    except ValueError:
        return []
    found: list[str] = []
    for key in ("aliases", "alias"):
        value = meta.get(key) if isinstance(meta, dict) else None
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found += [v for v in value if isinstance(v, str)]
    return found
