"""A project opened only to be searched: beside its writer, beside other searches, never taking the writer's lock."""
from __future__ import annotations

import logging
import sqlite3
from typing import Callable

import numpy as np

from ..ingest.chunking import TokenCounter
from ..config import Settings
from ..model.embeddings import Embedder
from ..errors import IndexDamaged, ProjectNotFound, is_damage
from ..registry import ProjectInfo
from .across import load as load_across, progress as across_progress
from .database import SQLITE_NAME, Store
from .migrations import behind
from .project import PREVIOUS_META, chosen_model, makes_across

logger = logging.getLogger(__name__)


class ProjectReader:
    """What search needs of a project (name, root, model, token counter, vectors) from its SQLite file, read-only.

    Searching is reading: the index is read as the last writer left it (SQLite's WAL lets readers in beside a
    writer), the vectors come from SQLite's float32 copies (ChromaDB's folder has one owner, the writer), and
    nothing is synced or re-embedded here.
    """

    def __init__(self, info: ProjectInfo, settings: Settings, embedders: Callable[[str], Embedder],
                 counter: TokenCounter):
        if not (info.index_dir / SQLITE_NAME).exists():
            raise ProjectNotFound(f"Project '{info.name}' has not been indexed yet; run `skmemory index {info.name}` "
                                  "(or `skmemory serve`) first.")
        self.info = info
        self.name = info.name
        self.root = info.root
        self.settings = settings
        self.counter = counter
        store = None
        try:
            store = self.store = Store(info.index_dir, readonly=True)
            outdated = behind(self.store.conn)
        except sqlite3.DatabaseError as exc:
            if store is not None:
                store.close()
            if is_damage(exc):
                raise IndexDamaged(f"SQLite says: {exc}") from None
            raise
        if outdated:  # only the writer migrates; search reads the schema it was written for
            self.store.close()
            raise ProjectNotFound(f"Project '{info.name}' was indexed by an older SK Memory; run `skmemory index "
                                  f"{info.name}` (or `skmemory serve`) once to bring its index up to date.")
        self.embedder = embedders(chosen_model(self.store, settings))  # the model its writer embedded it with
        self.vector_listeners: list = []  # nothing changes while it is open

    @property
    def switch_meta(self) -> str | None:
        """The switch to another model its writer is in (search/switching.py), as the index says now."""
        return self.store.meta(PREVIOUS_META)

    def load_vectors(self) -> tuple[list[str], np.ndarray]:
        ids, matrix, missing = self.store.load_vectors()
        if missing:  # embedded before SQLite kept copies: only the writer may read ChromaDB
            logger.info("%d chunks of %s have no vector copy in SQLite yet; the next `skmemory index` adds them",
                        len(missing), self.name)
        return ids, np.ascontiguousarray(matrix, dtype=np.float32)

    def load_across(self) -> tuple[list[str], list[str | None], np.ndarray]:
        return load_across(self.store)

    def across_progress(self) -> tuple[int, int] | None:
        return across_progress(self.store) if makes_across(self.info, self.settings) else None

    def close(self) -> None:
        self.store.close()
