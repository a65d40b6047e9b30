"""One place decides between a full page and an htmx partial, and turns engine errors into either."""
from __future__ import annotations

import logging

from flask import Blueprint, make_response, render_template, request
from htmx_flask import request as htmx_request
from werkzeug.exceptions import HTTPException

from indexer.errors import SKMemoryError

from ..errors import UNEXPECTED, status_for

logger = logging.getLogger(__name__)


def wants_partial() -> bool:
    """An htmx request that is not a history restore (which needs the whole page) gets a partial."""
    htmx = htmx_request.htmx
    return bool(htmx) and not htmx.history_restore_request


def render(page: str, partial: str, http_status: int = 200, **context):
    """Render the partial for htmx, else the full page that includes it; always Vary on HX-Request."""
    template = partial if wants_partial() else page
    response = make_response(render_template(template, **context), http_status)
    response.vary.add("HX-Request")
    return response


def render_error(message: str, status: int):
    """An error sentence: in place for htmx, as a page otherwise."""
    return render("error.html", "_partials/error.html", status, message=message, status_code=status)


def handle_errors(bp: Blueprint) -> None:
    """Show engine errors and HTTP errors of this blueprint as sentences, never tracebacks."""

    @bp.errorhandler(SKMemoryError)
    def engine_error(exc: SKMemoryError):
        return render_error(str(exc), status_for(exc))

    @bp.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return render_error(exc.description or exc.name, exc.code or 500)

    @bp.errorhandler(Exception)
    def unexpected(exc: Exception):
        logger.exception("Unexpected error in %s", request.path)
        return render_error(UNEXPECTED, 500)
