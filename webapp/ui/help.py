"""Help (F1): a search over SK Memory's own user docs, the built-in read-only project "User Docs"."""
from __future__ import annotations

from flask import Blueprint
from werkzeug.exceptions import NotFound

from indexer import USER_DOCS_NAME, SearchRequest

from ..current import get_engine
from ..args import arg
from .documents import panel
from .render import handle_errors, render

bp = Blueprint("help", __name__)
handle_errors(bp)


@bp.get("/help")
def help_page():
    engine = get_engine()
    q = arg("q")
    available = any(p["name"] == USER_DOCS_NAME for p in engine.projects())
    results = topics = None
    if available:
        if q:
            results = engine.search(SearchRequest(q, "hybrid", project=USER_DOCS_NAME, limit=10, group=True))
        else:
            topics = engine.documents(USER_DOCS_NAME)["documents"]
    return render("help/page.html", "help/_results.html", q=q, results=results, topics=topics, available=available,
                  docs_project=USER_DOCS_NAME)


@bp.get("/help/<path:topic>")
def help_topic(topic: str):
    """One help topic at an address of its own (/help/Keyboard shortcuts): its text in the panel, the topics beside."""
    engine = get_engine()
    topics = engine.documents(USER_DOCS_NAME)["documents"]
    found = next((d for d in topics if d["path"] in (topic, f"{topic}.md")), None)
    if found is None:
        raise NotFound(f"There is no help topic '{topic}'. The topics are listed at /help.")
    context = panel(found["document_id"], USER_DOCS_NAME)
    return render("help/page.html", "documents/_panel.html", q="", results=None, topics=topics, available=True,
                  docs_project=USER_DOCS_NAME, **context)
