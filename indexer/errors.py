"""Domain exceptions: the edges (CLI, web, MCP) translate these into messages a user can act on; and what SQLite's
own exceptions mean for an index (damaged, or a full disk).

Each has a `kind`, the one word an edge needs to choose its answer (webapp/errors.py maps kinds to HTTP statuses;
the JSON API sends the kind as `error`). The message always says what to change.
"""
from __future__ import annotations

import errno
import sqlite3


class SKMemoryError(Exception):
    """Base of every error the engine raises on purpose; its message says what to change."""

    kind = "invalid_request"


class ProjectNotFound(SKMemoryError):
    kind = "not_found"


class ProjectExists(SKMemoryError):
    pass


class InvalidProjectRoot(SKMemoryError):
    pass


class ProjectLocked(SKMemoryError):
    """Another process owns this project's index."""

    kind = "project_locked"

    def __init__(self, message: str, holder: dict | None = None):
        super().__init__(message)
        self.holder = holder or {}


class HomeInUse(ProjectLocked):
    """Another server has the data home."""


class IndexDamaged(SKMemoryError):
    """A project's index file is damaged (SQLite reports it corrupt); it is set aside and rebuilt from the notes."""

    kind = "index_damaged"


class DiskFull(SKMemoryError):
    """The disk that holds the data folder is (nearly) full: indexing waits, search goes on."""

    kind = "disk_full"


class ExtractionError(SKMemoryError):
    """A file could not be read or parsed at all; recorded on that file, indexing goes on."""


class EmbeddingsUnavailable(SKMemoryError):
    kind = "embeddings_unavailable"


class InvalidQuery(SKMemoryError):
    """A search request that cannot run as given (bad mode, date, limit or empty query)."""


class DocumentNotFound(SKMemoryError):
    kind = "not_found"


class NodeNotFound(DocumentNotFound):
    """A mind-map node id that the live map does not have."""


class MapFormatError(SKMemoryError):
    """A map that cannot be read as a `.mmdata` file; the message says what to fix."""


class MapConflict(SKMemoryError):
    """A mind-map save based on an older revision than the file on disk now has."""

    kind = "conflict"


class NoActiveMap(InvalidQuery):
    """A node search or context request while no map is open."""


# What SQLite says of a file that is not (or no longer) a database it can read: a crash of the disk, a tool that
# wrote into it, a copy cut short. The index is derived from the notes, so such a file is set aside and rebuilt.
DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def is_damage(exc: BaseException) -> bool:
    """Whether an exception is SQLite reporting a damaged file (not a busy, full or read-only one)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in DAMAGE_CODES  # extended codes (SQLITE_CORRUPT_VTAB from FTS5) keep the primary low byte
    text = str(exc)
    return "malformed" in text or "not a database" in text


def is_full(exc: BaseException) -> bool:
    """Whether an exception is SQLite (or the system) saying the disk is full."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, sqlite3.Error) and code is not None:
        return code & 0xFF == sqlite3.SQLITE_FULL
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno == errno.ENOSPC
    text = str(exc)  # Chroma's own errors carry SQLite's or the system's words
    return "disk is full" in text or "No space left on device" in text
