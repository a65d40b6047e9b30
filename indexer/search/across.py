"""A question asked in another language than the notes: the vectors that compare the two, and the words that stay.

A project's own model reads its notes' language (all-MiniLM-L6-v2 reads English only). Each search tells the
question's language (text/language.py: its script and its function words; for a Latin-script question that names
no language, whether the notes hold its words at all) and picks, per project, the space its meaning legs search:

- own: the question is in the notes' language (or nothing tells): the project's own vectors, as always.
- across: asked in another language than the notes' (Russian about English notes, English about Chinese ones):
  multilingual-e5-small's vectors (a project of the English model has a second set of them, store/across.py; a
  project of the multilingual model has them already), judged on the scale fitted for pairs across languages
  (ACROSS_SCALE), each question's similarities counted in deviations above its own mean similarity to the
  project's vectors: a similarity means what it means within English.
- mixed: the notes are in several languages (MIXED_SHARE each): every question is searched in a space where each
  language's mean vector is taken out (multilingual-e5-small puts a passage near its own language first; a
  Chinese question found its Chinese neighbours before the English page that answers it). Its scale is MIXED_SCALE.

Across languages, the word legs keep only the question's names (names_across): "del" in Spanish is no `del`
command, and typo correction never turns another language's word into one of the notes' (spelling.py asks
`across`). A project whose vectors across languages are not all made yet is searched in its own space, and the
answer says how far they are.
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..model.embeddings import Embedder
from ..text.language import NAMES, Languages, common_word, content_words, question_language, script
from ..model.multilingual import ACROSS_SCALE, ACROSS_SPREAD, MIXED_SCALE, MIXED_SPREAD
from ..model.scale import Baseline, QuestionScaledVectors, ScaledVectors
from . import chunk_reads as reads
from .cache import VectorCache
from .index import MeaningView, ProjectIndex
from .switching import previous_index

MIXED_SHARE = 0.1  # a project with a second language of at least this share of its passages is mixed
MIN_LANGUAGE = 20  # passages of a language before its own mean is taken out (else the mean of them all)
FOREIGN_WORDS = 2  # a question that tells no language is across when this many of its words...
KNOWN_SHARE = 1 / 3  # ...and at most this share of them are words of the notes


@dataclass(frozen=True)
class Asking:
    """How a question meets one project's notes: what each is written in, the space searched, and whether its
    vectors are all there."""

    language: str | None  # the question's ('en', 'ru', ...; 'foreign': not the notes', though nothing told which)
    notes: str  # the notes' main language
    space: str  # 'own', 'across' or 'mixed'
    made: int = 0  # passages with their vector across languages (of `total`), where the space needs them
    total: int = 0
    model: str = ""  # the model that reads the question in this space

    @property
    def across(self) -> bool:
        """Asked in another language than the notes' (a mixed project's questions count as across)."""
        return self.space != "own"

    @property
    def ready(self) -> bool:
        return self.made >= self.total

    @property
    def wanted(self) -> bool:
        """Whether the question is in another language than the notes, whatever is searched now."""
        return self.language not in (None, self.notes)

    def describe(self) -> str:
        """'Russian, about notes in English' for explain and the answer's notice."""
        asked = "a language other than the notes'" if self.language == "foreign" else NAMES.get(self.language or "",
                                                                                                  self.language)
        return f"asked in {asked}, about notes in {NAMES.get(self.notes, self.notes)}"

    def to_dict(self) -> dict:
        return {"language": self.language, "notes": self.notes, "space": self.space,
                "ready": self.ready, "made": self.made, "total": self.total, "model": self.model}


