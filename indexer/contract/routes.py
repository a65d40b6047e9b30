"""The one route table: each JSON API route with the request value it reads, the method behind it, the answer type
it sends and the MCP tools that answer through it.

`request` is the reader that builds the route's request value from a query string or a JSON body (the path's values
as keywords); `engine` is the method marked `@answers(name)` (indexer/engine.py, mind maps, graphs), which returns
the route's `answer`, built where the engine answers. The /api door sends an answer only when it is of its route's
type (an isinstance: webapp/api/door.py); a client decodes what it reads into the same type (`Answer.decode`). The
MCP tools reach the server by route name (`link.ask(name, payload)`), and docs/api.md and docs/mcp.md are held to
this table by tests/test_docs.py. A JSON route not in the table stands on EXEMPT with the reason
(tests/test_contract.py walks the app's url_map).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

from .answers import (Answer, ContextAnswer, DocumentsAnswer, HealthAnswer, LightAnswer, LinksAnswer,
                      ListingAnswer, MemoryAnswer, NodeContextAnswer, NodesAnswer, NoteInfoAnswer, NotePageAnswer,
                      ProjectsAnswer, PropertiesAnswer, RelatedAnswer, SearchAnswer, SuggestionsAnswer, TagsAnswer,
                      VaultAnswer)
from .request import SearchRequest
from .sibling_requests import (ContextRequest, LightRequest, ListingRequest, MemoryRequest, NodeSearchRequest,
                               RelatedRequest, RelatedTextRequest)

ANSWERED_BY: dict[str, Callable[..., Answer]] = {}  # route name -> the method marked @answers(name)


@dataclass(frozen=True)
class Route:
    """One JSON API route: `request` the reader of the value it builds (None where it reads a few plain
    arguments); `engine` the method that answers; `answer` the envelope it sends."""

    name: str  # what a client asks for by name (ServerClient.ask, the MCP link)
    method: str
    path: str
    request: Callable[..., Any] | None
    answer: type[Answer]
    tools: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def reader(self) -> str | None:
        """The request reader's name, as docs/api.md says it ('SearchRequest.from_params')."""
        if self.request is None:
            return None
        return getattr(self.request, "func", self.request).__qualname__

    @property
    def engine(self) -> Callable[..., Answer]:
        """The method that answers this route (registered when the engine's modules are imported)."""
        try:
            return ANSWERED_BY[self.name]
        except KeyError:
            raise LookupError(f"no method answers the route {self.name!r}: mark one @answers({self.name!r}) "
                              "(indexer/engine.py)") from None


def answers(*names: str):
    """Mark the method that answers these routes of the table: `@answers("search")` above `Engine.search_hits`."""
    def mark(method):
        for name in names:
            if name not in ROUTES:
                raise LookupError(f"@answers({name!r}): the route table has no route {name!r}")
            ANSWERED_BY[name] = method
        return method
    return mark


def _listing(kind: str) -> Callable[[Any], ListingRequest]:
    return partial(ListingRequest.from_body, kind)


ROUTES: dict[str, Route] = {r.name: r for r in (
    Route("search", "GET", "/api/search", SearchRequest.from_params, SearchAnswer,
          ("hybrid_search", "semantic_search", "tag_search", "search_all_projects")),
    Route("vault_search", "POST", "/api/vault_search", SearchRequest.from_body, VaultAnswer, ("vault_search",)),
    Route("by_tag", "POST", "/api/vault_search/by_tag", _listing("tag"), ListingAnswer, ("vault_search_by_tag",)),
    Route("by_folder", "POST", "/api/vault_search/by_folder", _listing("folder"), ListingAnswer,
          ("vault_search_by_folder",)),
    Route("by_property", "POST", "/api/vault_search/by_property", _listing("property"), ListingAnswer,
          ("vault_search_by_property",)),
    Route("recent", "POST", "/api/vault_search/recent", _listing("recent"), ListingAnswer, ("vault_recent_notes",)),
    Route("memory_search", "POST", "/api/memory_search", MemoryRequest.from_body, MemoryAnswer, ("memory_search",)),
    Route("projects", "GET", "/api/projects", None, ProjectsAnswer, ("list_projects",)),
    Route("health", "GET", "/api/health", None, HealthAnswer, ("list_projects",)),
    Route("tags", "GET", "/api/tags", None, TagsAnswer, ("list_tags",)),
    Route("properties", "GET", "/api/properties", None, PropertiesAnswer, ("list_properties",)),
    Route("note_info", "GET", "/api/notes/info", None, NoteInfoAnswer, ("get_document",)),
    Route("read_note", "GET", "/api/notes/read", None, NotePageAnswer, ("read_note",)),
    Route("links", "GET", "/api/notes/links", None, LinksAnswer, ("links",)),
    Route("context", "GET", "/api/context", ContextRequest.from_params, ContextAnswer, ("get_context",)),
    Route("related_text", "POST", "/api/related", RelatedTextRequest.from_body, RelatedAnswer, ("related_notes",)),
    Route("suggestions", "GET", "/api/notes/suggestions", None, SuggestionsAnswer, ("suggest_links",)),
    Route("search_nodes", "GET", "/api/mindmaps/search_nodes", NodeSearchRequest.from_params, NodesAnswer,
          ("mindmap_search_nodes",)),
    Route("node_context", "GET", "/api/mindmaps/context", None, NodeContextAnswer, ("mindmap_get_context",)),
    Route("related", "GET", "/api/documents/<document_id>/related", RelatedRequest.from_params, SearchAnswer),
    Route("documents", "GET", "/api/documents", None, DocumentsAnswer),
    Route("light", "GET", "/api/graph/search", LightRequest.from_params, LightAnswer),
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

