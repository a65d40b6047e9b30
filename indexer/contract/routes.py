"""The one route table: each JSON API route with the request value it reads, the Engine method behind it, the
answer type it sends and the MCP tools that answer through it.

The /api door checks every answer against its route's type (`check_answer`: on in every test run, and wherever
SKMEMORY_CHECK_ANSWERS=1), the server client checks what it decodes, the MCP tools reach the server by route name
(`link.ask(name, payload)`), and docs/api.md and docs/mcp.md are held to this table by tests/test_docs.py. A JSON
route not in the table stands on EXEMPT with the reason (tests/test_contract.py walks the app's url_map).
"""
from __future__ import annotations

from dataclasses import dataclass

from .answers import (Answer, ContextAnswer, DocumentsAnswer, HealthAnswer, LightAnswer, LinksAnswer,
                      ListingAnswer, MemoryAnswer, NodeContextAnswer, NodesAnswer, NoteInfoAnswer, NotePageAnswer,
                      ProjectsAnswer, PropertiesAnswer, RelatedAnswer, SearchAnswer, SuggestionsAnswer, TagsAnswer,
                      VaultAnswer)


@dataclass(frozen=True)
class Route:
    """One JSON API route: `request` the value (and how it is read) that the route builds, None where it reads a
    few plain arguments; `engine` the method that answers; `answer` the envelope it sends."""

    name: str  # what a client asks for by name (ServerClient.ask, the MCP link)
    method: str
    path: str
    request: str | None
    engine: str
    answer: type[Answer]
    tools: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


LISTING = "ListingRequest.from_body"
ROUTES: dict[str, Route] = {r.name: r for r in (
    Route("search", "GET", "/api/search", "SearchRequest.from_params", "Engine.search", SearchAnswer,
          ("hybrid_search", "semantic_search", "tag_search", "search_all_projects")),
    Route("vault_search", "POST", "/api/vault_search", "SearchRequest.from_body", "Engine.search", VaultAnswer,
          ("vault_search",)),
    Route("by_tag", "POST", "/api/vault_search/by_tag", LISTING, "Engine.list_notes", ListingAnswer,
          ("vault_search_by_tag",)),
    Route("by_folder", "POST", "/api/vault_search/by_folder", LISTING, "Engine.list_notes", ListingAnswer,
          ("vault_search_by_folder",)),
    Route("by_property", "POST", "/api/vault_search/by_property", LISTING, "Engine.list_notes", ListingAnswer,
          ("vault_search_by_property",)),
    Route("recent", "POST", "/api/vault_search/recent", LISTING, "Engine.list_notes", ListingAnswer,
          ("vault_recent_notes",)),
    Route("memory_search", "POST", "/api/memory_search", "MemoryRequest.from_body", "Engine.memory_search",
          MemoryAnswer, ("memory_search",)),
    Route("projects", "GET", "/api/projects", None, "Engine.projects", ProjectsAnswer, ("list_projects",)),
    Route("health", "GET", "/api/health", None, "Engine.health", HealthAnswer, ("list_projects",)),
    Route("tags", "GET", "/api/tags", None, "Engine.tags", TagsAnswer, ("list_tags",)),
    Route("properties", "GET", "/api/properties", None, "Engine.properties", PropertiesAnswer,
          ("list_properties",)),
    Route("note_info", "GET", "/api/notes/info", None, "Engine.note_info", NoteInfoAnswer, ("get_document",)),
    Route("read_note", "GET", "/api/notes/read", None, "Engine.read_note", NotePageAnswer, ("read_note",)),
    Route("links", "GET", "/api/notes/links", None, "Engine.note_links", LinksAnswer, ("links",)),
    Route("context", "GET", "/api/context", "ContextRequest.from_params", "Engine.context", ContextAnswer,
          ("get_context",)),
    Route("related_text", "POST", "/api/related", "RelatedTextRequest.from_body", "Engine.related_text",
          RelatedAnswer, ("related_notes",)),
    Route("suggestions", "GET", "/api/notes/suggestions", None, "Engine.link_suggestions", SuggestionsAnswer,
          ("suggest_links",)),
    Route("search_nodes", "GET", "/api/mindmaps/search_nodes", "NodeSearchRequest.from_params",
          "MindMaps.search_nodes", NodesAnswer, ("mindmap_search_nodes",)),
    Route("node_context", "GET", "/api/mindmaps/context", None, "MindMaps.node_context", NodeContextAnswer,
          ("mindmap_get_context",)),
    Route("related", "GET", "/api/documents/<document_id>/related", "RelatedRequest.from_params", "Engine.related",
          SearchAnswer),
    Route("documents", "GET", "/api/documents", None, "Engine.documents", DocumentsAnswer),
    Route("light", "GET", "/api/graph/search", "LightRequest.from_params", "ForgeGraphs.search", LightAnswer),
)}
BY_KEY = {route.key: route for route in ROUTES.values()}

# The JSON routes without a row, each with why: the window's own and the data folder's management, whose answers
# only the window and the CLI read (docs/api.md describes them).
EXEMPT = {
    "GET /api/documents/<document_id>": "a whole document for the window's preview: its fields follow the file",
    "GET /api/status": "the indexer's progress, per project: read by the Status page and `skmemory status`",
    "POST /api/embedding": "pause or resume embedding: one flag back",
    "POST /api/projects": "add a project: the project's record",
    "POST /api/projects/<name>/rename": "rename a project: the project's record",
    "DELETE /api/projects/<name>": "forget a project: the project's record",
    "POST /api/projects/<name>/reindex": "queue a re-read: the sync's counts",
    "GET /api/graph": "Cluster View's whole graph: nodes, edges and clusters for the window's canvas",
    "GET /api/mindmaps": "the mind maps of a project, for the window's picker",
    "GET /api/mindmaps/map": "a whole mind map for the editor",
    "GET /api/mindmaps/active": "the map open in the window",
    "POST /api/mindmaps/active": "open a map in the window",
    "POST /api/mindmaps/save": "save a map from the editor",
}


def answer_problems(key: str, answer) -> list[str]:
    """What is wrong with an answer of the route `key` ('GET /api/search'); [] for an exempt route."""
    route = BY_KEY.get(key)
    if route is None:
        return [] if key in EXEMPT else [f"{key} has no row in indexer/contract/routes.py (nor an exemption)"]
    return route.answer.problems(answer)
