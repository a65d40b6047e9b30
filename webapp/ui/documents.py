"""The Document Info Panel: metadata, outline, preview, links both ways, and related documents."""
from __future__ import annotations

from flask import Blueprint, url_for

from ..current import get_engine
from .preview import matching_passage, parse_lines, preview
from ..args import arg
from .render import handle_errors, render

bp = Blueprint("documents", __name__)
handle_errors(bp)
RELATED_LIMIT = 8


@bp.get("/documents/<document_id>")
def document(document_id: str):
    project = arg("project", max_chars=64) or None
    doc = get_engine().document(document_id, project)
    at_lines = parse_lines(arg("lines", max_chars=40))
    match = matching_passage(doc["passages"], at_lines)  # the passage the panel names is the one it highlights
    engine = get_engine()

    def link_href(target: str) -> str | None:  # a wikilink opens its note in the window
        found = engine.resolve_link(target, doc["relative_path"], doc["project"])
        return url_for("documents.document", document_id=found, project=doc["project"]) if found else None

    return render("documents/page.html", "documents/_panel.html", doc=doc,
                  match=doc["passages"][match] if match is not None else None,
                  preview=preview(doc["content"], doc["file_type"], doc["passages"], match, link_href))


@bp.get("/documents/<document_id>/related")
def related(document_id: str):
    """Smart links: hybrid search on the document's own content, the document itself excluded."""
    project = arg("project", max_chars=64) or None
    found = get_engine().related(document_id, project, RELATED_LIMIT)
    return render("documents/related.html", "documents/_related.html", related=found, document_id=document_id)
