"""The single-writer lock on a project's index folder: one process owns the index, others are told who does."""
from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from ..errors import ProjectLocked

LOCK_NAME = "writer.lock"

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class WriterLock:
    """An exclusive OS lock on `writer.lock`; the file records who holds it so a refusal can name them."""

    def __init__(self, folder: Path, project_name: str, role: str, file_name: str = LOCK_NAME):
        self.path = folder / file_name
        self.project_name = project_name
        self.role = role
        self._fd: int | None = None

    def acquire(self) -> "WriterLock":
        """Take the lock or raise ProjectLocked naming the process that has it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock(fd):
            os.close(fd)
            holder = read_holder(self.path)
            who = (f"{holder.get('role', 'another process')} (pid {holder.get('pid', '?')})" if holder
                   else "another process")
            hint = (
                " Stop it first, or let it do the work: the running server indexes on its own."
                if holder.get("role") == "skmemory serve"
                else " Wait for it to finish or stop it."
            )
            raise ProjectLocked(f"Project '{self.project_name}' is in use by {who}.{hint}", holder)
        info = {"pid": os.getpid(), "role": self.role, "host": socket.gethostname(), "since": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Let go of the lock (also released by the OS if the process dies)."""
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                _unlock(self._fd)
            finally:
                os.close(self._fd)
                self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "WriterLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def read_holder(path: Path) -> dict:
    """Return what the lock file says about its holder ({} when empty or unreadable)."""
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
