"""The Power Strip's Doc Search sidecar: keyword, tag or semantic search from the floating command bar."""
from __future__ import annotations

from flask import Blueprint

from indexer import SearchRequest

from ..current import get_engine
from ..args import arg
from .render import handle_errors, render

bp = Blueprint("strip", __name__)
handle_errors(bp)
KINDS = ("keyword", "tag", "semantic")
LIMIT = 12


def doc_search(q: str, kind: str, project: str | None, correct: bool = True) -> dict | None:
    """One engine search per kind, one result per document; tag search lists the documents of the tags the text
    names (as the tag suggestions match)."""
    engine = get_engine()
    if not q:
        return None
    if kind == "tag":
        tags = [t["tag"] for t in engine.tags(project, q.lstrip("#"), 10)["tags"]]
        if not tags:
            return {"results": [], "tags": [], "mode": "tag"}
        return {**engine.search(SearchRequest("", "tag", project=project, tags_any=tags, limit=LIMIT)), "tags": tags}
    # Doc Search lists documents; a typo in a keyword search is corrected, and says so (correct=0: as typed)
    return engine.search(SearchRequest(q, kind, project=project, limit=LIMIT, group=True, correct=correct))


@bp.get("/strip")
def strip():
    kind = arg("kind") if arg("kind") in KINDS else "keyword"
    q = arg("q")
    found = doc_search(q, kind, arg("project", max_chars=64) or None, arg("correct") not in ("0", "false"))
    return render("strip/page.html", "strip/_results.html", q=q, kind=kind, found=found)
