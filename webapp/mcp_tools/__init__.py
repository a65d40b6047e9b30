"""The MCP tools, one module per family: search.py (spec 000's modes, vault_search, get_context), listing.py (notes by
metadata, projects, tags, properties), read.py (one note), memory.py (spec 002), mindmaps.py.

Each tool is a module-level function, its schema in its signature beside it (common.py holds the argument types
they share) and its docstring the description an AI client reads. A tool is a thin call to one JSON API route
through the link to the SK Memory server, its answer sized for an agent by answers.py and typed by models.py.

Which routes each tool asks is read from the route table (indexer/contract/routes.py), with each route's Engine
method and answer type; tests/test_docs.py holds docs/mcp.md and the tools to it.
"""
from __future__ import annotations

import inspect

from mcp.server.mcpserver import MCPServer

from indexer.contract.routes import ROUTES

from . import listing, memory, mindmaps, read, search
from .common import MAX_ANSWER_CHARS, READ_ONLY, bound

CAP_SENTENCE = f"Answers hold at most {MAX_ANSWER_CHARS:,} characters (more: cut)."

FAMILIES = (search, listing, read, memory, mindmaps)

# tool -> the routes it asks, in the route table's order (indexer/contract/routes.py: each route's request, Engine
# method and answer type); the order a client lists the tools in: searches first.
TOOL_ROUTES: dict[str, tuple[str, ...]] = {}
for _route in ROUTES.values():
    for _tool in _route.tools:
        TOOL_ROUTES[_tool] = TOOL_ROUTES.get(_tool, ()) + (_route.name,)


def tools() -> list:
    """Every tool function, in TOOL_ROUTES' order (the order a client lists them: searches first); one that no
    route names comes last (and tests/test_contract.py fails until a route does)."""
    found = {tool.__name__: tool for family in FAMILIES for tool in family.TOOLS}
    return [found[name] for name in TOOL_ROUTES if name in found] + [t for n, t in found.items()
                                                                     if n not in TOOL_ROUTES]


def register(server: MCPServer, link) -> None:
    """Add every SK Memory tool to server; each asks the SK Memory server through link (mcp_link.ServerLink)."""
    for tool in tools():
        server.add_tool(bound(tool, link), description=inspect.cleandoc(tool.__doc__) + "\n" + CAP_SENTENCE,
                        annotations=READ_ONLY)
