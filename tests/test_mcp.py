"""`skmemory mcp` driven by the SDK's own MCP client against a real `skmemory serve` on a real indexed vault."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from support import DEMO_NOTES, REPO, SKMEMORY, corpus, free_port, mcp_session, running_server
from webapp.mcp_tools.answers import memory_answer
from webapp.mcp_tools import tools

TOOLS = {tool.__name__ for tool in tools()}
# One call of every tool, for the server that never answers (test_a_dead_server_...): tests/test_mcp_tools.py (fast)
# fails, naming this dict, when a tool is added without its call here.
EVERY_TOOL_CALLED = {
    "hybrid_search": {"query": "x"}, "semantic_search": {"query": "x"}, "tag_search": {"tags_all": ["a"]},
    "search_all_projects": {"query": "x"}, "vault_search": {"query": "x"},
    "vault_search_by_tag": {"tags": ["a"]}, "vault_search_by_folder": {"folder": ""},
    "vault_search_by_property": {"properties": {"a": 1}}, "vault_recent_notes": {},
    "memory_search": {"mode": "content", "query": "x"}, "get_document": {"note": "x"},
    "get_context": {"query": "x"}, "mindmap_search_nodes": {"query": "x"},
    "mindmap_get_context": {"node_id": "x"}, "list_projects": {}, "list_tags": {}, "list_properties": {},
    "read_note": {"note": "x"}, "links": {"note": "x"}, "related_notes": {"text": "x"},
    "suggest_links": {"note": "x"}}
pytestmark = pytest.mark.slow


def api(port: int, path: str, body: dict | None = None, **params) -> dict:
    query = urllib.parse.urlencode(params, doseq=True)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}{'?' + query if query else ''}", data=data,
                                 headers={"Content-Type": "application/json", "X-SKMemory-Client": "tests"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A real `skmemory serve` on the demo vault, embedded with the real model; shared by this module's tests."""
    root = tmp_path_factory.mktemp("mcp-live")
    shutil.copytree(DEMO_NOTES, root / "vault")
    with running_server(root, root / "vault") as server:
        assert api(server.port, "/api/status")["embeddings"] == "ready"
        yield server.port, server.env, root


def run(scenario) -> None:
    asyncio.run(scenario())


def check_matches_api(result, expected: dict) -> dict:
    """The tool's structured result and its JSON text both equal the JSON API's response."""
    assert not result.is_error, result.content
    assert result.structured_content == expected
    assert json.loads(result.content[0].text) == expected
    return expected


def text_of(result) -> str:
    assert not result.is_error, result.content
    return result.content[0].text


def approx_tokens(result) -> int:
    """What an agent reads of an answer (its JSON text), in the docs' approximation of 4 characters a token."""
    return len(result.content[0].text) // 4


