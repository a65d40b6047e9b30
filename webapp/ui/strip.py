"""The Power Strip's Doc Search sidecar: keyword, tag or semantic search from the floating command bar."""
from __future__ import annotations

from flask import Blueprint

from ..current import get_engine
from ..args import arg
from .render import handle_errors, render

bp = Blueprint("strip", __name__)
handle_errors(bp)
KINDS = ("keyword", "tag", "semantic")
LIMIT = 12


def doc_search(q: str, kind: str, project: str | None) -> dict | None:
    """One engine search per kind; tag search looks for documents with any tag starting with the text."""
    engine = get_engine()
    if not q:
        return None
    if kind == "tag":
        tags = [t["tag"] for t in engine.tags(project, q.lstrip("#"), 10)["tags"]]
        if not tags:
            return {"results": [], "tags": [], "mode": "tag"}
        return {**engine.search("", "tag", project=project, tags_any=tags, limit=LIMIT), "tags": tags}
    return engine.search(q, kind, project=project, limit=LIMIT)


def one_per_document(results: list[dict]) -> list[dict]:
    """Doc Search lists documents: the best chunk of each."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in results:
        if (r["project"], r["document_id"]) not in seen:
            seen.add((r["project"], r["document_id"]))
            out.append(r)
    return out


@bp.get("/strip")
def strip():
    kind = arg("kind") if arg("kind") in KINDS else "keyword"
    q = arg("q")
    found = doc_search(q, kind, arg("project", max_chars=64) or None)
    if found:
        found["results"] = one_per_document(found["results"])
    return render("strip/page.html", "strip/_results.html", q=q, kind=kind, found=found)
