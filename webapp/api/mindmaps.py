"""/api/mindmaps: list, load, open, save, node search and node context (errors are answered by the parent blueprint)."""
from __future__ import annotations

from flask import Blueprint, jsonify, request

from indexer.errors import InvalidQuery

from ..args import body_field, json_body
from ..current import get_engine
from .door import send

bp = Blueprint("mindmaps", __name__, url_prefix="/mindmaps")


def _arg(name: str) -> str | None:
    return request.args.get(name) or None


@bp.get("")
def list_maps():
    """The maps of a project (?project=) and the active map."""
    return jsonify(get_engine().mindmaps.list(_arg("project")))


@bp.get("/map")
def load_map():
    """A live map in full (?project=&document_id= or &path=), for an editor."""
    return jsonify(get_engine().mindmaps.load(_arg("project"), _arg("document_id"), _arg("path")))


@bp.get("/active")
def active():
    return jsonify(get_engine().mindmaps.active())


@bp.post("/active")
def open_map():
    """Make a map active: {"project": ..., "document_id": ...} or {"project": ..., "path": "Maps/X.mmdata"}."""
    body = json_body()
    return jsonify(get_engine().mindmaps.open(body_field(body, "project", str), body_field(body, "document_id", str),
                                              body_field(body, "path", str)))


@bp.post("/save")
def save():
    """Write a map and refresh its node index: {"project": ..., "path": ..., "map": {...}} (map.revision as loaded)."""
    body = json_body()
    return jsonify(get_engine().mindmaps.save(body_field(body, "path", str, required=True),
                                              body_field(body, "map", dict, required=True),
                                              project=body_field(body, "project", str)))


@bp.get("/context")
def context():
    """A node of a map with its neighbourhood: ?node_id=..., and &path= as search_nodes takes it."""
    node_id = request.args.get("node_id", "").strip()
    if not node_id:
        raise InvalidQuery("Give the node's id as ?node_id=..., from mindmap_search_nodes.")
    return send(get_engine().mindmaps.node_context(node_id, _arg("project"), _arg("path")))
