"""/api/graph: Cluster View's Forge Graph (the documents a query lights up on it, /api/graph/search, are served by
door.py)."""
from __future__ import annotations

from flask import Blueprint, jsonify, request

from indexer.contract.limits import check_scope

from ..current import get_engine

bp = Blueprint("graph", __name__, url_prefix="/graph")


def _scope() -> str:
    return check_scope(request.args.get("scope") or "project")


@bp.get("")
def graph():
    """Nodes, edges, clusters and positions of a project (?project=) or of all of them (?scope=all)."""
    return jsonify(get_engine().graphs.graph(request.args.get("project") or None, _scope()))
