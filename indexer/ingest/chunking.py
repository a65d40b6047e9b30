"""Cut a parsed document into chunks sized to the embedding model's window, stable under small edits.

The design, in the order the work is done:

1. **Units.** Each section is split into blocks at blank lines (a fenced code block stays whole). A block too big
   for the window is split into its lines, and a line still too big into token windows that overlap a little.
   Every unit knows the text the model will see of it (`readable.reader_text`: link text, no URLs, placeholders
   or HTML) and its token count, counted once in one batch; counts add up across whitespace, so packing never
   re-tokenises.
2. **Chunks pack units across sections.** Consecutive sections of one document share a chunk while they fit the
   window (MAX_TOKENS word-pieces with the `title > heading` prefix). A chunk is cut once it is at least half
   full, at the strongest boundary the window allows: before a top-level heading rather than a sub-heading,
   before a heading rather than a paragraph, before a paragraph rather than a line. Among equally strong
   boundaries a hash of the next unit's text decides. The cut depends on the text around it, not on where the
   document starts, so an edit that changes one paragraph's length moves at most the cut after it; the chunk
   after that lands on the same cut again. Editing one paragraph re-embeds the chunk that holds it, and at a
   boundary its neighbour.
3. **No chunk without a body.** A unit with no words for the model (a heading alone, a placeholder, a comment,
   an empty task) never makes a chunk on its own: it joins its neighbours. A document with nothing but such units
   (a template, a page that only embeds a base, a film note of properties) gets one chunk of its text for keyword
   search, and the model reads what the note is: its description when its frontmatter has one (below), else its
   title and its properties ("Blade Runner / director: Ridley Scott; year: 1982"; a field left empty by its name
   alone, as a template's are), so it can be found by meaning and by its own name. Only a note with no words at
   all, not even in its title, is `keyword_only`. A cut is not made where it would leave a scrap.
4. **Where a chunk came from.** A chunk records every section it spans, with its heading path, its lines in the
   file and its offset in the chunk's content, so a result can point at the part that matched. The content is
   the file's text with the original line breaks between sections, so line N of the content is line
   start_line + N of the file.

A note's own summary in its frontmatter (`description`, `summary`, `abstract`, `aliases`; Logseq's `description::`
page property alike), up to LEAD_MAX_TOKENS, opens the text the model reads of its first chunk: it is what a reader
sees at the top of the note, and often the best statement of what the note is about. Other frontmatter is not
embedded. Sections that carry a `ref` (mind map nodes) are never packed together: each node keeps its own chunks.
"""
from __future__ import annotations

import logging
import re
import zlib
from dataclasses import dataclass

from indexer.ingest.parsed import ChunkDraft, ParsedDocument, Section
from indexer.text.readable import has_words, reader_text
from indexer.model.tokens import (COUNT_BATCH, SEGMENT_CHARS, Piece, RoughCounter, TokenCounter, _SPECIAL_TOKENS)

logger = logging.getLogger(__name__)

MAX_TOKENS = 256  # the all-MiniLM-L6-v2 window, in word-piece tokens including [CLS]/[SEP] and the prefix
PREFIX_MAX_TOKENS = 32
CHUNKER_VERSION = 5  # bump when the same file would be cut differently: indexes re-chunk at start-up (5: titles are
# file names, so every note is read again; a passage whose text is unchanged keeps its vector)
MIN_FILL = 0.5  # a chunk is cut no earlier than this share of its window, unless the text runs out
MIN_TAIL = 0.25  # ... nor where what is left of the document would be shorter than this share
_KEY_CHARS = 24  # how much of a unit's opening decides ties between equally strong cuts
LEAD_KEYS = ("description", "summary", "abstract", "aliases", "alias")  # frontmatter the first chunk embeds
LEAD_MAX_TOKENS = 64

# How good a place to start a chunk each kind of unit start is (a section's start: by its heading depth).
_WINDOW, _LINE, _PARAGRAPH, _SECTION = 0, 1, 2, 3


