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
        MAX_CONTENT_LENGTH=1024 * 1024,
        JSON_SORT_KEYS=False,
    )
    if test_config:
        app.config.from_mapping(test_config)

    from . import api, mindmap_api, security, ui
    from .ui import mindmap as mindmap_ui

    security.init_app(app)
    app.register_blueprint(api.bp)
    app.register_blueprint(mindmap_api.bp)
    ui.init_app(app)
    app.register_blueprint(mindmap_ui.bp)  # the Mind Map page
    from . import graph_api
    from .ui import cluster as cluster_ui
    app.register_blueprint(graph_api.bp)  # the Forge Graph of Cluster View
    app.register_blueprint(cluster_ui.bp)  # the Cluster View page
    return app