class AcrossVectors:
    """A project's vectors across languages as search reads them: a vector cache of the rows the writer made
    (store/across.py), a mixed project's each with its language's mean taken out, kept current by the writer."""

    def __init__(self, loader: Callable[[], tuple[list[str], list[str | None], np.ndarray]],
                 generation: Callable[[], str | None]):
        self._loader = loader
        self._generation = generation
        self._lock = threading.Lock()
        self._cache: VectorCache | None = None
        self._built: tuple | None = None  # (generation, mixed) the cache was built for
        self.languages: dict[str, str | None] = {}  # each passage's, as its row says
        self.means: dict[str | None, np.ndarray] = {}  # a mixed project's mean vector of each language
        self.neutral: np.ndarray | None = None  # the mean of every passage, for a language the project lacks
        self._baselines: dict[int, Baseline] = {}  # by cache: what a question meets anyway (QuestionScale's zero)

    def baseline(self, cache: VectorCache) -> Baseline:
        """What a question meets anyway among this cache's vectors (their mean, from a sample), worked out again
        once their number moved by a tenth."""
        with self._lock:
            known = self._baselines.get(id(cache))
            if known is not None and abs(len(cache) - known.count_at) <= 0.1 * max(known.count_at, 1):
                return known
        baseline = Baseline(cache.sample(Baseline.SAMPLE))
        baseline.count_at = len(cache)
        with self._lock:
            self._baselines = {id(cache): baseline, **{k: v for k, v in self._baselines.items() if k != id(cache)}}
        return baseline

    def cache(self, mixed: bool) -> VectorCache:
        """The cache for this project as it is now (built again when its rows were made anew or it became mixed)."""
        key = (self._generation(), mixed)
        with self._lock:
            if self._cache is None or self._built != key:
                self._cache = VectorCache(lambda: self._load(mixed))
                self._built = key
            return self._cache

    def _load(self, mixed: bool) -> tuple[list[str], np.ndarray]:
        ids, languages, vectors = self._loader()
        self.languages = dict(zip(ids, languages))
        self.means, self.neutral = {}, None
        if not mixed or not len(ids):
            return ids, vectors
        self.neutral = vectors.mean(axis=0)
        by_language: dict[str | None, list[int]] = {}
        for i, language in enumerate(languages):
            by_language.setdefault(language, []).append(i)
        self.means = {lang: vectors[rows].mean(axis=0) for lang, rows in by_language.items()
                      if lang is not None and len(rows) >= MIN_LANGUAGE}
        return ids, self._centred(vectors, languages)

    def _centred(self, vectors: np.ndarray, languages: list[str | None]) -> np.ndarray:
        means = np.stack([self.means.get(lang, self.neutral) for lang in languages])
        return _unit(vectors - means)

    def centre(self, vector: np.ndarray, language: str | None) -> np.ndarray:
        """A question's vector in the mixed space: its language's mean out (a language the notes lack: the mean of
        them all)."""
        if self.neutral is None:
            return vector
        return _unit((vector - self.means.get(language, self.neutral))[None, :])[0]

    def apply(self, ids: list[str], vectors: np.ndarray | None, languages: list[str | None],
              removed: list[str]) -> None:
        """The writer made rows or removed passages: the cache follows (a no-op until it is first loaded)."""
        with self._lock:
            cache = self._cache
        if cache is None:
            return
        self.languages.update(zip(ids, languages))
        for cid in removed:
            self.languages.pop(cid, None)
        if ids and vectors is not None and self.neutral is not None:
            vectors = self._centred(np.asarray(vectors, dtype=np.float32), languages)
        cache.apply(ids, vectors, removed)


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.clip(norms, 1e-12, None), dtype=np.float32)


class AcrossView(MeaningView):
    """A project as the meaning legs see it for a question across languages: the vectors across languages (or its own,
    centred), the model that reads the question, and the scale its similarities are judged on (in `cache`)."""

    def __init__(self, index: ProjectIndex, cache, embedder: Embedder, asking: Asking,
                 centre: Callable[[np.ndarray], np.ndarray] | None = None):
        super().__init__(index, cache, embedder)
        self.asking = asking
        self.space = (asking.space, asking.language)
        self._centre = centre

    def embed_query(self, text: str) -> np.ndarray:
        vector = self._embedder.embed_query(text)
        return self._centre(vector) if self._centre is not None else vector

    def unreadable_by_words(self, chunk_ids) -> set[str]:
        """The passages written in another language than the question: its words can never be theirs, so they are
        judged by meaning alone (hybrid counts them as if they held the words, as vault_search counts a leg that
        cannot see a note)."""
        languages = self._index.across.languages if self._index.across is not None else {}
        notes, asked = self.asking.notes, self.asking.language
        return {cid for cid in chunk_ids if (languages.get(cid) or notes) != asked}


