"""The shapes of the MCP tools' answers as pydantic models: the tools publish them as output schemas.

They say what an agent needs to read an answer, and no more: tools/list is read into the agent's context on every
session. `extra="allow"` lets the fields an answer carries beyond these (a chunk hit's explain, a note's warnings)
pass through; the SDK checks each answer against its model.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Shape(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- searches and listings --------------------------------------------------------------------------------------

class NotesAnswer(Shape):
    """Search rows (detail='chunks': each passage with every field of the JSON API instead)."""

    query: str
    mode: str
    semantic_available: bool = Field(description="False: answered by keyword (semantic_reason says why).")
    project: str | None = Field(None, description="The project searched (absent when every project was).")
    other_projects: list[str] | None = Field(None, description="Projects not searched, when none was named.")
    results: list[dict[str, Any]] = Field(description="CompactRows: path, title, score, heading, lines, snippet.")
    more: bool | None = Field(None, description="True when the limit cut the list.")


class CompactRelated(Shape):
    """Notes related to a text or a note, best first."""

    semantic_available: bool = Field(description="False: found by the text's words alone (semantic_reason says why).")
    results: list[dict[str, Any]] = Field(description="path, title, score, why, lines, snippet; saved: true when the "
                                                      "note names the page's address.")
    more: bool = Field(description="True when the limit cut the list.")


class CompactSuggestions(Shape):
    """The links a note could have, each with the link to paste in the vault's style."""

    path: str
    style: str = Field(description="wikilink or markdown: how this vault writes its links.")
    unlinked_mentions: list[dict[str, Any]] = Field(description="Notes this one names without a link: path, link, "
                                                                "line, snippet of the line.")
    close_in_meaning: list[dict[str, Any]] = Field(description="Notes close in meaning that no link joins to it: "
                                                               "path, link, why.")


class ListAnswer(Shape):
    results: list[dict[str, Any]]
    more: bool = Field(description="True when the limit cut the list.")
    total: int | None = Field(None, description="How many matched before the limit.")


class CompactProjects(Shape):
    projects: list[dict[str, Any]] = Field(description="name, notes, meaning_search_ready, passages_left_to_embed.")
    model: str = Field(description="The embedding model: ready, not loaded (loading) or unavailable.")


# --- one note -------------------------------------------------------------------------------------------------

class NoteInfo(Shape):
    path: str
    title: str
    id: str
    outline: list[dict[str, Any]] = Field(description="heading, level, line; at most 60 (outline_total counts all).")
    links: int = Field(description="How many links it has (the links tool lists them).")
    backlinks: int


class NotePage(Shape):
    path: str
    text: str
    next_offset: int | None = Field(description="Pass as offset for the next page; null at the end.")
    lines: list[int] | None = Field(None, description="The file lines this page holds.")


class CompactLinks(Shape):
    path: str
    more: bool = Field(description="True when a list was cut at the limit (its _total counts all).")


# --- spec 002 and agent context -------------------------------------------------------------------------------

class MemoryResponse(Shape):
    mode: str
    results: list[dict[str, Any]] = Field(description="file_path, id (what xref takes), title, relevance, excerpt.")
    total: int
    more: bool = Field(description="True when matches were left out (omitted: how many for size).")


class ContextResponse(Shape):
    query: str
    tokens_used: int
    items: list[dict[str, Any]] = Field(description="Passages with path, heading, lines, text (and project with "
                                                    "scope 'all').")
    more: bool = Field(description="True when a passage that ranked did not fit the budget.")
    semantic_available: bool


# --- mind maps ------------------------------------------------------------------------------------------------

class MapState(Shape):
    map: dict[str, Any] = Field(description="project, path, title, revision of the map searched.")
    index_state: str = Field(description="current, stale, missing or older_format.")
    index_stale: bool = Field(description="True unless current: results may miss the newest text.")


class MindMapSearchResponse(MapState):
    results: list[dict[str, Any]] = Field(description="node_id, title, node_path (root to node), score, snippet.")
    more: bool = Field(description="True when the limit cut the list.")


class MindMapContextResponse(MapState):
    node: dict[str, Any] = Field(description="node_id, title, body, tags, node_path, attachments.")
    ancestors: list[dict[str, Any]]
    children: list[dict[str, Any]]
    siblings: list[dict[str, Any]]
    relationships: list[dict[str, Any]]