def test_tools_are_listed_with_schemas(live, tmp_path):
    _, env, _ = live

    async def scenario():
        started = time.monotonic()
        async with mcp_session(env, tmp_path / "mcp.log") as session:
            print(f"\n`skmemory mcp` answered initialize {time.monotonic() - started:.2f} s after launch")
            assert session.server_info.name == "skmemory"
            listed = (await session.list_tools()).tools
        tools = {t.name: t for t in listed}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert "Example: " + tool.name + "(" in tool.description, tool.name
            assert "prefer" in tool.description.lower() and not tool.description.startswith(" "), tool.name
            assert tool.annotations.read_only_hint is True
            assert tool.output_schema and tool.output_schema["type"] == "object"
        size = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]))
        read = len(json.dumps([{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                               for t in listed]))  # what a client puts before the model on every conversation
        print(f"tools/list: {len(tools)} tools, {size:,} characters (~{size // 4:,} tokens), "
              f"{read:,} of them what the model reads")
        assert size <= 32_000  # 8,000 tokens at 4 characters a token; was 60,000 before the schemas were compacted
        assert read <= 27_000  # names, descriptions and input schemas: what the model itself reads
        assert '"title": "' not in json.dumps(hybrid := tools["hybrid_search"].input_schema)  # pydantic's echoes
        assert hybrid["properties"]["project"]["type"] == "string"  # optional, so not `anyOf [string, null]`
        assert hybrid["required"] == ["query"]
        assert hybrid["properties"]["limit"]["minimum"] == 1 and hybrid["properties"]["limit"]["maximum"] == 100
        assert hybrid["properties"]["limit"]["default"] == 10
        assert hybrid["properties"]["detail"]["enum"] == ["notes", "chunks"]
        assert {"results", "semantic_available"} <= set(tools["hybrid_search"].output_schema["required"])
        vault = tools["vault_search"].input_schema
        assert vault["properties"]["snippet_tokens"]["maximum"] == 64
        filters = vault["properties"]["filters"]["properties"]  # read from the contract's filter records
        assert set(filters) == {"folder", "tags", "type", "related", "properties", "created", "modified"}
        assert tools["memory_search"].input_schema["properties"]["mode"]["enum"] == ["frontmatter", "content", "xref"]
        budget = tools["get_context"].input_schema["properties"]["token_budget"]
        assert (budget["minimum"], budget["maximum"], budget["default"]) == (50, 100_000, 2000)
        assert tools["read_note"].input_schema["required"] == ["note"]
        assert "map" in tools["mindmap_search_nodes"].input_schema["properties"]

    run(scenario)


def test_every_tool_answers_in_rows_an_agent_can_afford(live, tmp_path):
    port, env, root = live

    async def scenario():
        async with mcp_session(env, tmp_path / "mcp.log") as s:
            hybrid = await s.call_tool("hybrid_search", {"query": "garden", "limit": 5})
            rows = hybrid.structured_content
            assert json.loads(text_of(hybrid)) == rows
            api_notes = api(port, "/api/search", q="garden", mode="hybrid", limit=6, group="document")
            assert [r["path"] for r in rows["results"]] == [h["path"] for h in api_notes["results"]][:5]
            top = rows["results"][0]
            assert top["path"] == "Projects/Garden plan.md" and top["title"] == "Garden plan"
            assert set(top) <= {"path", "title", "score", "heading", "lines", "snippet"}
            assert len(top["snippet"]) <= 151 and rows["semantic_available"] is True
            assert len({r["path"] for r in rows["results"]}) == len(rows["results"])  # one row per note

            chunks = await s.call_tool("hybrid_search", {"query": "garden", "limit": 5, "detail": "chunks"})
            assert chunks.structured_content == api(port, "/api/search", q="garden", mode="hybrid", limit=5)
            why = await s.call_tool("hybrid_search", {"query": "garden", "limit": 3, "explain": True})
            assert why.structured_content["results"][0]["explain"]["legs"]["keyword"]["rank"] == 1

            meaning = await s.call_tool("semantic_search", {"query": "baking bread at home"})
            assert meaning.structured_content["results"][0]["title"] == "Sourdough"
            tagged = await s.call_tool("tag_search", {"tags_all": ["project"], "tags_any": ["outdoors"]})
            assert {r["path"] for r in tagged.structured_content["results"]} == {"Projects/Compost log.md",
                                                                                  "Projects/Garden plan.md"}
            everywhere = await s.call_tool("search_all_projects", {"query": "bread", "mode": "keyword"})
            assert all(r["project"] for r in everywhere.structured_content["results"])

            body = {"query": "bread", "filters": {"tags": ["cooking"], "modified": {"after": "2000-01-01"}}}
            vault = (await s.call_tool("vault_search", body)).structured_content
            assert vault["results"][0]["path"] == "Projects/Sourdough.md"
            assert vault["total"] == api(port, "/api/vault_search", body)["total"]
            folder = (await s.call_tool("vault_search_by_folder", {"folder": "Projects"})).structured_content
            assert folder["total"] == 3 and not folder["more"]
            recent = (await s.call_tool("vault_recent_notes", {"limit": 3})).structured_content
            assert len(recent["results"]) == 3 and recent["total"] == 10 and recent["more"]
            assert (await s.call_tool("vault_search_by_property", {"properties": {"status": "active"}})
                    ).structured_content["results"]
            assert (await s.call_tool("vault_search_by_tag", {"tags": ["project"], "match": "any"})
                    ).structured_content["results"]

            for mode, query in (("frontmatter", {"tags": ["project"]}), ("content", "sourdough"),
                                ("xref", "Compost log")):
                found = (await s.call_tool("memory_search", {"mode": mode, "query": query})).structured_content
                assert found == memory_answer(api(port, "/api/memory_search", {"mode": mode, "query": query})), mode
                assert all("path" not in row and "file_path" in row for row in found["results"])  # spec 002's row
                assert found["results"], mode
            any_id = found["results"][0]["id"]  # xref takes the ids memory_search returns
            assert not (await s.call_tool("memory_search", {"mode": "xref", "query": any_id})).is_error

            projects = (await s.call_tool("list_projects", {})).structured_content
            notes = next(p for p in projects["projects"] if p["name"] == "notes")
            assert notes["notes"] == 10 and notes["meaning_search_ready"] and projects["model"] == "ready"
            tags = (await s.call_tool("list_tags", {"prefix": "proj"})).structured_content
            assert tags["results"] == [{"tag": t["tag"], "notes": t["count"]}
                                       for t in api(port, "/api/tags", prefix="proj")["tags"]]
            assert "project/garden" in [t["tag"] for t in tags["results"]]
            keys = (await s.call_tool("list_properties", {})).structured_content
            status = next(p for p in keys["results"] if p["key"] == "status")
            assert "active" in status["values"]

            info = (await s.call_tool("get_document", {"note": "Projects/Garden plan.md"})).structured_content
            assert [o["heading"] for o in info["outline"]] == ["Garden plan", "Spring", "Watering"]
            assert info["links"] == 1 and "content" not in info and "text" not in info
            section = (await s.call_tool("read_note", {"note": "Garden plan", "section": "Watering"})
                       ).structured_content
            file_lines = (root / "vault" / "Projects" / "Garden plan.md").read_text().splitlines(keepends=True)
            first, last = section["lines"]
            assert section["text"] == "".join(file_lines[first - 1:last]) and section["next_offset"] is None
            assert section["text"].endswith("\n")  # the last section, as the file has it: its final newline too
            assert section["text"].startswith("## Watering")
            by_lines = (await s.call_tool("read_note", {"note": info["path"], "start_line": top["lines"][0],
                                                        "end_line": top["lines"][1]})).structured_content
            assert by_lines["lines"] == top["lines"]
            pages, offset = [], 0
            while offset is not None:  # paging reads the whole file, in order, with nothing lost
                page = (await s.call_tool("read_note", {"note": info["path"], "max_chars": 200, "offset": offset})
                        ).structured_content
                pages.append(page["text"])
                offset = page["next_offset"]
            assert len(pages) > 1 and "".join(pages) == "".join(file_lines)  # the file's text exactly
            linked = (await s.call_tool("links", {"note": "Garden plan"})).structured_content
            assert linked["outgoing"] == [{"target": "Compost log", "path": "Projects/Compost log.md"}]
            back = (await s.call_tool("links", {"note": "Compost log", "direction": "backlinks"})).structured_content
            assert "Projects/Garden plan.md" in [b["path"] for b in back["backlinks"]]

            page = ("Composting at home: layer green kitchen scraps with brown leaves, keep the pile moist, turn it "
                    "every week. The garden beds get the finished compost in spring.")
            related = await s.call_tool("related_notes", {"text": page, "title": "Home composting", "limit": 3})
            found = related.structured_content
            assert found["results"][0]["path"] == "Projects/Compost log.md" and found["results"][0]["why"]
            assert approx_tokens(related) <= 3 * 100, approx_tokens(related)
            of_note = (await s.call_tool("related_notes", {"note": "Garden plan"})).structured_content
            assert "Projects/Garden plan.md" not in [r["path"] for r in of_note["results"]]  # itself left out
            suggested = (await s.call_tool("suggest_links", {"note": "Projects/Garden plan.md"})).structured_content
            assert suggested["style"] == "wikilink" and all(c["link"].startswith("[[")
                                                            for c in suggested["close_in_meaning"])
            assert "Projects/Compost log.md" not in [c["path"] for c in suggested["close_in_meaning"]]  # linked
            context = (await s.call_tool("get_context", {"query": "garden", "token_budget": 100})).structured_content
            full = api(port, "/api/context", q="garden", budget=100)
            assert [(i["path"], i["lines"], i["text"]) for i in context["items"]] == [
                (i["path"], i["lines"], i["content"]) for i in full["items"]]  # the API's passages, in its order
            assert context["items"] and context["tokens_used"] == full["tokens_used"] <= 100
            # What an agent cites a passage by, and nothing else (ids, absolute path, score: ~450 characters each).
            assert all(set(i) <= {"path", "heading", "lines", "text"} for i in context["items"]), context
            metadata = sum(len(json.dumps({k: v for k, v in i.items() if k != "text"})) for i in context["items"])
            assert metadata / len(context["items"]) < 120, context
            print(f"\nhybrid_search, 5 rows: ~{approx_tokens(hybrid)} tokens; with detail=chunks: "
                  f"~{approx_tokens(chunks)}")
            assert approx_tokens(hybrid) * 4 < approx_tokens(chunks)

    run(scenario)


def test_bad_calls_get_sentences_and_the_server_carries_on(live, tmp_path):
    _, env, _ = live

    async def scenario():
        async with mcp_session(env, tmp_path / "mcp.log") as s:
            async def error(tool: str, args: dict) -> str:
                result = await s.call_tool(tool, args)
                assert result.is_error, (tool, args)
                text = result.content[0].text
                for word in ("pydantic", "/api/", "README", "validation error", "Something went wrong"):
                    assert word.lower() not in text.lower(), (tool, args, text)
                return text

            assert "No project named 'ghost'. Known projects: notes" in await error(
                "hybrid_search", {"query": "x", "project": "ghost"})
            assert "Use YYYY-MM-DD" in await error(
                "vault_search", {"query": "x", "filters": {"created": {"after": "2026-13-01"}}})
            assert "Use YYYY-MM-DD" in await error(
                "vault_recent_notes", {"filters": {"modified": {"before": "last week"}}})
            assert "'limit' must be from 1 to 100; you sent 0" in await error("hybrid_search",
                                                                             {"query": "garden", "limit": 0})
            assert "'limit' must be a whole number" in await error("hybrid_search", {"query": "x", "limit": "ten"})
            assert "hybrid_search needs 'query'" in await error("hybrid_search", {})
            assert "'query' is empty" in await error("hybrid_search", {"query": ""})
            # The filters are checked by the contract's records, in the API's own sentences, for every tool.
            assert "Unknown filter 'colour'; use any of: folder" in await error(
                "vault_search", {"query": "x", "filters": {"colour": "red"}})
            # The listings' schema points to vault_search's filters; the call is still checked as strictly.
            assert "Unknown filter 'colour'; use any of: folder" in await error(
                "vault_search_by_tag", {"tags": ["x"], "filters": {"colour": "red"}})
            assert "YYYY-MM-DD" in await error("vault_search_by_folder", {"folder": "", "filters": {
                "created": {"after": "2026-13-01"}}})
            assert "'detail' must be one of 'notes' or 'chunks'" in await error(
                "hybrid_search", {"query": "x", "detail": "everything"})
            assert "at least one tag" in await error("tag_search", {})
            assert "1 to 3 keywords" in await error(
                "memory_search", {"mode": "content", "query": "one two three four five"})
            assert "No document" in await error("memory_search", {"mode": "xref", "query": "DEC-404"})
            assert "No note in project 'notes' has the path, title or id 'nope'" in await error(
                "get_document", {"note": "nope"})
            assert "No note" in await error("read_note", {"note": "../../etc/passwd"})
            # A name nearly right (a typo, a wrong folder) is answered with the notes it nearly names.
            assert "did you mean 'Projects/Garden plan.md'?" in await error("read_note", {"note": "Garden plna"})
            assert "did you mean 'Reference/tmux cheatsheet.md'?" in await error(
                "get_document", {"note": "Notes/tmux cheatsheet.md"})
            assert "comes before start_line" in await error(
                "read_note", {"note": "Projects/Garden plan.md", "start_line": 9, "end_line": 2})
            assert "no section 'Harvest'; its headings: 'Garden plan', 'Spring', 'Watering'" in await error(
                "read_note", {"note": "Projects/Garden plan.md", "section": "Harvest"})
            assert "past the end" in await error("read_note", {"note": "Projects/Garden plan.md", "offset": 10**6})
            assert "'direction' must be one of" in await error("links", {"note": "Garden plan", "direction": "up"})
            assert "token_budget" in await error("get_context", {"query": "x", "token_budget": 10})
            assert "no mind maps" in await error("mindmap_search_nodes", {"query": "x"})
            assert "Unknown tool" in await error("no_such_tool", {})
            for tool, args in [("hybrid_search", {}), ("search_all_projects", {}), ("get_context", {}),
                               ("vault_search", {}), ("memory_search", {"mode": "content"})]:
                # (the SDK's client cannot encode a lone surrogate; the JSON API's test sends those)
                sentence = await error(tool, {**args, "query": "kan\x00ban"})
                assert "U+0000" in sentence, (tool, sentence)
            still = await s.call_tool("hybrid_search", {"query": "garden"})
            assert not still.is_error and still.structured_content["results"]

    run(scenario)


def test_mcp_process_never_imports_the_model():
    probe = ("import sys; from webapp.cli import cli; from webapp.mcp_link import ServerLink; "
             "from webapp.mcp_server import build_server; build_server(ServerLink('.', 1)); "
             "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers', 'chromadb') if m in sys.modules]; "
             "assert not heavy, heavy")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def stop_server(port: int) -> None:
    """Stop a detached server by the pid its health reports, and wait until it is gone."""
    pid = api(port, "/api/health")["pid"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)


def test_starts_the_server_when_none_runs(vault, data_home, tmp_path):
    port = free_port()
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_PORT": str(port),
           "SKMEMORY_MODEL": str(tmp_path / "no-model")}  # no model: fast to start, and semantic search must fail
    subprocess.run(SKMEMORY + ["add", str(vault), "--name", "notes"], env=env, check=True, timeout=120,
                   capture_output=True)

    async def scenario():
        async with mcp_session(env, tmp_path / "mcp.log") as s:
            deadline = time.monotonic() + 90
            while True:  # the server it started indexes in the background
                result = await s.call_tool("hybrid_search", {"query": "sourdough"})
                assert not result.is_error, result.content
                if result.structured_content["results"]:
                    break
                assert time.monotonic() < deadline, "the started server never indexed the vault"
                await asyncio.sleep(0.5)
            assert result.structured_content["semantic_available"] is False  # hybrid fell back to keywords
            unavailable = await s.call_tool("semantic_search", {"query": "bread"})
            assert unavailable.is_error and "embedding model" in unavailable.content[0].text
            assert "SKMEMORY_MODEL" in unavailable.content[0].text
            first_pid = api(port, "/api/health")["pid"]
            stop_server(port)  # the user stops it mid-session: the next call starts it again
            again = await s.call_tool("vault_search_by_folder", {"folder": "Projects"})
            assert not again.is_error, again.content
            assert api(port, "/api/health")["pid"] != first_pid

    try:
        run(scenario)
        health = api(port, "/api/health")
        assert Path(health["home"]) == data_home.resolve()
        assert (data_home / "logs" / "mcp-serve.log").exists()
    finally:
        try:
            stop_server(port)
        except OSError:
            pass


