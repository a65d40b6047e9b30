"""How an engine error becomes an answer: one map from an error's kind to its HTTP status, for JSON and HTML alike."""
from __future__ import annotations

from indexer.errors import SKMemoryError

STATUS_FOR_KIND = {
    "invalid_request": 400,
    "not_found": 404,
    "conflict": 409,
    "embeddings_unavailable": 503,
    "project_locked": 503,
    "index_damaged": 503,
    "disk_full": 507,
    "answer_contract": 500,  # an answer that is not its route's type (webapp/api/door.py)
}
UNEXPECTED = "Something went wrong on the server; the log has the details."


def status_for(exc: SKMemoryError) -> int:
    """The HTTP status of an engine error (400 for a kind this map does not know)."""
    return STATUS_FOR_KIND.get(exc.kind, 400)


def plain_answer(exc: SKMemoryError):
    """The sentence as plain text, for a route whose blueprint has no error page of its own (static files)."""
    return str(exc), status_for(exc), {"Content-Type": "text/plain; charset=utf-8"}