def notes_languages(index: ProjectIndex) -> Languages | None:
    """What the project's notes are written in, as its writer last told; None before it was told."""
    kept = reads.kept_languages(index)
    return Languages.from_dict(kept) if kept.get("counts") else None


def mixed(found: Languages) -> bool:
    """Whether the notes are in several languages: a second one holds MIXED_SHARE of the passages or more."""
    told = found.told
    return told > 0 and sum(n >= MIXED_SHARE * told for n in found.counts.values()) >= 2


def spoken(found: Languages, language: str | None) -> bool:
    """Whether the notes are written in this language: their main one, or MIXED_SHARE of them or more."""
    return language == found.main or found.counts.get(language or "", 0) >= MIXED_SHARE * max(found.told, 1)


def asking(index: ProjectIndex, query) -> Asking:
    """How this question meets this project's notes (memoised on the query, per project)."""
    if index.name not in query.asked:
        query.asked[index.name] = _asking(index, query)
    return query.asked[index.name]


def _asking(index: ProjectIndex, query) -> Asking:
    found = notes_languages(index)
    language = question_language(query.meaning)
    if found is None or index.across is None:
        return Asking(language, found.main if found else "en", "own")
    notes = found.main
    model = index.embedder
    multilingual = getattr(model, "model", "english") == "multilingual"
    if language is None and script(query.meaning) == "latin" and found.script == "latin" and _foreign(index, query,
                                                                                                        notes):
        language = "foreign"
    if mixed(found) and multilingual and (progress := _progress(index)) is not None:
        return Asking(language, notes, "mixed", *progress, model.name)
    if language is None or spoken(found, language):
        return Asking(language, notes, "own")
    if multilingual:  # its own vectors read every language already
        return Asking(language, notes, "across", model=model.name)
    progress = _progress(index)
    if progress is None:  # a built-in project: no vectors across languages, searched as its notes are
        return Asking(language, notes, "own")
    return Asking(language, notes, "across", *progress, index.multilingual().name)


def _progress(index: ProjectIndex) -> tuple[int, int] | None:
    return index.kept("across progress", index.across_progress)


def _foreign(index: ProjectIndex, query, notes: str) -> bool:
    """Whether a Latin-script question that tells no language is in none of the notes' words: at least
    FOREIGN_WORDS words of three letters or more that are not names, of which at most KNOWN_SHARE are words the notes
    hold or, for English notes, words the English model knows whole ("encontrar archivos grandes" asked of English
    notes; not "quantum pastry recipes", which a small project of English notes may simply not hold)."""
    words = [w.lower() for i, w in enumerate(query.meaning.split()) if not _name_like(w, first=i == 0)]
    words = [w.strip(".,;:!?()[]{}'\"¿¡") for w in words]
    words = [w for w in words if len(w) >= 3 and w.isalpha()]
    if len(words) < FOREIGN_WORDS:
        return False
    english = whole_words(getattr(index.embedder, "folder", None)) if notes == "en" else frozenset()
    known = sum(w in english or bool(reads.word_holders(index, w)) for w in words)
    return known <= KNOWN_SHARE * len(words)


@functools.lru_cache(maxsize=4)
def whole_words(folder: Path | None) -> frozenset[str]:
    """The words a model's vocabulary holds whole (a WordPiece vocab.txt), of three letters or more."""
    try:
        lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines() if folder else []
    except OSError:
        return frozenset()
    return frozenset(w for w in lines if len(w) >= 3 and w.isalpha())


