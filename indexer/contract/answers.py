"""The answers' envelopes, one type per kind of answer: what a route sends around its rows (rows.py).

Each envelope is built by the method that answers its route (routes.py: `@answers`), sent by the /api door only
when it is of its route's type (webapp/api/door.py), and decoded by a client into the same type, which checks it the
way a row is (`problems(answer)`: missing and unknown fields, wrong types, rows of the wrong type).

`total`, `total_is_exact` and `more`, in every list answer and in one meaning (`counted`): `total` every match as
far as counted; exact where the answer counts them all (vault_search, the listings, documents, properties, node
search), and where a ranking stops one row past the limit (the searches, related, tags, memory) the rows held and
that one, not exact when it was found; `more` whether rows past this list matched (context and links say it as
`truncated` too). The engine ranks the row past the limit: no surface works it out (issue 60).
`similarity` is spec 000's alias of `score` on search rows only (rows.py); a related note's `similarity` is its
cosine, documented there.
"""
from __future__ import annotations

from typing import Any, ClassVar

from .rows import (ChunkHit, ContextItem, DocumentRow, MemoryHit, NoteHit, NoteRow, RelatedNote, Row)


class Answer(Row):
    """An envelope: its fields, the optional ones in EXTRA, each checked like a row's."""


def counted(held: list, more: bool, total: int | None = None) -> dict:
    """Every list answer's count, in one meaning: `total` every match as far as counted (`total_is_exact` false
    where the counting stopped one past the limit), `more` whether rows past this list matched."""
    if total is not None:  # every match was counted
        return {"total": total, "total_is_exact": True, "more": more}
    return {"total": len(held) + more, "total_is_exact": not more, "more": more}


SEARCH_EXTRA: dict[str, Any] = {
    "project": str, "other_projects": list[str], "grouped": str, "matching_documents": int, "scope": str,
    "projects": list[str], "keyword_only_projects": list[str], "threshold": float,
    "weaker_matches": list[ChunkHit] | list[NoteHit], "substring_notice": str, "semantic_reason": str,
    "explain_document": dict, "corrected": Any, "spelling": Any, "notice": str, "rebuilding_projects": list[str],
    "did_you_mean": dict, "across": list[dict], "empty_reason": str,
}


class SearchAnswer(Answer):
    """Spec 000's search (GET /api/search; GET /api/documents/<id>/related, with document_id): chunk hits, or note
    hits with group=document; total: the rows it holds."""

    EXTRA: ClassVar[dict[str, Any]] = {**SEARCH_EXTRA, "document_id": str}
    query: str
    mode: str
    semantic_available: bool
    total: int
    total_is_exact: bool
    more: bool
    limit: int
    results: list[ChunkHit] | list[NoteHit]


class VaultAnswer(Answer):
    """Spec 001's vault_search: notes by text and filters; total: every note that matched."""

    EXTRA: ClassVar[dict[str, Any]] = {"project": str, "other_projects": list[str], "semantic_reason": str,
                                       "explain_document": dict, "corrected": Any, "spelling": Any,
                                       "notice": str, "did_you_mean": dict, "across": list[dict],
                                       "empty_reason": str}
    results: list[NoteRow]
    total: int
    total_is_exact: bool
    more: bool
    search_mode: str
    reranked: bool


class ListingAnswer(Answer):
    """Spec 001's listings (by tag, folder, property, recent): total: every note the listing holds."""

    results: list[NoteRow]
    total: int
    total_is_exact: bool
    more: bool


class DocumentsAnswer(Answer):
    """The Files listing (GET /api/documents): total: every document that matched, offset: where this page starts."""

    project: str
    total: int
    total_is_exact: bool
    more: bool
    offset: int
    documents: list[DocumentRow]


class ContextAnswer(Answer):
    """Passages packed into a token budget (GET /api/context)."""

    EXTRA: ClassVar[dict[str, Any]] = {"project": str, "projects": list[str], "semantic_reason": str,
                                       "other_projects": list[str]}
    query: str
    token_budget: int
    tokens_used: int
    truncated: bool
    more: bool  # the same as truncated: a passage that ranked did not fit the budget
    semantic_available: bool
    items: list[ContextItem]


