"""The Projects page: add a folder (validated), rename, remove and re-index; built-in projects are read-only."""
from __future__ import annotations

from flask import Blueprint, request

from indexer.errors import SKMemoryError

from ..current import get_engine
from .render import handle_errors, render

bp = Blueprint("projects", __name__)
handle_errors(bp)


def page(message: str = "", error: str = "", status: int = 200, form: dict | None = None):
    return render("projects/page.html", "projects/_list.html", status, projects=get_engine().projects(),
                  message=message, error=error, form=form or {})


def field(name: str, max_chars: int = 4096) -> str:
    return (request.form.get(name) or "").strip()[:max_chars]


def change(action, success: str, form: dict | None = None):
    """Run one change; show the list again with a sentence saying what happened, or why it did not."""
    try:
        result = action()
    except SKMemoryError as exc:
        return page(error=str(exc), status=400, form=form)
    response = page(message=success.format(**result))
    response.headers["HX-Trigger"] = "skm-status-changed"  # the status widget counts the change at once
    return response


@bp.get("/projects")
def projects():
    return page()


@bp.post("/projects")
def add():
    path, name = field("path"), field("name", 64)
    if not path:
        return page(error="Give the path of a folder of notes, such as ~/Documents/notes.", status=400,
                    form={"path": path, "name": name})
    return change(lambda: get_engine().add_project(path, name or None),
                  "Added '{name}' ({root}); it is being indexed now.", form={"path": path, "name": name})


@bp.post("/projects/<name>/rename")
def rename(name: str):
    return change(lambda: get_engine().rename_project(name, field("new_name", 64)), "Renamed to '{name}'.")


@bp.post("/projects/<name>/remove")
def remove(name: str):
    return change(lambda: get_engine().remove_project(name),
                  "Removed '{name}' and its index; the files in {root} were not touched.")


@bp.post("/projects/<name>/reindex")
def reindex(name: str):
    return change(lambda: get_engine().reindex(name), "Re-indexing '{project}'.")
