"""The engine's front door: a data home with its projects, one shared model and token counter."""
from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from pathlib import Path

from .ingest.chunking import TokenCounter
from .config import Settings
from .model.embeddings import Embedder
from .errors import HomeInUse, IndexDamaged, ProjectLocked, SKMemoryError, is_damage
from .store.lock import LOCK_NAME, WriterLock, read_holder
from .store.project import Project, chosen_model, kept_setting as _kept_setting, project_status, switch_status
from .registry import ProjectInfo, Registry
from .store.database import SQLITE_NAME, Store

SERVER_LOCK = "server.lock"  # held by the one `skmemory serve` of a data home, for its whole run
ENGINE_STATE = "engine.json"  # what a running indexer says of its model, in each project's index folder
PAUSED_FILE = "embedding-paused"  # in the data home: embedding stays paused, across restarts, until resumed
# In a project's index folder: a search found the file damaged while no writer had it open; the next writer (the
# server, `skmemory index`) sets the index aside and rebuilds it.
DAMAGED_MARK = "damaged"
SET_ASIDE = "damaged"  # the data home's folder of damaged indexes, kept (the newest one per project) for a post-mortem

logger = logging.getLogger(__name__)


class Home:
    """A data home (SKMEMORY_HOME): the registry of projects and the means to open them."""

    def __init__(self, settings: Settings | None = None, embedder: Embedder | None = None):
        self.settings = settings or Settings.from_env()
        self.registry = Registry(self.settings.home)
        self._embedder = embedder
        self._given = embedder is not None  # a test's embedder serves every project, whatever its language
        self._embedders: dict[str, Embedder] = {}  # the other models, made when a project first needs one
        self._embedders_lock = threading.Lock()
        self._counter: TokenCounter | None = None

    @property
    def embedder(self) -> Embedder:
        """The shared embedding model (loaded on first use, not here)."""
        if self._embedder is None:
            self._embedder = Embedder(self.settings.model_path, self.settings.device,
                                      self.settings.model_cache_dir, self.settings.query_backend,
                                      self.settings.embed_backend, workers=self.settings.embed_workers)
        return self._embedder

    def embedder_for(self, model: str) -> Embedder:
        """The shared embedder of a model ('english' is `embedder`; the multilingual one is made when first asked
        for, and loads its weights on first use like the English one)."""
        if self._given or model == "english":
            return self.embedder
        with self._embedders_lock:
            if model not in self._embedders:
                embedder = Embedder(None, self.settings.device, self.settings.model_cache_dir,
                                    self.settings.query_backend, self.settings.embed_backend,
                                    workers=self.settings.embed_workers, model=model)
                embedder.wait_for_load = self.embedder.wait_for_load
                self._embedders[model] = embedder
            return self._embedders[model]

    def loaded_embedders(self) -> list[Embedder]:
        """Every model this data home has made an embedder of (the English one first)."""
        with self._embedders_lock:
            return [self.embedder, *(e for e in self._embedders.values() if e is not self.embedder)]

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

    def is_users(self, info: ProjectInfo) -> bool:
        """Whether a project holds the user's own notes: not the built-in User Docs, nor the demo (the one project
        kept inside the data folder)."""
        return info.is_users(self.settings.home)

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
        `skmemory index` all come here).

        A damaged index (SQLite finds the file corrupt, or a search marked it so) is set aside and a new one opened
        in its place, which the first sync fills from the notes: the index is derived from them, so nothing of the
        person's is lost. The project's `repair` says so.
        """
        info = self.registry.get(name)
        mark = info.index_dir / DAMAGED_MARK
        if mark.exists():
            reason = mark.read_text(errors="replace").strip() or "a search found it damaged"
            return self._open_afresh(info, role, reason)
        try:
            return self._open_writer(info, role)
        except IndexDamaged as exc:
            return self._open_afresh(info, role, str(exc))
        except Exception as exc:
            if not is_damage(exc):
                raise
            return self._open_afresh(info, role, f"SQLite says: {exc}")

    def _open_writer(self, info: ProjectInfo, role: str) -> Project:
        project = Project(info, self.settings, self.embedder_for, self.counter, role=role)
        try:
            project.reconcile()
        except BaseException:
            project.close()
            raise
        return project

    def _open_afresh(self, info: ProjectInfo, role: str, reason: str) -> Project:
        WriterLock(info.index_dir, info.name, role).acquire().release()  # raises ProjectLocked if a writer has it
        kept = self.set_aside(info)
        self.registry.record_moved(info.id)
        project = self._open_writer(info, role)
        project.repair = (f"The index of project '{info.name}' was damaged ({reason}); it was set aside at {kept}, "
                          f"and a new one is built from the notes in {info.root}.")
        logger.warning("%s", project.repair)
        return project

    def reopen_damaged(self, project: Project, reason: str, role: str = "skmemory") -> Project:
        """Close a writer whose index turned out damaged, set the index aside, and open a new one to rebuild."""
        try:
            project.close()
        except Exception:  # closing writes a mark into the damaged file, which may fail too
            logger.debug("Closing the damaged index of %s failed", project.name, exc_info=True)
        return self._open_afresh(project.info, role, reason)

    def mark_damaged(self, info: ProjectInfo, reason: str) -> None:
        """Note that a project's index is damaged, for the next writer to rebuild (a search has no lock to do it)."""
        try:
            (info.index_dir / DAMAGED_MARK).write_text(reason + "\n")
        except OSError:
            pass

    def set_aside(self, info: ProjectInfo) -> Path:
        """Move a project's index folder to the data home's `damaged/` folder (dropping that project's older copy)
        and return where it went; the project's own folder is never touched."""
        folder = self.settings.home / SET_ASIDE
        folder.mkdir(parents=True, exist_ok=True)
        for older in folder.glob(f"{info.id}-*"):
            shutil.rmtree(older, ignore_errors=True)
        kept = folder / f"{info.id}-{time.strftime('%Y%m%d-%H%M%S')}"
        if info.index_dir.exists():
            info.index_dir.rename(kept)
        (kept / DAMAGED_MARK).unlink(missing_ok=True)
        return kept

    def _model_now(self, result: dict, store: Store) -> None:
        """The model a project is embedded by from now on, as this process's setting has it (SKMEMORY_EMBED_MODEL
        may have changed since its notes' language was last told), and the switch to it if one is under way."""
        setting = self.settings.embed_model
        if result.get("language") and _kept_setting(store) != setting:  # told, under another setting
            result["model_why"] = (f"SKMEMORY_EMBED_MODEL={setting} chooses it" if setting != "auto" else
                                   "SKMEMORY_EMBED_MODEL is no longer set: the notes' language is told again before "
                                   "their next embedding")
        result["model_key"] = chosen_model(store, self.settings)
        embedder = self.embedder_for(result["model_key"])
        result["model"] = embedder.name
        if switch := switch_status(store, embedder, result):
            result["model_switch"] = switch

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
            embedder = self.embedder_for(result.get("model_key") or "english")
            problem = embedder.known_problem  # never loads the model: status answers at once
            result["embeddings_available"] = problem is None
            result["embeddings_unavailable_reason"] = problem
            result["model"] = embedder.name
        result["bulk_backend"] = self.embedder.backend  # what this machine embeds with (never loads the model)
        result["bulk_precision"] = self.embedder.precision
        result["embed_threads"] = self.embedder.workers
        result["embedding_paused"] = self.embedding_paused
        return result

    def status(self, name: str) -> dict:
        """Describe a project's index without taking its lock (safe while the server runs)."""
        info = self.registry.get(name)
        if not (info.index_dir / SQLITE_NAME).exists():
            return {"project": info.name, "root": str(info.root), "documents": 0, "chunks": 0, "embedded": 0,
                    "pending": 0, "failed": 0, "errors": [], "indexed": False}
        try:
            store = Store(info.index_dir, readonly=True)
            try:
                result = project_status(info, store, None)
                self._model_now(result, store)
            finally:
                store.close()
        except Exception as exc:
            if not is_damage(exc):
                raise
            self.mark_damaged(info, f"SQLite says: {exc}")
            return {"project": info.name, "root": str(info.root), "documents": 0, "chunks": 0, "embedded": 0,
                    "pending": 0, "failed": 0, "errors": [], "indexed": False,
                    "repair": f"The index of project '{info.name}' is damaged ({exc}); `skmemory index {info.name}` "
                              "or the next `skmemory serve` sets it aside and rebuilds it from the notes."}
        result["indexed"] = True
        result["owner"] = read_holder(info.index_dir / LOCK_NAME) or None
        return result
