"""The mind map part of the JSON API under /api/mindmaps: list, load, open, save, node search and node context."""
from __future__ import annotations

from flask import Blueprint, jsonify, request
from werkzeug.exceptions import HTTPException

from indexer.errors import SKMemoryError
from indexer.mindmap.maps import MapConflict

from .api import body_field, engine_error, error_response, http_error, int_arg, json_body, unexpected_error
from .current import get_engine

bp = Blueprint("mindmap_api", __name__, url_prefix="/api/mindmaps")
bp.register_error_handler(HTTPException, http_error)
bp.register_error_handler(Exception, unexpected_error)


@bp.errorhandler(SKMemoryError)
def mindmap_error(exc: SKMemoryError):
    if isinstance(exc, MapConflict):
        return error_response(409, "conflict", str(exc))
    return engine_error(exc)


def _arg(name: str) -> str | None:
    return request.args.get(name) or None


@bp.get("")
def list_maps():
    """The maps of a project (?project=) and the active map."""
    return jsonify(get_engine().mindmap_list(_arg("project")))


@bp.get("/map")
def load_map():
    """A live map in full (?project=&document_id= or &path=), for an editor."""
    return jsonify(get_engine().mindmap_load(_arg("project"), _arg("document_id"), _arg("path")))


@bp.get("/active")
def active():
    return jsonify(get_engine().mindmap_active())


@bp.post("/active")
def open_map():
    """Make a map active: {"project": ..., "document_id": ...} or {"project": ..., "path": "Maps/X.mmdata"}."""
    body = json_body()
    return jsonify(get_engine().mindmap_open(body_field(body, "project", str), body_field(body, "document_id", str),
                                             body_field(body, "path", str)))


@bp.post("/save")
def save():
    """Write a map and refresh its node index: {"project": ..., "path": ..., "map": {...}} (map.revision as loaded)."""
    body = json_body()
    return jsonify(get_engine().mindmap_save(body_field(body, "path", str, required=True),
                                             body_field(body, "map", dict, required=True),
                                             project=body_field(body, "project", str)))


@bp.get("/search_nodes")
def search_nodes():
    """Search the active map's nodes: ?q=...&limit=10."""
    return jsonify(get_engine().mindmap_search_nodes(request.args.get("q", ""), int_arg("limit", 10)))


@bp.get("/context")
def context():
    """A node of the active map with its neighbourhood: ?node_id=..."""
    node_id = request.args.get("node_id", "").strip()
    if not node_id:
        return error_response(400, "invalid_request", "Give the node's id as ?node_id=..., from mindmap_search_nodes.")
    return jsonify(get_engine().mindmap_get_context(node_id))
