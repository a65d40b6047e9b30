"""SK Memory's engine: open a data home, index its projects, search them.

    from indexer import Home, Engine
    home = Home()                      # SKMEMORY_HOME, or the platform's user data folder
    home.add_project("~/Notes", "notes")
    engine = Engine(home)              # opens projects on first use (or give it a running BackgroundIndexer)
    engine.search("how do I keep a server running", mode="hybrid")

Imports are lazy so that `import indexer` stays cheap (the MCP process must start fast).
"""
from __future__ import annotations

__all__ = ["Engine", "Home", "Settings", "SKMemoryError"]


def __getattr__(name: str):
    if name == "Engine":
        from .engine import Engine

        return Engine
    if name == "Home":
        from .home import Home

        return Home
    if name == "Settings":
        from .config import Settings

        return Settings
    if name == "SKMemoryError":
        from .errors import SKMemoryError

        return SKMemoryError
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")
