"""Reading a project's file: only a regular file that, with every link followed, lies inside the project's folder.

One helper for every read (indexing, a document's line range, a mind map). The checks are made on the file that was
opened, not on the path before opening, so a note swapped for a link to /etc/passwd or for a FIFO between a walk
and a read is refused rather than read (or waited on).
"""
from __future__ import annotations

import os
import stat as stat_mod
from pathlib import Path, PurePath

# O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer (it is refused after).
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_PROC_FD = Path("/proc/self/fd")


class UnsafeFile(Exception):
    """A file that is not read, whatever it holds; the message says why in a reader's words."""


class TooLarge(Exception):
    """A file over the byte limit; `size` is its size."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


def within(real: str, real_root: str) -> bool:
    """Tell whether a real (resolved) path is the real root or lies below it."""
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def read_inside(root: Path, path: Path, max_bytes: int) -> tuple[bytes, os.stat_result, os.stat_result]:
    """Read a project's regular file whole; return (data, stat before the read, stat after it, of the same open file).

    Raises UnsafeFile for anything that is not a regular file or leads out of root, TooLarge over max_bytes, and
    OSError (FileNotFoundError, PermissionError, IsADirectoryError, ...) as the system reports it.
    """
    fd = os.open(path, _FLAGS)
    try:
        before = os.fstat(fd)
        if stat_mod.S_ISDIR(before.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat_mod.S_ISREG(before.st_mode):
            raise UnsafeFile("it is not a regular file (a pipe, socket or device); only regular files are read")
        if not _opened_inside(fd, before, path, root):
            raise UnsafeFile("it is a link to a file outside the project's folder, and links that leave the "
                             "folder are not followed")
        if before.st_size > max_bytes:
            raise TooLarge(before.st_size)
        os.set_blocking(fd, True)
        parts, left = [], max_bytes + 1
        while left > 0:
            part = os.read(fd, min(left, 1 << 20))
            if not part:
                break
            parts.append(part)
            left -= len(part)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    data = b"".join(parts)
    if len(data) > max_bytes:
        raise TooLarge(len(data))
    return data, before, after


def _opened_inside(fd: int, opened: os.stat_result, path: Path, root: Path) -> bool:
    real_root = os.path.realpath(root)
    try:  # Linux names the opened file itself: no window between the check and the read
        return within(os.readlink(_PROC_FD / str(fd)), real_root)
    except OSError:
        pass
    real = os.path.realpath(path)
    if not within(real, real_root):
        return False
    try:  # elsewhere: the resolved path must still be the file that was opened
        now = os.stat(real)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


# The files a reader never sees whole, only what their extractor made of them: a PDF's bytes, and a mind map's file,
# which also holds each node's private notes and its attachments (ingest/extract reads this too).
HIDDEN_SUFFIXES = frozenset({".pdf", ".mmdata"})


def file_is_readable(rel: PurePath) -> bool:
    """Whether a reader may see an indexed file itself, every part of it (else only what was indexed of it)."""
    return rel.suffix.lower() not in HIDDEN_SUFFIXES
