"""Vectors across languages, as the writer keeps them: what lets a question in one language find notes in another.

The model that embeds a project reads its notes' language (text/language.py chooses it): all-MiniLM-L6-v2 reads
English only, so a Russian or Spanish question about English notes found little and often nothing. Once every
passage has its own vector, each gets a row of `across_vectors` (migration m020): its language, and in a project the
English model embeds, its vector by multilingual-e5-small, which reads a hundred languages into one space. That
vector reads the passage's first ACROSS_TOKENS tokens: on tldr-en, Russian and Spanish questions found their page as
often as with the whole window (tests/bench/bench_across.py), at the cost of the English model's own embedding or
less (its whole window costs 2.2x that). In a project the multilingual model embeds already, its own vectors serve,
and the row keeps only the passage's language (a mixed project's search takes each language's mean out of its
vectors: search/across.py).

The rows are made after the project's own embedding, never before it: a note is searchable by its own model first.
`across_of` (index_meta) says what made them; a project whose model changes makes them again.
"""
from __future__ import annotations

import sqlite3
import threading
from typing import Callable

import numpy as np

from ..errors import EmbeddingsUnavailable
from ..model.embeddings import Embedder
from ..text.language import passage_language
from .database import LONG_NOTE_TAIL_FROM, Store

ACROSS_TOKENS = 64  # what the multilingual model reads of each passage of an English project
GROUP = 256  # passages per round
LANGUAGES_ONLY = "languages"  # across_of of a project whose own vectors are the multilingual model's
META = "across_of"
GENERATION = "across_generation"  # moves when the rows are made again from nothing (the read side reloads)

# Called after rows are made or passages removed: (chunk ids made, their vectors, their languages, chunk ids removed).
AcrossListener = Callable[[list[str], np.ndarray | None, list[str | None], list[str]], None]


def made_by(own: Embedder, multilingual: Embedder) -> str:
    """What a project's rows must be made by: the multilingual model's vectors of its first ACROSS_TOKENS tokens,
    or only the passages' languages where the project's own model is the multilingual one."""
    if getattr(own, "model", "english") == "multilingual" or multilingual is own:  # (a data home of one model)
        return LANGUAGES_ONLY
    return f"{multilingual.fingerprint}, first {ACROSS_TOKENS} tokens"


def pending(store: Store, limit: int) -> list[sqlite3.Row]:
    """Passages with their own vector and no row yet: every note's first passage, then the top of every note, then
    the deep tail of long notes (as their own embedding goes)."""
    return store.query(
        """SELECT c.chunk_id, c.embed_text, c.content FROM chunks c
           WHERE c.embed_state = 'embedded' AND NOT c.keyword_only
             AND NOT EXISTS (SELECT 1 FROM across_vectors x WHERE x.chunk_id = c.chunk_id)
           ORDER BY c.ordinal > 0, c.ordinal >= ?, c.document_id, c.ordinal LIMIT ?""",
        (LONG_NOTE_TAIL_FROM, limit))


def progress(store: Store) -> tuple[int, int]:
    """(passages with their row, passages with their own vector)."""
    row = store.query(
        """SELECT count(*), count(x.chunk_id) FROM chunks c LEFT JOIN across_vectors x USING (chunk_id)
           WHERE c.embed_state = 'embedded' AND NOT c.keyword_only""")[0]
    return int(row[1]), int(row[0])


def load(store: Store) -> tuple[list[str], list[str | None], np.ndarray]:
    """Every row with a vector to search: (chunk ids, their languages, their vectors), the project's own vector where
    the row keeps none."""
    rows = store.query(
        """SELECT x.chunk_id, x.language, coalesce(x.vector, CASE WHEN c.embed_state = 'embedded' THEN c.vector END)
           FROM across_vectors x JOIN chunks c USING (chunk_id) WHERE NOT c.keyword_only""")
    rows = [r for r in rows if r[2] is not None]
    if not rows:
        return [], [], np.zeros((0, 0), dtype=np.float32)
    width = max({len(r[2]) for r in rows}, key=[len(r[2]) for r in rows].count)
    rows = [r for r in rows if len(r[2]) == width]
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), width // 4)
    return [r[0] for r in rows], [r[1] for r in rows], matrix.copy()


