"""The background indexer: owns every project's index, follows the watcher and drains the embedding queue."""
from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import sys
import threading
import time
from collections import deque

from .errors import DiskFull, EmbeddingsUnavailable, IndexDamaged, ProjectLocked, SKMemoryError, is_damage
from .home import ENGINE_STATE, Home
from .ingest.watcher import Watcher
from .search.calibration import calibrate, calibration_due
from .store.project import Project

logger = logging.getLogger(__name__)



BACKGROUND_NICENESS = 10
RETRY_LOCKED_SECONDS = 2.0  # how often a project another process holds is tried again
SPACE_RETRY_SECONDS = 3.0  # how often a full disk is looked at again
TUNE_RETRY_SECONDS = 600  # after a failed HNSW measurement (SKMEMORY_VECTOR_SEARCH=hnsw), wait this long
# Nothing embedded for this long: each model's bulk embedder frees what it holds for its runs (Embedder.release_bulk)
IDLE_RELEASE_SECONDS = 30.0


def _lower_priority() -> None:
    """Run this thread, and the torch worker threads it starts, below the threads that answer searches.

    Bulk embedding keeps every core busy; at a lower priority it still gets all the CPU that searches do not use,
    so a search answers as on an idle machine. Linux only (per-thread niceness); elsewhere nothing changes.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICENESS))
    except (AttributeError, OSError) as exc:
        logger.debug("Could not lower the embedding thread's priority: %s", exc)


class EmbedRate:
    """Chunks per second over the last few batches, timed while they were embedded, for progress and ETA.

    Only the time spent embedding counts: an idle minute between two edits would otherwise make a fast machine
    look slow (0.3 chunks/s and "531 s left" for work that took 17 s).
    """

    def __init__(self, batches: int = 8):
        self.samples: deque[tuple[int, float]] = deque(maxlen=batches)

    def add(self, count: int, seconds: float) -> None:
        if count > 0 and seconds > 0:
            self.samples.append((count, seconds))

    @property
    def per_second(self) -> float:
        seconds = sum(s for _, s in self.samples)
        return sum(c for c, _ in self.samples) / seconds if seconds > 0 else 0.0


class ReadRate:
    """How far one sync has read: files done and in all, and once a second has passed, files per second and the
    seconds left. The rate counts from the sync's first report, which counts the unchanged files at once."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._first: tuple[float, int] | None = None

    def update(self, done: int, total: int) -> dict:
        now = self.clock()
        if self._first is None:
            self._first = (now, done)
        running = {"files_done": done, "files_total": total}
        elapsed, read = now - self._first[0], done - self._first[1]
        if elapsed >= 1 and read > 0:
            running["files_per_second"] = round(read / elapsed, 1)
            running["eta_seconds"] = round((total - done) / (read / elapsed))
        return running


