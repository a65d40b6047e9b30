"""How the web layer reaches the engine: one Engine per app, given by `serve` or made on first use."""
from __future__ import annotations

import threading

from flask import current_app

_lock = threading.Lock()


def get_engine():
    """Return the app's Engine (created without an indexer thread when `serve` did not provide one)."""
    app = current_app
    engine = app.config.get("ENGINE") or app.extensions.get("skmemory_engine")
    if engine is None:
        with _lock:
            engine = app.extensions.get("skmemory_engine")
            if engine is None:
                from indexer.engine import Engine
                from indexer.home import Home

                engine = Engine(Home())
                app.extensions["skmemory_engine"] = engine
    return engine
