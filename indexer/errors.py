"""Domain exceptions: the edges (CLI, web, MCP) translate these into messages a user can act on."""


class SKMemoryError(Exception):
    """Base of every error the engine raises on purpose; its message says what to change."""


class ProjectNotFound(SKMemoryError):
    pass


class ProjectExists(SKMemoryError):
    pass


class InvalidProjectRoot(SKMemoryError):
    pass


class ProjectLocked(SKMemoryError):
    """Another process owns this project's index."""

    def __init__(self, message: str, holder: dict | None = None):
        super().__init__(message)
        self.holder = holder or {}


class ExtractionError(SKMemoryError):
    """A file could not be read or parsed at all; recorded on that file, indexing goes on."""


class EmbeddingsUnavailable(SKMemoryError):
    pass


class InvalidQuery(SKMemoryError):
    """A search request that cannot run as given (bad mode, date, limit or empty query)."""


class DocumentNotFound(SKMemoryError):
    pass
