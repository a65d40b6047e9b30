"""Domain exceptions: the edges (CLI, web, MCP) translate these into messages a user can act on.

Each has a `kind`, the one word an edge needs to choose its answer (webapp/errors.py maps kinds to HTTP statuses;
the JSON API sends the kind as `error`). The message always says what to change.
"""


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
