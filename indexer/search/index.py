"""The read side of one project: what every search mode needs, in one object that can only read."""
from __future__ import annotations

import os
import queue
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import IndexDamaged, is_damage
from ..model.tokens import TokenCounter
from ..model.embeddings import Embedder
from ..store.database import connect
from .cache import VectorCache

# Read connections a project's searches share: SQLite reads run outside the GIL, so a few let searches overlap on
# every core, and each maps the file once (see ProjectIndex._borrow).
READERS = max(4, os.cpu_count() or 1)


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:  # no write-ahead log right now
        return os.stat_result((0,) * 10)


@dataclass(eq=False)
class ProjectIndex:
    """A project as search sees it: its name and folder, read connections to its SQLite file, its vector cache,
    the model and the token counter. Built by the Engine from what it reads; it holds no path to the writer."""

    name: str
    root: Path
    database: Path
    embedder_of: Callable[[], Embedder]  # the project's model now (it changes when the notes' language does)
    counter: TokenCounter
    cache: VectorCache
    # Vectors across languages (search/across.py): the project's rows of them, the model that reads a question there,
    # and how far the rows are made ((made, passages with their own vector)); None where nothing keeps them.
    across: object | None = field(default=None, repr=False, compare=False)  # search/across.py's AcrossVectors
    multilingual: Callable[[], Embedder] | None = field(default=None, repr=False, compare=False)
    across_progress: Callable[[], tuple[int, int] | None] = field(default=lambda: None, repr=False, compare=False)
    # During a switch to another model, the previous model's vectors (search/switching.py's PreviousVectors).
    previous: object | None = field(default=None, repr=False, compare=False)
    # Told when SQLite finds the file damaged (project name, SQLite's words); returns the sentence to raise, which
    # says who rebuilds it: the Engine has the server's indexer rebuild it, or marks it for the next writer.
    on_damage: Callable[[str, str], str] | None = field(default=None, repr=False, compare=False)
    _idle: queue.LifoQueue = field(default_factory=queue.LifoQueue, repr=False, compare=False)
    _opened: list = field(default_factory=list, repr=False, compare=False)  # every reader connection made
    _opening: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)
    _memo_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _borrow(self) -> sqlite3.Connection:
        """A read-only connection of the project's few (WAL lets readers run beside the writer), waiting for one
        when all are in use. A connection per request thread mapped the whole file once per thread: under 50
        clients the server's RSS reached 6-7 GB, all of it the same pages mapped again (issue 40 row 28)."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._opening:
            if len(self._opened) < READERS:
                conn = connect(self.database, readonly=True)
                self._opened.append(conn)
                return conn
        return self._idle.get()

    def sql(self, query: str, params=()) -> list[sqlite3.Row]:
        """Run one SELECT (the reads modules, chunk_reads.py and note_reads.py, ask every question of the read side)."""
        conn = self._borrow()
        try:
            return conn.execute(query, tuple(params)).fetchall()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            reason = f"SQLite says: {exc}"
            message = self.on_damage(self.name, reason) if self.on_damage else None
            raise IndexDamaged(message or f"The index of project '{self.name}' is damaged ({reason}).") from exc
        finally:
            self._idle.put(conn)

    def kept(self, key: str, build: Callable[[], object]):
        """A value built from the database, kept until the writer commits again (every commit touches the
        database or its write-ahead log, so their sizes and times say when to build it anew)."""
        stamp = tuple((s.st_mtime_ns, s.st_size) for s in map(_stat, (self.database, self._wal)))
        with self._memo_lock:
            if key in self._memo and self._memo[key][0] == stamp:
                return self._memo[key][1]
        value = build()
        with self._memo_lock:
            self._memo[key] = (stamp, value)
        return value

    @property
    def _wal(self) -> Path:
        return self.database.with_name(self.database.name + "-wal")

    @property
    def embedder(self) -> Embedder:
        return self.embedder_of()

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:  # this index's model from now on, whatever the project's
        self.embedder_of = lambda: embedder

    @property
    def semantic_available(self) -> bool:
        """Whether this search can use the model now (in the server, False at once while it still loads)."""
        return self.embedder.ready_for_queries()

    @property
    def vector_key(self) -> tuple:
        """What a question's vector is memoised under: one per model (search/across.py's views add their space)."""
        return ("vector", id(self.embedder))

    def embed_query(self, text: str):
        """Embed a query with the same model as the chunks (raises EmbeddingsUnavailable)."""
        return self.embedder.embed_query(text)


class MeaningView:
    """A project as a question's meaning legs see it: its own index in every respect but the vectors searched and the
    model that reads the question (search/across.py: across languages; search/switching.py: during a model switch).
    `space` tells its questions' vectors apart from the project's own (Query.vector memoises them by vector_key)."""

    space: tuple = ()

    def __init__(self, index: ProjectIndex, cache, embedder: Embedder):
        self._index = index
        self.cache = cache
        self._embedder = embedder

    def __getattr__(self, name: str):
        return getattr(self._index, name)

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def semantic_available(self) -> bool:
        return self._embedder.ready_for_queries()

    @property
    def vector_key(self) -> tuple:
        return ("vector", id(self._embedder), *self.space)

    def embed_query(self, text: str):
        return self._embedder.embed_query(text)
