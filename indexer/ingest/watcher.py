"""The watcher: watchfiles over every project root, turning bursts of file events into sync requests."""
from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import watchfiles

from .walk import IGNORE_FILE, relative

logger = logging.getLogger(__name__)

# Quiet period before a burst is handed over: short enough that a saved note is searchable in about a second,
# long enough that an editor's temp-file-and-rename arrives as one batch.
DEBOUNCE_MS = 300
STEP_MS = 50
# Seconds before watching a project again after its watch failed: first, and at most (doubling between). Short,
# because a sync tool's file with a name that is not UTF-8 can end the watch every time it is written.
RESTART_AFTER = (0.2, 5.0)
MISSING_POLL = 1.0  # seconds between looks at a project folder that is gone (a drive unmounted, a folder removed)

OnChanges = Callable[[str, set[str] | None], None]  # (project name, changed relative paths or None for "everything")


class RootChanged(Exception):
    """The project's folder went away or is another folder now (removed and made again, unmounted and mounted):
    the old watch sees nothing of it any more."""


def _identity(root: Path) -> tuple[int, int] | None:
    """Which folder is at root now (device and inode), or None when there is none."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if os.path.isdir(root) else None


def _watch_filter(change: watchfiles.Change, path: str) -> bool:
    # Editors' swap and backup files never become documents; everything else is decided by the project's rules.
    name = Path(path).name
    return not (name.endswith(("~", ".swp", ".swx", ".tmp")) or name.startswith(".#"))


class Watcher:
    """Watches project roots until stopped, reporting changed paths per project.

    Each project has its own watch (a thread): a file that ends one watch (watchfiles cannot report a name that is
    not UTF-8, and its watch then fails on every call) stops only that project's, which starts again at once and
    looks at its whole folder for what it missed; the other projects are watched throughout. A project folder that
    is missing (at start or later) is looked for every second and watched again, read whole, once it is back; one
    removed and made again, or a drive unmounted and mounted again, is noticed within half a second, since the old
    watch would see nothing of the new folder.
    """

    def __init__(self, roots: dict[str, Path], on_changes: OnChanges, is_ignored: Callable[[str, str], bool]):
        self.roots = dict(roots)
        self.missing: set[str] = set()  # projects whose folder is gone right now: watched again once it is back
        # Project folders that are mount points (a drive): unmounted, the empty folder left under them is missing too,
        # never read as a project whose notes were all deleted.
        self.mount_points = {name for name, root in self.roots.items() if os.path.ismount(root)}
        self.on_changes = on_changes
        self.is_ignored = is_ignored
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self.restarts = 0
        self.failures: Counter[str] = Counter()  # per project: how often its watch had to start again
        self.last_error: str | None = None
        self._started: set[str] = set()
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(name,), name=f"skmemory-watcher-{name}", daemon=True)
                        for name in self.roots]

    def start(self) -> "Watcher":
        if not self.threads:
            self.ready.set()
        for thread in self.threads:
            thread.start()
        return self

    def stop(self, timeout: float = 10) -> None:
        self.stop_event.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _run(self, name: str) -> None:
        delay, rescan = RESTART_AFTER[0], False
        while not self.stop_event.is_set():
            if not self._present(name):
                rescan = self._wait_for_folder(name) or rescan
                continue
            started = time.monotonic()
            try:
                self._watch(name, rescan)
            except RootChanged as exc:
                with self._lock:
                    self.restarts += 1
                    self.failures[name] += 1
                    self.last_error = f"{name}: {exc}"
                logger.warning("The folder of %s %s; watching it again once it is there", name, exc)
                rescan = True
                continue
            except Exception as exc:
                with self._lock:
                    self.restarts += 1
                    self.failures[name] += 1
                    self.last_error = f"{name}: {type(exc).__name__}: {exc}"
                logger.warning("Watching %s stopped (%s); watching it again in %.1f s", name, exc, delay)
                self._begun(name)  # a watch that failed at once must not hold up `ready` for the others
                if self.stop_event.wait(delay):
                    break
                delay = RESTART_AFTER[0] if time.monotonic() - started > 60 else min(delay * 2, RESTART_AFTER[1])
                rescan = True  # the changes that ended the watch, and any made meanwhile, were lost with it
            else:
                break
        self._begun(name)

    def _begun(self, name: str) -> None:
        with self._lock:
            self._started.add(name)
            if len(self._started) == len(self.roots):
                self.ready.set()

    def _present(self, name: str) -> bool:
        """Whether the project's folder is there (and, for a drive's mount point, the drive is mounted)."""
        root = self.roots[name]
        return _identity(root) is not None and (name not in self.mount_points or os.path.ismount(root))

    def _wait_for_folder(self, name: str) -> bool:
        """Wait while the project's folder is missing; True once it is back (to be read whole), False if stopped."""
        with self._lock:
            self.missing.add(name)
        self._begun(name)
        logger.info("The folder of %s (%s) is missing; watching it as soon as it is back", name, self.roots[name])
        while not self.stop_event.wait(MISSING_POLL):
            if self._present(name):
                with self._lock:
                    self.missing.discard(name)
                logger.info("The folder of %s is back: reading it again", name)
                return True
        return False

    def _watch(self, name: str, rescan: bool) -> None:
        identity = _identity(self.roots[name])
        for changes in watchfiles.watch(
            self.roots[name], watch_filter=_watch_filter, debounce=DEBOUNCE_MS, step=STEP_MS,
            stop_event=self.stop_event, rust_timeout=500, yield_on_timeout=True, raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            self._begun(name)
            now = _identity(self.roots[name])
            if now != identity:
                raise RootChanged("was removed or unmounted" if not self._present(name) else
                                  "was replaced by another folder (made again, or a drive mounted again)")
            if rescan:
                rescan = False
                self.on_changes(name, None)
            if changes:
                self._dispatch(name, changes)

    @property
    def state(self) -> dict:
        """Whether it watches, and how often a project's watch had to start again (with the last reason)."""
        running = not self.stop_event.is_set() and all(t.is_alive() for t in self.threads)
        return {"running": running, "restarts": self.restarts, "last_error": self.last_error,
                "missing": sorted(self.missing)}

    def _dispatch(self, name: str, changes: set[tuple[watchfiles.Change, str]]) -> None:
        root, rels = self.roots[name], set()
        for _change, raw in changes:
            rel = relative(root, Path(raw))
            if rel is None or rel == ".":
                continue
            if rel == IGNORE_FILE:
                rels = None  # the rules changed: look at everything again
                break
            if not self.is_ignored(name, rel):
                rels.add(rel)
        if rels is None or rels:
            logger.debug("Changes in %s: %s", name, "all" if rels is None else len(rels))
            self.on_changes(name, rels)
