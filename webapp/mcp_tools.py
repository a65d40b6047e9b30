"""The MCP tools: one per search of specs 000, 001 and 002, plus documents and agent context.

Each tool is a thin call to one JSON API endpoint; its docstring is the description an AI client reads.
"""
from __future__ import annotations

import inspect
import json
from urllib.parse import quote
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from indexer import SearchRequest
from indexer.errors import SKMemoryError
from indexer.limits import MAX_LIMIT, MAX_QUERY_CHARS, MAX_SNIPPET_TOKENS, MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET

from .mcp_models import (ContextResponse, DocumentResponse, MemoryResponse, MindMapContextResponse,
                         MindMapSearchResponse, SearchResponse, VaultResponse)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS,
                             description="What to search for, in natural language or keywords.")]
Project = Annotated[str | None, Field(description="Project name; default: the first project. An unknown name "
                                                  "answers with the list of known projects.")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most results to return.")]
Explain = Annotated[bool, Field(description="Add to each result why it ranked: each leg's rank and score, the "
                                           "fused score's terms, the matched words.")]
Correct = Annotated[bool, Field(description="Correct a word that matches nothing against the notes' own words (the "
                                            "answer's `corrected` says so); false searches the words as typed.")]
ExplainDocument = Annotated[str | None, Field(description="A document_id: say where it ranked in each leg, or which "
                                                          "filter, threshold or limit kept it out.")]
TagList = Annotated[list[str], Field(description="Tags without '#'; a parent tag matches its sub-tags "
                                                 "('project' matches 'project/garden').")]


class DateBounds(BaseModel):
    """Calendar-day bounds in YYYY-MM-DD (server-local); before and after are exclusive, on is that day."""

    model_config = ConfigDict(extra="forbid")
    before: str | None = Field(None, description="YYYY-MM-DD, exclusive.")
    on: str | None = Field(None, description="YYYY-MM-DD, that calendar day.")
    after: str | None = Field(None, description="YYYY-MM-DD, exclusive.")


class VaultFilters(BaseModel):
    """Metadata filters; every condition AND-combines with the others and with the text query."""

    model_config = ConfigDict(extra="forbid")
    folder: str | None = Field(None, description="Path prefix, such as 'Projects'.")
    tags: list[str] | None = Field(None, description="Require all of these tags.")
    type: str | None = Field(None, description="Exact frontmatter type, such as 'meeting' or 'person'.")
    related: list[str] | None = Field(None, description="Require links to all of these notes (related_to or links).")
    properties: dict[str, str | int | float | bool] | None = Field(
        None, description='Frontmatter key-value pairs that must all match, such as {"status": "active"}.')
    created: DateBounds | None = Field(None, description="Bounds on the frontmatter created date; notes without "
                                                         "one never match.")
    modified: DateBounds | None = Field(None, description="Bounds on the file's modified time.")


Filters = Annotated[VaultFilters | None, Field(description="Optional metadata filters, AND-combined.")]


def _answer(body: dict) -> CallToolResult:
    """The API's response as structured content (the SDK checks it against the tool's schema) and as JSON text."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
                          structured_content=body)


def _filters(filters: VaultFilters | None) -> dict | None:
    return filters.model_dump(exclude_none=True) if filters is not None else None


def register(server: MCPServer, link) -> None:
    """Add every SK Memory tool to server; each asks the SK Memory server through link (mcp_server.ServerLink:
    `call` for a route, `search` for a SearchRequest)."""

    def search(query: str, mode: str, **fields: Any) -> CallToolResult:
        """Every search tool builds one SearchRequest (checked here, as the server would) and hands it down."""
        try:
            request = SearchRequest(query, mode, **fields)
        except SKMemoryError as exc:
            raise ToolError(str(exc)) from None
        return _answer(link.search(request))

    def vault(path: str, **body: Any) -> CallToolResult:
        return _answer(link.call("POST", path, {k: v for k, v in body.items() if v is not None}))

    def tool(fn):
        server.add_tool(fn, description=inspect.cleandoc(fn.__doc__), annotations=READ_ONLY)
        return fn

    # --- spec 000 ------------------------------------------------------------------------------------------------

    @tool
    def hybrid_search(query: Query, project: Project = None, tags_all: TagList = [], tags_any: TagList = [],
                      limit: Limit = 10, explain: Explain = False, explain_document: ExplainDocument = None,
                      correct: Correct = True) -> Annotated[CallToolResult, SearchResponse]:
        """Search one project's notes by meaning and by exact words at once; the recommended default.

        Chunks found both ways are marked hybrid and rank first; falls back to keyword search when the embedding
        model is unavailable (semantic_available says so). Each result is a chunk with its document, path, file
        lines and a plain-text snippet with highlights (offsets of the matches). Optional tags_all / tags_any
        narrow results to tagged documents.
        Prefer semantic_search for pure meaning, tag_search to list by tags alone, search_all_projects to search
        every project, vault_search for metadata filters (folder, type, dates, properties).
        explain=true says why each result ranked; explain_document=ID why a document you expected is missing.
        Example: hybrid_search(query="how do I keep a process running after logout", limit=5)
        """
        return search(query, "hybrid", project=project, tags_all=tags_all, tags_any=tags_any, limit=limit,
                      explain=explain, explain_document=explain_document, correct=correct)

    @tool
    def semantic_search(query: Query, project: Project = None, tags_all: TagList = [], tags_any: TagList = [],
                        limit: Limit = 10, recency: Annotated[bool, Field(
                            description="Blend similarity with how recently each document changed.")] = False,
                        explain: Explain = False, explain_document: ExplainDocument = None,
                        ) -> Annotated[CallToolResult, SearchResponse]:
        """Search one project by meaning only, with the local embedding model (similarity 0-1, at least 0.5).

        Finds notes that use different words for the same idea. Needs the model: when it is unavailable this is
        an error (use hybrid_search, which falls back to keywords). recency=true ranks recent documents higher at
        similar similarity. Prefer hybrid_search when exact words matter.
        Example: semantic_search(query="career aspirations", recency=true)
        """
        return search(query, "recency" if recency else "semantic", project=project, tags_all=tags_all,
                      tags_any=tags_any, limit=limit, explain=explain, explain_document=explain_document)

    @tool
    def tag_search(tags_all: TagList = [], tags_any: TagList = [], project: Project = None,
                   limit: Limit = 20) -> Annotated[CallToolResult, SearchResponse]:
        """List documents by tag: all of tags_all (AND) and at least one of tags_any (OR); give at least one tag.

        Results carry title, file type, tags, created date and a preview. Prefer hybrid_search with tags_all
        to search text within tagged documents, vault_search_by_tag for note-level results with metadata filters.
        Example: tag_search(tags_all=["project"], tags_any=["outdoors", "cooking"])
        """
        return search("", "tag", project=project, tags_all=tags_all, tags_any=tags_any, limit=limit)

    @tool
    def search_all_projects(query: Query, mode: Annotated[Literal["hybrid", "semantic", "recency", "keyword"], Field(
                                description="hybrid (default), semantic, recency (semantic weighted to recent "
                                            "changes) or keyword (exact words).")] = "hybrid",
                            tags_all: TagList = [], tags_any: TagList = [],
                            limit: Limit = 10, explain: Explain = False,
                            correct: Correct = True) -> Annotated[CallToolResult, SearchResponse]:
        """Search every project at once and merge the results by score; each result names its project.

        A project without embeddings answers by keyword for itself only (keyword_only_projects lists them).
        Prefer hybrid_search when you know which project holds the answer.
        Example: search_all_projects(query="sourdough starter", mode="keyword")
        """
        return search(query, mode, tags_all=tags_all, tags_any=tags_any, limit=limit, scope="all", explain=explain,
                      correct=correct)

    # --- spec 001 ------------------------------------------------------------------------------------------------

    @tool
    def vault_search(query: Query, filters: Filters = None, limit: Limit = 20,
                     snippet_tokens: Annotated[int, Field(ge=1, le=MAX_SNIPPET_TOKENS,
                                                          description="Snippet length in tokens.")] = 30,
                     include_leading_callout: Annotated[bool, Field(
                         description="Add each note's leading callout ({type, title, body}) when it has one.")] = False,
                     project: Project = None, explain: Explain = False,
                     explain_document: ExplainDocument = None,
                     correct: Correct = True) -> Annotated[CallToolResult, VaultResponse]:
        """Find notes by text (BM25 keywords and meaning, fused) narrowed by metadata filters.

        The primary discovery tool for content questions with constraints: search by text, narrow by metadata.
        Unquoted terms are ANDed with stemming; "double quotes" match a phrase; vault-cortex style terms match
        as adjacent words. Filters: folder prefix, tags (all), type, related (all), properties, created and
        modified {before, on, after} as YYYY-MM-DD. One result per note: path, title, snippet, score, tags,
        folder, type, kind, created, modified, bytes; search_mode is 'hybrid' or 'fts' (keywords only).
        explain=true says why each note ranked (each leg's rank and score, the fusion written out);
        explain_document=ID says where a note ranked in each leg, or which filter, threshold or limit removed it.
        Prefer vault_search_by_tag / _by_folder / _by_property / vault_recent_notes when there is no text query.
        Example: vault_search(query="decision", filters={"folder": "Work", "modified": {"after": "2026-06-30"}})
        """
        return search(query, "vault", filters=_filters(filters), limit=limit, snippet_tokens=snippet_tokens,
                      include_leading_callout=include_leading_callout, project=project, explain=explain,
                      explain_document=explain_document, correct=correct)

    @tool
    def vault_search_by_tag(tags: Annotated[list[str], Field(min_length=1, description="Tags without '#'; a parent "
                                                             "tag matches its sub-tags.")],
                            match: Annotated[Literal["all", "any"], Field(
                                description="'all': notes with every tag; 'any': with at least one.")] = "all",
                            filters: Filters = None, limit: Limit = 20,
                            project: Project = None) -> Annotated[CallToolResult, VaultResponse]:
        """List notes with all (or any) of the tags, newest first, optionally narrowed by metadata filters.

        Prefer vault_search when you also have words to search for.
        Example: vault_search_by_tag(tags=["reference"], match="any", filters={"folder": "Reference"})
        """
        return vault("/api/vault_search/by_tag", tags=tags, match=match, filters=_filters(filters), limit=limit,
                     project=project)

    @tool
    def vault_search_by_folder(folder: Annotated[str, Field(description="Folder path inside the project, such as "
                                                            "'Projects' ('' lists everything).")],
                               filters: Filters = None, limit: Limit = 50,
                               project: Project = None) -> Annotated[CallToolResult, VaultResponse]:
        """List the notes in a folder and its subfolders, by path; browse a folder before reading its notes.

        Prefer vault_search with filters={"folder": ...} to search the folder's text.
        Example: vault_search_by_folder(folder="Projects", filters={"tags": ["outdoors"]})
        """
        return vault("/api/vault_search/by_folder", folder=folder, filters=_filters(filters), limit=limit,
                     project=project)

    @tool
    def vault_search_by_property(properties: Annotated[dict[str, str | int | float | bool], Field(
                                     min_length=1, description="Frontmatter keys and the values they must have.")],
                                 filters: Filters = None, limit: Limit = 20,
                                 project: Project = None) -> Annotated[CallToolResult, VaultResponse]:
        """List notes whose frontmatter has every given key with the given value, newest first.

        For metadata-only questions ("which projects are active?"). Prefer memory_search mode 'frontmatter'
        for decision records ranked by tag, domain and level.
        Example: vault_search_by_property(properties={"status": "active", "type": "project"})
        """
        return vault("/api/vault_search/by_property", properties=properties, filters=_filters(filters),
                     limit=limit, project=project)

    @tool
    def vault_recent_notes(filters: Filters = None, limit: Limit = 20,
                           project: Project = None) -> Annotated[CallToolResult, VaultResponse]:
        """List the most recently modified notes, optionally narrowed by metadata filters; for time-based browsing.

        Prefer vault_search with a modified date filter when you also have words to search for.
        Example: vault_recent_notes(limit=5, filters={"modified": {"after": "2026-06-30"}})
        """
        return vault("/api/vault_search/recent", filters=_filters(filters), limit=limit, project=project)

    # --- spec 002 ------------------------------------------------------------------------------------------------

    @tool
    def memory_search(mode: Annotated[Literal["frontmatter", "content", "xref"], Field(
                          description="frontmatter: field-value pairs; content: 1-3 keywords; xref: one document "
                                      "id, title or path.")],
                      query: Annotated[str | dict[str, Any], Field(
                          description='frontmatter: an object such as {"tags": ["database"], "status": "active"}; '
                                      'content: 1-3 keywords, a "quoted phrase" counting as one; xref: an id such '
                                      'as DEC-42.')],
                      project: Project = None) -> Annotated[CallToolResult, MemoryResponse]:
        """Locate memory files without loading them: a ranked list of paths, ids, titles and short excerpts.

        frontmatter: documents whose frontmatter matches every field (exact tag > domain > level), top 10.
        content: documents containing 1-3 keywords, with the matching line +-1 as excerpt, top 10.
        xref: documents that reference a document, its related_to both ways and direct mentions (depth 1).
        The answer stays under about 2,000 tokens. Then read a hit with get_document. Prefer hybrid_search or
        vault_search for open questions in natural language.
        Example: memory_search(mode="xref", query="DEC-42")
        """
        return vault("/api/memory_search", mode=mode, query=query, project=project)

    # --- documents and agent context -----------------------------------------------------------------------------

    @tool
    def get_document(document_id: Annotated[str, Field(min_length=1, description="A document_id from any result.")],
                     project: Project = None,
                     start_line: Annotated[int | None, Field(ge=1, description="First line of the file to return "
                                                                               "(1-based).")] = None,
                     end_line: Annotated[int | None, Field(ge=1, description="Last line to return.")] = None,
                     ) -> Annotated[CallToolResult, DocumentResponse]:
        """Read one document: metadata, frontmatter, outline, links both ways and its text.

        Without a range the content is the indexed text; with start_line and/or end_line it is exactly those
        lines of the file (search results give each chunk's file lines as `lines`). Use after a search to read
        around a hit. Prefer get_context to collect many passages within a token budget.
        Example: get_document(document_id="bf42cdcc4341461e9509f45009cf1385", start_line=9, end_line=16)
        """
        return _answer(link.call("GET", f"/api/documents/{quote(document_id, safe='')}",
                                 {"project": project, "start_line": start_line, "end_line": end_line}))

    @tool
    def get_context(query: Query, token_budget: Annotated[int, Field(
                        ge=MIN_TOKEN_BUDGET, le=MAX_TOKEN_BUDGET,
                        description="Most tokens of chunk text to return.")] = 2000,
                    project: Project = None,
                    scope: Annotated[Literal["project", "all"], Field(
                        description="'all' draws from every project.")] = "project",
                    ) -> Annotated[CallToolResult, ContextResponse]:
        """Collect the best passages for a task, packed into a token budget, each with its provenance.

        Runs hybrid search and keeps whole chunks in rank order while they fit (no repeats); each item names its
        project, document, path, headings and file lines. Use it to ground an answer or a plan in the user's
        notes; prefer hybrid_search to see a ranked list first.
        Example: get_context(query="how is the garden watered", token_budget=1500)
        """
        return _answer(link.call("GET", "/api/context", {"q": query, "budget": token_budget, "project": project,
                                                         "scope": scope}))

    # --- mind maps: the active map's nodes -------------------------------------------------------------------------

    @tool
    def mindmap_search_nodes(query: Query, limit: Limit = 10) -> Annotated[CallToolResult, MindMapSearchResponse]:
        """Search the nodes of the active Mind Map (the map open in SK Memory) by meaning and exact words.

        Searches only that map's node index: one result per node (its best passage), nodes deleted since the last
        save left out, each with its node_id and its live title and root-to-node path. index_stale=true means the
        map changed after it was indexed (index_state says stale, missing or older_format): results may miss new
        text, and the user should save the map to refresh it. Call mindmap_get_context(node_id) before editing a
        node. Prefer hybrid_search to search notes and documents rather than the map.
        Example: mindmap_search_nodes(query="when does the drip line run", limit=5)
        """
        return _answer(link.call("GET", "/api/mindmaps/search_nodes", {"q": query, "limit": limit}))

    @tool
    def mindmap_get_context(node_id: Annotated[str, Field(min_length=1, description="A node_id from "
                                                          "mindmap_search_nodes.")],
                            ) -> Annotated[CallToolResult, MindMapContextResponse]:
        """Read one node of the active Mind Map as it is now: title, body, tags, path, attachments (references).

        Also gives its ancestors, children, siblings and relationships both ways, so an edit fits its place in the
        map; private notes are never returned. An unknown id is an error (the node may have been deleted).
        Prefer mindmap_search_nodes to find a node first.
        Example: mindmap_get_context(node_id="watering")
        """
        return _answer(link.call("GET", "/api/mindmaps/context", {"node_id": node_id}))
