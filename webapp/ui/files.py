"""The search window's Files tab: the folder tree with counts, the tag list, and the documents of either, a page at a
time and filtered by name."""
from __future__ import annotations

from flask import Blueprint

from ..current import get_engine
from ..args import arg, int_arg
from .render import handle_errors, render
from .window import window_context

bp = Blueprint("files", __name__)
handle_errors(bp)
PAGE = 200


@bp.get("/files")
def files():
    folder, tag, name = arg("folder").strip("/"), arg("tag").lstrip("#"), arg("name", max_chars=200)
    context = window_context(arg("project", max_chars=64), tab="files")
    listing = None
    if context["project"]:
        listing = get_engine().documents(context["project"], folder, tag or None, limit=PAGE,
                                         offset=int_arg("offset", 0, low=0, high=10**9), name=name)

    def scope_args(**changes) -> dict:  # this listing's query string, for its pager
        args = {"project": context["project"], "folder": folder or None, "tag": tag or None, "name": name or None}
        return {k: v for k, v in {**args, **changes}.items() if v is not None}

    return render("files/page.html", "files/_documents.html", folder=folder, tag=tag, name=name, listing=listing,
                  scope_args=scope_args, page_size=PAGE, **context)
