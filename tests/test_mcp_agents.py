"""What agents tripped on (issue 40, MCP rows 2, 3, 4 and 7), each through a real `skmemory mcp` over stdio: the
SDK's own client, and a bare JSON-RPC client for what the SDK's client cannot send (half a UTF-16 pair).

No model is loaded (SKMEMORY_MODEL names a missing folder): these rows are about the tools' answers, not ranking.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading

import pytest

from support import REPO, SKMEMORY, mcp_session, running_server

pytestmark = pytest.mark.slow

# A note whose text holds characters Python's splitlines() breaks at (U+2028, form feed, NEL), Windows line ends,
# a heading used twice and a final newline: line numbers and sections must follow the file's "\n" alone.
ODD = ("# Field notes\r\n\r\nIntro line.\r\n\r\n## Notes\r\n\r\nFirst notes.\u2028still the first line\r\n\r\n"
       "## Weather\r\n\r\nRain\x0cthen sun\x85and wind.\r\n\r\n## Notes\r\n\r\nSecond notes, on the heron.\r\n\r\n"
       "## End\r\n\r\nThe end.\r\n")


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """`skmemory serve` with two projects, `awk` (first by name) and `hub`."""
    root = tmp_path_factory.mktemp("mcp-agents")
    awk, hub = root / "awk", root / "hub"
    for folder in (awk / "a", awk / "b", hub):
        folder.mkdir(parents=True)
    (awk / "Field notes.md").write_bytes(ODD.encode())
    (awk / "a" / "Index.md").write_text("# Index\n\nThe index of folder a: kestrels.\n")
    (awk / "b" / "Index.md").write_text("# Index\n\nThe index of folder b: buzzards.\n")
    (awk / "Draft.md").write_text("---\ndraft: true\nstatus: open\n---\n# Draft\n\nA draft about kestrels.\n")
    (awk / "Final.md").write_text("---\ndraft: false\n---\n# Final\n\nA finished page about kestrels.\n")
    (hub / "Hub.md").write_text("# Hub\n\nThe hub project also mentions kestrels.\n")
    env = {"SKMEMORY_MODEL": str(root / "no-model")}
    with running_server(root, None, env=env, projects=set()) as server:
        for name in ("awk", "hub"):
            added = subprocess.run(SKMEMORY + ["add", str(root / name), "--name", name], env=server.env,
                                   capture_output=True, text=True, timeout=120)
            assert added.returncode == 0, added.stderr
        indexed = subprocess.run(SKMEMORY + ["index", "awk"], env=server.env, capture_output=True, text=True,
                                 timeout=120)
        assert indexed.returncode == 0, indexed.stderr
        yield server, root


async def error(session, tool: str, args: dict) -> str:
    result = await session.call_tool(tool, args)
    assert result.is_error, (tool, args, result.content)
    return result.content[0].text


def test_half_a_utf16_pair_gets_an_answer_not_silence(live, tmp_path):
    """Row 2: the SDK's reader dropped the line, and the client waited for ever."""
    server, _ = live
    proc = subprocess.Popen(SKMEMORY + ["mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(tmp_path / "mcp.log", "w"), env=server.env, cwd=str(REPO))
    answers: list[dict] = []

    def read_all():
        for line in proc.stdout:
            answers.append(json.loads(line))

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()

    def send(line: str) -> None:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    def answer_to(request_id: int, timeout: float = 30) -> dict:
        for _ in range(int(timeout * 20)):
            found = [a for a in answers if a.get("id") == request_id]
            if found:
                return found[0]
            threading.Event().wait(0.05)
        raise AssertionError(f"no answer to request {request_id}: the client would wait for ever")

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bare", "version": "1"}}}))
        assert answer_to(1)["result"]["serverInfo"]["name"] == "skmemory"
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        # As JSON allows and a TypeScript client sends it: "\ud800" alone, escaped (json.dumps writes it so).
        for request_id, (tool, args) in enumerate([("hybrid_search", {"query": "kan\ud800ban"}),
                                                    ("vault_search", {"query": "x", "filters": {"folder": "a\udc00"}}),
                                                    ("read_note", {"note": "Draft\ud83d"})], start=2):
            send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                             "params": {"name": tool, "arguments": args}}))
            result = answer_to(request_id)["result"]
            assert result["isError"] and "half of a UTF-16 pair" in result["content"][0]["text"], result
        send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "hybrid_search", "arguments": {"query": "kestrels", "project": "awk"}}}))
        assert not answer_to(9)["result"].get("isError")  # and the session goes on
    finally:
        proc.stdin.close()
        proc.wait(20)