def forget(store: Store, why: str) -> None:
    """Drop every row (what made them changed); the next rounds make them again."""
    with store.lock, store.conn:
        store.conn.execute("DELETE FROM across_vectors")
        store.conn.execute("INSERT INTO index_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                           "value = CAST(value AS INTEGER) + 1", (GENERATION, "1"))
        store.conn.execute("INSERT INTO index_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                           "value = excluded.value", (META, why))


class AcrossWriter:
    """The writer's side of a project's vectors across languages: makes the rows, a round at a time, and tells the
    read side what changed."""

    def __init__(self, store: Store, own: Callable[[], Embedder], multilingual: Callable[[], Embedder],
                 vector_lock: threading.Lock):
        self.store = store
        self._own = own  # the project's model now
        self._multilingual = multilingual
        self._vector_lock = vector_lock  # the writer's: a passage deleted meanwhile never gets a row
        self.listeners: list[AcrossListener] = []
        self.error: str | None = None  # why the multilingual model could not make rows, when it could not
        self._idle_at: int | None = None  # the store's write count when a round last found nothing to do

    def made_by(self) -> str:
        return made_by(self._own(), self._multilingual())

    def embed(self, stop: threading.Event | None = None, max_batches: int | None = None,
              progress_to: Callable[[int, int], None] | None = None) -> int:
        """Make rows for passages that have their own vector and none yet, a round of GROUP at a time, until none
        are left (or `max_batches` rounds, or `stop`); return how many were made."""
        if self._idle_at is not None and self._idle_at == self.store.conn.total_changes:
            return 0  # nothing written since nothing was left: no scan of every passage again
        want = self.made_by()
        if self.store.meta(META) != want:
            forget(self.store, want)
        done = rounds = 0
        made, total = progress(self.store) if progress_to else (0, 0)
        total -= made
        while not (stop and stop.is_set()) and (max_batches is None or rounds < max_batches):
            rows = pending(self.store, GROUP)
            if not rows:
                self._idle_at = self.store.conn.total_changes
                break
            done += self._round(rows, want)
            rounds += 1
            if progress_to:
                progress_to(done, max(total, done))
        return done

    def _round(self, rows: list[sqlite3.Row], want: str) -> int:
        ids = [r["chunk_id"] for r in rows]
        languages = [passage_language(r["content"]) for r in rows]
        vectors = None
        if want != LANGUAGES_ONLY:
            model = self._multilingual()
            if not model.load():
                self.error = model.now.reason
                raise EmbeddingsUnavailable(f"Embeddings across languages are unavailable: {self.error}")
            self.error = None
            vectors = model.embed([r["embed_text"] for r in rows], max_tokens=ACROSS_TOKENS)
        with self._vector_lock:
            alive = {r[0] for r in self.store.query(
                f"SELECT chunk_id FROM chunks WHERE embed_state = 'embedded' AND chunk_id IN "
                f"({','.join('?' * len(ids))})", ids)}
            keep = [i for i, cid in enumerate(ids) if cid in alive]
            if not keep:
                return 0
            with self.store.lock, self.store.conn:
                self.store.conn.executemany(
                    "INSERT OR REPLACE INTO across_vectors (chunk_id, language, vector) VALUES (?, ?, ?)",
                    [(ids[i], languages[i], None if vectors is None else vectors[i].astype(np.float32).tobytes())
                     for i in keep])
        kept_ids = [ids[i] for i in keep]
        if vectors is None:  # the project's own vectors are the ones searched
            found, own, _ = self.store.load_vectors(kept_ids)
            kept_languages = dict(zip(ids, languages))
            kept_ids, kept_vectors, kept_langs = found, own, [kept_languages[c] for c in found]
        else:
            kept_vectors, kept_langs = vectors[keep], [languages[i] for i in keep]
        for listener in self.listeners:
            listener(kept_ids, kept_vectors, kept_langs, [])
        return len(keep)

    def removed(self, chunk_ids: list[str]) -> None:
        """Tell the read side these passages are gone (their rows went with them)."""
        for listener in self.listeners:
            listener([], None, [], chunk_ids)
