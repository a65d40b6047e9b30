"""The MCP tools: the searches of specs 000, 001 and 002, tools to list and read notes, agent context and mind maps.

Each tool is a thin call to one JSON API endpoint, its answer sized for an agent's context by mcp_answers.py; its
docstring is the description an AI client reads.
"""
from __future__ import annotations

import inspect
import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from indexer import SearchRequest
from indexer.errors import SKMemoryError
from indexer.limits import MAX_LIMIT, MAX_QUERY_CHARS, MAX_SNIPPET_TOKENS, MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET

from . import mcp_answers as shape
from .mcp_models import (ContextResponse, LinksAnswer, ListAnswer, MemoryResponse, MindMapContextResponse,
                         MindMapSearchResponse, NoteInfo, NotePage, NotesAnswer, ProjectsAnswer)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS,
                             description="What to search for, in natural language or keywords.")]
Project = Annotated[str | None, Field(description="Project name; default: the first project. An unknown name "
                                                  "answers with the list of known projects.")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most results to return.")]
Detail = Annotated[Literal["notes", "chunks"], Field(
    description="notes (default): one compact row per note, about 60 tokens each; chunks: every matching passage "
                "with its full text and fields, about 600 tokens each.")]
Note = Annotated[str, Field(min_length=1, max_length=1000, description="The note: its path as results give it "
                                                                        "(such as 'Projects/Garden plan.md'), its "
                                                                        "title, or its id.")]
MapPath = Annotated[str | None, Field(description="A mind map's path, such as 'Maps/Garden.mmdata'; default: the "
                                                  "map open in SK Memory, else the project's only map.")]
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
    """An answer as structured content (the SDK checks it against the tool's schema) and as compact JSON text."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False,
                                                                            separators=(",", ":")))],
                          structured_content=body)


def _filters(filters: VaultFilters | None) -> dict | None:
    return filters.model_dump(exclude_none=True) if filters is not None else None


def register(server: MCPServer, link) -> None:
    """Add every SK Memory tool to server; each asks the SK Memory server through link (mcp_server.ServerLink:
    `call` for a route, `search` for a SearchRequest)."""

    def search(query: str, mode: str, detail: str = "notes", **fields: Any) -> CallToolResult:
        """Every search tool builds one SearchRequest (checked here, as the server would) and hands it down: note
        hits (one more than asked, to tell whether the limit cut) unless chunks are asked for."""
        limit = fields.pop("limit")
        full = detail == "chunks" or fields.get("explain") or fields.get("explain_document")
        try:
            request = (SearchRequest(query, mode, limit=limit, **fields) if full else
                       SearchRequest(query, mode, limit=min(limit + 1, MAX_LIMIT), group=True, **fields))
        except SKMemoryError as exc:
            raise ToolError(str(exc)) from None
        answer = link.search(request)
        return _answer(answer if full else shape.search_answer(answer, limit))

    def vault(path: str, **body: Any) -> CallToolResult:
        return _answer(shape.vault_answer(link.call("POST", path, {k: v for k, v in body.items() if v is not None})))

    def get(route: str, **params: Any) -> dict:
        return link.call("GET", route, {k: v for k, v in params.items() if v is not None})

    def tool(fn):
        server.add_tool(fn, description=inspect.cleandoc(fn.__doc__), annotations=READ_ONLY)
        return fn

    # --- finding notes: spec 000 -----------------------------------------------------------------------------------

    @tool
    def hybrid_search(query: Query, project: Project = None, tags_all: TagList = [], tags_any: TagList = [],
                      limit: Limit = 10, detail: Detail = "notes", explain: Explain = False,
                      explain_document: ExplainDocument = None,
                      correct: Correct = True) -> Annotated[CallToolResult, NotesAnswer]:
        """Search one project's notes by meaning and by exact words at once; the recommended default.

        Answers one row per note (path, title, score, the matching section's heading and file lines, a ~30-token
        snippet), best first; `more` is true when the limit cut the list. 10 rows are about 600 tokens. Read a row
        with read_note(path, start_line=lines[0]). Before the model is ready it answers by keyword at once
        (semantic_available false, semantic_reason says why). detail="chunks" returns every matching passage in
        full (about 600 tokens each); explain=true says why each ranked; explain_document=ID why one is missing.
        Prefer vault_search for metadata filters, search_all_projects for every project.
        Example: hybrid_search(query="how do I keep a process running after logout", limit=5)
        """
        return search(query, "hybrid", detail, project=project, tags_all=tags_all, tags_any=tags_any, limit=limit,
                      explain=explain, explain_document=explain_document, correct=correct)

    @tool
    def semantic_search(query: Query, project: Project = None, tags_all: TagList = [], tags_any: TagList = [],
                        limit: Limit = 10, recency: Annotated[bool, Field(
                            description="Blend similarity with how recently each note changed.")] = False,
                        detail: Detail = "notes", explain: Explain = False, explain_document: ExplainDocument = None,
                        ) -> Annotated[CallToolResult, NotesAnswer]:
        """Search one project by meaning only (similarity 0-1, at least 0.5): notes that use other words for the idea.

        Same rows as hybrid_search. While the model loads, or without it, this is an error: use hybrid_search,
        which answers by keyword meanwhile. recency=true ranks recent notes higher at similar similarity.
        Prefer hybrid_search when exact words matter.
        Example: semantic_search(query="career aspirations", recency=true)
        """
        return search(query, "recency" if recency else "semantic", detail, project=project, tags_all=tags_all,
                      tags_any=tags_any, limit=limit, explain=explain, explain_document=explain_document)

    @tool
    def tag_search(tags_all: TagList = [], tags_any: TagList = [], project: Project = None,
                   limit: Limit = 20, detail: Detail = "notes") -> Annotated[CallToolResult, NotesAnswer]:
        """List notes by tag, newest first: all of tags_all (AND) and at least one of tags_any (OR); one tag at least.

        Rows as hybrid_search's, the snippet the note's start. list_tags shows which tags exist.
        Prefer hybrid_search with tags_all to search text within tagged notes.
        Example: tag_search(tags_all=["project"], tags_any=["outdoors", "cooking"])
        """
        return search("", "tag", detail, project=project, tags_all=tags_all, tags_any=tags_any, limit=limit)

    @tool
    def search_all_projects(query: Query, mode: Annotated[Literal["hybrid", "semantic", "recency", "keyword"], Field(
                                description="hybrid (default), semantic, recency (semantic weighted to recent "
                                            "changes) or keyword (exact words).")] = "hybrid",
                            tags_all: TagList = [], tags_any: TagList = [],
                            limit: Limit = 10, detail: Detail = "notes", explain: Explain = False,
                            correct: Correct = True) -> Annotated[CallToolResult, NotesAnswer]:
        """Search every project at once, merged by score; each row names its project.

        A project without embeddings answers by keyword for itself (keyword_only_projects lists them).
        Prefer hybrid_search when you know which project holds the answer (list_projects names them).
        Example: search_all_projects(query="sourdough starter", mode="keyword")
        """
        return search(query, mode, detail, tags_all=tags_all, tags_any=tags_any, limit=limit, scope="all",
                      explain=explain, correct=correct)

    # --- finding notes by metadata: spec 001 ---------------------------------------------------------------------

    @tool
    def vault_search(query: Query, filters: Filters = None, limit: Limit = 10,
                     snippet_tokens: Annotated[int, Field(ge=1, le=MAX_SNIPPET_TOKENS,
                                                          description="Snippet length in tokens.")] = 30,
                     include_leading_callout: Annotated[bool, Field(
                         description="Add each note's leading callout ({type, title, body}) when it has one.")] = False,
                     project: Project = None, explain: Explain = False,
                     explain_document: ExplainDocument = None,
                     correct: Correct = True) -> Annotated[CallToolResult, ListAnswer]:
        """Find notes by text (BM25 keywords and meaning, fused) narrowed by metadata filters.

        For content questions with constraints. Unquoted terms are ANDed with stemming; "double quotes" match a
        phrase. Filters: folder prefix, tags (all), type, related (all), properties, created and modified
        {before, on, after} as YYYY-MM-DD. One row per note: path, title, score, snippet, tags, type, modified;
        total counts every match, `more` says the limit cut; search_mode 'fts' means keywords only.
        Prefer vault_search_by_tag / _by_folder / _by_property / vault_recent_notes without a text query.
        Example: vault_search(query="decision", filters={"folder": "Work", "modified": {"after": "2026-06-30"}})
        """
        try:
            request = SearchRequest(query, "vault", filters=_filters(filters), limit=limit,
                                    snippet_tokens=snippet_tokens, include_leading_callout=include_leading_callout,
                                    project=project, explain=explain, explain_document=explain_document,
                                    correct=correct)
        except SKMemoryError as exc:
            raise ToolError(str(exc)) from None
        return _answer(shape.vault_answer(link.search(request)))

    @tool
    def vault_search_by_tag(tags: Annotated[list[str], Field(min_length=1, description="Tags without '#'; a parent "
                                                             "tag matches its sub-tags.")],
                            match: Annotated[Literal["all", "any"], Field(
                                description="'all': notes with every tag; 'any': with at least one.")] = "all",
                            filters: Filters = None, limit: Limit = 20,
                            project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
        """List notes with all (or any) of the tags, newest first, optionally narrowed by metadata filters.

        Prefer vault_search when you also have words to search for.
        Example: vault_search_by_tag(tags=["reference"], match="any", filters={"folder": "Reference"})
        """
        return vault("/api/vault_search/by_tag", tags=tags, match=match, filters=_filters(filters), limit=limit,
                     project=project)

    @tool
    def vault_search_by_folder(folder: Annotated[str, Field(description="Folder path inside the project, such as "
                                                            "'Projects' ('' lists everything).")],
                               filters: Filters = None, limit: Limit = 20,
                               project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
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
                                 project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
        """List notes whose frontmatter has every given key with the given value, newest first.

        list_properties shows which keys and values exist. Prefer memory_search mode 'frontmatter' for decision
        records ranked by tag, domain and level.
        Example: vault_search_by_property(properties={"status": "active", "type": "project"})
        """
        return vault("/api/vault_search/by_property", properties=properties, filters=_filters(filters),
                     limit=limit, project=project)

    @tool
    def vault_recent_notes(filters: Filters = None, limit: Limit = 20,
                           project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
        """List the most recently modified notes, optionally narrowed by metadata filters.

        Prefer vault_search with a modified date filter when you also have words to search for.
        Example: vault_recent_notes(limit=5, filters={"modified": {"after": "2026-06-30"}})
        """
        return vault("/api/vault_search/recent", filters=_filters(filters), limit=limit, project=project)

    # --- memory files: spec 002 ----------------------------------------------------------------------------------

    @tool
    def memory_search(mode: Annotated[Literal["frontmatter", "content", "xref"], Field(
                          description="frontmatter: field-value pairs; content: 1-3 keywords; xref: one note's id, "
                                      "title or path.")],
                      query: Annotated[str | dict[str, Any], Field(
                          description='frontmatter: an object such as {"tags": ["database"], "status": "active"}; '
                                      'content: 1-3 keywords, a "quoted phrase" counting as one; xref: an id as '
                                      'this tool returns it, such as DEC-42.')],
                      project: Project = None) -> Annotated[CallToolResult, MemoryResponse]:
        """Locate memory files without loading them: a ranked list of paths, ids, titles and short excerpts.

        frontmatter: notes whose frontmatter matches every field (exact tag > domain > level), top 10.
        content: notes containing 1-3 keywords, with the matching line +-1 as excerpt, top 10.
        xref: notes that reference a note (any `id` this tool returned), related_to both ways and direct mentions.
        The answer stays under about 2,000 tokens. Then read a hit with read_note(file_path).
        Prefer hybrid_search or vault_search for open questions in natural language.
        Example: memory_search(mode="xref", query="DEC-42")
        """
        return _answer(link.call("POST", "/api/memory_search", {"mode": mode, "query": query, "project": project}))

    # --- listing and reading -------------------------------------------------------------------------------------

    @tool
    def list_projects() -> Annotated[CallToolResult, ProjectsAnswer]:
        """List the projects (indexed folders) with how many notes each holds and whether meaning search covers it.

        Pass a name as `project` to the other tools; the first user project is the default.
        Prefer search_all_projects to search them all at once.
        Example: list_projects()
        """
        health = get("/api/health")
        return _answer(shape.projects_answer(get("/api/projects")["projects"], health.get("embeddings", "")))

    @tool
    def list_tags(prefix: Annotated[str, Field(max_length=200, description="Only tags this text names (in any "
                                                                            "segment); '' for all.")] = "",
                  limit: Annotated[int, Field(ge=1, le=500, description="Most tags to return.")] = 50,
                  project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
        """List a project's tags with how many notes carry each, most used first (with a prefix, best match first).

        Prefer tag_search or vault_search_by_tag to list the notes with a tag.
        Example: list_tags(prefix="project")
        """
        tags = get("/api/tags", project=project, prefix=prefix, limit=limit + 1)["tags"]
        return _answer({"results": [{"tag": t["tag"], "notes": t["count"]} for t in tags[:limit]],
                        "more": len(tags) > limit})

    @tool
    def list_properties(prefix: Annotated[str, Field(max_length=200, description="Only keys that start with "
                                                                                 "this.")] = "",
                        limit: Annotated[int, Field(ge=1, le=500, description="Most keys to return.")] = 30,
                        project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
        """List the frontmatter keys notes use, most used first, each with how many notes have it and sample values.

        Use a key and value with vault_search_by_property or vault_search's filters.properties.
        Prefer list_tags for tags.
        Example: list_properties(prefix="sta")
        """
        found = get("/api/properties", project=project, prefix=prefix, limit=limit)
        return _answer({"results": found["properties"], "total": found["total"],
                        "more": found["total"] > len(found["properties"])})

    @tool
    def get_document(note: Note, project: Project = None) -> Annotated[CallToolResult, NoteInfo]:
        """Describe one note without its text: metadata, frontmatter, its outline (headings with their lines, at most
        60) and how many links it has each way.

        Then read a section with read_note(path, section=heading), or see its links with links(path).
        Prefer read_note to read the text.
        Example: get_document(note="Projects/Garden plan.md")
        """
        return _answer(get("/api/notes/info", note=note, project=project))

    @tool
    def read_note(note: Note, project: Project = None,
                  section: Annotated[str | None, Field(max_length=500, description="A heading of the note: read "
                                                                                   "that section.")] = None,
                  start_line: Annotated[int | None, Field(ge=1, description="First line to read (1-based; search "
                                                                            "rows give `lines`).")] = None,
                  end_line: Annotated[int | None, Field(ge=1, description="Last line to read.")] = None,
                  offset: Annotated[int, Field(ge=0, description="Where to go on: the next_offset of the page "
                                                                 "before.")] = 0,
                  max_chars: Annotated[int, Field(ge=200, le=40000, description="Most characters in this page "
                                                                                "(about 4 per token).")] = 8000,
                  ) -> Annotated[CallToolResult, NotePage]:
        """Read a note's text as it is in the file: all of it, one section (by heading) or a line range, a page at a
        time (8,000 characters by default, about 2,000 tokens).

        next_offset is null at the end; otherwise call again with offset=next_offset. `lines` says which file
        lines the page holds. PDFs and other documents give their indexed text.
        Prefer get_document for the outline first on a long note, get_context for passages of many notes.
        Example: read_note(note="Projects/Garden plan.md", section="Watering")
        """
        return _answer(get("/api/notes/read", note=note, project=project, section=section, start_line=start_line,
                           end_line=end_line, offset=offset, max_chars=max_chars))

    @tool
    def links(note: Note, project: Project = None,
              direction: Annotated[Literal["both", "outgoing", "backlinks"], Field(
                  description="outgoing: the note's own links; backlinks: the notes that link to it.")] = "both",
              limit: Annotated[int, Field(ge=1, le=500, description="Most links in each list.")] = 50,
              ) -> Annotated[CallToolResult, LinksAnswer]:
        """List a note's outgoing links (with the path each resolves to, null when it names no note) and its
        backlinks, each list at most `limit` long, with the totals.

        Prefer memory_search mode 'xref' for related_to fields and mentions by id.
        Example: links(note="Garden plan", direction="backlinks")
        """
        return _answer(get("/api/notes/links", note=note, project=project, direction=direction, limit=limit))

    @tool
    def get_context(query: Query, token_budget: Annotated[int, Field(
                        ge=MIN_TOKEN_BUDGET, le=MAX_TOKEN_BUDGET,
                        description="Most tokens of passage text to return.")] = 2000,
                    project: Project = None,
                    scope: Annotated[Literal["project", "all"], Field(
                        description="'all' draws from every project.")] = "project",
                    ) -> Annotated[CallToolResult, ContextResponse]:
        """Collect the best passages for a task, packed into a token budget, each with its provenance.

        Runs hybrid search and keeps whole passages in rank order while they fit; each names its project, path,
        headings and file lines. Use it to ground an answer in the user's notes.
        Prefer hybrid_search to see a ranked list first.
        Example: get_context(query="how is the garden watered", token_budget=1500)
        """
        return _answer(get("/api/context", q=query, budget=token_budget, project=project, scope=scope))

    # --- mind maps ---------------------------------------------------------------------------------------------------

    @tool
    def mindmap_search_nodes(query: Query, map: MapPath = None, project: Project = None,
                             limit: Limit = 10) -> Annotated[CallToolResult, MindMapSearchResponse]:
        """Search the nodes of a Mind Map by meaning and exact words: one row per node, with its node_id and its live
        title and root-to-node path.

        The map: `map` (a .mmdata path), else the map open in SK Memory, else the project's only map.
        index_stale=true means the map changed after it was indexed: results may miss new text. Call
        mindmap_get_context(node_id) before editing a node. Prefer hybrid_search for notes.
        Example: mindmap_search_nodes(query="when does the drip line run", map="Maps/Garden.mmdata")
        """
        return _answer(get("/api/mindmaps/search_nodes", q=query, limit=limit, project=project, path=map))

    @tool
    def mindmap_get_context(node_id: Annotated[str, Field(min_length=1, max_length=200, description="A node_id "
                                                          "from mindmap_search_nodes.")],
                            map: MapPath = None, project: Project = None,
                            ) -> Annotated[CallToolResult, MindMapContextResponse]:
        """Read one node of a Mind Map as it is now: title, body, tags, path, attachments (references), with its
        ancestors, children, siblings and relationships both ways; private notes are never returned.

        The map is chosen as mindmap_search_nodes chooses it. Prefer mindmap_search_nodes to find a node first.
        Example: mindmap_get_context(node_id="watering", map="Maps/Garden.mmdata")
        """
        return _answer(get("/api/mindmaps/context", node_id=node_id, project=project, path=map))
