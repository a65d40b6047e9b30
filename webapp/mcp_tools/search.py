"""The MCP tools that search: spec 000's modes (hybrid, semantic, tag, every project), spec 001's vault_search and
agent context. Each builds one SearchRequest (checked here, as the server would) and hands it down."""
from __future__ import annotations

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from indexer import SearchRequest
from indexer.errors import SKMemoryError
from indexer.contract.limits import MAX_SNIPPET_TOKENS, MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET
from indexer.contract.sibling_requests import RELATED_LIMIT

from . import answers as shape
from .common import (AllProjectMode, Correct, Detail, Explain, ExplainDocument, Filters, Limit, Project, QueryText,
                     Scope, TagList, answer, ask, refused)
from .models import ContextResponse, ListAnswer, NotesAnswer, CompactRelated


def _search(link, query: str, mode: str, detail: str = "notes", **fields: Any) -> CallToolResult:
    """One SearchRequest, handed down: note hits unless chunks are asked for (the engine says whether the limit cut
    the list: `more`)."""
    full = detail == "chunks" or fields.get("explain") or fields.get("explain_document")
    try:
        request = SearchRequest(query, mode, **fields) if full else SearchRequest(query, mode, group=True, **fields)
    except SKMemoryError as exc:
        raise refused(exc) from None
    found = link.search(request)
    return answer(found if full else shape.search_answer(found))


def hybrid_search(link, query: QueryText, project: Project = None, tags_all: TagList = [], tags_any: TagList = [],
                        limit: Limit = 10, detail: Detail = "notes", explain: Explain = False,
                        explain_document: ExplainDocument = None,
                        correct: Correct = True) -> Annotated[CallToolResult, NotesAnswer]:
    """Search one project's notes by meaning and exact words at once; the recommended default.

    One row per note, best first: path, title, score, the matching section's heading and lines, a ~30-token
    snippet (10 rows: ~800 tokens); `more`: the limit cut. Read a row with read_note(path, start_line=lines[0]).
    While the model loads it answers by keyword (semantic_available false, semantic_reason says why). With
    several projects and none named it searches your first (never the demo while you have your own) and names
    the rest (`other_projects`).
    Prefer vault_search for metadata filters, search_all_projects for every project.
    Example: hybrid_search(query="how do I keep a process running after logout", limit=5)
    """
    return _search(link, query, "hybrid", detail, project=project, tags_all=tags_all, tags_any=tags_any, limit=limit,
                  explain=explain, explain_document=explain_document, correct=correct)


