"""The JSON API under /api: every search mode, documents, tags, projects, status and health."""
from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from indexer.errors import (DocumentNotFound, EmbeddingsUnavailable, InvalidQuery, ProjectLocked, ProjectNotFound,
                            SKMemoryError)

from .engine import get_engine

logger = logging.getLogger(__name__)
bp = Blueprint("api", __name__, url_prefix="/api")

STATUS_FOR = [
    (ProjectNotFound, 404, "not_found"),
    (DocumentNotFound, 404, "not_found"),
    (EmbeddingsUnavailable, 503, "embeddings_unavailable"),
    (ProjectLocked, 503, "project_locked"),
    (InvalidQuery, 400, "invalid_request"),
    (SKMemoryError, 400, "invalid_request"),
]


def error_response(status: int, error: str, detail: str):
    response = jsonify({"error": error, "detail": detail})
    response.status_code = status
    return response


@bp.errorhandler(SKMemoryError)
def engine_error(exc: SKMemoryError):
    for cls, status, code in STATUS_FOR:
        if isinstance(exc, cls):
            return error_response(status, code, str(exc))
    return error_response(400, "invalid_request", str(exc))


@bp.errorhandler(HTTPException)
def http_error(exc: HTTPException):
    return error_response(exc.code or 500, exc.name.lower().replace(" ", "_"), exc.description or exc.name)


@bp.errorhandler(Exception)
def unexpected_error(exc: Exception):
    logger.exception("Unexpected error in %s", request.path)
    return error_response(500, "internal_error", "Something went wrong on the server; the log has the details.")


# --- request helpers -----------------------------------------------------------------------------------------

def int_arg(name: str, default: int, low: int = 1, high: int = 100) -> int:
    raw = request.args.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidQuery(f"{name} must be a whole number, not {raw!r}.") from None
    if not low <= value <= high:
        raise InvalidQuery(f"{name} must be between {low} and {high}, not {value}.")
    return value


def list_arg(name: str) -> list[str]:
    """A repeated query parameter; comma-separated values are split too."""
    values = []
    for raw in request.args.getlist(name):
        values += [v.strip() for v in raw.split(",") if v.strip()]
    return values


def json_body() -> dict:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise InvalidQuery("Send a JSON object as the request body (Content-Type: application/json).")
    return body


# --- routes --------------------------------------------------------------------------------------------------

@bp.get("/health")
def health():
    engine = get_engine()
    return jsonify({"status": "ok", "app": "sk-memory", "home": str(engine.home.settings.home),
                    "port": current_app.config["SKMEMORY_PORT"], "embeddings": engine.home.embedder.state})


@bp.get("/search")
def search():
    return jsonify(get_engine().search(
        request.args.get("q", ""), mode=request.args.get("mode", "hybrid"), project=request.args.get("project") or None,
        scope=request.args.get("scope", "project"), tags_all=list_arg("tags_all"), tags_any=list_arg("tags_any"),
        limit=int_arg("limit", 20),
    ))


@bp.get("/tags")
def tags():
    return jsonify(get_engine().tags(request.args.get("project") or None, request.args.get("prefix", ""),
                                     int_arg("limit", 50, high=500)))


@bp.get("/projects")
def projects():
    return jsonify({"projects": get_engine().projects()})


@bp.get("/documents")
def documents():
    return jsonify(get_engine().documents(
        request.args.get("project") or None, request.args.get("folder", ""), request.args.get("tag") or None,
        limit=int_arg("limit", 200, high=1000), offset=int_arg("offset", 0, low=0, high=10**9),
    ))


@bp.get("/documents/<document_id>")
def document(document_id: str):
    return jsonify(get_engine().document(document_id, request.args.get("project") or None))


@bp.get("/documents/<document_id>/related")
def related(document_id: str):
    return jsonify(get_engine().related(document_id, request.args.get("project") or None, int_arg("limit", 8, high=50)))


@bp.get("/status")
def status():
    return jsonify(get_engine().status())


@bp.app_errorhandler(404)
@bp.app_errorhandler(405)
def unrouted(exc: HTTPException):
    """Answer unknown API paths and wrong methods in JSON; other pages get the HTML error."""
    if not request.path.startswith("/api/"):
        return exc
    if exc.code == 405:
        return error_response(405, "method_not_allowed", f"{request.method} is not accepted at {request.path}.")
    return error_response(404, "not_found", f"There is no API endpoint {request.path}; see the README for the list.")
