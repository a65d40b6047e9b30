"""One search request, checked once: what every surface (API, window, Power Strip, CLI, its server client, MCP)
builds and hands to `Engine.search`, and how it crosses the HTTP hop (`to_params` / `from_params`).

A request is valid once made: a bad mode, limit, scope, filter, date or query is refused here with a sentence that
says what to change, before any search runs. Imports nothing heavy, so the CLI and the MCP process can build one
without loading the engine.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from ..errors import InvalidQuery
from .filters import check_filters
from .limits import (EMPTY_QUERY, MAX_LIMIT, MAX_SNIPPET_TOKENS, check_number, check_query, check_scope,
                      parse_bool, parse_number, typed_field)

# hybrid, semantic, recency, keyword and tag are spec 000's modes (chunk hits); vault is spec 001's vault_search
# (note hits, with metadata filters).
MODES = ("hybrid", "semantic", "recency", "keyword", "tag", "vault")
GROUPS = ("chunk", "document")
MAX_DOCUMENT_ID = 200


@dataclass(frozen=True)
class SearchRequest:
    """A search as asked: the words, the mode, where to look, what narrows it, how many and in what shape.

    Example: SearchRequest("keep a process running", mode="semantic", tags_all=("linux",), limit=5)
    """

    query: str = ""
    mode: str = "hybrid"
    project: str | None = None
    scope: str = "project"  # or "all": every project, merged by score
    tags_all: tuple[str, ...] = ()
    tags_any: tuple[str, ...] = ()
    filters: dict | None = None  # any mode (GET /api/search takes them as JSON): FILTER_KEYS
    limit: int = 20
    group: bool = False  # one hit per document (note hits) rather than per chunk
    explain: bool = False  # each hit says why it ranked
    explain_document: str | None = None  # where this document ranked, or what kept it out
    snippet_tokens: int = 30  # vault
    include_leading_callout: bool = False  # vault
    correct: bool = True  # a word that matches nothing is corrected against the notes' own words (spelling.py)
    checked_filters: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidQuery(f"Unknown search mode '{self.mode}'; use one of: {', '.join(MODES)}.")
        if self.query is None:
            object.__setattr__(self, "query", "")
        if not isinstance(self.query, str):
            raise InvalidQuery("The query must be text.")
        check_query(self.query)
        check_number("limit", self.limit)
        check_scope(self.scope)
        object.__setattr__(self, "project", self.project or None)
        object.__setattr__(self, "tags_all", _tags("tags_all", self.tags_all))
        object.__setattr__(self, "tags_any", _tags("tags_any", self.tags_any))
        document = (self.explain_document or "").strip()[:MAX_DOCUMENT_ID] or None
        object.__setattr__(self, "explain_document", document)
        if document and self.scope == "all":
            raise InvalidQuery("explain_document looks inside one project; give its project instead of searching "
                               "all of them.")
        if self.mode == "vault":
            if not self.query.strip():
                raise InvalidQuery(EMPTY_QUERY[:-1] + "; to list notes by metadata alone, list them by tag, folder or "
                                   "property, or the recent ones (MCP: vault_search_by_tag, vault_search_by_folder, "
                                   "vault_search_by_property, vault_recent_notes).")
            check_number("snippet_tokens", self.snippet_tokens, high=MAX_SNIPPET_TOKENS)
            if self.scope == "all":
                raise InvalidQuery("vault_search looks inside one project; give its project (scope 'all' is for "
                                   "the other modes).")
        object.__setattr__(self, "checked_filters", check_filters(self.filters))

    @property
    def tagged(self) -> bool:
        """Whether tags narrow the search."""
        return bool(self.tags_all or self.tags_any)

    def but(self, **changes) -> "SearchRequest":
        """The same request with some fields changed (and checked again)."""
        return replace(self, **changes)

    # --- the HTTP hop: GET /api/search takes the query string, POST /api/vault_search the JSON body ------------

    def to_params(self) -> dict[str, Any]:
        """The request as the API receives it: query-string pairs (lists repeat) for spec 000's modes, the JSON
        body's fields for vault."""
        if self.mode == "vault":
            body = {"query": self.query, "filters": self.filters, "limit": self.limit,
                    "snippet_tokens": self.snippet_tokens, "include_leading_callout": self.include_leading_callout,
                    "project": self.project, "explain": self.explain, "explain_document": self.explain_document,
                    "correct": None if self.correct else False}
            return {k: v for k, v in body.items() if v is not None}
        params: dict[str, Any] = {"q": self.query, "mode": self.mode, "scope": self.scope, "limit": self.limit}
        optional = {"project": self.project, "tags_all": list(self.tags_all) or None,
                    "tags_any": list(self.tags_any) or None, "group": "document" if self.group else None,
                    "explain": "true" if self.explain else None, "explain_document": self.explain_document,
                    "correct": None if self.correct else "false",
                    "filters": json.dumps(self.filters, separators=(",", ":")) if self.filters else None}
        return {**params, **{k: v for k, v in optional.items() if v is not None}}

    @classmethod
    def from_params(cls, args: Mapping, **fixed) -> "SearchRequest":
        """Read a request from query-string arguments (a mapping, or one with getlist such as Flask's)."""
        def one(name: str, default: str = "") -> str:
            value = args.get(name, default)
            if isinstance(value, (list, tuple)):
                value = value[0] if value else default
            return str(value if value is not None else default).strip()

        def many(name: str) -> tuple[str, ...]:
            raw = args.getlist(name) if hasattr(args, "getlist") else args.get(name) or []
            values: list[str] = []
            for item in [raw] if isinstance(raw, str) else raw:
                values += [v.strip() for v in str(item).split(",") if v.strip()]
            return tuple(values)

        group = one("group", "chunk").lower() or "chunk"
        if group not in GROUPS:
            raise InvalidQuery(f"group must be 'chunk' or 'document', not '{group[:40]}'.")
        values = dict(query=str(args.get("q") or ""), mode=one("mode", "hybrid") or "hybrid",
                      project=one("project") or None, scope=one("scope", "project") or "project",
                      tags_all=many("tags_all"), tags_any=many("tags_any"),
                      limit=parse_number("limit", one("limit"), 20), group=group == "document",
                      explain=parse_bool("explain", one("explain")), explain_document=one("explain_document") or None,
                      correct=parse_bool("correct", one("correct"), True), filters=_json_filters(one("filters")))
        return cls(**{**values, **fixed})

    @classmethod
    def from_body(cls, body: Mapping, **fixed) -> "SearchRequest":
        """Read a vault_search request from a JSON body, refusing a field of the wrong type by its name."""
        values = dict(query=typed_field(body, "query", str, required=True),
                      filters=typed_field(body, "filters", dict), limit=typed_field(body, "limit", int, 20),
                      snippet_tokens=typed_field(body, "snippet_tokens", int, 30),
                      include_leading_callout=typed_field(body, "include_leading_callout", bool, False),
                      project=typed_field(body, "project", str), explain=typed_field(body, "explain", bool, False),
                      explain_document=typed_field(body, "explain_document", str),
                      correct=typed_field(body, "correct", bool, True), mode="vault")
        return cls(**{**values, **fixed})

    def describe(self) -> dict:
        """Every field, as JSON would show it (for logs and errors)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}


def _json_filters(raw: str) -> dict | None:
    """The filters of a query string: one JSON object, as vault_search's body takes it."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise InvalidQuery('filters must be a JSON object, such as filters={"folder": "Projects"}.') from None


def _tags(name: str, tags) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = [tags]
    if not all(isinstance(t, str) for t in tags):
        raise InvalidQuery(f"{name} must be a list of tags, such as [\"project\"].")
    return tuple(tags)


__all__ = ["SearchRequest", "MODES", "MAX_LIMIT", "check_filters"]