def semantic_search(link, query: QueryText, project: Project = None, tags_all: TagList = [], tags_any: TagList = [],
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
    return _search(link, query, "recency" if recency else "semantic", detail, project=project, tags_all=tags_all,
                  tags_any=tags_any, limit=limit, explain=explain, explain_document=explain_document)


def tag_search(link, tags_all: TagList = [], tags_any: TagList = [], project: Project = None,
                     limit: Limit = 20, detail: Detail = "notes") -> Annotated[CallToolResult, NotesAnswer]:
    """List notes by tag, newest first: all of tags_all (AND) and at least one of tags_any (OR); one tag at least.

    Rows as hybrid_search's, the snippet the note's start. list_tags shows which tags exist.
    Prefer hybrid_search with tags_all to search text within tagged notes.
    Example: tag_search(tags_all=["project"], tags_any=["outdoors", "cooking"])
    """
    return _search(link, "", "tag", detail, project=project, tags_all=tags_all, tags_any=tags_any, limit=limit)


def search_all_projects(link, query: QueryText, mode: AllProjectMode = "hybrid",
                              tags_all: TagList = [], tags_any: TagList = [],
                              limit: Limit = 10, detail: Detail = "notes", explain: Explain = False,
                              correct: Correct = True) -> Annotated[CallToolResult, NotesAnswer]:
    """Search every project at once, merged by score; each row names its project.

    A project without embeddings answers by keyword for itself (keyword_only_projects lists them).
    Prefer hybrid_search when you know which project holds the answer (list_projects names them).
    Example: search_all_projects(query="sourdough starter", mode="keyword")
    """
    return _search(link, query, mode, detail, tags_all=tags_all, tags_any=tags_any, limit=limit, scope="all",
                  explain=explain, correct=correct)


def vault_search(link, query: QueryText, filters: Filters = None, limit: Limit = 10,
                       snippet_tokens: Annotated[int, Field(ge=1, le=MAX_SNIPPET_TOKENS,
                                                            description="Snippet length in tokens.")] = 30,
                       include_leading_callout: Annotated[bool, Field(
                           description="Add each note's leading callout ({type, title, body}) when it has "
                                       "one.")] = False,
                       project: Project = None, explain: Explain = False,
                       explain_document: ExplainDocument = None,
                       correct: Correct = True) -> Annotated[CallToolResult, ListAnswer]:
    """Find notes by text (BM25 keywords and meaning, fused) narrowed by metadata filters.

    For content questions with constraints. Unquoted terms are ANDed with stemming; "double quotes" match a
    phrase. One row per note: path, title, score, snippet, tags, type, modified; total counts every match,
    `more`: the limit cut; search_mode 'fts' means keywords only.
    Prefer vault_search_by_tag / _by_folder / _by_property / vault_recent_notes without a text query.
    Example: vault_search(query="decision", filters={"folder": "Work", "modified": {"after": "2026-06-30"}})
    """
    try:
        request = SearchRequest(query, "vault", filters=filters, limit=limit,
                                snippet_tokens=snippet_tokens, include_leading_callout=include_leading_callout,
                                project=project, explain=explain, explain_document=explain_document,
                                correct=correct)
    except SKMemoryError as exc:
        raise refused(exc) from None
    return answer(shape.vault_answer(link.search(request)))


def get_context(link, query: QueryText, token_budget: Annotated[int, Field(
                          ge=MIN_TOKEN_BUDGET, le=MAX_TOKEN_BUDGET,
                          description="Most tokens of the answer, 4 characters each.")] = 2000,
                      project: Project = None,
                      scope: Scope = "project",
                      ) -> Annotated[CallToolResult, ContextResponse]:
    """Collect the best passages for a task, packed into a token budget, each with its provenance.

    Runs hybrid search and keeps whole passages in rank order while they fit; each names its path, headings and
    file lines (and project, with scope='all'). Use it to ground an answer in the user's notes.
    Prefer hybrid_search to see a ranked list first.
    Example: get_context(query="how is the garden watered", token_budget=1500)
    """
    found = ask(link, "context", q=query, budget=token_budget, project=project, scope=scope)
    return answer(shape.context_answer(found, every_project=scope == "all", budget=token_budget))



def related_notes(link, text: Annotated[str, Field(max_length=1_000_000, description="The text to relate: a page, "
                                                   "a draft, a passage you hold.")] = "",
                  note: Annotated[str | None, Field(max_length=1000, description="Or a note (path, title or id): "
                                                    "its own text, itself left out.")] = None,
                  title: Annotated[str, Field(max_length=1000, description="The text's title, if any.")] = "",
                  project: Project = None,
                  limit: Annotated[int, Field(ge=1, le=RELATED_LIMIT, description="Most results.")] = 10,
                  ) -> Annotated[CallToolResult, CompactRelated]:
    """Find the notes related to a text you hold (or to one note): by the meaning of its passages, the note names it
    mentions and its rarest words; each row says why.

    Give `text` or `note`; 10 rows are about 800 tokens. Read a row with read_note(path, start_line=lines[0]).
    Prefer hybrid_search for a short question, suggest_links for the links a note could have.
    Example: related_notes(text="Kanban boards for personal tasks: lanes, WIP limits ...", limit=5)
    """
    body = {"text": text, "title": title, "note": note, "project": project, "limit": limit}
    found = link.ask("related_text", {k: v for k, v in body.items() if v not in (None, "")})
    return answer(shape.related_answer(found))

TOOLS = (
    hybrid_search, semantic_search, tag_search, search_all_projects, vault_search, get_context, related_notes,
)
