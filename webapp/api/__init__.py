"""The JSON API under /api: one blueprint that owns the API's error answers, with a child per feature.

door.py: the door every answer of the route table leaves by, and the one view of every route that reads a request
value (the searches, listings, context, memory, related notes, node search, Cluster View's lights); search.py:
documents, notes, tags, properties, projects, status and health; mindmaps.py: /api/mindmaps; graph.py: Cluster
View's /api/graph. Every error under /api is answered here as {"error": kind, "detail": sentence}.
"""
from __future__ import annotations

import logging

from flask import Blueprint, jsonify, request
from werkzeug.exceptions import HTTPException

from indexer.errors import SKMemoryError

from ..errors import UNEXPECTED, status_for
from . import graph, mindmaps, search
from .door import serve_requests

logger = logging.getLogger(__name__)
bp = Blueprint("api", __name__, url_prefix="/api")
bp.register_blueprint(search.bp)
bp.register_blueprint(mindmaps.bp)
bp.register_blueprint(graph.bp)
serve_requests(bp)


def error_response(status: int, error: str, detail: str):
    response = jsonify({"error": error, "detail": detail})
    response.status_code = status
    return response


@bp.errorhandler(SKMemoryError)
def engine_error(exc: SKMemoryError):
    return error_response(status_for(exc), exc.kind, str(exc))


@bp.errorhandler(HTTPException)
def http_error(exc: HTTPException):
    return error_response(exc.code or 500, exc.name.lower().replace(" ", "_"), exc.description or exc.name)


@bp.errorhandler(Exception)
def unexpected_error(exc: Exception):
    logger.exception("Unexpected error in %s", request.path)
    return error_response(500, "internal_error", UNEXPECTED)


@bp.app_errorhandler(404)
@bp.app_errorhandler(405)
def unrouted(exc: HTTPException):
    """Answer unknown API paths and wrong methods in JSON; other pages get the HTML error."""
    if not request.path.startswith("/api/"):
        return exc
    if exc.code == 405:
        return error_response(405, "method_not_allowed", f"{request.method} is not accepted at {request.path}.")
    return error_response(404, "not_found", f"There is no API endpoint {request.path}; the routes are listed in "
                                            "docs/api.md, and GET /api/health says whether this is SK Memory.")