class BackgroundIndexer:
    """Opens projects for writing, keeps them current from the watcher, and embeds pending chunks."""

    def __init__(self, home: Home, names: list[str] | None = None, role: str = "skmemory serve"):
        self.home = home
        self.names = names
        self.role = role
        self.projects: dict[str, Project] = {}
        self.open_errors: dict[str, str] = {}
        self._locked: set[str] = set()  # projects another process holds: tried again every RETRY_LOCKED_SECONDS
        self.rate = EmbedRate()
        self._work: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        # Set by a stop or a pause: the embedder ends the batch in hand (a second or two) and waits.
        self._halt = threading.Event()
        if home.embedding_paused:  # paused before this start: stays so until resumed
            self._halt.set()
        self._embed_wakeup = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watcher: Watcher | None = None
        self._busy = threading.Event()  # the dispatcher is handing work over
        # Each project syncs in a lane of its own (a thread while it has work): one project's long sync (a 20 MB
        # note) never holds up another's edit. What waits for a lane is merged: None (the whole folder) wins.
        self._lanes: dict[str, threading.Thread] = {}
        self._lane_work: dict[str, tuple[set[str] | None, int]] = {}
        self._lanes_lock = threading.Lock()
        self.last_sync: dict[str, dict] = {}
        # Each sync request gets the next number per project; a finished sync says up to which number it
        # covered, so `skmemory index` knows when the re-read it asked for is done.
        self._projects_lock = threading.RLock()  # opening and closing projects, from request threads too
        self._requests_lock = threading.Lock()
        self._requested: dict[str, int] = {}
        self._synced: dict[str, int] = {}
        self._progress: dict[str, dict] = {}
        self._tune_after: dict[str, float] = {}  # project: when to try measuring its HNSW recall again
        self._last_embedded = time.monotonic()  # when a round last embedded anything (IDLE_RELEASE_SECONDS)
        self._substrings_behind: set[str] = set()  # projects whose substring index a big sync left to catch up
        self._damaged: dict[str, str] = {}  # project: why its index is damaged; the project's lane rebuilds it
        # project: (why, the sync that refills it): from the damage found until the rebuilt index holds every note,
        # searches of it are answered with a sentence (503), never with the few notes read so far
        self._rebuilding: dict[str, tuple[str, int | None]] = {}
        # While the data folder's disk is full: the sentence status shows; nothing is indexed or embedded until the
        # index thread finds space again and syncs the projects that stopped for it.
        self.disk_full: str | None = None
        self._space_wait: set[str] = set()

    # --- lifecycle -----------------------------------------------------------------------------------------

    def start(self, initial_sync: bool = True) -> "BackgroundIndexer":
        """Open the projects, start watching, and queue a full reconcile-and-sync of each."""
        for info in self.home.projects():
            if self.names is None or info.name in self.names:
                self._open(info.name)
        # Not waited for here (about half a second, until each watch reports in) but by the dispatcher before the
        # first sync, so that the server answers meanwhile and no change made during that sync is missed.
        self._restart_watcher(wait=False)
        for name in self.projects:
            if initial_sync:
                self.request_sync(name, None)
            else:
                self._work.put(None)
        self._threads = [
            threading.Thread(target=self._index_loop, name="skmemory-indexer", daemon=True),
            threading.Thread(target=self._embed_loop, name="skmemory-embedder", daemon=True),
        ]
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        """Stop the threads and release every project's lock."""
        self._stop.set()
        self._halt.set()
        self._embed_wakeup.set()
        self._work.put(None)
        if self._watcher:
            self._watcher.stop()
        with self._lanes_lock:
            lanes = list(self._lanes.values())
        used = [p.embedder for p in list(self.projects.values())] or [self.home.embedder]
        for t in self._threads + lanes:
            if t.name == "skmemory-embedder" and any(e.now.loading for e in used):
                continue  # inside the model's load, which cannot be cut short; after it, a stopped loop does nothing
            t.join(30)
        for project in self.projects.values():
            project.close()
        self.projects.clear()

    def _open(self, name: str) -> None:
        try:
            self.projects[name] = self.home.open_project(name, role=self.role)
            if (previous := self.projects[name].previous_embedder()) is not None:
                previous.load_in_background()  # a switch goes on: its meaning search reads that model meanwhile
            if self.projects[name].store.substring_backlog():  # a big sync stopped before it caught up
                self._substrings_behind.add(name)
            self.open_errors.pop(name, None)
            self._locked.discard(name)
        except ProjectLocked as exc:
            # Another process (`skmemory index`) has it: tried again every few seconds until it lets go.
            message = f"{exc} SK Memory opens it as soon as that process ends."
            if self.open_errors.get(name) != message:
                logger.warning("Cannot open project %s yet: %s", name, exc)
            self.open_errors[name] = message
            self._locked.add(name)
        except SKMemoryError as exc:
            logger.error("Cannot open project %s: %s", name, exc)
            self.open_errors[name] = str(exc)
            self._locked.discard(name)

    def held_elsewhere(self, name: str) -> bool:
        """Whether another process (`skmemory index`) holds this project's index, so that it is not open here."""
        return name in self._locked and name not in self.projects

    def _retry_locked(self) -> None:
        """Open the projects another process held, where it has let go; index and watch them from then on."""
        opened = []
        with self._projects_lock:
            registered = {info.name for info in self.home.projects()}
            self._locked &= registered  # removed meanwhile: nothing to wait for
            for name in sorted(self._locked):
                if name not in self.projects and not self._stop.is_set():
                    self._open(name)
                    if name in self.projects:
                        logger.info("Project %s is free again: indexing and watching it", name)
                        opened.append(name)
            if opened:
                self._restart_watcher()
        for name in opened:
            self.request_sync(name, None)

    def add_project(self, name: str) -> int:
        """Start indexing and watching a project registered after start; return its sync request number."""
        with self._projects_lock:
            if name not in self.projects:
                self._open(name)
                self._restart_watcher()
        return self.request_sync(name, None)

    def follow_registry(self, retry: bool = False) -> None:
        """Open projects registered since start and let go of those removed or renamed by another process.

        With retry, projects that could not be opened before (another process held them) are tried again.
        """
        with self._projects_lock:
            registered = {info.id: info for info in self.home.projects()
                          if self.names is None or info.name in self.names}
            names = {info.name for info in registered.values()}
            for name in [n for n in self.open_errors if retry or n not in names]:
                del self.open_errors[name]
            changed = False
            for name, project in list(self.projects.items()):
                info = registered.get(project.info.id)
                if info is None or info.name != name:
                    self.projects.pop(name).close()
                    changed = True
            for info in registered.values():
                if info.name not in self.projects and info.name not in self.open_errors:
                    self._open(info.name)
                    if info.name in self.projects:
                        self.request_sync(info.name, None)
                        changed = True
            if changed:
                self._restart_watcher()

    def remove_project(self, name: str) -> None:
        """Stop indexing a project and release its lock (before its index is deleted)."""
        with self._projects_lock:
            project = self.projects.pop(name, None)
            if project is not None:
                self._restart_watcher()
                project.close()

    def _closed_since(self, project: Project) -> bool:
        """Whether PROJECT was removed or renamed (and closed) while work on it was in hand: that work's failure
        is the end of it, said in a line, not an error."""
        if self.projects.get(project.name) is project:
            return False
        logger.info("Stopped indexing %s: the project was removed or renamed meanwhile", project.name)
        return True

    def _restart_watcher(self, wait: bool = True) -> None:
        if self._watcher:
            self._watcher.stop()
        self._watcher = Watcher(
            {name: p.root for name, p in self.projects.items()}, self.request_sync, self._is_ignored
        ).start()
        if wait:
            self._watcher.ready.wait(10)

    def _is_ignored(self, name: str, rel: str) -> bool:
        project = self.projects.get(name)
        if project is None:
            return True
        parent = rel.rpartition("/")[0]
        return bool(parent) and project.rules.ignores_dir(parent)

    # --- pausing embedding -----------------------------------------------------------------------------------

    @property
    def embedding_paused(self) -> bool:
        return self._halt.is_set() and not self._stop.is_set()

    def pause_embedding(self) -> None:
        """Stop embedding after the passages in hand, until resumed (across restarts too). Files are still read,
        so keyword search stays current; meaning search answers with what is embedded."""
        self.home.mark_embedding_paused(True)
        self._halt.set()
        logger.info("Embedding paused")

    def resume_embedding(self) -> None:
        """Go on embedding where it paused."""
        self.home.mark_embedding_paused(False)
        if not self._stop.is_set():
            self._halt.clear()
            self._embed_wakeup.set()
            logger.info("Embedding resumed")

    # --- work ----------------------------------------------------------------------------------------------

    def request_sync(self, name: str, rel_paths: set[str] | None) -> int:
        """Queue a sync of these paths (None: the whole project); return the request's number."""
        with self._requests_lock:
            number = self._requested[name] = self._requested.get(name, 0) + 1
            self._work.put((name, rel_paths, number))
        return number

    def sync_state(self, name: str) -> dict:
        """How far this project's syncs are: the last request, the last one done, and files of the one running."""
        with self._requests_lock:
            return {"requested": self._requested.get(name, 0), "done": self._synced.get(name, 0),
                    **({"running": dict(self._progress[name])} if name in self._progress else {})}

    def wait_idle(self, timeout: float = 60, embeddings: bool = False) -> bool:
        """Block until the queue is drained (and, if asked, nothing waits for embeddings); for tests and the CLI."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (self._work.unfinished_tasks == 0 and not self._busy.is_set() and not self.syncing
                    and not self.substrings_behind and not self._damaged):
                if not embeddings or not self.embeddings_pending():
                    return True
            time.sleep(0.05)
        return False

    def embeddings_pending(self) -> bool:
        """Whether passages wait for an embedder that will take them (not while embedding is paused)."""
        if self.embedding_paused:
            return False
        return any(p.store.counts()["pending"] and p.embedder.load() for p in list(self.projects.values()))

    def report_damage(self, name: str, reason: str) -> None:
        """A search (or the embedder) found a project's index damaged: the index thread sets it aside and rebuilds
        it from the notes, while every other project goes on being served."""
        if name in self.projects and name not in self._damaged:
            logger.error("The index of project %s is damaged (%s); rebuilding it", name, reason)
            self._damaged[name] = reason
            self._rebuilding[name] = (reason, None)
            self._lane(name)

    def rebuilding(self, name: str) -> str | None:
        """While a damaged project's index is rebuilt and refilled, the sentence a search of it answers; else None."""
        state = self._rebuilding.get(name)
        if state is None:
            return None
        reason, number = state
        sync = self.sync_state(name)
        if number is not None and sync["done"] >= number:
            self._rebuilding.pop(name, None)
            return None
        running = sync.get("running") or {}
        read = (f"; {running['files_done']:,} of {running['files_total']:,} files read so far"
                if running.get("files_total") else "")
        return (f"The index of project '{name}' was damaged ({reason}) and is being rebuilt from the notes{read}: "
                "search it again in a minute. Other projects are searched as usual.")

    def _rebuild_damaged(self, name: str) -> None:
        """Set a damaged index aside and open a new one (in the project's lane, never beside its sync)."""
        reason = self._damaged.get(name)
        if reason is not None and not self._stop.is_set():
            with self._projects_lock:
                project = self.projects.pop(name, None)
                if project is not None:
                    self._substrings_behind.discard(name)
                    try:
                        self.projects[name] = self.home.reopen_damaged(project, reason, role=self.role)
                    except SKMemoryError as exc:
                        logger.error("Cannot rebuild project %s: %s", name, exc)
                        self.open_errors[name] = str(exc)
                    except Exception as exc:
                        logger.exception("Cannot rebuild project %s", name)
                        self.open_errors[name] = f"Its index is damaged and could not be rebuilt: {exc}"
            self._damaged.pop(name, None)
            if name in self.projects:
                self._rebuilding[name] = (reason, self.request_sync(name, None))
            else:
                self._rebuilding.pop(name, None)

    def _wait_for_space(self, sentence: str, name: str | None = None) -> None:
        """Indexing or embedding stopped for a full disk: say so once, and look again every few seconds."""
        if self.disk_full is None:
            logger.warning("%s", sentence)
        self.disk_full = sentence
        if name is not None:
            self._space_wait.add(name)

    def _space_back(self) -> bool:
        """Whether the disk has room again; if so, sync what stopped for it and wake the embedder."""
        try:
            free = shutil.disk_usage(self.home.settings.home).free
        except OSError:
            return False
        if free < self.home.settings.disk_room_mb << 20:
            return False
        logger.info("The data folder's disk has room again (%d MB free): indexing goes on", free >> 20)
        self.disk_full = None
        for name in sorted(self._space_wait):
            if name in self.projects:
                self.request_sync(name, None)
        self._space_wait.clear()
        self._embed_wakeup.set()
        return True

    def _index_loop(self) -> None:
        """The dispatcher: takes requests, merges bursts, hands each project's share to its lane."""
        watcher = self._watcher
        if watcher is not None:  # watching before the first sync reads the folders (see start)
            watcher.ready.wait(10)
        while not self._stop.is_set():
            if self.disk_full and not self._space_back():
                try:  # a change meanwhile is still taken (and stops again at once, for want of space)
                    item = self._work.get(timeout=SPACE_RETRY_SECONDS)
                except queue.Empty:
                    continue
                self._work.task_done()
                if item is not None:
                    self._space_wait.add(item[0])
                continue
            for name in self.substrings_behind | set(self._damaged):  # left behind by a start, or reported
                self._lane(name)
            try:
                item = self._work.get(timeout=RETRY_LOCKED_SECONDS if self._locked else 1.0)
            except queue.Empty:
                if self._locked:
                    self._retry_locked()
                continue
            try:
                if item is None:
                    continue
                self._busy.set()
                batch, numbers = self._coalesce(item)
                for name, rels in batch.items():
                    self._lane(name, (rels, numbers[name]))
            finally:
                self._work.task_done()
                self._busy.clear()

    @property
    def syncing(self) -> bool:
        """Whether any project's lane has work in hand or waiting."""
        with self._lanes_lock:
            return bool(self._lanes or self._lane_work)

    def _lane(self, name: str, work: tuple[set[str] | None, int] | None = None) -> None:
        """Give a project's lane this sync (or only wake it: a rebuild, a substring catch-up), starting the lane if
        it is not running."""
        with self._lanes_lock:
            if work is not None:
                rels, number = work
                waiting = self._lane_work.get(name)
                if waiting is not None:
                    rels = None if rels is None or waiting[0] is None else waiting[0] | rels
                    number = max(number, waiting[1])
                self._lane_work[name] = (rels, number)
            if name not in self._lanes and not self._stop.is_set():
                thread = threading.Thread(target=self._run_lane, args=(name,), name=f"skmemory-sync-{name}",
                                          daemon=True)
                self._lanes[name] = thread
                thread.start()

    def _run_lane(self, name: str) -> None:
        """A project's syncs, one after another, then its substring catch-up while nothing else waits; ends when it
        has nothing left (the next request starts it again)."""
        try:
            while not self._stop.is_set():
                if name in self._damaged:
                    self._rebuild_damaged(name)
                    continue
                with self._lanes_lock:
                    work = self._lane_work.pop(name, None)
                    project = self.projects.get(name)
                    if work is None and not (name in self._substrings_behind and project is not None
                                             and not self.disk_full):
                        del self._lanes[name]  # under the lock that _lane takes: no request is missed
                        return
                if work is not None:
                    self._sync(name, *work)
                else:  # a batch of what a big sync left behind (about a second), then look for work again
                    self._catch_up_substrings(project)
        except Exception:
            logger.exception("Indexing %s stopped unexpectedly", name)
        finally:
            with self._lanes_lock:
                if self._lanes.get(name) is threading.current_thread():
                    del self._lanes[name]

    def _coalesce(self, first: tuple) -> tuple[dict[str, set[str] | None], dict[str, int]]:
        # Many queued bursts (a git checkout) become one pass per project, covering every request taken.
        batch: dict[str, set[str] | None] = {}
        numbers: dict[str, int] = {}
        items = [first]
        while True:
            try:
                items.append(self._work.get_nowait())
                self._work.task_done()
            except queue.Empty:
                break
        for item in items:
            if item is None:
                continue
            name, rels, number = item
            numbers[name] = max(numbers.get(name, 0), number)
            if name in batch and batch[name] is None:
                continue
            batch[name] = None if rels is None else (batch.get(name) or set()) | rels
        return batch, numbers

    def _sync(self, name: str, rels: set[str] | None, number: int) -> None:
        try:
            self._sync_files(name, rels)
        finally:
            with self._requests_lock:
                self._synced[name] = max(self._synced.get(name, 0), number)
                self._progress.pop(name, None)

    def _sync_files(self, name: str, rels: set[str] | None) -> None:
        project = self.projects.get(name)
        if project is None:
            return
        if rels is None:
            project.rules = project.rules.reloaded()

        rate = ReadRate()

        def progress(done: int, total: int) -> None:
            running = rate.update(done, total)
            with self._requests_lock:
                self._progress[name] = running

        started = time.monotonic()
        try:
            report = project.sync(rels, progress=progress, stop=self._stop, defer_substrings=True)
        except IndexDamaged as exc:
            self.report_damage(name, str(exc))
            return
        except DiskFull as exc:
            self._wait_for_space(str(exc), name)
            return
        except SKMemoryError as exc:
            logger.error("%s", exc)
            self.last_sync[name] = {"error": str(exc), "at": time.time()}
            return
        except Exception as exc:
            if self._closed_since(project):
                return
            if is_damage(exc):
                self.report_damage(name, f"SQLite says: {exc}")
                return
            logger.exception("Sync of %s failed", name)
            self.last_sync[name] = {"error": f"unexpected {type(exc).__name__}: {exc} (see the server's log)",
                                    "at": time.time()}
            return
        self.last_sync[name] = {**report.to_dict(), "seconds": round(time.monotonic() - started, 3), "at": time.time()}
        if report.chunks_added:
            self._embed_wakeup.set()
        if project.store.substring_backlog():
            self._substrings_behind.add(name)

    @property
    def substrings_behind(self) -> set[str]:
        """The open projects whose substring index is still catching up after a big sync."""
        return self._substrings_behind & set(self.projects)

    def _catch_up_substrings(self, project: Project) -> None:
        """One batch of a project's substring index (about a second), between syncs: a note edited meanwhile is
        read first."""
        try:
            if not project.catch_up_substrings(stop=self._stop, batches=1):
                self._substrings_behind.discard(project.name)
                logger.info("The substring index of %s is whole again", project.name)
        except DiskFull as exc:  # caught up once there is room again
            self._wait_for_space(str(exc))
        except Exception as exc:  # search finds what the index holds; the next start tries again
            if self._closed_since(project):
                return
            if is_damage(exc):
                self.report_damage(project.name, f"SQLite says: {exc}")
                return
            logger.exception("Building the substring index of %s failed", project.name)
            self._substrings_behind.discard(project.name)

    def _embed_loop(self) -> None:
        _lower_priority()
        while not self._stop.is_set():
            worked = 0
            if not self._halt.is_set() and not self.disk_full:
                worked = self._round(lambda p: p.embed_pending(stop=self._halt, max_batches=1), "Embedding",
                                     timed=True)
                if not worked and not self._halt.is_set() and not self.disk_full:  # once no project waits for its
                    worked = self._round(lambda p: p.embed_across(stop=self._halt, max_batches=1),  # own vectors
                                         "Embedding across languages")
            if self._stop.is_set():
                break
            self._write_engine_state()
            if worked:
                self._last_embedded = time.monotonic()
            if not worked:
                if not self._halt.is_set():
                    self._tune_hnsw()
                if time.monotonic() - self._last_embedded >= IDLE_RELEASE_SECONDS:
                    self._release_idle_models()
                self._embed_wakeup.wait(2.0)
                self._embed_wakeup.clear()

    def _release_idle_models(self) -> None:
        """Nothing was embedded for IDLE_RELEASE_SECONDS: each model's bulk embedder frees its run buffers (about
        270 MB each once a vault was embedded; a Chinese project's server held 1.85 GB at rest)."""
        for embedder in self.home.loaded_embedders():
            if embedder.release_bulk():
                logger.info("Nothing to embed for %.0f s: freed %s's bulk run buffers until the next note",
                            IDLE_RELEASE_SECONDS, embedder.name)

    def _round(self, step, what: str, timed: bool = False) -> int:
        """One batch of `step` for each project (its own vectors, or its vectors across languages: store/across.py);
        how many passages were done. A project's missing model or failure is its own: the others go on."""
        worked = 0
        for project in list(self.projects.values()):
            if self._halt.is_set():
                break
            started = time.monotonic()
            try:
                n = step(project)
            except EmbeddingsUnavailable:  # this project's model: the others may have theirs
                continue
            except DiskFull as exc:
                self._wait_for_space(str(exc))
                break
            except Exception as exc:
                if self._closed_since(project):
                    pass
                elif is_damage(exc):
                    self.report_damage(project.name, f"SQLite says: {exc}")
                else:
                    logger.exception("%s for %s failed", what, project.name)
                n = 0
            if n and timed:
                self.rate.add(n, time.monotonic() - started)
            worked += n
        return worked

    def _tune_hnsw(self) -> None:
        """With SKMEMORY_VECTOR_SEARCH=hnsw, measure each project's recall once nothing waits to be embedded."""
        if self.home.settings.vector_search != "hnsw":
            return
        for project in list(self.projects.values()):
            if self._stop.is_set() or time.monotonic() < self._tune_after.get(project.name, 0.0):
                continue
            try:
                if calibration_due(project):
                    calibrate(project, stop=self._stop)
            except Exception:  # a failed measurement leaves search as it was; it is tried again later
                logger.exception("Tuning HNSW for %s failed; trying again in %d minutes", project.name,
                                 TUNE_RETRY_SECONDS // 60)
                self._tune_after[project.name] = time.monotonic() + TUNE_RETRY_SECONDS

    def _write_engine_state(self) -> None:
        for project in list(self.projects.values()):
            embedder = project.embedder
            state = {"embeddings": embedder.now.word, "embeddings_unavailable_reason": embedder.now.reason,
                     "model": embedder.name, "device": embedder.device, "at": time.time()}
            path = project.info.index_dir / ENGINE_STATE
            try:  # whole or not at all: a full disk keeps the last one, never an empty file
                path.with_suffix(".tmp").write_text(json.dumps(state))
                os.replace(path.with_suffix(".tmp"), path)
            except OSError:
                pass

    # --- reporting -----------------------------------------------------------------------------------------

    def status(self) -> dict:
        """Every project's counts, embedding progress with rate and ETA, and errors. The model named at the top is
        the one most projects use (each project names its own)."""
        used = [p.embedder for p in list(self.projects.values())]
        embedder = max(used, key=used.count) if used else self.home.embedder
        rate = self.rate.per_second
        projects = []
        for name, project in list(self.projects.items()):
            try:
                s = project.status()
            except Exception as exc:
                if self.projects.get(name) is not project:  # closed meanwhile (rebuilt, renamed or removed)
                    if sentence := self.rebuilding(name):
                        projects.append({"project": name, "root": str(project.root), "repair": sentence})
                    continue
                if not is_damage(exc):
                    raise
                self.report_damage(name, f"SQLite says: {exc}")
                projects.append({"project": name, "root": str(project.root), "documents": 0, "chunks": 0,
                                 "embedded": 0, "pending": 0, "failed": 0, "errors": [],
                                 "repair": f"The index of project '{name}' is damaged ({exc}); it is being rebuilt "
                                           "from the notes."})
                continue
            s["eta_seconds"] = round(s["pending"] / rate) if rate and s["pending"] else None
            s["last_sync"] = self.last_sync.get(name)
            s["sync"] = self.sync_state(name)
            projects.append(s)
        for name, error in self.open_errors.items():
            projects.append({"project": name, "open_error": error})
        return {
            "embeddings": embedder.now.word,
            "embeddings_unavailable_reason": embedder.now.reason,
            "embeddings_preparing": embedder.now.preparing,  # its copies for this computer being made, how far
            "model": embedder.name,
            "device": embedder.device,
            "bulk_backend": embedder.backend if embedder.now.ready else None,
            "bulk_precision": embedder.precision if embedder.now.ready else None,
            "embed_threads": embedder.workers,
            "embedding_paused": self.embedding_paused,
            "disk_full": self.disk_full,
            "embed_rate_per_second": round(rate, 2),
            "indexing": (self._busy.is_set() or self._work.unfinished_tasks > 0 or self.syncing
                         or bool(self.substrings_behind) or bool(self._damaged)),
            "watcher": self._watcher.state if self._watcher else None,
            "vector_search": self.home.settings.vector_search,
            "projects": projects,
        }
