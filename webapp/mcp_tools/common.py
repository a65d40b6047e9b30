"""What every SK Memory MCP tool shares: the argument types an AI client reads in each schema, the metadata
filters, how an answer is sent, and how a tool reaches the SK Memory server.

A tool is a module-level function whose first parameter is the `link` (mcp_link.ServerLink: `call` for a route,
`search` for a SearchRequest); `bound` hands it its link and shows the client the other parameters only.
"""
from __future__ import annotations

import functools
import inspect
import json
from typing import Annotated, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from indexer import MODES
from indexer.errors import SKMemoryError
from indexer.limits import MAX_LIMIT, MAX_QUERY_CHARS

# Every tool only reads, and only the user's own index. MCP reads destructiveHint and idempotentHint only when
# readOnlyHint is false, so they are not sent.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS,
                             description="Natural language or keywords.")]
Project = Annotated[str | None, Field(description="Project name (default: the first).")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most results.")]
Detail = Annotated[Literal["notes", "chunks"], Field(
    description="notes: a row per note (~60 tokens); chunks: whole passages (~600).")]
Note = Annotated[str, Field(min_length=1, max_length=1000,
                                  description="Its path as results give it, its title or its id.")]
MapPath = Annotated[str | None, Field(description="A .mmdata path (default: the map open in SK Memory, else the "
                                                  "project's only map).")]
Explain = Annotated[bool, Field(description="Say why each result ranked.")]
Correct = Annotated[bool, Field(description="Fix a word no note holds (see `corrected`); false: as typed.")]
ExplainDocument = Annotated[str | None, Field(description="A document_id: why it ranked so or was left out.")]
TagList = Annotated[list[str], Field(description="Tags without '#'; a parent matches its sub-tags.")]


class DateBounds(BaseModel):
    """Days as YYYY-MM-DD (server-local); before and after exclude the day."""

    model_config = ConfigDict(extra="forbid")
    before: str | None = None
    on: str | None = None
    after: str | None = None


class VaultFilters(BaseModel):
    """Metadata filters, AND-combined with each other and the query."""

    model_config = ConfigDict(extra="forbid")
    folder: str | None = Field(None, description="Path prefix.")
    tags: list[str] | None = Field(None, description="All of these tags.")
    type: str | None = Field(None, description="Frontmatter type.")
    related: list[str] | None = Field(None, description="Links to all of these notes.")
    properties: dict[str, str | int | float | bool] | None = Field(
        None, description='Frontmatter values, all matching: {"status": "active"}.')
    created: DateBounds | None = Field(None, description="Frontmatter created date.")
    modified: DateBounds | None = Field(None, description="File modified time.")


Filters = Annotated[VaultFilters | None, Field(description="Metadata filters.")]
# The listings take the same filters; their schema points to vault_search's instead of repeating its 1,100
# characters four times over in tools/list (the call is still checked against VaultFilters, with its errors).
ListingFilters = Annotated[VaultFilters | None, WithJsonSchema({
    "type": "object", "description": "vault_search's filters: folder, tags, type, related, properties, created, "
                                     "modified."})]


# The most characters any answer holds (about 10,000 tokens): a list that would go past it is cut from its end,
# with `more` true and `cut` saying how many rows were left out (read_note's pages are this size at most too).
MAX_ANSWER_CHARS = 40_000
LISTS = ("results", "items", "outgoing", "backlinks", "weaker_matches", "nodes", "mentions", "close")


def _text(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def capped(body: dict) -> tuple[dict, str]:
    """The body and its JSON text, its longest lists cut from the end until the text fits MAX_ANSWER_CHARS."""
    text = _text(body)
    if len(text) <= MAX_ANSWER_CHARS:
        return body, text
    body, left_out = dict(body), 0
    while len(text) > MAX_ANSWER_CHARS:
        lists = [k for k in LISTS if isinstance(body.get(k), list) and body[k]]
        if not lists:
            break  # one row that is itself too long: the tool caps its own text (read_note, get_context)
        key = max(lists, key=lambda k: len(_text({k: body[k]})))
        rows = body[key]
        keep = max(0, min(len(rows) - 1, int(len(rows) * MAX_ANSWER_CHARS / len(text) * 0.95)))
        left_out += len(rows) - keep
        body[key] = rows[:keep]
        body["more"] = True
        body["cut"] = (f"{left_out} rows left out to keep this answer under {MAX_ANSWER_CHARS:,} characters; "
                       "ask for fewer (a smaller limit or budget) or narrow the question.")
        text = _text(body)
    return body, text


def answer(body: dict) -> CallToolResult:
    """An answer as structured content (the SDK checks it against the tool's schema) and as compact JSON text,
    at most MAX_ANSWER_CHARS of it."""
    body, text = capped(body)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body)


def filters_of(filters: VaultFilters | None) -> dict | None:
    return filters.model_dump(exclude_none=True) if filters is not None else None




def refused(exc: SKMemoryError) -> ToolError:
    """A refusal as the client reads it: the engine's sentence, nothing else."""
    return ToolError(str(exc))


def bound(tool, link):
    """The tool with its link given: a function of the client's arguments, its schema read from the tool's."""
    signature = inspect.signature(tool, eval_str=True)

    @functools.wraps(tool)
    def call(*args, **kwargs):
        return tool(link, *args, **kwargs)

    call.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])
    return call


# spec 000's modes that search_all_projects offers (tag has its own tool; vault looks inside one project)
ALL_PROJECT_MODES = tuple(m for m in MODES if m not in ("tag", "vault"))
AllProjectMode = Literal[ALL_PROJECT_MODES]


def get(link, route: str, **params) -> dict:
    """A GET of one SK Memory route, leaving out the parameters not given."""
    return link.call("GET", route, {k: v for k, v in params.items() if v is not None})
