"""/api's documents, notes, tags, properties, projects, status and health: the routes that read plain arguments
(the searches are served by door.py; errors are answered by the parent blueprint)."""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request

from ..args import arg, body_field, int_arg, json_body
from ..current import get_engine
from .door import send

bp = Blueprint("search", __name__)


@bp.get("/health")
def health():
    return send(get_engine().health(current_app.config["SKMEMORY_PORT"]))


@bp.get("/tags")
def tags():
    return send(get_engine().tags(request.args.get("project") or None, request.args.get("prefix", ""),
                                  int_arg("limit", 50, high=500)))


@bp.get("/projects")
def projects():
    return send(get_engine().project_list())


@bp.post("/projects")
def add_project():
    """Register a folder (its full path) as a project; the server starts indexing and watching it."""
    body = json_body()
    info = get_engine().add_project(body_field(body, "path", str, required=True), body_field(body, "name", str))
    return jsonify(info), 201


@bp.post("/projects/<name>/rename")
def rename_project(name: str):
    return jsonify(get_engine().rename_project(name, body_field(json_body(), "name", str, required=True)))


@bp.delete("/projects/<name>")
def remove_project(name: str):
    """Forget a project and delete its index; the folder's files are not touched."""
    return jsonify(get_engine().remove_project(name))


@bp.post("/projects/<name>/reindex")
def reindex_project(name: str):
    """Queue a re-read of the folder; follow `sync` in /api/status until `done` reaches `sync_request`."""
    return jsonify(get_engine().reindex(name)), 202


@bp.get("/documents")
def documents():
    return send(get_engine().documents(
        request.args.get("project") or None, request.args.get("folder", ""), request.args.get("tag") or None,
        limit=int_arg("limit", 200, high=1000), offset=int_arg("offset", 0, low=0, high=10**9),
        name=arg("name", max_chars=200),
    ))


@bp.get("/documents/<document_id>")
def document(document_id: str):
    """A document; with start_line and/or end_line its content is exactly those lines of the file (1-based)."""
    project = request.args.get("project") or None
    if request.args.get("start_line") in (None, "") and request.args.get("end_line") in (None, ""):
        return jsonify(get_engine().document(document_id, project))
    return jsonify(get_engine().document_lines(document_id, int_arg("start_line", 1, high=10**9),
                                               int_arg("end_line", 10**9, high=10**9), project))


@bp.get("/notes/info")
def note_info():
    """A note named by ?note= (id, path or title): metadata, frontmatter, outline and link counts; no text."""
    return send(get_engine().note_info(request.args.get("note", ""), request.args.get("project") or None))


@bp.get("/notes/read")
def read_note():
    """A page of a note's text: ?note=&section= or &start_line=&end_line=, then &offset= (a page's next_offset)
    and &max_chars=."""
    def line(name: str) -> int | None:
        return int_arg(name, 0, high=10**9) if request.args.get(name) not in (None, "") else None

    return send(get_engine().read_note(
        request.args.get("note", ""), request.args.get("project") or None,
        section=request.args.get("section") or None, start_line=line("start_line"), end_line=line("end_line"),
        offset=int_arg("offset", 0, low=0, high=10**10), max_chars=int_arg("max_chars", 8000, high=40_000)))


@bp.get("/notes/links")
def note_links():
    """A note's outgoing links and backlinks: ?note=&direction=both|outgoing|backlinks&limit=50."""
    return send(get_engine().note_links(request.args.get("note", ""), request.args.get("project") or None,
                                        request.args.get("direction", "both"), int_arg("limit", 50, high=500)))


@bp.get("/notes/suggestions")
def note_suggestions():
    """The links a note could have: ?note=&project=&limit=8: unlinked mentions (with their lines) and notes close in
    meaning that no link joins to it, each with the [[wikilink]] and [text](path) to copy."""
    return send(get_engine().link_suggestions(request.args.get("note", ""), request.args.get("project") or None,
                                              int_arg("limit", 8, high=20)))


@bp.get("/properties")
def properties():
    """The frontmatter keys notes use, most used first, with sample values: ?prefix=&limit=50."""
    return send(get_engine().properties(request.args.get("project") or None, request.args.get("prefix", ""),
                                        int_arg("limit", 50, high=500)))


@bp.get("/status")
def status():
    return jsonify(get_engine().status())


@bp.post("/embedding")
def embedding():
    """Pause embedding after the passages in hand ({"paused": true}) or go on ({"paused": false}); it stays so across
    restarts until changed. Files are still read, so keyword search stays current."""
    paused = body_field(json_body(), "paused", bool, required=True)
    return jsonify(get_engine().set_embedding_paused(paused))