def meaning_index(index: ProjectIndex, query) -> ProjectIndex:
    """The project as this question's meaning legs search it: itself, or a view of it across languages (when the
    vectors that space needs are all there), whose similarities are each the question's own (QuestionScale); during
    a switch to another model, the previous model's vectors and query encoder (search/switching.py)."""
    bound = MeaningView(index, index.cache, index.embedder)  # the model taken before the switch is read (a switch
    if (previous := previous_index(index)) is not None:  # is written before the project's model changes)
        return previous
    asked = asking(index, query)
    if not asked.across or not asked.ready:
        return bound
    own = index.cache.inner if isinstance(index.cache, ScaledVectors) else index.cache
    vectors = index.across
    if asked.space == "across" and asked.total == 0 and isinstance(own, VectorCache):
        cache, embedder, centre = own, index.embedder, None  # a project of the multilingual model: its own vectors
    else:
        cache = vectors.cache(asked.space == "mixed")
        cache.ensure_loaded()  # the means a question is centred by are read with the vectors
        embedder = index.multilingual() if asked.total else index.embedder
        centre = (lambda v: vectors.centre(v, asked.language)) if asked.space == "mixed" else None
    scale, typical = (MIXED_SCALE, MIXED_SPREAD) if asked.space == "mixed" else (ACROSS_SCALE, ACROSS_SPREAD)
    scaled = QuestionScaledVectors(cache, scale, typical, lambda: vectors.baseline(cache))
    return AcrossView(index, scaled, embedder, asked, centre)


def names_across(index: ProjectIndex, query, asked: Asking):
    """For a question in another language than the notes: the same question whose words are only its names, those
    the notes may hold as they are; None when it is in the notes' language. Its other words meet only what the
    notes quote, by chance ("top" in `docker top` for "on top of another branch", the Spanish "del" in the `del`
    command): meaning answers for them. A name is a word in the notes' script inside a question in another (the
    "git" of a Chinese question about English notes), a word written as a name (capitalised past the first word,
    in capitals, or holding digits or joining marks: "Apache", "NTFS", "ssh-keygen"), or, in a Latin-script
    question about Latin-script notes, a word that is a note's own name and no common word of any language ("zip",
    not "del"). The question's name as a whole is still the original's, so its few kept words never make it a
    note's title."""
    found = notes_languages(index)
    if found is None or not asked.wanted or spoken(found, asked.language):
        return None  # the notes' language, or one a good share of them are written in: its words are words there
    notes = found.script
    asked_script = script(query.meaning)
    if asked_script is None:
        return None
    tokens = query.meaning.split()
    if asked_script == "latin" and notes == "latin":
        names = [t for i, t in enumerate(tokens) if _name_like(t, first=i == 0) or _note_name(index, t)]
    elif asked_script == "latin":
        names = [t for i, t in enumerate(tokens) if _name_like(t, first=i == 0)]
    else:
        names = [t for t in tokens if script(t) == notes or (script(t) == "latin" and notes != "latin")]
    from .query import Query

    narrowed = Query.parse(" ".join(names), query.tags_all, query.tags_any, query.filters)
    narrowed.meaning, narrowed.text, narrowed.names = query.meaning, query.text, query.names
    narrowed.asked = query.asked  # the question's vectors and how it meets each project, worked out once
    narrowed.words_weight = min(1.0, len(names) / max(content_words(query.meaning), 1.0))
    return narrowed


def _name_like(token: str, first: bool) -> bool:
    word = token.strip(".,;:!?()[]{}'\"¿¡")
    if not word or script(word + "xx") != "latin":  # a Latin-script word (two letters pad a short one)
        return False
    return (len(word) > 1 and word.isupper()) or any(c.isdigit() or c in "-_./+" for c in word) or (
        not first and word[0].isupper())


def _note_name(index: ProjectIndex, token: str) -> bool:
    word = token.strip(".,;:!?()[]{}'\"¿¡").lower()
    return len(word) >= 2 and not common_word(word) and word in note_names(index)


def note_names(index: ProjectIndex) -> frozenset[str]:
    """Every note's title and file name, lowercase, kept until the writer commits again."""
    def read() -> frozenset[str]:
        from .links import file_stem

        return frozenset(n.lower() for title, rel_path in reads.titles_and_paths(index)
                         for n in (title, file_stem(rel_path)) if n)
    return index.kept("note names", read)
