"""What a format marks private (a mind map's `private_notes`) leaves through no route and no MCP tool.

A real `skmemory serve` on the demo notes with the demo's map and one more whose private notes hold a unique
marker, on lines that also name other notes and share the map's words (so a reader of the raw file would turn them
into mentions, rare words and snippets). Every route of the app and every MCP tool is called, with the marker, the
map and its node, and no answer holds the marker. A route or tool added later is walked too, or the test says
which one to add here.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import urllib.error
import urllib.parse
import urllib.request

import pytest

from support import DEMO_NOTES, GARDEN, mcp_session, running_server

# The private words, and what the walk asks: the singular, which porter stemming matches to the plural, so a search
# that could see the private notes finds them, while an answer that only echoes the question holds no private word.
PRIVATE = ("vermilionquokkas", "zanzibarwick")
MARKER = "vermilionquokka"
MAP = "Maps/Orchard.mmdata"
ORCHARD = {
    "format": "skmemory-mindmap", "version": 1, "title": "Orchard", "revision": 1,
    "nodes": [
        {"id": "orchard", "parent": None, "title": "Orchard", "tags": ["garden"], "relationships": [],
         "body": "Three apple trees and a pear at the end of the garden, with compost around each trunk.",
         "attachments": [], "private_notes": ""},
        {"id": "pruning", "parent": "orchard", "title": "Pruning", "tags": ["garden"], "relationships": [],
         "body": "Prune the apples in winter when the trees are bare; cut out crossing branches first.",
         "attachments": [{"name": "Graft receipt", "path": "Attachments/graft.pdf"}],
         "private_notes": "The vermilionquokkas graft came from zanzibarwick next door; see Compost log and the "
                          "Garden plan and tmux cheatsheet. Vermilionquokkas, vermilionquokkas: sourdough apples "
                          "compost winter zanzibarwick."},
    ],
}
# Routes that change things (walked elsewhere: tests/test_api.py, test_hostile.py), serve the app's own files, or
# are the map editor itself, which opens the map's file for its owner to edit, private notes included.
NOT_WALKED = {
    "/static/<path:filename>": "the app's own CSS and JS",
    "/api/projects POST": "adds a project", "/api/projects/<name>/rename POST": "renames a project",
    "/api/projects/<name> DELETE": "removes a project", "/api/projects/<name>/reindex POST": "re-indexes",
    "/projects POST": "adds a project", "/projects/<name>/rename POST": "renames a project",
    "/projects/<name>/remove POST": "removes a project", "/projects/<name>/reindex POST": "re-indexes",
    "/api/embedding POST": "pauses embedding", "/status/embedding POST": "pauses embedding",
    "/api/mindmaps/save POST": "writes a map", "/api/mindmaps/active POST": "sets the open map",
    "/documents/<document_id>/open POST": "opens the file in another program",
    "/api/mindmaps/map GET": "the map editor reads the map's file for its owner to edit, private notes included",
    "/mindmap GET": "the map editor's page, which carries the open map's file for its owner to edit",
}
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("private")
    vault = root / "vault"
    shutil.copytree(DEMO_NOTES, vault)
    (vault / "Maps").mkdir()
    shutil.copy(GARDEN, vault / "Maps" / GARDEN.name)
    (vault / MAP).write_text(json.dumps(ORCHARD, indent=2), encoding="utf-8")
    with running_server(root, vault) as server:
        yield server


def _call(port: int, method: str, path: str, params: dict | None = None, body: dict | None = None) -> tuple[int, str]:
    query = urllib.parse.urlencode(params or {}, doseq=True)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}{'?' + query if query else ''}", data=data,
                                 method=method, headers={"Content-Type": "application/json",
                                                         "X-SKMemory-Client": "tests", "HX-Request": "true"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def _asks(map_id: str) -> list[dict]:
    """What each route is asked: the marker itself, and words the private notes share with the map and the notes."""
    base = {"project": "notes", "path": MAP, "note": MAP, "document_id": map_id, "node_id": "pruning",
            "tag": "garden", "folder": "Maps", "limit": 50, "full": "true"}
    return [{**base, "q": q, "query": q, "text": q, "title": q} for q in
            (MARKER, "apple graft from the neighbour", "prune apples in winter", "compost sourdough")]


def _fill(rule: str, map_id: str) -> str:
    return (rule.replace("<document_id>", urllib.parse.quote(map_id)).replace("<path:topic>", "search")
            .replace("<name>", "notes"))


def test_no_route_answers_with_private_notes(served):
    from webapp import create_app

    port = served.port
    status, text = _call(port, "GET", "/api/documents", {"project": "notes", "limit": 100})
    assert status == 200, text
    map_id = next(d["document_id"] for d in json.loads(text)["documents"] if d["path"] == MAP)
    walked = []
    for rule in create_app().url_map.iter_rules():
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            key = f"{rule.rule} {method}"
            if rule.rule in NOT_WALKED or key in NOT_WALKED:
                continue
            path = _fill(rule.rule, map_id)
            modes = ("hybrid", "semantic", "keyword", "recency", "tag") if "search" in rule.rule else ("hybrid",)
            for ask in _asks(map_id):
                for mode in modes:
                    status, answer = (_call(port, "GET", path, {**ask, "mode": mode}) if method == "GET"
                                      else _call(port, method, path, body={**ask, "mode": mode}))
                    assert status < 500, (key, ask, answer[:500])
                    assert not any(w in answer.lower() for w in PRIVATE), (key, mode, ask["q"], answer[:2000])
            walked.append(key)
    assert {"/api/related POST", "/api/notes/suggestions GET", "/api/notes/read GET", "/api/search GET",
            "/documents/<document_id> GET", "/api/context GET"} <= set(walked)
    # The map's own nodes were found: the walk asked about the map, not past it.
    status, found = _call(port, "GET", "/api/search", {"q": "prune apples in winter", "project": "notes"})
    assert MAP in found


# Each MCP tool's arguments by name; a tool with a required argument not named here fails the test until it is.
MCP_ARGUMENTS = {"note": MAP, "map": MAP, "node_id": "pruning", "tags": ["garden"], "tags_any": ["garden"],
                 "folder": "Maps", "project": "notes", "limit": 10, "properties": {"tags": "garden"}}
TOOL_ARGUMENTS = {"memory_search": {"mode": "content"}}  # where one tool's argument differs from another's
QUESTIONS = (MARKER, "apple graft neighbour", "prune apples winter")  # memory_search takes at most three words


def test_no_mcp_tool_answers_with_private_notes(served, tmp_path):
    status, text = _call(served.port, "GET", "/api/documents", {"project": "notes", "limit": 100})
    map_id = next(d["document_id"] for d in json.loads(text)["documents"] if d["path"] == MAP)

    async def scenario():
        async with mcp_session(served.env, tmp_path / "mcp.log") as session:
            tools = (await session.list_tools()).tools
            assert len(tools) >= 20
            for tool in tools:
                schema = tool.input_schema or {}
                props = schema.get("properties", {})
                known = {**MCP_ARGUMENTS, "query": MARKER, "text": MARKER, "document_id": map_id,
                         **TOOL_ARGUMENTS.get(tool.name, {})}
                missing = [p for p in schema.get("required", []) if p not in known]
                assert not missing, f"the walk does not know what to give {tool.name}'s {missing}: add it here"
                for query in QUESTIONS:
                    args = {k: v for k, v in {**known, "query": query, "text": query}.items() if k in props}
                    result = await session.call_tool(tool.name, args)
                    assert not result.is_error, (tool.name, args, result.content)
                    shown = json.dumps(result.structured_content) + "".join(
                        getattr(c, "text", "") for c in result.content)
                    assert not any(w in shown.lower() for w in PRIVATE), (tool.name, args, shown[:2000])

    asyncio.run(scenario())
