"""The read side of one project: what every search mode needs, in one object."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ..ingest.embeddings import Embedder
from ..store.project import Project
from ..store.reader import ProjectReader
from ..store.database import connect
from .cache import VectorCache


class ProjectIndex:
    """A project as search sees it: name, root, read connections to SQLite, the vector cache and the model."""

    def __init__(self, project: "Project | ProjectReader"):
        self.project = project
        self.name = project.name
        self.root: Path = project.root
        self.embedder: Embedder = project.embedder
        self.cache = VectorCache(project.load_vectors)
        project.vector_listeners.append(self.cache.apply)
        self._db_path = project.store.path
        self._local = threading.local()

    @property
    def db(self) -> sqlite3.Connection:
        """A read-only connection for the calling thread (WAL lets readers run beside the writer)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self._db_path, readonly=True)
            self._local.conn = conn
        return conn

    def sql(self, query: str, params=()) -> list[sqlite3.Row]:
        return self.db.execute(query, tuple(params)).fetchall()

    @property
    def semantic_available(self) -> bool:
        return self.embedder.available

    def embed_query(self, text: str):
        """Embed a query with the same model as the chunks (raises EmbeddingsUnavailable)."""
        return self.embedder.embed_query(text)
