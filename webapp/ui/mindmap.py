"""The Mind Map page: a project's maps, and one map as an outline tree to edit and save.

The editor runs in static/js/mindmap.js and talks to the JSON API (/api/mindmaps): opening a map makes it the
active map with a POST (never on GET), and Save writes the file and refreshes its node index.
"""
from __future__ import annotations

from flask import Blueprint, render_template

from ..current import get_engine
from ..args import arg
from .render import handle_errors

bp = Blueprint("mindmap", __name__)
handle_errors(bp)


@bp.get("/mindmap")
def page():
    """The map list (?project=), or with &path= (or &document_id=) the editor for one map."""
    engine = get_engine()
    project = arg("project", max_chars=200) or engine.default_project()
    path, document_id = arg("path", max_chars=1000), arg("document_id", max_chars=64)
    if path or document_id:
        loaded = engine.mindmaps.load(project, document_id or None, path or None)
        return render_template("mindmap/editor.html", nav="mindmap", project=project, loaded=loaded)
    listing = engine.mindmaps.list(project)
    return render_template("mindmap/page.html", nav="mindmap", project=project, projects=engine.projects(),
                           maps=listing["maps"], active=listing["active"])