def test_initialize_is_answered_before_the_sdk_is_imported_and_as_the_sdk_answers_it(live, tmp_path):
    """Row 6: `initialize` waited ~1 s for the SDK's import; now mcp_wire.py answers it, with the SDK's words."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from webapp import mcp_wire

    assert mcp_wire.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS  # an SDK upgrade that changes them fails here
    light = subprocess.run([sys.executable, "-c", "import sys, webapp.mcp_wire; "
                            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"],
                           cwd=str(REPO), capture_output=True, text=True, timeout=60)
    assert light.stdout.strip() == "[]", light.stdout + light.stderr  # the early answer needs none of the SDK
    server, _ = live
    for asked in (*HANDSHAKE_PROTOCOL_VERSIONS, "2099-01-01", None):
        params = {"capabilities": {}, "clientInfo": {"name": "bare", "version": "1"}}
        if asked:
            params["protocolVersion"] = asked
        lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        log = tmp_path / f"mcp-{asked}.log"
        done = subprocess.run(SKMEMORY + ["mcp"], input="".join(json.dumps(m) + "\n" for m in lines), text=True,
                              stdout=subprocess.PIPE, stderr=open(log, "w"), env=server.env, cwd=str(REPO),
                              timeout=60)
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        assert "differs" not in log.read_text(), log.read_text()  # the SDK's own answer, dropped, was the same
        if asked is None:  # not an initialize the SDK takes: it answers, in its own words
            assert answers[0]["id"] == 1 and answers[0]["error"]["code"] == -32602, answers
            continue
        assert [a["id"] for a in answers] == [1, 2], answers  # initialize answered once, then the session goes on
        agreed = answers[0]["result"]["protocolVersion"]
        assert agreed == (asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1])
        assert len(answers[1]["result"]["tools"]) == 21


def test_every_answer_says_which_project_it_searched(live, tmp_path):
    """Row 3: with several projects and none named, tools searched the first and did not say so."""
    server, _ = live

    async def scenario():
        async with mcp_session(server.env, tmp_path / "mcp.log") as s:
            found = (await s.call_tool("hybrid_search", {"query": "kestrels"})).structured_content
            assert found["project"] == "awk" and found["other_projects"] == ["hub"]
            named = (await s.call_tool("hybrid_search", {"query": "kestrels", "project": "hub"})).structured_content
            assert named["project"] == "hub" and "other_projects" not in named
            vault = (await s.call_tool("vault_search", {"query": "kestrels"})).structured_content
            assert vault["project"] == "awk" and vault["other_projects"] == ["hub"]
            everywhere = (await s.call_tool("search_all_projects", {"query": "kestrels"})).structured_content
            assert "other_projects" not in everywhere and {r["project"] for r in everywhere["results"]} == {
                "awk", "hub"}

    asyncio.run(scenario())


def test_lines_and_sections_follow_the_file(live, tmp_path):
    """Row 4: U+2028, NEL, VT and FF split lines in read_note but not in the index; a repeated heading dropped out
    of the outline; pages lost the final newline and CRLF."""
    server, root = live
    raw = (root / "awk" / "Field notes.md").read_bytes().decode()
    file_lines = raw.split("\n")

    async def scenario():
        async with mcp_session(server.env, tmp_path / "mcp.log") as s:
            info = (await s.call_tool("get_document", {"note": "Field notes.md", "project": "awk"})).structured_content
            assert [o["heading"] for o in info["outline"]] == ["Field notes", "Notes", "Weather", "Notes", "End"]
            weather = (await s.call_tool("read_note", {"note": "Field notes.md", "project": "awk",
                                                       "section": "Weather"})).structured_content
            first, last = weather["lines"]
            assert file_lines[first - 1].startswith("## Weather")
            assert weather["text"].startswith("## Weather") and "heron" not in weather["text"]
            assert weather["text"] == "\n".join(file_lines[first - 1:last])
            second = info["outline"][3]["line"]
            by_line = (await s.call_tool("read_note", {"note": "Field notes.md", "project": "awk",
                                                       "start_line": second, "end_line": second + 2})
                       ).structured_content
            assert by_line["text"].startswith("## Notes") and "heron" in by_line["text"]
            whole = (await s.call_tool("read_note", {"note": "Field notes.md", "project": "awk"})).structured_content
            assert whole["text"] == raw and whole["text"].endswith("\r\n")  # CRLF and the final newline kept

    asyncio.run(scenario())


def test_small_answers_say_what_they_mean(live, tmp_path):
    """Row 7's list, one call each."""
    server, _ = live

    async def scenario():
        async with mcp_session(server.env, tmp_path / "mcp.log") as s:
            keys = (await s.call_tool("list_properties", {"project": "awk"})).structured_content["results"]
            draft = next(k for k in keys if k["key"] == "draft")
            assert sorted(draft["values"]) == [False, True]  # booleans, not Python's "True", which matched no note
            value = next(v for v in draft["values"] if v is True)
            shown = (await s.call_tool("vault_search_by_property", {"properties": {"draft": value}, "project": "awk"})
                     ).structured_content
            assert [r["path"] for r in shown["results"]] == ["Draft.md"]
            tags = await s.call_tool("list_tags", {"limit": 500, "project": "awk"})
            assert not tags.is_error, tags.content
            assert "past the end" in await error(s, "read_note", {"note": "Draft.md", "project": "awk",
                                                                  "start_line": 400})
            said = await error(s, "hybrid_search", {"query": "kestrels", "limt": 3})
            assert "no argument 'limt'; did you mean 'limit'?" in said
            said = await error(s, "read_note", {"note": "Draft.md", "project": "awk", "offset": -1})
            assert "must be at least 0" in said and "greater than equal" not in said
            said = await error(s, "vault_search", {"query": "  ", "project": "awk"})  # names tools that exist
            assert "vault_search_by_tag" in said and " search_by_tag" not in said
            said = await error(s, "read_note", {"note": "Index", "project": "awk"})
            assert "'a/Index.md'" in said and "'b/Index.md'" in said and "pass the path" in said
            both = (await s.call_tool("read_note", {"note": "a/Index.md", "project": "awk"})).structured_content
            assert "kestrels" in both["text"]

    asyncio.run(scenario())


