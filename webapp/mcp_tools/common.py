"""What every SK Memory MCP tool shares: the argument types an AI client reads in each schema, the metadata
filters, how an answer is sent, and how a tool reaches the SK Memory server.

A tool is a module-level function whose first parameter is the `link` (mcp_link.ServerLink: `call` for a route,
`search` for a SearchRequest); `bound` hands it its link and shows the client the other parameters only.
"""
from __future__ import annotations

import functools
import inspect
import json
from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AfterValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from indexer import MODES
from indexer.contract.filters import FILTER_KEYS, FILTERS_SCHEMA
from indexer.errors import SKMemoryError
from indexer.contract.limits import DIRECTIONS, MAX_LIMIT, MAX_QUERY_CHARS, SCOPES
from indexer.contract.sibling_requests import MATCHES, MEMORY_MODES

# Every tool only reads, and only the user's own index. MCP reads destructiveHint and idempotentHint only when
# readOnlyHint is false, so they are not sent.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

QueryText = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS,
                             description="Natural language or keywords.")]
Project = Annotated[str | None, Field(description="Project name (default: your first).")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most results.")]
DETAILS = ("notes", "chunks")  # an MCP search's rows: compact per note, or the API's whole passages



def choice(values, description: str):
    """A string argument that is one of `values` (read from the contract, never written twice): the schema's enum,
    and pydantic's own refusal of another value, which the server turns into a sentence."""
    values = tuple(values)

    def one_of(value: str) -> str:
        if value not in values:
            expected = " or ".join(", ".join(repr(v) for v in values).rsplit(", ", 1))
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
        return value

    return Annotated[str, Field(description=description, json_schema_extra={"enum": list(values)}),
                     AfterValidator(one_of)]


Detail = choice(DETAILS, "notes: a row per note (~60 tokens); chunks: whole passages (~600).")
Note = Annotated[str, Field(min_length=1, max_length=1000,
                                  description="Its path as results give it, its title or its id.")]
MapPath = Annotated[str | None, Field(description="A .mmdata path (default: the map open in SK Memory, else the "
                                                  "project's only map).")]
Explain = Annotated[bool, Field(description="Say why each result ranked.")]
Correct = Annotated[bool, Field(description="Fix a word no note holds (see `corrected`); false: as typed.")]
ExplainDocument = Annotated[str | None, Field(description="A document_id: why it ranked so or was left out.")]
TagList = Annotated[list[str], Field(description="Tags without '#'; a parent matches its sub-tags.")]

# The metadata filters as the contract's records describe them (indexer/contract/filters.py); the request checks a
# call's filters with the contract's own sentences.
Filters = Annotated[dict | None, WithJsonSchema(FILTERS_SCHEMA)]
# The listings take the same filters; their schema points to vault_search's instead of repeating it four times over
# in tools/list.
ListingFilters = Annotated[dict | None, WithJsonSchema({
    "type": "object", "description": f"vault_search's filters: {', '.join(FILTER_KEYS)}."})]


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
AllProjectMode = choice(ALL_PROJECT_MODES, "hybrid (default), semantic, recency (semantic weighted to recent "
                                           "changes) or keyword (exact words).")
Scope = choice(SCOPES, "'all' draws from every project.")
Match = choice(MATCHES, "'all': notes with every tag; 'any': with at least one.")
MemoryMode = choice(dict.fromkeys(MEMORY_MODES.values()), "frontmatter: field-value pairs; content: 1-3 keywords; "
                                                          "xref: one note's id, title or path.")
Direction = choice(DIRECTIONS, "outgoing: the note's own links; backlinks: the notes that link to it.")


def ask(link, route: str, **payload) -> dict:
    """One route of the route table (indexer/contract/routes.py) by name, leaving out what is not given."""
    return link.ask(route, {k: v for k, v in payload.items() if v is not None})
