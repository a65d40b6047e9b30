"""The engine's front door: a data home with its projects, one shared model and token counter."""
from __future__ import annotations

import json
import logging
from pathlib import Path

from .ingest.chunking import TokenCounter
from .config import Settings
from .ingest.embeddings import Embedder
from .errors import HomeInUse, ProjectLocked, SKMemoryError
from .store.lock import LOCK_NAME, WriterLock, read_holder
from .store.project import Project, project_status
from .registry import ProjectInfo, Registry
from .store.database import SQLITE_NAME, Store

SERVER_LOCK = "server.lock"  # held by the one `skmemory serve` of a data home, for its whole run
ENGINE_STATE = "engine.json"  # what a running indexer says of its model, in each project's index folder
PAUSED_FILE = "embedding-paused"  # in the data home: embedding stays paused, across restarts, until resumed

logger = logging.getLogger(__name__)


class Home:
    """A data home (SKMEMORY_HOME): the registry of projects and the means to open them."""

    def __init__(self, settings: Settings | None = None, embedder: Embedder | None = None):
        self.settings = settings or Settings.from_env()
        self.registry = Registry(self.settings.home)
        self._embedder = embedder
        self._counter: TokenCounter | None = None

    @property
    def embedder(self) -> Embedder:
        """The shared embedding model (loaded on first use, not here)."""
        if self._embedder is None:
            self._embedder = Embedder(self.settings.model_path, self.settings.device,
                                      self.settings.model_cache_dir, self.settings.query_backend,
                                      self.settings.embed_backend, workers=self.settings.embed_workers)
        return self._embedder

    @property
    def embedding_paused(self) -> bool:
        """Whether embedding was paused (the status page, POST /api/embedding, `skmemory pause`) and not resumed."""
        return (self.settings.home / PAUSED_FILE).exists()

    def mark_embedding_paused(self, paused: bool) -> None:
        """Keep embedding paused, or not, for this server and the next start."""
        mark = self.settings.home / PAUSED_FILE
        if paused:
            self.settings.home.mkdir(parents=True, exist_ok=True)
            mark.write_text("Embedding is paused (the status page, POST /api/embedding or `skmemory pause`); "
                            "`skmemory resume` goes on.\n")
        else:
            mark.unlink(missing_ok=True)

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            model_dir = Path(self.settings.model_path) if self.settings.model_path else None
            self._counter = TokenCounter.for_model(model_dir)
        return self._counter

    # --- projects ------------------------------------------------------------------------------------------

    def projects(self) -> list[ProjectInfo]:
        """Return every registered project."""
        return self.registry.list()

    def project(self, name: str) -> ProjectInfo:
        return self.registry.get(name)

    def add_project(self, root: str | Path, name: str | None = None, builtin: bool = False,
                    inside_home: bool = False) -> ProjectInfo:
        """Register a folder as a project (it is indexed by `index`, `watch` or the server)."""
        resolved = Path(root).expanduser().resolve()
        home = self.settings.home
        if not inside_home and (resolved == home or home in resolved.parents):
            raise SKMemoryError(f"{resolved} is inside SK Memory's data folder ({home}); choose a folder of your own "
                                f"notes.")
        if resolved == Path(resolved.anchor):
            raise SKMemoryError(f"{resolved} is the whole file system; choose the folder that holds your notes, "
                                f"such as {Path.home() / 'Documents'}.")
        if resolved in home.parents:
            raise SKMemoryError(f"{resolved} holds SK Memory's own data folder ({home}), whose files change with every "
                                "search and index; choose a folder of notes beside it, or move the data folder "
                                "elsewhere with SKMEMORY_HOME.")
        return self.registry.add(root, name, builtin=builtin)

    def rename_project(self, old: str, new: str) -> ProjectInfo:
        return self.registry.rename(old, new)

    def remove_project(self, name: str) -> ProjectInfo:
        """Forget a project and delete its index (refused while another process owns it); files stay."""
        info = self.registry.get(name)
        holder = read_holder(info.index_dir / LOCK_NAME)
        if holder:
            # Taking the lock proves the holder is gone; a live holder makes this raise ProjectLocked.
            from .store.lock import WriterLock

            WriterLock(info.index_dir, info.name, "skmemory remove").acquire().release()
        if self.settings.chroma_url:
            from .store.vectors import VectorStore

            store = VectorStore.open(info.index_dir / "chroma", f"skm_{info.id}", self.settings.chroma_url)
            store.drop()
            store.close()
        return self.registry.remove(name)

    def claim_for_server(self, role: str = "skmemory serve") -> WriterLock:
        """Take the whole data home for one server (released when the process ends); raise HomeInUse naming the
        server that has it, so a second `serve` started at the same moment finds the first instead of splitting
        the projects with it."""
        try:
            return WriterLock(self.settings.home, "", role, file_name=SERVER_LOCK).acquire()
        except ProjectLocked as exc:
            holder = exc.holder
            raise HomeInUse(f"Another SK Memory server (pid {holder.get('pid', '?')}) is already starting or running "
                            "for this data folder; use that one, or stop it first.", holder) from None

    def open_project(self, name: str, role: str = "skmemory") -> Project:
        """Open a project for writing, its two stores repaired if a crash left them apart; raises ProjectLocked if
        another process owns it. The one place a writer is opened (the engine, the background indexer and
        `skmemory index` all come here)."""
        info = self.registry.get(name)
        project = Project(info, self.settings, self.embedder, self.counter, role=role)
        try:
            project.reconcile()
        except BaseException:
            project.close()
            raise
        return project

    def describe(self, name: str) -> dict:
        """A project's status with whether its chunks can be embedded: the running indexer's word when one owns
        the project, else whether this process could load the model (without loading it)."""
        result = self.status(name)
        state = {}
        try:
            state = json.loads((self.registry.get(name).index_dir / ENGINE_STATE).read_text())
        except (OSError, ValueError):
            pass
        if result.get("owner") and state:
            result["embeddings_available"] = state.get("embeddings") == "ready"
            result["embeddings_unavailable_reason"] = state.get("embeddings_unavailable_reason")
            result["model"] = state.get("model")
        else:
            problem = self.embedder.known_problem  # never loads the model: status answers at once
            result["embeddings_available"] = problem is None
            result["embeddings_unavailable_reason"] = problem
            result["model"] = self.embedder.name
        result["bulk_backend"] = self.embedder.backend  # what this machine embeds with (never loads the model)
        result["embed_threads"] = self.embedder.workers
        result["embedding_paused"] = self.embedding_paused
        return result

    def status(self, name: str) -> dict:
        """Describe a project's index without taking its lock (safe while the server runs)."""
        info = self.registry.get(name)
        if not (info.index_dir / SQLITE_NAME).exists():
            return {"project": info.name, "root": str(info.root), "documents": 0, "chunks": 0, "embedded": 0,
                    "pending": 0, "failed": 0, "errors": [], "indexed": False}
        store = Store(info.index_dir, readonly=True)
        try:
            result = project_status(info, store, None)
        finally:
            store.close()
        result["indexed"] = True
        result["owner"] = read_holder(info.index_dir / LOCK_NAME) or None
        return result
