"""The Cluster View part of the JSON API: the Forge Graph and the documents a query lights up on it."""
from __future__ import annotations

from flask import Blueprint, jsonify, request
from werkzeug.exceptions import HTTPException

from indexer.errors import InvalidQuery, SKMemoryError

from .api import engine_error, http_error, int_arg, unexpected_error
from .current import get_engine

bp = Blueprint("graph_api", __name__, url_prefix="/api/graph")
bp.register_error_handler(SKMemoryError, engine_error)
bp.register_error_handler(HTTPException, http_error)
bp.register_error_handler(Exception, unexpected_error)


def _scope() -> str:
    scope = request.args.get("scope") or "project"
    if scope not in ("project", "all"):
        raise InvalidQuery(f"Unknown scope '{scope}'; use 'project' or 'all'.")
    return scope


@bp.get("")
def graph():
    """Nodes, edges, clusters and positions of a project (?project=) or of all of them (?scope=all)."""
    return jsonify(get_engine().graph(request.args.get("project") or None, _scope()))


@bp.get("/search")
def search():
    """The documents to light up for ?q= (semantic search; keyword, labelled so, without embeddings)."""
    query = (request.args.get("q") or "").strip()
    if not query:
        raise InvalidQuery("Type something to search for (the query is empty).")
    return jsonify(get_engine().graph_search(query, request.args.get("project") or None, _scope(),
                                             int_arg("limit", 50)))
