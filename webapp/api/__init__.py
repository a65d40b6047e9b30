"""The JSON API under /api: one blueprint that owns the API's error answers, with a child per feature.

search.py: every search and listing (each route reads one request value: SearchRequest or a sibling), documents,
notes, tags, properties, projects, context, memory search, status and health; mindmaps.py: /api/mindmaps;
graph.py: Cluster View's /api/graph. Every error under /api is answered here as {"error": kind, "detail": sentence}.
"""
from __future__ import annotations

import logging
import os

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from indexer.contract.routes import answer_problems
from indexer.errors import SKMemoryError

from ..errors import UNEXPECTED, status_for
from . import graph, mindmaps, search

logger = logging.getLogger(__name__)
bp = Blueprint("api", __name__, url_prefix="/api")
bp.register_blueprint(search.bp)
bp.register_blueprint(mindmaps.bp)
bp.register_blueprint(graph.bp)


def checking(app) -> bool:
    """Whether every answer is checked against its route's type: in every test run (tests/conftest.py sets
    SKMEMORY_CHECK_ANSWERS=1), and wherever a person sets it."""
    return bool(app.config.get("CHECK_ANSWERS", os.environ.get("SKMEMORY_CHECK_ANSWERS") == "1"))


@bp.after_request
def check_answer(response):
    """The door every answer leaves by: with checking on, an answer that is not its route's declared type
    (indexer/contract/routes.py) is not sent; a 500 names what was wrong, and the log has it too."""
    if not checking(current_app) or request.url_rule is None or response.status_code >= 300 or not response.is_json:
        return response
    problems = answer_problems(f"{request.method} {request.url_rule.rule}", response.get_json())
    if not problems:
        return response
    logger.error("The answer of %s %s breaks its contract: %s", request.method, request.path, "; ".join(problems))
    return error_response(500, "answer_contract", "; ".join(problems)[:2000])


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
