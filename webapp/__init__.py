"""The web surfaces of SK Memory: the Flask app factory."""
from __future__ import annotations

import os


def create_app(test_config: dict | None = None):
    """Build the app; never starts threads, watchers or models (the `serve` command does that)."""
    from flask import Flask  # imported here so `skmemory mcp`, which needs no Flask, starts fast

    app = Flask(__name__, static_folder=None)
    app.config.from_mapping(
        SKMEMORY_PORT=int(os.environ.get("SKMEMORY_PORT", 8765)),
        ENGINE=None,  # an indexer.engine.Engine; created lazily (without an indexer thread) when not given
        MAX_CONTENT_LENGTH=4 * 1024 * 1024,  # a page asked about (/api/related) reads its first 1,000,000 characters
        JSON_SORT_KEYS=False,
    )
    if test_config:
        app.config.from_mapping(test_config)

    from indexer.errors import SKMemoryError

    from . import api, security, ui
    from .errors import plain_answer

    security.init_app(app)
    _foreground(app)
    app.register_error_handler(SKMemoryError, plain_answer)  # blueprints with pages or JSON answer in their own way
    app.register_blueprint(api.bp)  # /api, with its children: searches, mind maps, the Forge Graph
    ui.init_app(app)  # the search window's pages, the Mind Map page and the Cluster View page
    return app


def _foreground(app) -> None:
    """Every request is work a person or an agent waits for: bulk embedding steps aside while one is answered
    (indexer.model.embeddings.Foreground). A page of the window, or the Chrome extension's popup and side panel, is
    a person's: its search goes before agents' in the line of searches (indexer/search/slots.py)."""
    from flask import g, request

    from indexer import FOREGROUND, PERSON_FIRST
    from webapp.security import from_extension

    @app.before_request
    def enter() -> None:
        FOREGROUND.__enter__()
        g.skm_foreground = True
        if not request.path.startswith("/api/") or from_extension(app):  # a person waits, not a program
            g.skm_person = PERSON_FIRST.set(True)

    @app.teardown_request
    def leave(_exc) -> None:
        if g.pop("skm_foreground", False):
            FOREGROUND.__exit__(None, None, None)
        if (token := g.pop("skm_person", None)) is not None:
            PERSON_FIRST.reset(token)
