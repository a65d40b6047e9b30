"""The search window: one blueprint per feature, server-rendered partials swapped by htmx."""
from __future__ import annotations

from datetime import datetime

from flask import Blueprint, Flask, send_from_directory
from htmx_flask import Htmx
from markupsafe import Markup, escape

from ..assets import static_folder
from ..current import get_engine
from ..opener import is_obsidian_vault
from ..highlights import pieces

HTMX_JS = "htmx-2.0.4.min.js"
# The pages load nothing but their own files: no CDN, no remote images, no inline script.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

assets = Blueprint("assets", __name__)


@assets.get("/static/<path:filename>")
def static(filename: str):
    return send_from_directory(static_folder(), filename, max_age=3600)


def similarity_percent(result: dict) -> int:
    """The similarity in meaning as a percentage (the hit's cosine; a recency score for older answers without it)."""
    score = result.get("cosine")
    if score is None:
        score = result["score"] if result["search_type"] != "hybrid" else 0.0
    return round(max(0.0, min(score, 1.0)) * 100)


def match_label(result: dict) -> str:
    """How a result matched, in words: keyword hits are exact matches (or partial ones, naming the words they hold),
    not a similarity to weigh against others."""
    kind = result["search_type"]
    if result.get("across"):
        return f"by meaning, across languages · {similarity_percent(result)}% similar"
    words = "exact match"
    if result.get("partial"):  # naming the words it holds, when they are in its text (not only in its properties)
        held = result.get("matched_words") or []
        words = "partial match: " + ", ".join(held) if held else "partial match"
    if kind == "keyword":
        return words
    if kind == "hybrid":
        return f"{words} · {similarity_percent(result)}% similar"
    return "" if kind in ("tag", "path", "file", "filter") else f"{similarity_percent(result)}% similar"  # listed


def counted(n: int, noun: str) -> str:
    """'1 document', '2 documents'."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def thousands(n: int | None) -> str:
    """'12,400': a count as the window writes it."""
    return f"{n or 0:,}"


def duration(seconds: float | None) -> str:
    """About how long, as the top bar says it: '45 s', '4 min', '1 h 20 min'."""
    seconds = int(seconds or 0)
    if seconds < 90:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def when(value: str | None) -> Markup:
    """A stored date or date-time ('2023-09-14', '2026-12-03T17:13:42') as a person reads it ('14 Sep 2023',
    '3 Dec 2026, 17:13') in a <time> element that keeps the exact value; 'unknown' when there is none."""
    if not value:
        return Markup("unknown")
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return escape(value)  # a frontmatter date written some other way: shown as written
    shown = f"{moment.day} {moment:%b %Y}" + (f", {moment:%H:%M}" if "T" in str(value) or " " in str(value) else "")
    return Markup('<time datetime="%s">%s</time>') % (value, shown)


def marked(text: str, highlights: list[list[int]] | None) -> Markup:
    """A snippet as HTML: the text escaped, each highlighted span (character offsets) wrapped in <mark>."""
    return Markup("").join(Markup("<mark>%s</mark>") % piece if marked else escape(piece)
                           for piece, marked in pieces(text, highlights))


def add_security_headers(response):
    if response.mimetype == "text/html":
        response.headers.setdefault("Content-Security-Policy", CSP)
    return response


def obsidian_vaults() -> bool:
    """Whether any project is an Obsidian vault: the window names the O key only then."""
    return any(is_obsidian_vault(info.root) for info in get_engine().home.projects() if not info.builtin)


def init_app(app: Flask) -> None:
    """Register the search window's blueprints, its static files and template helpers."""
    from . import cluster, documents, files, help, mindmap, projects, search, status, strip, window

    Htmx(app)
    app.register_blueprint(assets)
    for module in (search, files, documents, status, projects, help, strip, mindmap, cluster):
        app.register_blueprint(module.bp)
    app.add_template_filter(similarity_percent, "percent")
    app.add_template_filter(marked, "marked")
    app.add_template_filter(match_label, "match_label")
    app.add_template_filter(counted, "counted")
    app.add_template_filter(when, "when")
    app.add_template_filter(duration, "duration")
    app.add_template_filter(thousands, "thousands")
    app.after_request(add_security_headers)
    app.after_request(window.remember_project)

    @app.context_processor
    def globals_():
        return {"htmx_js": HTMX_JS, "doc_url": documents.doc_url, "obsidian_vaults": obsidian_vaults}
