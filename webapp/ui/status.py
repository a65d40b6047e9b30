"""Indexer status: the self-polling widget and the page that lists every file that failed and why."""
from __future__ import annotations

from flask import Blueprint, redirect, request, url_for

from indexer import USER_DOCS_NAME

from ..current import get_engine
from .render import handle_errors, render, wants_partial

bp = Blueprint("status", __name__)
handle_errors(bp)


def summary(status: dict) -> dict:
    """Totals over every project: documents, chunks waiting for embeddings with rate and ETA, errors, warnings."""
    projects = [p for p in status["projects"] if "open_error" not in p]
    totals = {k: sum(p.get(k) or 0 for p in projects)
              for k in ("documents", "chunks", "embedded", "pending", "documents_with_text", "documents_embedded",
                        "long_note_pending")}
    # The person's own notes: the built-in help pages are searched beside them but are not theirs to count.
    mine = [p for p in projects if p.get("project") != USER_DOCS_NAME]
    totals["notes"] = sum(p.get("documents") or 0 for p in mine)
    totals["notes_with_text"] = sum(p.get("documents_with_text") or 0 for p in mine)
    totals["notes_embedded"] = sum(p.get("documents_embedded") or 0 for p in mine)
    problems = [e for p in projects for e in p.get("errors") or []]
    # A file indexed with a warning (frontmatter read as text, a page skipped) is searchable: not an error.
    warnings = sum(1 for e in problems if e.get("indexed"))
    errors = len(problems) - warnings + len(status["projects"]) - len(projects)
    etas = [p["eta_seconds"] for p in projects if p.get("eta_seconds")]
    reading = [dict(p["sync"]["running"], project=p["project"]) for p in projects
               if (p.get("sync") or {}).get("running")]
    embeddable = status.get("embeddings") != "unavailable"
    pending = totals["pending"] if embeddable else 0
    return {
        **totals, "errors": errors, "warnings": warnings, "rate": status.get("embed_rate_per_second") or 0.0,
        "eta_seconds": max(etas) if etas and not status.get("embedding_paused") else None,
        "embeddings": status.get("embeddings"), "reading": reading,
        "progress": round(100 * totals["embedded"] / totals["chunks"]) if totals["chunks"] else 100,
        # Poll only while there is work the indexer will finish; a missing model never drains the queue.
        "busy": ((bool(status.get("indexing")) or (bool(pending) and not status.get("embedding_paused"))
                  or bool(status.get("embeddings_preparing"))) and not status.get("disk_full")),
        # the model's copies for this computer being made (its first start here): which, and how long so far
        "preparing": status.get("embeddings_preparing"),
        "paused": bool(status.get("embedding_paused")),
        "disk_full": status.get("disk_full"),
        # a project moving to another model (its notes' language changed): meaning search reads the previous one's
        # vectors meanwhile, so "0 of 400 by meaning" would be untrue
        "switch": next((p["model_switch"] for p in projects if p.get("model_switch")), None),
    }


@bp.get("/status")
def page():
    status = get_engine().status()
    return render("status/page.html", "status/_detail.html", status=status, summary=summary(status))


@bp.get("/status/widget")
def widget():
    status = get_engine().status()
    return render("status/page.html", "status/_widget.html", status=status, summary=summary(status))


@bp.post("/status/embedding")
def embedding():
    """Pause embedding or go on (the form's `paused` is 1 or 0); answers the page's detail, or the page itself."""
    get_engine().set_embedding_paused(request.form.get("paused") == "1")
    if not wants_partial():
        return redirect(url_for("status.page"), 303)
    response = page()
    response.headers["HX-Trigger"] = "skm-status-changed"  # the top bar's widget says so at once
    return response
