"""A unigram tokenizer (XLM-RoBERTa's, as multilingual-e5-small reads text) in Python: the pieces `tokenizers` makes
from the same tokenizer.json, in a tenth of its memory.

`tokenizers` holds the 250,002 pieces in a trie of hash maps: 255-284 MB resident for one tokenizer, most of what a
Chinese project's server held beyond an English one's. Here they are one dict (piece -> id) and a list of scores,
about 30 MB, and a word is cut by the same Viterbi search over its prefixes (the longest piece that begins with each
character bounds the prefixes tried). Every step follows `tokenizers` (0.2x): the normaliser's replacements, NFKC and
runs of spaces made one; U+2581 for every space and before the text, each word from one U+2581 to the next; a
character no piece holds scored `min_score - 10` and consecutive ones fused into one <unk>; ties to the piece found
first (the shorter); <s> ... </s> around, and the text cut to the window before them. tests/test_multilingual.py
checks the ids against `tokenizers` on passages and questions in eight languages.

Only tokenizer.json files of exactly that shape are read here (`readable`); any other goes to `tokenizers`.
"""
from __future__ import annotations

import json
import re
from array import array
import unicodedata
from dataclasses import dataclass
from pathlib import Path

SPACE = "\u2581"
UNK_PENALTY = 10.0  # tokenizers' K_UNK_PENALTY: a character no piece holds scores min_score - this


@dataclass(frozen=True)
class Encoding:
    """What an encoder reads of a text's encoding (tokenizers.Encoding's `ids`)."""

    ids: list[int]


def readable(spec: dict) -> bool:
    """Whether a tokenizer.json is one this module reads: a unigram model, a normaliser of replacements and NFKC,
    Metaspace always prepended and split, a template of one special token each side."""
    try:
        steps = spec["normalizer"]["normalizers"] if spec["normalizer"]["type"] == "Sequence" else []
        template = spec["post_processor"]["single"]
        return (spec["model"]["type"] == "Unigram" and not spec["model"].get("byte_fallback")
                and not spec.get("added_tokens")
                and all(s["type"] == "NFKC" or (s["type"] == "Replace" and "Regex" in s["pattern"]) for s in steps)
                and spec["pre_tokenizer"] == {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always",
                                              "split": True}
                and [next(iter(t)) for t in template] == ["SpecialToken", "Sequence", "SpecialToken"])
    except (KeyError, TypeError, AttributeError, StopIteration):
        return False


def _pattern(regex: str) -> re.Pattern:
    """A `tokenizers` (Oniguruma) pattern in Python's syntax: \\x{1F600} is \\U0001F600 here."""
    return re.compile(re.sub(r"\\x\{([0-9a-fA-F]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", regex))


class UnigramTokenizer:
    """Encodes texts into piece ids as tokenizers.Tokenizer.from_file(path) does, truncated to `max_length`."""

    def __init__(self, spec: dict, max_length: int | None = None):
        """Read from a parsed tokenizer.json, whose vocabulary it takes out (`spec` is left without it)."""
        vocab = spec["model"].pop("vocab")
        count = len(vocab)
        self._scores = array("d", (float(score) for _piece, score in vocab))
        # The pieces are copied out into one string and the parsed lists freed before the dict is made: made among
        # the parse's 250,002 small lists, its strings were scattered over half-empty pages (69 MB resident for
        # 34 MB of objects, against 38 MB this way).
        joined = "\x00".join(piece for piece, _score in vocab)
        del vocab
        pieces = joined.split("\x00")
        if len(pieces) != count:  # a piece holding NUL itself: read them from the parse after all
            raise ValueError("a piece of the vocabulary holds a NUL character")
        self._ids = {piece: i for i, piece in enumerate(pieces)}
        del pieces, joined
        self._unk = int(spec["model"]["unk_id"])
        self._unk_score = min(self._scores) - UNK_PENALTY
        longest: dict[str, int] = {}
        for piece in self._ids:
            if piece and len(piece) > longest.get(piece[0], 0):
                longest[piece[0]] = len(piece)
        self._longest = longest
        self._steps = []
        for step in spec["normalizer"]["normalizers"]:
            if step["type"] == "NFKC":
                self._steps.append(lambda text: unicodedata.normalize("NFKC", text))
            else:
                pattern, content = _pattern(step["pattern"]["Regex"]), step["content"]
                self._steps.append(lambda text, p=pattern, c=content: p.sub(c, text))
        specials = spec["post_processor"]["special_tokens"]
        template = spec["post_processor"]["single"]
        self._bos = specials[template[0]["SpecialToken"]["id"]]["ids"]
        self._eos = specials[template[2]["SpecialToken"]["id"]]["ids"]
        self.max_length = max_length

    @classmethod
    def from_file(cls, path: Path, max_length: int | None = None) -> "UnigramTokenizer | None":
        """The tokenizer of this tokenizer.json, or None when it is of a shape this module does not read."""
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
        if not readable(spec):
            return None
        try:
            made = cls(spec, max_length)
        except ValueError:  # a vocabulary this module cannot hold: `tokenizers` reads it
            return None
        release_freed()
        return made


    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        return [self.encode(text) for text in texts]

    def encode(self, text: str) -> Encoding:
        budget = None if self.max_length is None else max(self.max_length - len(self._bos) - len(self._eos), 0)
        ids: list[int] = []
        for word in self._words(text):
            ids += self._cut(word)
            if budget is not None and len(ids) >= budget:  # the window is full: the rest is never read
                del ids[budget:]
                break
        return Encoding(self._bos + ids + self._eos)

    def _words(self, text: str):
        for step in self._steps:
            text = step(text)
        if not text:  # nothing to read: no word (tokenizers prepends nothing to an empty text)
            return
        text = text.replace(" ", SPACE)
        if not text.startswith(SPACE):
            text = SPACE + text
        start = 0
        for i in range(1, len(text)):
            if text[i] == SPACE:
                yield text[start:i]
                start = i
        yield text[start:]

    def _cut(self, word: str) -> list[int]:
        """The word's pieces by the best total score (Viterbi), as tokenizers' Unigram.encode_optimized."""
        n = len(word)
        ids, scores, longest, unk = self._ids, self._scores, self._longest, self._unk
        best = [0.0] * (n + 1)
        starts: list[int | None] = [None] * (n + 1)
        chosen = [0] * (n + 1)
        for i in range(n):
            base = best[i]
            single = False
            for length in range(1, min(longest.get(word[i], 0), n - i) + 1):
                piece = ids.get(word[i:i + length])
                if piece is None:
                    continue
                j = i + length
                score = base + scores[piece]
                if starts[j] is None or score > best[j]:
                    best[j], starts[j], chosen[j] = score, i, piece
                if length == 1:
                    single = True
            if not single:
                score = base + self._unk_score
                if starts[i + 1] is None or score > best[i + 1]:
                    best[i + 1], starts[i + 1], chosen[i + 1] = score, i, unk
        out: list[int] = []
        end = n
        while end > 0:
            piece = chosen[end]
            if not (piece == unk and out and out[-1] == unk):  # consecutive unknown characters: one <unk>
                out.append(piece)
            end = starts[end]
        out.reverse()
        return out


def release_freed() -> None:
    """Hand the pages the parse freed back to the system (glibc keeps them otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