class RelatedAnswer(Answer):
    """The notes related to a text or a note (POST /api/related); total: the rows it holds; more: the limit cut
    the list (the engine ranks one row past it to tell)."""

    EXTRA: ClassVar[dict[str, Any]] = {"url": str | None, "semantic_reason": str, "project": str,
                                       "projects": list[str]}
    title: str
    passages: int
    embedded_passages: int
    semantic_available: bool
    rare_words: dict
    total: int
    limit: int
    results: list[RelatedNote]
    truncated: bool
    total_is_exact: bool
    more: bool


class MemoryAnswer(Answer):
    """Spec 002's memory_search; total: the rows it holds, omitted: the rows left out to stay under its tokens."""

    EXTRA: ClassVar[dict[str, Any]] = {"omitted": int, "tokens": int, "notice": str, "note": str}
    mode: str
    query: Any  # a frontmatter search's query is an object
    project: str
    results: list[MemoryHit]
    total: int
    total_is_exact: bool
    more: bool


class NodesAnswer(Answer):
    """A mind map's node search (GET /api/mindmaps/search_nodes); total: the rows it holds."""

    EXTRA: ClassVar[dict[str, Any]] = {"semantic_reason": str, "message": str | None, "map": Any,
                                       "index_stale": bool, "index_state": str, "pending_embeddings": int,
                                       "indexed_revision": int | None, "live_revision": int | None,
                                       "project": str, "path": str | None, "document_id": str | None}
    query: str
    semantic_available: bool
    total: int
    total_is_exact: bool
    more: bool
    limit: int
    results: list[dict]


class LightAnswer(Answer):
    """The documents Cluster View lights up for a query (GET /api/graph/search)."""

    EXTRA: ClassVar[dict[str, Any]] = {"semantic_reason": str}
    query: str
    mode: str
    scope: str
    project: str | None
    limit: int
    semantic_available: bool
    notice: str | None
    matches: list[dict]


class TagsAnswer(Answer):
    """A project's tags with how many notes carry each (GET /api/tags)."""

    project: str
    total: int
    total_is_exact: bool
    more: bool
    tags: list[dict]


class PropertiesAnswer(Answer):
    """The frontmatter keys notes use (GET /api/properties); total: every key."""

    project: str
    total: int
    total_is_exact: bool
    more: bool
    properties: list[dict]


class ProjectsAnswer(Answer):
    """The projects (GET /api/projects)."""

    projects: list[dict]


class HealthAnswer(Answer):
    """Whether the server answers, for which data folder, and the model's state (GET /api/health)."""

    status: str
    app: str
    home: str
    port: int
    embeddings: str
    pid: int


class NoteInfoAnswer(Answer):
    """One note without its text (GET /api/notes/info): metadata, frontmatter, outline, link counts."""

    OPEN: ClassVar[bool] = True
    path: str
    title: str
    id: str
    outline: list[dict]
    links: int
    backlinks: int


class NotePageAnswer(Answer):
    """A page of a note's text (GET /api/notes/read): next_offset None at the end."""

    OPEN: ClassVar[bool] = True
    path: str
    text: str
    next_offset: int | None


class LinksAnswer(Answer):
    """A note's links both ways (GET /api/notes/links), each list cut at the limit (truncated says so)."""

    OPEN: ClassVar[bool] = True
    path: str
    truncated: bool
    more: bool  # the same as truncated


class SuggestionsAnswer(Answer):
    """The links a note could have (GET /api/notes/suggestions)."""

    OPEN: ClassVar[bool] = True
    path: str
    style: str
    unlinked_mentions: list[dict]
    close_in_meaning: list[dict]


class NodeContextAnswer(Answer):
    """One mind-map node with its neighbourhood (GET /api/mindmaps/context); never its private notes."""

    OPEN: ClassVar[bool] = True
    map: dict
    index_state: str
    index_stale: bool
    node: dict
    ancestors: list[dict]
    children: list[dict]
    siblings: list[dict]
    relationships: list[dict]


ANSWERS = (SearchAnswer, VaultAnswer, ListingAnswer, DocumentsAnswer, ContextAnswer, RelatedAnswer, MemoryAnswer,
           NodesAnswer, LightAnswer, TagsAnswer, PropertiesAnswer, ProjectsAnswer, HealthAnswer, NoteInfoAnswer,
           NotePageAnswer, LinksAnswer, SuggestionsAnswer, NodeContextAnswer)