def test_every_answer_keeps_under_one_cap(live, tmp_path):
    """Row 8: hybrid_search limit=100 with chunks answered 237k characters, links limit=500 61k, get_context with
    a 100k budget 96k; now one cap, stated in every tool's description, cuts a list from its end and says so."""
    server, root = live
    hub = root / "hub"
    for i in range(120):  # notes long enough that 100 of them in full pass the cap
        (hub / f"Long {i:03}.md").write_text(f"# Long {i}\n\n" + " ".join(
            f"kestrels hover over field {i} while the wind turns, line {j}." for j in range(60)) + "\n"
            + "".join(f"\nSee [[Hub]] from {i}." for _ in range(1)))
    indexed = subprocess.run(SKMEMORY + ["index", "hub"], env=server.env, capture_output=True, text=True,
                             timeout=300)
    assert indexed.returncode == 0, indexed.stderr

    async def scenario():
        async with mcp_session(server.env, tmp_path / "mcp.log") as s:
            listed = await s.list_tools()
            assert all("at most 40,000 characters" in t.description for t in listed.tools)
            for tool, args in [("hybrid_search", {"query": "kestrels", "project": "hub", "limit": 100,
                                                  "detail": "chunks"}),
                               ("get_context", {"query": "kestrels wind", "project": "hub", "token_budget": 100000}),
                               ("links", {"note": "Hub", "project": "hub", "limit": 500})]:
                result = await s.call_tool(tool, args)
                assert not result.is_error, result.content
                text = result.content[0].text
                assert len(text) <= 40_000, (tool, len(text))
                body = json.loads(text)
                if tool == "hybrid_search":  # 100 passages in full: cut from the end, and said so
                    assert body["more"] is True and "rows left out" in body["cut"], list(body)
                    assert 10 < len(body["results"]) < 100
                assert result.structured_content == body

    asyncio.run(scenario())


