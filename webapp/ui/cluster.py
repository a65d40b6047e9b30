"""Cluster View: the Forge Graph of a project's documents on a canvas, lit up by semantic search.

The page is a frame; static/js/cluster.js draws the graph (sigma.js on WebGL) from /api/graph, asks
/api/graph/search what to light up, and opens the Document Info Panel (/documents/<id>) on a click.
"""
from __future__ import annotations

from flask import Blueprint, url_for

from ..current import get_engine
from ..args import arg
from .render import handle_errors, render
from .window import current_project

bp = Blueprint("cluster", __name__)
handle_errors(bp)


@bp.get("/cluster")
def page():
    """The Cluster View of a project (?project=), or of every project (?scope=all)."""
    scope = "all" if arg("scope") == "all" else "project"
    project = current_project(arg("project", max_chars=200))
    graph_args = {"scope": "all"} if scope == "all" else {"project": project}
    return render("cluster/page.html", "cluster/_view.html", nav="cluster", scope=scope, project=project,
                  projects=get_engine().projects(), graph_url=url_for("api.graph.graph", **graph_args),
                  search_url=url_for("api.light", **graph_args))
