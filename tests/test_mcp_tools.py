"""Every MCP tool in the fast lane: the real tools, the real MCP server object and the real app, joined in process
by Flask's test client (webapp/mcp_link.AppLink) instead of stdio and a socket. Each tool is called with the example
its own description gives an agent; the answers cross the same routes, checks and compaction as over stdio
(tests/test_mcp.py drives a real client over stdio)."""
from __future__ import annotations

import ast
import asyncio
import inspect
import json

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from indexer.contract.rows import CompactRow
from support import with_memory_note_and_map
from webapp import create_app
from webapp.mcp_link import AppLink
from webapp.mcp_server import build_server
from webapp.mcp_tools import TOOL_ROUTES, tools

MEMORY_NOTE = "---\nid: DEC-42\ntags: [database]\nstatus: active\ntype: project\n---\n# Use SQLite\n\nThe decision.\n"


@pytest.fixture(scope="module")
def server(make_module_engine):
    engine = make_module_engine(embedder="words", prepare=with_memory_note_and_map("DEC-42.md", MEMORY_NOTE))
    return build_server(AppLink(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})))


def example(tool) -> dict:
    """The arguments of the `Example: tool(...)` line of a tool's description (JSON's true/false read as Python's)."""
    line = next((line for line in inspect.getdoc(tool).splitlines() if line.strip().startswith("Example: ")), None)
    assert line, (f"{tool.__name__}'s description has no line `Example: {tool.__name__}(...)`: add one, a call an "
                  "agent can copy (the demo notes answer it here)")
    call = ast.parse(line.split("Example: ", 1)[1].replace("=true", "=True").replace("=false", "=False"),
                     mode="eval").body
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def call(server, name: str, arguments: dict):
    return asyncio.run(server.call_tool(name, arguments))


@pytest.mark.parametrize("tool", [t.__name__ for t in tools()])
def test_every_tool_answers_its_own_example_in_process(server, tool):
    function = next(t for t in tools() if t.__name__ == tool)
    result = call(server, tool, example(function))
    assert not result.is_error, result.content
    body = json.loads(result.content[0].text)
    assert body == result.structured_content  # the text an agent reads is the structured answer
    assert isinstance(body, dict) and body
    if TOOL_ROUTES[tool] == ("search",):  # spec 000's searches answer notes as an agent's compact rows
        assert all(CompactRow.problems(row) == [] for row in body["results"] + body.get("weaker_matches", []))
        assert body["results"] or tool == "semantic_search"  # the word embedder finds no career aspirations


def test_the_examples_find_what_they_say(server):
    rows = json.loads(call(server, "hybrid_search", {"query": "how do I keep a process running after logout",
                                                     "limit": 5}).content[0].text)["results"]
    assert rows and rows[0]["path"] in ("Reference/systemd services.md", "Reference/tmux cheatsheet.md")
    found = json.loads(call(server, "memory_search", {"mode": "frontmatter", "query": {"status": "active"}})
                       .content[0].text)
    assert found["results"][0]["file_path"] == "DEC-42.md"
    node = json.loads(call(server, "mindmap_get_context", {"node_id": "watering", "map": "Maps/Garden.mmdata"})
                      .content[0].text)
    assert node["node"]["node_id"] == "watering" and '"private_notes"' not in json.dumps(node)


@pytest.mark.parametrize("name, arguments, said", [
    ("hybrid_search", {"query": "x", "detail": "everything"}, "'detail' must be one of 'notes' or 'chunks'"),
    ("links", {"note": "Garden plan", "direction": "sideways"},
     "'direction' must be one of 'both', 'outgoing' or 'backlinks'"),
    ("vault_search", {"query": "x", "filters": {"colour": "red"}}, "Unknown filter 'colour'; use any of: folder"),
    ("vault_recent_notes", {"filters": {"modified": {"after": "July"}}}, "filters.modified.after is \"July\""),
    ("vault_search", {"query": "x", "filters": {"created": {"since": "2026-01-01"}}},
     "filters.created has 'since'; use before, on or after"),
])
def test_a_wrong_argument_is_refused_in_a_sentence(server, name, arguments, said):
    with pytest.raises(ToolError) as refused:  # the protocol layer sends it as an is_error result
        call(server, name, arguments)
    assert said in str(refused.value)


@pytest.mark.parametrize("tool", [t.__name__ for t in tools()])
def test_each_tools_largest_limit_is_one_its_route_takes(server, tool):
    """Issue 60: related_notes(limit=50) was refused "from 1 to 50, not 51" though its schema allowed 100: the tool
    asked its route for one more row than the route takes. Every tool with a limit answers at its schema's most."""
    listed = {t.name: t for t in asyncio.run(server.list_tools())}
    most = (listed[tool].input_schema.get("properties", {}).get("limit") or {}).get("maximum")
    if most is None:
        pytest.skip(f"{tool} takes no limit")
    function = next(t for t in tools() if t.__name__ == tool)
    result = call(server, tool, {**example(function), "limit": most})
    assert not result.is_error, result.content


def test_related_notes_says_when_its_limit_cut_the_list(server):
    """`more` is the engine's (it ranks one row past the limit), not worked out by the tool."""
    text = "Kanban boards for personal tasks: lanes, WIP limits, a garden plan and a sourdough starter."
    one = json.loads(call(server, "related_notes", {"text": text, "limit": 1}).content[0].text)
    every = json.loads(call(server, "related_notes", {"text": text, "limit": 50}).content[0].text)
    assert len(every["results"]) > 1 and not every["more"], every
    assert len(one["results"]) == 1 and one["more"] and one["results"][0] == every["results"][0]


def test_every_tool_has_its_call_in_the_slow_tests_list_and_an_output_model():
    """Two steps of the recipe "Add an MCP tool" that failed nothing when left out (issue 60): the slow test's call
    of every tool against a dead server, and the tool's output model."""
    import typing

    from mcp_types import CallToolResult

    from test_mcp import EVERY_TOOL_CALLED
    from webapp.mcp_tools.models import Shape

    names = {t.__name__ for t in tools()}
    assert set(EVERY_TOOL_CALLED) == names, (
        f"add {sorted(names - set(EVERY_TOOL_CALLED))} to EVERY_TOOL_CALLED in tests/test_mcp.py (one call each)")
    for tool in tools():
        returned = typing.get_type_hints(tool, include_extras=True).get("return")
        args = typing.get_args(returned)
        assert typing.get_origin(returned) is typing.Annotated and args[0] is CallToolResult and \
            isinstance(args[1], type) and issubclass(args[1], Shape), (
                f"{tool.__name__} returns {returned}: annotate it -> Annotated[CallToolResult, SomeAnswer], "
                "SomeAnswer a model of webapp/mcp_tools/models.py (its output schema)")
