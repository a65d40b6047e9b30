"""The MCP tools, one module per family: search.py (spec 000's modes, vault_search, get_context), listing.py (notes by
metadata, projects, tags, properties), read.py (one note), memory.py (spec 002), mindmaps.py.

Each tool is a module-level function, its schema in its signature beside it (common.py holds the argument types
they share) and its docstring the description an AI client reads. A tool is a thin call to one JSON API route
through the link to the SK Memory server, its answer sized for an agent by answers.py and typed by models.py.

ROUTES is the one table of tool -> route -> Engine method -> the row type of the route's answer
(indexer/search/answers.py); tests/test_docs.py holds docs/mcp.md and the tools to it.
"""
from __future__ import annotations

import inspect

from mcp.server.mcpserver import MCPServer

from . import listing, memory, mindmaps, read, search
from .common import MAX_ANSWER_CHARS, READ_ONLY, bound

CAP_SENTENCE = f"Answers hold at most {MAX_ANSWER_CHARS:,} characters (more: cut)."

FAMILIES = (search, listing, read, memory, mindmaps)

# tool -> (the route it calls, the Engine method behind the route, the row type of the route's answer or None)
ROUTES = {
    "hybrid_search": ("GET /api/search", "Engine.search", "NoteHit"),
    "semantic_search": ("GET /api/search", "Engine.search", "NoteHit"),
    "tag_search": ("GET /api/search", "Engine.search", "NoteHit"),
    "search_all_projects": ("GET /api/search", "Engine.search", "NoteHit"),
    "vault_search": ("POST /api/vault_search", "Engine.search", "NoteRow"),
    "vault_search_by_tag": ("POST /api/vault_search/by_tag", "Engine.list_notes", "NoteRow"),
    "vault_search_by_folder": ("POST /api/vault_search/by_folder", "Engine.list_notes", "NoteRow"),
    "vault_search_by_property": ("POST /api/vault_search/by_property", "Engine.list_notes", "NoteRow"),
    "vault_recent_notes": ("POST /api/vault_search/recent", "Engine.list_notes", "NoteRow"),
    "memory_search": ("POST /api/memory_search", "Engine.memory_search", "MemoryHit"),
    "list_projects": ("GET /api/projects", "Engine.projects", None),
    "list_tags": ("GET /api/tags", "Engine.tags", None),
    "list_properties": ("GET /api/properties", "Engine.properties", None),
    "get_document": ("GET /api/notes/info", "Engine.note_info", None),
    "read_note": ("GET /api/notes/read", "Engine.read_note", None),
    "links": ("GET /api/notes/links", "Engine.note_links", None),
    "get_context": ("GET /api/context", "Engine.context", "ContextItem"),
    "related_notes": ("POST /api/related", "Engine.related", "RelatedNote"),
    "suggest_links": ("GET /api/notes/suggestions", "Engine.link_suggestions", None),
    "mindmap_search_nodes": ("GET /api/mindmaps/search_nodes", "MindMaps.search_nodes", None),
    "mindmap_get_context": ("GET /api/mindmaps/context", "MindMaps.node_context", None),
}


def tools() -> list:
    """Every tool function, in ROUTES' order (the order a client lists them: searches first); one without a row of
    ROUTES comes last (and tests/test_docs.py fails until it has one)."""
    found = {tool.__name__: tool for family in FAMILIES for tool in family.TOOLS}
    return [found[name] for name in ROUTES if name in found] + [t for n, t in found.items() if n not in ROUTES]


def register(server: MCPServer, link) -> None:
    """Add every SK Memory tool to server; each asks the SK Memory server through link (mcp_link.ServerLink)."""
    for tool in tools():
        server.add_tool(bound(tool, link), description=inspect.cleandoc(tool.__doc__) + "\n" + CAP_SENTENCE,
                        annotations=READ_ONLY)
