"""The requests beside SearchRequest (request.py), one per search-like route that is not a search of spec 000/001:
the four listings of notes by metadata, agent context, documents related to one note or to a text, memory search
(spec 002), a mind map's node search and Cluster View's lit documents.

Like SearchRequest, each is valid once made: a route, the CLI or an MCP tool builds one at its door (`from_params`
for a query string, `from_body` for a JSON body), a bad value is refused there with a sentence that says what to
change, and the Engine method takes it whole. Imports nothing heavy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..errors import InvalidQuery
from .limits import (EMPTY_QUERY, MAX_LIMIT, MAX_QUERY_CHARS, MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET, check_number,
                      check_query, check_scope, check_text, parse_number, typed_field)
from .filters import check_filters

LISTINGS = ("tag", "folder", "property", "recent")  # vault_search_by_tag / _by_folder / _by_property / recent_notes
LISTING_LIMITS = {"tag": 20, "folder": 50, "property": 20, "recent": 20}
MATCHES = ("all", "any")
# spec 002's three modes, each also by its letter
MEMORY_MODES = {"frontmatter": "frontmatter", "a": "frontmatter", "content": "content", "b": "content",
                "xref": "xref", "c": "xref"}
RELATED_LIMIT = 50
DEFAULT_TOKEN_BUDGET = 2000


def _project(value) -> str | None:
    return value.strip() or None if isinstance(value, str) else value


@dataclass(frozen=True)
class ListingRequest:
    """Notes listed by metadata alone, spec 001's row for each: kind 'tag' (tags, match all|any), 'folder' (folder,
    by path), 'property' (properties, newest first) or 'recent'; filters as vault_search's narrow any of them.

    Example: ListingRequest("tag", tags=("reference",), match="any", limit=5)
    """

    kind: str
    tags: tuple[str, ...] = ()
    match: str = "all"
    folder: str = ""
    properties: dict | None = None
    filters: dict | None = None
    limit: int | None = None  # None: the kind's default (LISTING_LIMITS)
    project: str | None = None
    checked_filters: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in LISTINGS:
            raise InvalidQuery(f"Unknown listing '{self.kind}'; use one of: {', '.join(LISTINGS)}.")
        object.__setattr__(self, "limit", LISTING_LIMITS[self.kind] if self.limit is None else self.limit)
        check_number("limit", self.limit)
        object.__setattr__(self, "project", _project(self.project))
        extra: dict = {}
        if self.kind == "tag":
            tags = [self.tags] if isinstance(self.tags, str) else self.tags
            if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags) or \
                    not any(t.strip().lstrip("#") for t in tags):
                raise InvalidQuery("tags must be a list of one or more tags, such as [\"reference\"].")
            object.__setattr__(self, "tags", tuple(tags))
            if self.match not in MATCHES:
                raise InvalidQuery(f"match must be 'all' or 'any', not {self.match!r}.")
        elif self.kind == "folder":
            if not isinstance(self.folder, str):
                raise InvalidQuery("folder must be a path inside the project, such as \"Projects\" (\"\" for all "
                                   "of it).")
            extra = {"folder": self.folder}
        elif self.kind == "property":
            if not isinstance(self.properties, dict) or not self.properties:
                raise InvalidQuery("properties must name at least one frontmatter key and value, such as "
                                   "{\"status\": \"active\"}.")
            extra = {"properties": self.properties}
        filters = self.filters
        if filters is not None and not isinstance(filters, dict):
            check_filters(filters)  # says what filters must be
        object.__setattr__(self, "checked_filters", check_filters({**(filters or {}), **extra}))

    @property
    def order(self) -> str:
        """How the notes are listed: by path for a folder, newest first otherwise."""
        return "path" if self.kind == "folder" else "recent"

    @classmethod
    def from_body(cls, kind: str, body: Mapping) -> "ListingRequest":
        """Read a listing from a JSON body, refusing a field of the wrong type by its name."""
        values = {"filters": typed_field(body, "filters", dict), "limit": typed_field(body, "limit", int),
                  "project": typed_field(body, "project", str)}
        if kind == "tag":
            values.update(tags=typed_field(body, "tags", (list, str), required=True),
                          match=typed_field(body, "match", str, "all"))
        elif kind == "folder":
            values["folder"] = typed_field(body, "folder", str, required=True)
        elif kind == "property":
            values["properties"] = typed_field(body, "properties", dict, required=True)
        return cls(kind, **values)


@dataclass(frozen=True)
class ContextRequest:
    """The best passages for a task packed into a token budget (agent context), from one project or all.

    Example: ContextRequest("how is the garden watered", token_budget=1500)
    """

    query: str
    project: str | None = None
    token_budget: int = DEFAULT_TOKEN_BUDGET
    scope: str = "project"

    def __post_init__(self) -> None:
        check_query(self.query, required=True)
        check_number("token_budget", self.token_budget, MIN_TOKEN_BUDGET, MAX_TOKEN_BUDGET)
        check_scope(self.scope)
        object.__setattr__(self, "project", _project(self.project))

    @classmethod
    def from_params(cls, args: Mapping) -> "ContextRequest":
        """Read one from query-string arguments: q, project, budget, scope."""
        return cls(str(args.get("q") or ""), args.get("project") or None,
                   parse_number("budget", args.get("budget"), DEFAULT_TOKEN_BUDGET, MIN_TOKEN_BUDGET,
                                MAX_TOKEN_BUDGET), args.get("scope") or "project")


@dataclass(frozen=True)
class RelatedRequest:
    """The notes like one note: hybrid search on its own text (its title as keywords, its mean vector as meaning).

    Example: RelatedRequest("3f2c…", project="notes", limit=5)
    """

    document_id: str
    project: str | None = None
    limit: int = 8

    def __post_init__(self) -> None:
        if not isinstance(self.document_id, str) or not self.document_id.strip():
            raise InvalidQuery("Give the document's id, as search results and /api/documents list it.")
        check_number("limit", self.limit, high=RELATED_LIMIT)
        object.__setattr__(self, "project", _project(self.project))

    @classmethod
    def from_params(cls, args: Mapping, document_id: str) -> "RelatedRequest":
        return cls(document_id, args.get("project") or None, parse_number("limit", args.get("limit"), 8,
                                                                          high=RELATED_LIMIT))


@dataclass(frozen=True)
class MemoryRequest:
    """A memory search (spec 002): mode frontmatter (an object of fields), content (1-3 keywords) or xref (a note's
    id, title or path); the letters A, B and C name the modes too.

    Example: MemoryRequest("xref", "DEC-42")
    """

    mode: str
    query: object
    project: str | None = None

    def __post_init__(self) -> None:
        name = MEMORY_MODES.get(str(self.mode or "").strip().lower())
        if name is None:
            raise InvalidQuery(f"Unknown memory search mode '{self.mode}'; use frontmatter (A), content (B) or "
                               "xref (C).")
        object.__setattr__(self, "mode", name)
        if self.query is None:
            raise InvalidQuery("The request body needs a 'query' field.")
        object.__setattr__(self, "project", _project(self.project))

    @classmethod
    def from_body(cls, body: Mapping) -> "MemoryRequest":
        return cls(typed_field(body, "mode", str, required=True), body.get("query"),
                   typed_field(body, "project", str))


@dataclass(frozen=True)
class NodeSearchRequest:
    """A search of one mind map's nodes: the map at map_path, else the active map, else the project's only map.

    Example: NodeSearchRequest("when does the drip line run", map_path="Maps/Garden.mmdata")
    """

    query: str
    project: str | None = None
    map_path: str | None = None
    limit: int = 10

    def __post_init__(self) -> None:
        check_query(self.query, required=True)
        check_number("limit", self.limit)
        object.__setattr__(self, "project", _project(self.project))
        object.__setattr__(self, "map_path", _project(self.map_path))

    @classmethod
    def from_params(cls, args: Mapping) -> "NodeSearchRequest":
        return cls(str(args.get("q") or ""), args.get("project") or None, args.get("path") or None,
                   parse_number("limit", args.get("limit"), 10))


@dataclass(frozen=True)
class LightRequest:
    """The documents Cluster View lights up for a query: semantic search's (keyword's without embeddings).

    Example: LightRequest("composting", scope="all")
    """

    query: str
    project: str | None = None
    scope: str = "project"
    limit: int = 50

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise InvalidQuery(EMPTY_QUERY)
        check_query(self.query)
        check_scope(self.scope)
        check_number("limit", self.limit, high=MAX_LIMIT)
        object.__setattr__(self, "query", self.query.strip())
        object.__setattr__(self, "project", _project(self.project))

    @classmethod
    def from_params(cls, args: Mapping) -> "LightRequest":
        return cls(str(args.get("q") or ""), args.get("project") or None, args.get("scope") or "project",
                   parse_number("limit", args.get("limit"), 50))


MAX_RELATED_CHARS = 1_000_000  # of a text asked about: a longer one is read to here (its first part)
RELATED_TEXT_LIMIT = 10


@dataclass(frozen=True)
class RelatedTextRequest:
    """What in the notes relates to a text: a web page's title, address and main text, a note's text, or an agent's.
    A text longer than MAX_RELATED_CHARS is read to there (`truncated`); `exclude` names notes to leave out (their
    document ids or paths: the note the text comes from).

    Example: RelatedTextRequest("Sourdough needs a lively starter ...", title="Baking bread", limit=5)
    """

    text: str = ""
    title: str = ""
    url: str | None = None
    note: str | None = None  # a note (path, title or id) whose own text is asked about, itself left out
    project: str | None = None
    scope: str = "project"
    limit: int = RELATED_TEXT_LIMIT
    exclude: tuple[str, ...] = ()
    truncated: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        for name in ("text", "title"):
            if not isinstance(getattr(self, name), str):
                raise InvalidQuery(f"'{name}' must be a string: the page's (or note's) {name}.")
        check_text("The text", self.text)
        check_text("The title", self.title)
        if self.note is not None and (not isinstance(self.note, str) or not self.note.strip()):
            raise InvalidQuery("'note' names a note by its path, title or id, such as \"Projects/Garden plan.md\".")
        if not (self.text.strip() or self.title.strip() or self.note):
            raise InvalidQuery("Give the text to relate to your notes: a page's main text, a note's, or a passage "
                               "('text'), with its 'title' if it has one; or name a note ('note').")
        if len(self.title) > MAX_QUERY_CHARS:
            object.__setattr__(self, "title", self.title[:MAX_QUERY_CHARS])
        if len(self.text) > MAX_RELATED_CHARS:
            object.__setattr__(self, "text", self.text[:MAX_RELATED_CHARS])
            object.__setattr__(self, "truncated", True)
        if self.url is not None and (not isinstance(self.url, str) or len(self.url) > 4096):
            raise InvalidQuery("'url' must be the page's address, such as \"https://example.com/page\".")
        check_scope(self.scope)
        check_number("limit", self.limit, high=RELATED_LIMIT)
        exclude = (self.exclude,) if isinstance(self.exclude, str) else self.exclude
        if not isinstance(exclude, (list, tuple)) or not all(isinstance(e, str) for e in exclude):
            raise InvalidQuery("'exclude' must be a list of notes to leave out (their ids or paths).")
        object.__setattr__(self, "exclude", tuple(exclude))
        object.__setattr__(self, "project", _project(self.project))
        object.__setattr__(self, "url", _project(self.url))

    @classmethod
    def from_body(cls, body: Mapping) -> "RelatedTextRequest":
        """Read one from a JSON body: text, title, url, note, project, scope, limit, exclude."""
        return cls(typed_field(body, "text", str, ""), typed_field(body, "title", str, ""),
                   typed_field(body, "url", str), typed_field(body, "note", str), typed_field(body, "project", str),
                   typed_field(body, "scope", str, "project"), typed_field(body, "limit", int, RELATED_TEXT_LIMIT),
                   tuple(typed_field(body, "exclude", list, [])))