def test_when_the_server_cannot_start_every_tool_says_how_to_start_it(vault, data_home, tmp_path):
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen(16)
    port = squatter.getsockname()[1]

    def refuse():  # a program that is not SK Memory: accepts and hangs up
        while True:
            try:
                conn, _ = squatter.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=refuse, daemon=True).start()
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_PORT": str(port)}
    subprocess.run(SKMEMORY + ["add", str(vault), "--name", "notes"], env=env, check=True, timeout=120,
                   capture_output=True)
    args = EVERY_TOOL_CALLED

    async def scenario():
        async with mcp_session(env, tmp_path / "mcp.log") as s:
            for tool, arguments in args.items():
                result = await s.call_tool(tool, arguments)
                assert result.is_error, tool
                text = result.content[0].text
                assert "`skmemory serve`" in text and f"port {port}" in text and "another program" in text, text

    try:
        run(scenario)
    finally:
        squatter.close()
    assert not (data_home / "logs" / "mcp-serve.log").exists()  # nothing was started on a taken port


def test_finds_the_server_with_only_the_environment_a_client_passes(vault, tmp_path, monkeypatch):
    """An AI client passes little more than HOME and PATH: the default data home's record leads to the server."""
    fake_home = tmp_path / "user"
    data_home = fake_home / ".local" / "share" / "skmemory"  # the default data folder on Linux, under HOME
    monkeypatch.setenv("HOME", str(fake_home))
    for name in ("SKMEMORY_HOME", "SKMEMORY_PORT", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    with running_server(tmp_path, vault, home=data_home, env={"HOME": str(fake_home)}) as server:
        params = StdioServerParameters(command=sys.executable, args=["-m", "webapp.cli", "mcp"], cwd=str(tmp_path))
        assert params.env is None  # the SDK then passes only its default environment

        async def scenario():
            with open(tmp_path / "mcp.log", "w") as err:
                async with stdio_client(params, errlog=err) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        result = await session.call_tool("hybrid_search", {"query": "sourdough"})
                        assert not result.is_error, result.content
                        assert result.structured_content["results"][0]["path"] == "Projects/Sourdough.md"

        run(scenario)
        assert api(server.port, "/api/health")["pid"] == server.proc.pid  # the running one, not a new one
        assert not (data_home / "logs" / "mcp-serve.log").exists()


def test_answers_stay_under_their_caps_on_a_real_vaults_largest_note(tmp_path):
    vault = corpus("logseq-docs")
    largest = max(vault.rglob("*.md"), key=lambda p: p.stat().st_size)  # pages/Changelog.md, 195 KB
    note = str(largest.relative_to(vault))
    # Keyword answers (no model): the rows and pages are cut the same way whichever leg found them.
    with running_server(tmp_path, vault, env={"SKMEMORY_MODEL": str(tmp_path / "no-model")}) as server:
        async def scenario():
            async with mcp_session(server.env, tmp_path / "mcp.log") as s:
                found = await s.call_tool("hybrid_search", {"query": "plugin"})
                assert len(found.structured_content["results"]) == 10 and approx_tokens(found) <= 800
                info = await s.call_tool("get_document", {"note": note})
                assert info.structured_content["outline_total"] > 0 and approx_tokens(info) <= 2_500
                page = await s.call_tool("read_note", {"note": note})
                assert page.structured_content["next_offset"] and len(page.structured_content["text"]) <= 8_000
                assert approx_tokens(page) <= 2_600  # 8,000 characters of text, escaped, and the envelope
                listed = await s.call_tool("vault_search_by_folder", {"folder": ""})
                assert len(listed.structured_content["results"]) == 20 and listed.structured_content["more"]
                assert approx_tokens(listed) <= 1_500
                linked = await s.call_tool("links", {"note": note, "limit": 5})
                assert len(linked.structured_content.get("outgoing", [])) <= 5
                print(f"\n{note}: search ~{approx_tokens(found)} tokens, get_document ~{approx_tokens(info)}, "
                      f"read_note page ~{approx_tokens(page)}, folder listing ~{approx_tokens(listed)}")

        run(scenario)


def test_published_schemas_accept_and_refuse_what_pydantic_s_own_do():
    """tools/list writes `anyOf` of bare types as a list of types; an enum or const beside one type stays an anyOf,
    since beside a list it would bind the other types too."""
    import jsonschema

    from webapp.mcp_tools.published import published

    schemas = [
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"anyOf": [{"type": "array", "items": {"type": "string"}, "maxItems": 2}, {"type": "null"}]},
        {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}]},
        {"anyOf": [{"type": "string", "enum": ["notes", "chunks"]}, {"type": "null"}]},
        {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "maxLength": 3}]},
    ]
    values = [None, "a", "abcd", "notes", 0, 5, 2.5, True, ["x"], ["x", "y", "z"], [1], {}]
    for schema in schemas:
        for compact in (published(schema, inputs=True), published(schema, inputs=False)):
            for value in values:
                assert jsonschema.Draft202012Validator(compact).is_valid(value) == \
                    jsonschema.Draft202012Validator(schema).is_valid(value), (schema, compact, value)
    assert published(schemas[0], inputs=False) == {"type": ["string", "null"]}
    assert "anyOf" in published(schemas[3], inputs=False)
