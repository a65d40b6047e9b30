"""The shapes of the JSON API's answers as pydantic models: the MCP tools publish them as output schemas.

Each model mirrors one API response field for field; `extra="allow"` lets a field added to the API later pass
through unchanged. The MCP server never rebuilds a response from these models, it validates the API's own dict
against them, so what a tool returns is exactly what the JSON API returns.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

HIGHLIGHTS = "Where the matches are in snippet: [start, end) character offsets, end exclusive."
EXPLAIN = ("With explain=true: why it ranked. legs: each leg's {found, rank (1-based), raw score or similarity, why "
           "when not found}; score and rule: the fused score written out; matched_words.")
EXPLAIN_DOCUMENT = ("With explain_document=ID: where that document ranked in each leg, its final rank and whether it "
                    "was returned, or which filter, threshold or limit kept it out (verdict: one sentence).")


CORRECTED = ("Present when a word matched nothing and was corrected against the notes' own words: {original, query, "
             "words: {typed: corrected}}; the search ran with `query`. Ask again with correct=false to search the "
             "words as typed.")


class Shape(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- spec 000: hybrid, semantic, recency, keyword and tag search ---------------------------------------------

class SearchResult(Shape):
    """One matching chunk in the common result shape of every search mode."""

    chunk_id: str
    document_id: str
    content: str = Field(description="The matching chunk's text.")
    document_title: str
    relative_path: str
    absolute_path: str
    file_type: str = Field(description="md, json, conversation, pdf, csv, ...")
    similarity: float = Field(description="Semantic 0-1; keyword and tag matches 1.0; hybrid matches at least 1.0 "
                              "(boosted when the query names the note or its words match strongly).")
    cosine: float | None = Field(None, description="The similarity in meaning itself (None when meaning did not "
                                 "find the chunk).")
    search_type: str = Field(description="semantic, keyword, hybrid, recency or tag.")
    project: str
    tags: list[str]
    created: str | None
    modified: str | None
    heading_path: list[str] = Field(description="The headings above the part of the chunk that matched, outermost "
                                    "first.")
    lines: list[int] = Field(description="First and last line of the part that matched, in the file (use with "
                             "get_document).")
    chunk_lines: list[int] | None = Field(None,
                                          description="First and last line of the whole chunk (content) in the file.")
    snippet: str = Field(description="The chunk as a person reads it (no markup), around the first match.")
    matched_words: list[str] = Field([], description="The query's words this match holds (a match by words).")
    partial: bool = Field(False, description="True when it holds only some of the query's words.")
    highlights: list[list[int]] = Field([], description=HIGHLIGHTS)
    explain: dict[str, Any] | None = Field(None, description=EXPLAIN)


class SearchResponse(Shape):
    """The answer of GET /api/search."""

    query: str
    mode: str
    semantic_available: bool = Field(description="False when the model was unavailable and keyword search answered.")
    total: int
    limit: int
    results: list[SearchResult]
    project: str | None = Field(None, description="The project searched (one-project scope).")
    scope: str | None = Field(None, description="'all' for a search across every project.")
    projects: list[str] | None = Field(None, description="Every project searched (scope 'all').")
    keyword_only_projects: list[str] | None = Field(None, description="Projects that fell back to keyword search.")
    explain_document: dict[str, Any] | None = Field(None, description=EXPLAIN_DOCUMENT)
    corrected: dict[str, Any] | None = Field(None, description=CORRECTED)


# --- spec 001: vault_search and the metadata listings --------------------------------------------------------

class LeadingCallout(Shape):
    type: str
    title: str
    body: str


class VaultNote(Shape):
    """One note (or file) found by vault_search or listed by tag, folder, property or recency."""

    path: str
    title: str
    snippet: str | None
    highlights: list[list[int]] = Field([], description=HIGHLIGHTS)
    score: float | None = Field(None, description="Combined relevance (vault_search only); higher is better.")
    tags: list[str]
    folder: str
    type: str | None = Field(description="The frontmatter type.")
    kind: str = Field(description="'note' for markdown, 'file' for anything else.")
    extension: str | None = Field(None, description="For files: the extension, such as '.pdf'.")
    created: str | None = Field(None, description="The frontmatter created date; absent when it has none.")
    modified: str | None
    bytes: int
    document_id: str
    project: str
    leading_callout: LeadingCallout | None = None
    explain: dict[str, Any] | None = Field(None, description=EXPLAIN)


class VaultResponse(Shape):
    """The answer of POST /api/vault_search and its by_tag, by_folder, by_property and recent siblings."""

    results: list[VaultNote]
    total: int = Field(description="How many notes matched before the limit.")
    search_mode: str | None = Field(None, description="vault_search only: 'hybrid', or 'fts' without embeddings.")
    reranked: bool | None = Field(None, description="vault_search only: true when the cross-encoder reordered.")
    explain_document: dict[str, Any] | None = Field(None, description=EXPLAIN_DOCUMENT)
    corrected: dict[str, Any] | None = Field(None, description=CORRECTED)


# --- spec 002: memory search ---------------------------------------------------------------------------------

class MemoryResult(Shape):
    file_path: str | None = Field(description="Relative path; null for a related_to target that is not indexed.")
    id: str = Field(description="The frontmatter id, else the document id.")
    title: str | None
    relevance: str = Field(description="frontmatter_match, content_match, related_to_inbound, related_to_outbound "
                                       "or direct_mention.")
    matched: dict[str, Any] | None = Field(None, description="Mode frontmatter: the values that matched.")
    matches: int | None = Field(None, description="Mode content: how many keyword occurrences.")
    line: int | None = Field(None, description="The line of the excerpt.")
    excerpt: str | None = None


class MemoryResponse(Shape):
    """The answer of POST /api/memory_search."""

    mode: str
    query: Any
    project: str
    results: list[MemoryResult]
    total: int
    omitted: int = Field(description="Results dropped to keep the answer under about 2,000 tokens.")
    tokens: int


# --- documents and agent context -----------------------------------------------------------------------------

class DocumentSummary(Shape):
    document_id: str
    title: str
    relative_path: str
    absolute_path: str
    file_type: str
    tags: list[str]
    created: str | None
    modified: str | None
    size: int | None
    project: str


class OutlineEntry(Shape):
    heading: str
    level: int
    line: int


class Link(Shape):
    target: str
    kind: str
    document_id: str | None = Field(description="The linked document when it is indexed, else null.")
    relative_path: str | None = None


class DocumentResponse(DocumentSummary):
    """The answer of GET /api/documents/<id>: metadata, outline, links both ways and the content."""

    frontmatter: dict[str, Any]
    warnings: list[Any]
    outline: list[OutlineEntry]
    links: list[Link]
    backlinks: list[DocumentSummary]
    content: str = Field(description="The indexed text, or with a line range exactly those lines of the file.")
    lines: list[int] | None = Field(None, description="With a line range: the first and last line returned.")
    total_lines: int | None = Field(None, description="With a line range: how many lines the file has.")


class ContextItem(Shape):
    project: str
    document_id: str
    chunk_id: str
    title: str
    relative_path: str
    absolute_path: str
    heading_path: list[str]
    lines: list[int]
    score: float
    search_type: str
    tokens: int
    content: str


class ContextResponse(Shape):
    """The answer of GET /api/context: the best chunks packed into a token budget, each with its provenance."""

    query: str
    token_budget: int
    tokens_used: int
    items: list[ContextItem]
    truncated: bool = Field(description="True when a chunk that ranked was left out for lack of budget.")
    semantic_available: bool


# --- mind maps: node search and node context of the active map -----------------------------------------------

class MindMapInfo(Shape):
    project: str
    document_id: str | None = Field(description="The map's document id; null until the map is first indexed.")
    path: str = Field(description="The map file's path in its project.")
    title: str
    revision: int = Field(description="The live map's revision.")


class NodeIndexState(Shape):
    map: MindMapInfo
    index_state: str = Field(description="current, stale (the map changed since it was indexed), missing or "
                                         "older_format.")
    index_stale: bool = Field(description="True unless index_state is current: save the map to refresh it.")
    indexed_revision: int | None = Field(description="The map revision the node index holds.")
    live_revision: int
    pending_embeddings: int = Field(description="Node chunks still waiting for the model.")
    message: str | None = Field(description="What to do when the index is not current.")


class NodeResult(Shape):
    node_id: str
    parent_id: str | None
    title: str = Field(description="The node's live title.")
    path: list[str] = Field(description="Live titles from the root to the node.")
    level: int = Field(description="0 for a root node.")
    tags: list[str]
    score: float = Field(description="The node's best chunk: semantic 0-1, keyword 1.0, hybrid at least 1.0.")
    search_type: str
    chunk_id: str
    content: str = Field(description="The indexed text of the node's best chunk.")
    snippet: str
    highlights: list[list[int]] = Field([], description=HIGHLIGHTS)
    indexed_revision: int
    changed_since_indexed: bool = Field(description="True when the node's title or path changed after indexing.")


class MindMapSearchResponse(NodeIndexState):
    """The answer of GET /api/mindmaps/search_nodes."""

    query: str
    semantic_available: bool
    total: int
    limit: int
    results: list[NodeResult]


class NodeBrief(Shape):
    node_id: str
    title: str
    level: int
    children: int = Field(description="How many children this node has.")


class NodeRelationship(Shape):
    type: str
    direction: str = Field(description="outgoing (this node -> node_id) or incoming (node_id -> this node).")
    node_id: str
    title: str | None
    missing: bool | None = Field(None, description="True for a relationship to a node that no longer exists.")


class NodeDetail(Shape):
    node_id: str
    parent_id: str | None
    title: str
    path: list[str]
    level: int
    tags: list[str]
    body: str
    attachments: list[dict[str, Any]] = Field(description="File references (path, name); never their content.")
    has_private_notes: bool = Field(description="Private notes are never returned.")


class MindMapContextResponse(NodeIndexState):
    """The answer of GET /api/mindmaps/context: a live node with its neighbourhood."""

    node: NodeDetail
    ancestors: list[NodeBrief] = Field(description="From the root down to the parent.")
    children: list[NodeBrief]
    siblings: list[NodeBrief]
    relationships: list[NodeRelationship]
