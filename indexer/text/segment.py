"""Words as the keyword index holds them, in every script: Chinese and Japanese cut into character pairs, other
languages' words stemmed by their Snowball stemmer.

FTS5's unicode61 tokenizer makes an unspaced run of Chinese or Japanese one token, so no part of a sentence was
ever found; and its porter stemmer knows English endings only. The BM25 table (chunks_bm25) therefore receives each
text through `index_words` (registered as the SQL function skm_words on every connection, store/database.py):

- a run of Han, kana or Hangul characters becomes its overlapping character pairs, one token each ("查看进程" ->
  "查看 看进 进程"; a lone character stays itself), as Lucene's CJK analyser does; a question's run becomes the OR of
  its pairs (search/grammar.py), so BM25 ranks first the passages that share most of them;
- in a passage whose language has a Snowball stemmer (German, Russian, Spanish, French, Italian, Portuguese,
  Dutch: text/language.py tells), each word is followed by its stem when that differs ("Dateien" -> "Dateien
  datei"), so a question's word finds every form, and the word itself still ranks an exact form first.

English text passes unchanged (an ASCII passage costs one `str.isascii`), and so does every text the snippets and
highlights read: only the BM25 table's copy is cut.
"""
from __future__ import annotations

import logging
import re
import sqlite3
import threading
from functools import lru_cache

from .language import passage_language

CJK_RUN = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9d]+")
STEMMERS = {"de": "german", "ru": "russian", "uk": "russian", "es": "spanish", "fr": "french", "it": "italian",
            "pt": "portuguese", "nl": "dutch"}
_WORD = re.compile(r"[^\W\d_]{3,}")
logger = logging.getLogger(__name__)
_local = threading.local()  # a Snowball stemmer is not to be shared between threads


def pairs(run: str) -> list[str]:
    """A run of CJK characters as its overlapping pairs (a lone character as itself)."""
    return [run] if len(run) < 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def _spaced_pairs(match: re.Match) -> str:
    return " " + " ".join(pairs(match.group(0))) + " "


def stem(word: str, language: str) -> str:
    """The Snowball stem of a lowercase word in a language of STEMMERS (the word itself where none applies)."""
    algorithm = STEMMERS.get(language)
    if algorithm is None:
        return word
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    stemmer = stemmers.get(algorithm)
    if stemmer is None:
        import Stemmer

        stemmer = stemmers[algorithm] = Stemmer.Stemmer(algorithm)
    return stemmer.stemWord(word)


def index_words(text: str | None) -> str | None:
    """The text as the BM25 table holds it: CJK runs as pairs, a stemmed language's words each followed by its stem.

    SQLite calls it inside every write of a chunk, where an exception becomes SQLite's "user-defined function raised
    exception": it raises nothing of its own (a text it cannot read is held as it is, and logged), so that error
    can only be a KeyboardInterrupt that landed here (`interrupted` tells the writer, which raises it again)."""
    try:
        return _index_words(text)
    except Exception:  # never seen; the text is still found by its words as unicode61 reads them
        logger.exception("Could not cut a text into words for the keyword index; holding it as it is")
        return text


def interrupted(exc: BaseException) -> bool:
    """Whether a write failed because Ctrl+C landed inside index_words (SQLite reports it as its own error)."""
    return isinstance(exc, sqlite3.OperationalError) and "user-defined function raised exception" in str(exc)


def _index_words(text: str | None) -> str | None:
    if not text:
        return text
    language = passage_language(text)
    if language in STEMMERS:
        text = _WORD.sub(lambda m: _with_stem(m.group(0), language), text)
    if not text.isascii() and CJK_RUN.search(text):
        text = CJK_RUN.sub(_spaced_pairs, text)
    return text


def _with_stem(word: str, language: str) -> str:
    root = stem(word.lower(), language)
    return word if root == word.lower() else f"{word} {root}"


@lru_cache(maxsize=4096)
def word_forms(word: str, languages: tuple[str, ...]) -> tuple[str, ...]:
    """A query's lowercase word and its stems in these languages (each once, the word first)."""
    forms = [word]
    for language in languages:
        root = stem(word, language)
        if root not in forms:
            forms.append(root)
    return tuple(forms)