_SENTENCE_END = frozenset(".!?…。！？")
_CJK_SENTENCE_END = frozenset("。！？")
_FENCE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(`{3,}|~{3,})")  # Logseq indents fences and puts them after bullets
_FENCE_LINE = re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:`{3,}|~{3,})[\w+#.-]*[ \t]*")  # a fence alone is not a body
_HEADING_LINE = re.compile(r"[ \t]*(?:[-*+][ \t]+)?#{1,6}(?:[ \t]|$)")


# The most characters a chunk stores. Text the model reads is cut by tokens long before this; text with no words
# for it (a run of brackets, a table rule, base64) is cut here, so no result carries a whole file as one passage.
MAX_CONTENT_CHARS = 6_000


@dataclass
class _Block:
    """A paragraph or fenced code block of a section: character span [start, end) in the section's text."""

    start: int
    end: int


def _split_blocks(text: str) -> list[_Block]:
    """Split section text at blank lines into blocks, keeping each fenced code block whole."""
    blocks: list[_Block] = []
    start = end = None
    fence: str | None = None
    pos = 0
    for line in text.split("\n"):
        stripped = line.rstrip()
        if fence is None and not stripped:
            if start is not None:
                blocks.append(_Block(start, end))
                start = None
        else:
            if start is None:
                start = pos
            if stripped:
                end = pos + len(stripped)
            marker = _FENCE.match(stripped) if ("```" in stripped or "~~~" in stripped) else None
            if marker and fence is None:
                fence = marker.group(1)
            elif marker and _closes(fence, stripped.strip()):
                fence = None
        pos += len(line) + 1
    if start is not None:
        blocks.append(_Block(start, end))
    return blocks


def _closes(fence: str, line: str) -> bool:
    """Say whether a stripped line closes the open code fence: same character, at least as long, nothing after."""
    return line[0] == fence[0] and len(line) >= len(fence) and line == line[0] * len(line)


def _prefix_for(title: str, heading_path: list[str]) -> str:
    """Join the document title and heading path with ' > ', skipping a first heading that repeats the title."""
    parts = [title.strip()] if title and title.strip() else []
    for heading in heading_path:
        heading = heading.strip()
        if heading and not (parts and heading.casefold() == parts[-1].casefold()):
            parts.append(heading)
    return " > ".join(parts)


def _truncate(text: str, pieces: list[Piece], limit: int) -> str:
    """Cut text to its first `limit` tokens, at a word boundary when one is available."""
    if len(pieces) <= limit:
        return text
    cut = limit
    while cut > 0 and pieces[cut][2] == pieces[cut - 1][2]:
        cut -= 1
    cut = cut or limit
    return text[: pieces[cut - 1][1]].rstrip()


def _is_word_start(pieces: list[Piece], i: int) -> bool:
    return pieces[i][2] != pieces[i - 1][2]


def _is_sentence_start(text: str, pieces: list[Piece], i: int) -> bool:
    """Say whether token i starts a new line or a new sentence."""
    prev_end = pieces[i - 1][1]
    gap = text[prev_end : pieces[i][0]]
    if "\n" in gap:
        return True
    last = text[prev_end - 1 : prev_end]
    return last in _CJK_SENTENCE_END or (last in _SENTENCE_END and gap.strip() == "" and gap != "")


def _split_long(text: str, counter: TokenCounter, budget: int, overlap: int) -> list[tuple[int, int]]:
    """Split text that exceeds budget tokens into overlapping spans of at most budget tokens each.

    Long text is read in segments of about SEGMENT_CHARS: each segment's spans but the last are kept, and the next
    segment starts where that last span started, so memory stays a small multiple of a segment.
    """
    if len(text) <= 2 * SEGMENT_CHARS:
        return _split_segment(text, counter, budget, overlap)
    spans: list[tuple[int, int]] = []
    base = 0
    while base < len(text):
        end = len(text) if len(text) - base <= 2 * SEGMENT_CHARS else _soft_end(text, base, SEGMENT_CHARS)
        part = _split_segment(text[base:end], counter, budget, overlap)
        if end == len(text) or len(part) < 2:
            spans += [(base + a, base + b) for a, b in part]
            if end == len(text):
                break
            base = end
            continue
        spans += [(base + a, base + b) for a, b in part[:-1]]
        base += part[-1][0]
    return spans


def _soft_end(text: str, start: int, size: int) -> int:
    """Where a piece of at most size characters from start ends: after the last line break or space in its second
    half, else at start + size (a hard cut)."""
    end = start + size
    half = start + size // 2
    space = max(text.rfind("\n", half, end), text.rfind(" ", half, end))
    return space + 1 if space > 0 else end


def _split_segment(text: str, counter: TokenCounter, budget: int, overlap: int) -> list[tuple[int, int]]:
    pieces = counter.pieces(text)
    n = len(pieces)
    overlap = max(0, min(overlap, budget // 2))
    spans: list[tuple[int, int]] = []
    forced: list[int] = []  # spans cut inside a word, whose re-tokenised count must be checked
    start = 0
    while start < n:
        limit = start + budget
        if limit >= n:
            spans.append((pieces[start][0], pieces[-1][1]))
            break
        # Whole sentences if that fills at least half the window, else the last word boundary, else a hard cut.
        cut = next((i for i in range(limit, start + budget // 2, -1) if _is_sentence_start(text, pieces, i)), None)
        if cut is None:
            cut = next((i for i in range(limit, start, -1) if _is_word_start(pieces, i)), None)
        if cut is None:
            cut = limit
            forced.append(len(spans))
        spans.append((pieces[start][0], pieces[cut - 1][1]))
        # Overlap by whole trailing sentences (or lines of code) when they fit, else from a word boundary.
        window = range(max(cut - overlap, start + 1), cut)
        start = next((i for i in window if _is_sentence_start(text, pieces, i)), None) or next(
            (i for i in window if _is_word_start(pieces, i)), cut
        )
    if forced:
        spans = _refit_forced(text, spans, forced, counter, budget)
    return spans


def _refit_forced(text: str, spans, forced, counter: TokenCounter, budget: int) -> list[tuple[int, int]]:
    """Re-split the spans cut mid-word whose text now tokenises to more than budget tokens."""
    counts = counter.count_many([text[a:b] for a, b in (spans[i] for i in forced)])
    too_big = {i: c - _SPECIAL_TOKENS for i, c in zip(forced, counts) if c - _SPECIAL_TOKENS > budget}
    if not too_big:
        return spans
    fitted: list[tuple[int, int]] = []
    for i, (a, b) in enumerate(spans):
        if i not in too_big or b - a <= 1:
            fitted.append((a, b))
            continue
        smaller = max(1, budget - (too_big[i] - budget))
        fitted.extend((a + x, a + y) for x, y in _split_segment(text[a:b], counter, smaller, 0))
    return fitted


class _LineIndex:
    """Map character offsets in a section's text to 1-based lines of the original file."""

    def __init__(self, section: Section):
        self._text = section.text
        self._offset = 0
        self._line = section.start_line

    def line(self, offset: int) -> int:
        """Return the line holding offset; cheap when offsets come in nearly increasing order."""
        if offset >= self._offset:
            self._line += self._text.count("\n", self._offset, offset)
        else:
            self._line -= self._text.count("\n", offset, self._offset)
        self._offset = offset
        return self._line


@dataclass
class _Unit:
    """The smallest piece the packer moves: a block, a line of a big block, or a window of a huge line."""

    section: int  # index into the document's sections
    start: int  # character span [start, end) in the section's text
    end: int
    embed: str  # what the model sees of it
    strength: int  # how good a chunk start this unit's start is
    body: bool  # holds words for the model beyond a heading line
    tokens: int = 0


def _reader(text: str) -> str:
    """What the model reads of a block or line; past SEGMENT_CHARS, the text as it is: it is over any window, so it
    is split and each window read on its own (the markdown patterns cost more than linear time on hostile lines)."""
    return reader_text(text) if len(text) <= SEGMENT_CHARS else text


def _heading_strength(section: Section) -> int:
    """A section's start: an H1 is the strongest boundary, an H6 or an untitled section the weakest."""
    depth = len(section.heading_path)
    return _SECTION + (6 - min(depth, 6) if depth else 0)


def _opens_with_heading(section: Section) -> bool:
    """Say whether a section's text starts with its own heading line (markdown), not just under a heading path."""
    return bool(section.heading_path) and _HEADING_LINE.match(section.text) is not None


def _units_of(index: int, section: Section) -> list[_Unit]:
    units = []
    titled = _opens_with_heading(section)
    for n, block in enumerate(_split_blocks(section.text)):
        text = section.text[block.start:block.end]
        embed = _reader(text)
        # The opening block of a markdown section starts with its heading line; alone, that line is not a body.
        heading_only = n == 0 and titled and "\n" not in text
        units.append(_Unit(index, block.start, block.end, embed if has_words(embed) else "",
                           _heading_strength(section) if n == 0 else _PARAGRAPH,
                           bool(has_words(embed) and not heading_only)))
    return units


def _split_unit(unit: _Unit, text: str, counter: TokenCounter, budget: int, overlap: int) -> list[_Unit]:
    """Split a unit over budget into its lines, and a line still over budget into overlapping token windows."""
    lines: list[_Unit] = []
    pos = unit.start
    for n, line in enumerate(text[unit.start:unit.end].split("\n")):
        if line.strip():
            embed = "" if _FENCE_LINE.fullmatch(line) else _reader(line)
            lines.append(_Unit(unit.section, pos, pos + len(line), embed if has_words(embed) else "",
                               unit.strength if n == 0 else _LINE, has_words(embed)))
        pos += len(line) + 1
    if len(lines) > 1 or (lines and (lines[0].start, lines[0].end) != (unit.start, unit.end)):
        counts = counter.fits_many([u.embed for u in lines])
        out: list[_Unit] = []
        for line, count in zip(lines, counts):
            line.tokens = count - _SPECIAL_TOKENS if line.embed else 0
            out += _split_unit(line, text, counter, budget, overlap) if line.tokens > budget else [line]
        return out
    windows = []
    for n, (a, b) in enumerate(_split_long(text[unit.start:unit.end], counter, budget, overlap)):
        embed = reader_text(text[unit.start + a:unit.start + b])
        windows.append(_Unit(unit.section, unit.start + a, unit.start + b, embed if has_words(embed) else "",
                             unit.strength if n == 0 else _WINDOW, has_words(embed)))
    counts = counter.count_many([u.embed for u in windows])
    for window, count in zip(windows, counts):
        window.tokens = min(budget, count - _SPECIAL_TOKENS) if window.embed else 0
    return windows


def _capped(unit: _Unit, text: str, counter: TokenCounter) -> list[_Unit]:
    """A unit cut into pieces of at most MAX_CONTENT_CHARS stored characters (at a line or a space when the second
    half of a piece has one, else hard): for text the token windows do not bound, with no words or with long runs
    of space between them."""
    if unit.end - unit.start <= MAX_CONTENT_CHARS:
        return [unit]
    pieces: list[_Unit] = []
    start = unit.start
    while start < unit.end:
        end = unit.end if unit.end - start <= MAX_CONTENT_CHARS else _soft_end(text, start, MAX_CONTENT_CHARS)
        embed = reader_text(text[start:end])
        pieces.append(_Unit(unit.section, start, end, embed if has_words(embed) else "",
                            unit.strength if not pieces else _WINDOW, has_words(embed)))
        start = end
    for piece, count in zip(pieces, counter.count_many([p.embed for p in pieces])):
        piece.tokens = count - _SPECIAL_TOKENS if piece.embed else 0
    return pieces


class _Prefixes:
    """The `title > heading` prefix of a chunk by where it starts, truncated to the prefix budget, with its tokens."""

    def __init__(self, doc: ParsedDocument, counter: TokenCounter, max_tokens: int):
        self.title = doc.title
        self.counter = counter
        self.limit = min(PREFIX_MAX_TOKENS, (max_tokens - _SPECIAL_TOKENS) // 2)
        paths = {tuple(s.heading_path) for s in doc.sections}
        texts = list(dict.fromkeys(_prefix_for(doc.title, list(p)) for path in paths for p in (path, path[:-1])))
        self._known = dict(zip(texts, counter.count_many(texts)))
        self._cache: dict[str, tuple[str, int]] = {}

    def get(self, heading_path: list[str] | None) -> tuple[str, int]:
        if heading_path is None:
            return "", 0
        prefix = _prefix_for(self.title, heading_path)
        if prefix not in self._cache:
            tokens = (self._known.get(prefix) or self.counter.count(prefix)) - _SPECIAL_TOKENS
            short = prefix
            if tokens > self.limit:
                short = _truncate(prefix, self.counter.pieces(prefix), self.limit)
                tokens = self.counter.count(short) - _SPECIAL_TOKENS
            self._cache[prefix] = (short, max(0, tokens) if short else 0)
        return self._cache[prefix]


def chunk_document(
    doc: ParsedDocument, counter: TokenCounter, max_tokens: int = MAX_TOKENS, overlap_tokens: int = 32,
    exact_tokens: int | None = None,
) -> list[ChunkDraft]:
    """Cut doc into chunks whose embed_text fits max_tokens, packing sections together (see the module docstring).

    With exact_tokens, only about that many tokens from the start are counted by the model's tokenizer and the
    rest approximately: a machine-written giant embeds only its opening (pipeline.apply_embed_budget), and the
    keyword-only rest need not pay for exact counts.
    """
    if max_tokens < 8:
        raise ValueError(f"max_tokens must be at least 8, got {max_tokens}")
    sections = doc.sections
    prefixes = _Prefixes(doc, counter, max_tokens)
    units = [u for i, s in enumerate(sections) if s.text and s.text.strip() for u in _units_of(i, s)]
    lead = _lead(doc)
    if lead and units:
        # The note's own summary (frontmatter description, aliases) opens its first chunk: the model reads it, the
        # content does not hold it (it is not in the note's body), and it never makes a chunk without a body.
        units.insert(0, _Unit(units[0].section, units[0].start, units[0].start, lead, _SECTION, False))
    approximate = RoughCounter()
    exact = _count_tokens(units, counter, approximate, exact_tokens)
    fitted: list[_Unit] = []
    if lead and units and units[0].tokens > LEAD_MAX_TOKENS:
        units[0].embed = _truncate(lead, counter.pieces(lead), LEAD_MAX_TOKENS)
        units[0].tokens = counter.count(units[0].embed) - _SPECIAL_TOKENS
    for position, unit in enumerate(units):
        # Split for the longest prefix a chunk of this section can have, so every piece fits wherever it starts.
        budget = max_tokens - _SPECIAL_TOKENS - prefixes.get(sections[unit.section].heading_path)[1]
        if unit.tokens > budget:
            fitted += _split_unit(unit, sections[unit.section].text, counter if position < exact else approximate,
                                  budget, overlap_tokens)
        else:
            fitted.append(unit)
    fitted = [piece for unit in fitted for piece in _capped(unit, sections[unit.section].text, counter)]
    drafts: list[ChunkDraft] = []
    line_indexes: dict[int, _LineIndex] = {}  # one per section, walked forward as chunks go: no rescans
    for first, last in _cuts(fitted, sections, prefixes, max_tokens):
        drafts.append(_draft(len(drafts), fitted[first:last], sections, prefixes, line_indexes))
    if not drafts:
        # No body: a chunk of whatever text there is, for keyword search on it, the title and the path (more than one,
        # keyword-only, when that text is past MAX_CONTENT_CHARS).
        groups = _by_chars(fitted)
        only = _draft(0, groups[0], sections, prefixes, line_indexes) if fitted else ChunkDraft(0, [], "", "", 1, 1)
        title, _ = prefixes.get([])
        if lead:  # what a reader sees of such a page is its description: that is the chunk, for both searches
            lead = _truncate(lead, counter.pieces(lead), LEAD_MAX_TOKENS)
            only = ChunkDraft(0, [], lead, f"{title}\n{lead}" if title else lead, 1, 1,
                              sections=[{"heading_path": [], "lines": [1, 1], "offset": 0}])
        else:  # what the note is: its name and its properties, for the model (the content keeps the note's text)
            identity = "\n".join(p for p in (reader_text(title), _properties_text(doc)) if has_words(p))
            identity = _truncate(identity, counter.pieces(identity), max_tokens - _SPECIAL_TOKENS)
            only.embed_text, only.keyword_only = (identity, False) if has_words(identity) else ("", True)
            drafts.append(only)
            for group in groups[1:]:
                more = _draft(len(drafts), group, sections, prefixes, line_indexes)
                more.embed_text, more.keyword_only = "", True
                drafts.append(more)
            return drafts
        drafts.append(only)
    return drafts


def _by_chars(units: list[_Unit]) -> list[list[_Unit]]:
    """Consecutive units grouped so that each group stores at most MAX_CONTENT_CHARS (a unit never exceeds it)."""
    groups: list[list[_Unit]] = [[]]
    chars = 0
    for n, unit in enumerate(units):
        size = _stored(units, n)
        if groups[-1] and chars + size > MAX_CONTENT_CHARS:
            groups.append([])
            chars = 0
        groups[-1].append(unit)
        chars += size
    return groups


# Properties that say where a note's file or picture lives, or when it was touched: not what the note is about.
IDENTITY_SKIPPED = frozenset({"cover", "image", "banner", "icon", "created", "updated", "modified", "last",
                              "date", "id", "uuid", "cssclasses", "cssclass", "publish", "permalink"})
OWN_FIELDS = frozenset({"tags", "tag", "aliases", "alias"})  # Obsidian's own: left empty, they say nothing of a note


def _properties_text(doc: ParsedDocument) -> str:
    """A note's properties as words ("director: Ridley Scott; year: 1982"): links as their text, no URLs. A property
    left empty is named alone ("Coffee Template / categories: Coffee; producer; country; process; rating"): a
    template's or a stub's empty fields are what it is for."""
    parts = []
    for key, value in (doc.frontmatter.items() if isinstance(doc.frontmatter, dict) else ()):
        if str(key).lower() in IDENTITY_SKIPPED:
            continue
        values = value if isinstance(value, list) else [value]
        words = [reader_text(str(v)) for v in values
                 if isinstance(v, (str, int, float)) and not isinstance(v, bool) and "://" not in str(v)]
        words = [w for w in words if has_words(w)]
        if words:
            parts.append(f"{key}: {', '.join(words)}")
        elif value in (None, "", [], {}) and has_words(str(key)) and str(key).lower() not in OWN_FIELDS:
            parts.append(str(key))
    return "; ".join(parts)


def _lead(doc: ParsedDocument) -> str:
    """What the note says of itself in its frontmatter (description, summary, aliases), as the model reads it."""
    parts = []
    for key in LEAD_KEYS:
        value = doc.frontmatter.get(key) if isinstance(doc.frontmatter, dict) else None
        values = value if isinstance(value, list) else [value]
        parts += [str(v).strip() for v in values if isinstance(v, (str, int, float)) and str(v).strip()]
    return reader_text("; ".join(dict.fromkeys(parts))) if parts else ""


def _names(heading: str, title: str) -> bool:
    """Whether a heading says the title: it is the title, or holds it as whole words."""
    heading, title = " ".join(heading.casefold().split()), " ".join((title or "").casefold().split())
    return bool(title) and (heading == title or re.search(rf"(?<!\w){re.escape(title)}(?!\w)", heading) is not None)


def _prefix_path(unit: _Unit, sections: list[Section], title: str) -> list[str] | None:
    """The heading path a chunk starting at unit is prefixed with: a heading line in the content is not repeated.

    None means no prefix at all: the chunk opens with an H1 that names the title itself ("# Sourdough bread" in
    Sourdough.md: the title is the file name, and the heading already says it).
    """
    path = sections[unit.section].heading_path
    if unit.start != 0 or not _opens_with_heading(sections[unit.section]):
        return path
    if len(path) == 1 and _names(path[0], title):
        return None
    return path[:-1]


def _cuts(units: list[_Unit], sections: list[Section], prefixes: _Prefixes, max_tokens: int):
    """Yield (first, last) unit ranges of the chunks: whole document packed, cut at the strongest boundaries."""
    n = len(units)
    rest = [0] * (n + 1)  # tokens from unit i to the end
    body_after = [False] * (n + 1)  # whether any unit from i on has a body
    for i in range(n - 1, -1, -1):
        rest[i] = rest[i + 1] + units[i].tokens
        body_after[i] = body_after[i + 1] or units[i].body
    i = 0
    while i < n:
        budget = max_tokens - _SPECIAL_TOKENS - prefixes.get(_prefix_path(units[i], sections, prefixes.title))[1]
        ref = sections[units[i].section].ref
        reach, used, has_body = i, 0, False
        fills: list[tuple[int, int, bool]] = []  # (cut before unit c, tokens before it, a body before it)
        chars = 0
        while reach < n and used + units[reach].tokens <= budget:
            if reach > i and _hard_boundary(units[reach - 1], units[reach], sections, ref):
                break
            chars += _stored(units, reach)
            if reach > i and chars > MAX_CONTENT_CHARS:  # words the model does not read still fill a passage
                break
            used += units[reach].tokens
            has_body = has_body or units[reach].body
            reach += 1
            fills.append((reach, used, has_body))
        if reach == i:  # cannot happen for fitted units; guard against an endless loop all the same
            reach = i + 1
            fills.append((reach, units[i].tokens, units[i].body))
        if reach == n or not body_after[reach] or _hard_boundary(units[reach - 1], units[reach], sections, ref):
            cut = reach
        else:
            cut = _best_cut(units, fills, rest, body_after, budget)
        if any(u.body for u in units[i:cut]):
            yield i, cut
        i = cut


def _stored(units: list[_Unit], n: int) -> int:
    """The characters unit n adds to a chunk that holds the unit before it: the gap between them too."""
    unit = units[n]
    before = units[n - 1] if n else None
    if before is not None and before.section == unit.section and before.end <= unit.start:
        return unit.end - before.end
    return unit.end - unit.start


def _hard_boundary(before: _Unit, after: _Unit, sections: list[Section], ref) -> bool:
    """Mind map nodes (sections with a ref) never share a chunk."""
    return before.section != after.section and (ref is not None or sections[after.section].ref is not None)


def _best_cut(units: list[_Unit], fills, rest: list[int], body_after: list[bool], budget: int) -> int:
    """Choose where the chunk ends among the cuts that fit: half full, not leaving a scrap, strongest boundary."""
    least = budget * MIN_FILL
    tail = budget * MIN_TAIL
    candidates = [(c, used) for c, used, body in fills if body and used >= least and body_after[c]]
    good = [c for c, _ in candidates if rest[c] >= tail]
    pool = good or [c for c, _ in candidates]
    if not pool:
        return fills[-1][0]
    # The tie-break hashes only the opening of the next unit, so an edit inside a paragraph keeps the cut before it.
    return max(pool, key=lambda c: (units[c].strength, zlib.crc32(units[c].embed[:_KEY_CHARS].encode("utf-8")), -c))


def _count_tokens(units: list[_Unit], counter: TokenCounter, rough: TokenCounter, exact_tokens: int | None) -> int:
    """Set each unit's token count: exactly up to exact_tokens (all when None), then approximately; return how many
    units were counted exactly."""
    position, total = 0, 0
    while position < len(units) and (exact_tokens is None or total < exact_tokens):
        batch = units[position:position + COUNT_BATCH]
        for unit, count in zip(batch, counter.fits_many([u.embed for u in batch])):
            unit.tokens = count - _SPECIAL_TOKENS if unit.embed else 0
            total += unit.tokens
        position += len(batch)
    rest = units[position:]
    for unit, count in zip(rest, rough.count_many([u.embed for u in rest])):
        unit.tokens = count - _SPECIAL_TOKENS if unit.embed else 0
    return position


def _draft(ordinal: int, units: list[_Unit], sections: list[Section], prefixes: _Prefixes,
           line_indexes: dict[int, "_LineIndex"]) -> ChunkDraft:
    """Assemble a chunk from consecutive units: content as in the file, the sections it spans, the model's text."""
    parts: list[str] = []
    spans: list[dict] = []
    offset = 0
    previous_end: int | None = None
    for index, group in _by_section(units):
        section = sections[index]
        lines = line_indexes.setdefault(index, _LineIndex(section))
        start, end = group[0].start, max(u.end for u in group)
        first_line, last_line = lines.line(start), lines.line(end - 1)
        if previous_end is not None:
            gap = "\n" * max(1, first_line - previous_end)
            parts.append(gap)
            offset += len(gap)
        spans.append({"heading_path": list(section.heading_path), "lines": [first_line, last_line], "offset": offset})
        text = section.text[start:end]
        parts.append(text)
        offset += len(text)
        previous_end = last_line
    prefix, _ = prefixes.get(_prefix_path(units[0], sections, prefixes.title))
    body = "\n\n".join(u.embed for u in units if u.embed)
    first = sections[units[0].section]
    return ChunkDraft(
        ordinal=ordinal,
        heading_path=list(first.heading_path),
        content="".join(parts),
        embed_text=f"{prefix}\n{body}" if prefix else body,
        start_line=spans[0]["lines"][0],
        end_line=spans[-1]["lines"][1],
        ref=first.ref,
        sections=spans,
    )


def _by_section(units: list[_Unit]):
    group: list[_Unit] = []
    for unit in units:
        if group and unit.section != group[0].section:
            yield group[0].section, group
            group = []
        group.append(unit)
    if group:
        yield group[0].section, group