MALFORMED = [  # (line, JSON-RPC code, words the sentence holds): the six lines issue 60 found unanswered, and more
    ('{"jsonrpc": "2.0", "id": 5, "method": "tools/li', -32700, "not JSON"),
    ("hello", -32700, "not JSON"),
    ("[1,2,3]", -32600, "batch"),
    ('[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]', -32600, "batch"),
    ('{"id": 7, "method": "tools/list"}', -32600, '"jsonrpc": "2.0"'),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', -32600, "an id is a string or an integer"),
    ('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"hybrid_search","arguments":"tomatoes"}}',
     -32602, "arguments are a JSON object"),
]


def test_every_malformed_line_gets_its_json_rpc_error_with_a_sentence(live, tmp_path):
    """Issue 60: six malformed lines got no reply at all (the client waited for ever), and arguments that are not an
    object got -32602 with an empty message; each now gets JSON-RPC's error, with what to send instead, and the
    session goes on."""
    server, _ = live
    proc = subprocess.Popen(SKMEMORY + ["mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(tmp_path / "mcp.log", "w"), env=server.env, cwd=str(REPO))
    replies: list[dict] = []
    threading.Thread(target=lambda: [replies.append(json.loads(line)) for line in proc.stdout], daemon=True).start()

    def send(line: str) -> None:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    def next_reply(seen: int, timeout: float = 30) -> dict:
        for _ in range(int(timeout * 20)):
            if len(replies) > seen:
                return replies[seen]
            threading.Event().wait(0.05)
        raise AssertionError(f"no reply after {seen} replies: the client would wait for ever ({replies})")

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bare", "version": "1"}}}))
        assert next_reply(0)["id"] == 1
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for line, code, words in MALFORMED:
            seen = len(replies)
            send(line)
            reply = next_reply(seen)
            assert reply["error"]["code"] == code and words in reply["error"]["message"], (line, reply)
            assert reply["id"] == (8 if code == -32602 else 7 if "id\": 7" in line else None), (line, reply)
        refusals = []
        for request_id, arguments in enumerate([{"query": "kestrels", "limit": True, "project": "awk"},
                                                {"query": "kestrels", "project": ""},
                                                {"query": "kestrels", "project": "nope"},
                                                {"query": "kestrels", "limt": 3}], start=20):
            seen = len(replies)
            send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                             "params": {"name": "hybrid_search", "arguments": arguments}}))
            result = next_reply(seen)["result"]
            assert result["isError"], (arguments, result)
            refusals.append(result["content"][0]["text"])
        assert "'limit' of hybrid_search is a number, not true" in refusals[0]  # was taken as limit 1
        assert "'project' of hybrid_search is empty" in refusals[1]  # was taken as "the default project"
        assert not [r for r in refusals if r.startswith("Error executing tool")], refusals  # one style
        seen = len(replies)
        send(json.dumps({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
                         "params": {"name": "hybrid_search", "arguments": {"query": "kestrels", "project": "awk"}}}))
        assert not next_reply(seen)["result"].get("isError")  # and the session goes on
    finally:
        proc.stdin.close()
        proc.wait(20)
