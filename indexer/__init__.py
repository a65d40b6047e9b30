"""SK Memory's engine: open a data home, index its projects, search them.

    from indexer import Home, Engine, SearchRequest
    home = Home()                      # SKMEMORY_HOME, or the platform's user data folder
    home.add_project("~/Notes", "notes")
    engine = Engine(home)              # opens projects on first use (or give it a running BackgroundIndexer)
    engine.search(SearchRequest("how do I keep a server running", mode="hybrid"))

The public API is what this package exports, plus the modules `engine`, `home`, `config` and `errors`, and the
contract (`indexer/contract/`: requests, answers, rows, filters, limits and the route table); the surfaces (webapp/)
import nothing else (tests/test_architecture.py checks). Imports are lazy so that
`import indexer` stays cheap (the MCP process must start fast).
"""
from __future__ import annotations

import os
from importlib import import_module

# ONNX Runtime writes a device id and a telemetry database under ~/.cache/Microsoft at its import unless told not
# to: an offline tool writes nothing outside its own folders (issue 40 row 21). Chroma's own telemetry is off too.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

# name -> the module that defines it
_EXPORTS = {
    "Engine": ".engine",
    "Home": ".home",
    "Settings": ".config",
    "SearchRequest": ".contract.request",  # one search as every surface asks it
    "FILTER_KEYS": ".contract.filters",  # vault_search's metadata filters
    "DATE_BOUNDS": ".contract.filters",  # a date filter's bounds
    "MODES": ".contract.request",  # every search mode
    "ListingRequest": ".contract.sibling_requests",  # notes listed by tag, folder, property or recency
    "ContextRequest": ".contract.sibling_requests",  # passages packed into a token budget for an agent
    "RelatedRequest": ".contract.sibling_requests",  # the notes like one note
    "RelatedTextRequest": ".contract.sibling_requests",  # the notes related to a text (a web page, a note)
    "MemoryRequest": ".contract.sibling_requests",  # spec 002's memory search
    "NodeSearchRequest": ".contract.sibling_requests",  # a mind map's node search
    "LightRequest": ".contract.sibling_requests",  # the documents Cluster View lights up for a query
    "SKMemoryError": ".errors",
    "Project": ".store.project",  # the writer of one project, as Home.open_project returns it
    "BackgroundIndexer": ".background",  # what `serve` and `watch` start: sync, watch and embed
    "ReadRate": ".background",  # files read per second and seconds left in a sync, for progress
    "FOREGROUND": ".model.embeddings",  # work a person waits for: bulk embedding steps aside while it runs
    "PERSON_FIRST": ".search.slots",  # a search from the window: it goes before agents' searches in line
    "ensure_demo_project": ".content.demo",
    "USER_DOCS_NAME": ".content.docs",
    "ensure_user_docs": ".content.docs",
    "without_hidden": ".text.readable",  # what the preview leaves out, as the snippets do
    "shown_alt": ".text.readable",  # an image's alt text as the preview and the model are told it
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")
