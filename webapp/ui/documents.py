"""The Document Info Panel: metadata, outline, preview, links both ways, related documents and link suggestions."""
from __future__ import annotations

from flask import Blueprint, current_app, url_for
from markupsafe import Markup, escape

from indexer import USER_DOCS_NAME, RelatedRequest

from ..current import get_engine
from ..opener import inside_project, obsidian_url, open_with_system
from .preview import matching_passage, parse_lines, preview
from ..args import arg
from .render import handle_errors, render

bp = Blueprint("documents", __name__)
handle_errors(bp)
RELATED_LIMIT = 8
DOCS_ADDRESS = "127.0.0.1:8765"  # as the user docs write the server's address


def doc_url(project: str, document_id: str, path: str, **params) -> str:
    """Where a document opens: a help topic at its own address (/help/<topic>), any other in the panel's route."""
    if project == USER_DOCS_NAME:
        return url_for("help.help_topic", topic=path.removesuffix(".md"))
    return url_for("documents.document", document_id=document_id, project=project, **params)


@bp.get("/documents/<document_id>")
def document(document_id: str):
    context = panel(document_id, arg("project", max_chars=64) or None)
    return render("documents/page.html", "documents/_panel.html", **context)


def panel(document_id: str, project: str | None) -> dict:
    """What the Document Info Panel shows of a document (a help topic shows its text alone: see help.py)."""
    doc = get_engine().document(document_id, project)
    at_lines = parse_lines(arg("lines", max_chars=40))
    match = matching_passage(doc["passages"], at_lines)  # the passage the panel names is the one it highlights
    engine = get_engine()

    topics: dict[str, str] = {}

    def link_href(target: str) -> str | None:  # a wikilink opens its note in the window
        found = engine.resolve_link(target, doc["path"], doc["project"])
        if found and doc["project"] == USER_DOCS_NAME:  # a topic's path from the list of topics, read once
            if not topics:
                topics.update((d["document_id"], d["path"]) for d in engine.documents(USER_DOCS_NAME)["documents"])
            return doc_url(USER_DOCS_NAME, found, topics[found])
        return url_for("documents.document", document_id=found, project=doc["project"]) if found else None

    shown = preview(doc["content"], doc["file_type"], doc["passages"], match, link_href)
    if doc["project"] == USER_DOCS_NAME:  # the user docs name the default address; show the one this server has
        shown = Markup(str(shown).replace(DOCS_ADDRESS, f"127.0.0.1:{current_app.config['SKMEMORY_PORT']}"))
    return {"doc": doc, "obsidian_url": obsidian_url(doc), "preview": shown,
            "help_topic": doc["project"] == USER_DOCS_NAME,
            "match": doc["passages"][match] if match is not None else None}


@bp.post("/documents/<document_id>/open")
def open_file(document_id: str):
    """Open the document's file with the computer's default application; only a file inside its project."""
    doc = get_engine().document(document_id, arg("project", max_chars=64) or None)
    opened_with = open_with_system(inside_project(doc))
    return f"Opened with {escape(opened_with)}."


@bp.get("/documents/<document_id>/suggestions")
def suggestions(document_id: str):
    """Link suggestions: notes this one names without a link, and notes close in meaning that no link joins."""
    project = arg("project", max_chars=64) or None
    found = get_engine().link_suggestions(document_id, project)
    return render("documents/related.html", "documents/_suggestions.html", found=found, document_id=document_id,
                  related=found)


@bp.get("/documents/<document_id>/related")
def related(document_id: str):
    """Smart links: hybrid search on the document's own content, the document itself excluded."""
    project = arg("project", max_chars=64) or None
    found = get_engine().related(RelatedRequest(document_id, project, RELATED_LIMIT))
    return render("documents/related.html", "documents/_related.html", related=found, document_id=document_id)
