"""The Document Info Panel: metadata, outline, preview, links both ways, and related documents."""
from __future__ import annotations

from flask import Blueprint

from ..current import get_engine
from .preview import parse_lines, preview
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
    match = next((p for p in doc["passages"] if tuple(p["lines"]) == at_lines), None) if at_lines else None
    return render("documents/page.html", "documents/_panel.html", doc=doc, match=match, at_lines=at_lines,
                  preview=preview(doc["content"], doc["file_type"], doc["passages"], at_lines))


@bp.get("/documents/<document_id>/related")
def related(document_id: str):
    """Smart links: hybrid search on the document's own content, the document itself excluded."""
    project = arg("project", max_chars=64) or None
    found = get_engine().related(document_id, project, RELATED_LIMIT)
    return render("documents/related.html", "documents/_related.html", related=found, document_id=document_id)
