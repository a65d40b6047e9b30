"""The watcher: watchfiles over every project root, turning bursts of file events into sync requests."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable

import watchfiles

from .walk import IGNORE_FILE, relative

logger = logging.getLogger(__name__)

# Quiet period before a burst is handed over: short enough that a saved note is searchable in about a second,
# long enough that an editor's temp-file-and-rename arrives as one batch.
DEBOUNCE_MS = 300
STEP_MS = 50
RESTART_AFTER = (1.0, 30.0)  # seconds before watching again after a failure: first, and at most (doubling between)

OnChanges = Callable[[str, set[str] | None], None]  # (project name, changed relative paths or None for "everything")


def _watch_filter(change: watchfiles.Change, path: str) -> bool:
    # Editors' swap and backup files never become documents; everything else is decided by the project's rules.
    name = Path(path).name
    return not (name.endswith(("~", ".swp", ".swx", ".tmp")) or name.startswith(".#"))


class Watcher:
    """Watches project roots in a background thread until stopped, reporting changed paths per project."""

    def __init__(self, roots: dict[str, Path], on_changes: OnChanges, is_ignored: Callable[[str, str], bool]):
        self.roots = {name: root for name, root in roots.items() if root.is_dir()}
        self.on_changes = on_changes
        self.is_ignored = is_ignored
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self.restarts = 0
        self.last_error: str | None = None
        self._rescan = False  # after a restart: look at every project again once watching has begun
        self.thread = threading.Thread(target=self._run, name="skmemory-watcher", daemon=True)

    def start(self) -> "Watcher":
        self.thread.start()
        return self

    def stop(self, timeout: float = 10) -> None:
        self.stop_event.set()
        self.thread.join(timeout)

    def _run(self) -> None:
        if not self.roots:
            self.ready.set()
            self.stop_event.wait()
            return
        delay = RESTART_AFTER[0]
        while not self.stop_event.is_set():
            started = time.monotonic()
            try:
                self._watch()
            except Exception as exc:
                # A file watchfiles cannot report (a name that is not UTF-8) ends its iterator: watch again,
                # and look at every project again for the changes that were lost with it.
                self.restarts += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                logger.error("The file watcher stopped (%s); watching again in %.0f s", self.last_error, delay)
                if self.stop_event.wait(delay):
                    break
                delay = RESTART_AFTER[0] if time.monotonic() - started > 60 else min(delay * 2, RESTART_AFTER[1])
                self._rescan = True
            else:
                break
        self.ready.set()

    def _watch(self) -> None:
        for changes in watchfiles.watch(
            *self.roots.values(), watch_filter=_watch_filter, debounce=DEBOUNCE_MS, step=STEP_MS,
            stop_event=self.stop_event, rust_timeout=500, yield_on_timeout=True, raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            self.ready.set()
            if self._rescan:
                self._rescan = False
                for name in self.roots:
                    self.on_changes(name, None)
            if changes:
                self._dispatch(changes)

    @property
    def state(self) -> dict:
        """Whether it watches, and how often it had to start again (with the last reason)."""
        return {"running": self.thread.is_alive(), "restarts": self.restarts, "last_error": self.last_error}

    def _dispatch(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        per_project: dict[str, set[str] | None] = {}
        for _change, raw in changes:
            path = Path(raw)
            for name, root in self.roots.items():
                rel = relative(root, path)
                if rel is None or rel == ".":
                    continue
                if rel == IGNORE_FILE:
                    per_project[name] = None  # the rules changed: look at everything again
                elif per_project.get(name, set()) is not None and not self.is_ignored(name, rel):
                    per_project.setdefault(name, set()).add(rel)
                break
        for name, rels in per_project.items():
            logger.debug("Changes in %s: %s", name, "all" if rels is None else len(rels))
            self.on_changes(name, rels)
