"""mindmap_search_nodes and mindmap_get_context through the SDK's MCP client against a real `skmemory serve`."""
from __future__ import annotations

import json
import shutil
import time
import urllib.error

import pytest

from support import DEMO_NOTES, GARDEN, running_server
from test_mcp import api, check_matches_api, mcp_session, run
from webapp.mcp_tools.answers import mindmap_answer

MAP = "Maps/Garden.mmdata"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A real server on the demo notes plus the Garden map, embedded with the real model."""
    root = tmp_path_factory.mktemp("mindmap-live")
    shutil.copytree(DEMO_NOTES, root / "vault")
    (root / "vault" / "Maps").mkdir()
    shutil.copy(GARDEN, root / "vault" / MAP)
    with running_server(root, root / "vault") as server:
        yield server.port, server.env, root / "vault"


def wait_for_revision(port: int, revision: int, timeout: float = 60) -> dict:
    """Wait until the watcher has re-indexed the active map at this revision and its chunks are embedded."""
    deadline = time.monotonic() + timeout
    while True:
        active = api(port, "/api/mindmaps/active")
        if active["indexed_revision"] == revision and not active["pending_embeddings"]:
            return active
        assert time.monotonic() < deadline, f"the map was never re-indexed at revision {revision}: {active}"
        time.sleep(0.2)


def test_the_mindmap_tools_through_a_real_mcp_client(live, tmp_path):
    port, env, vault = live

    async def scenario():
        async with mcp_session(env, tmp_path / "mcp.log") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert tools["mindmap_search_nodes"].input_schema["required"] == ["query"]
            assert tools["mindmap_get_context"].input_schema["required"] == ["node_id"]
            assert {"results", "index_stale", "index_state", "map"} <= \
                set(tools["mindmap_search_nodes"].output_schema["required"])

            # No one has opened a map in the window: the project's only map answers, or the one named.
            unopened = await s.call_tool("mindmap_search_nodes", {"query": "irrigation timer"})
            assert not unopened.is_error, unopened.content
            assert unopened.structured_content["map"]["path"] == MAP
            assert unopened.structured_content["results"][0]["node_id"] == "watering"
            named = await s.call_tool("mindmap_get_context", {"node_id": "watering", "map": MAP, "project": "notes"})
            assert named.structured_content["node"]["title"] == "Watering"
            assert api(port, "/api/mindmaps/active")["map"] is None  # the window's open map is left alone
            missing = await s.call_tool("mindmap_search_nodes", {"query": "x", "map": "Maps/Nope.mmdata"})
            assert missing.is_error and "Maps/Nope.mmdata" in missing.content[0].text

            # The web page opens a map this way; the tools then work on it.
            opened = api(port, "/api/mindmaps/active", {"project": "notes", "path": MAP})
            assert opened["map"]["title"] == "Garden" and opened["index_state"] == "current"

            query = "how long does the irrigation run each morning"
            found = check_matches_api(await s.call_tool("mindmap_search_nodes", {"query": query, "limit": 3}),
                                      mindmap_answer(api(port, "/api/mindmaps/search_nodes", q=query, limit=3)))
            top = found["results"][0]
            assert (top["node_id"], top["node_path"], found["index_stale"]) == ("watering", ["Garden", "Watering"],
                                                                                False)
            assert "path" not in top and "content" not in top and top["snippet"]  # path: a file path everywhere
            context = check_matches_api(await s.call_tool("mindmap_get_context", {"node_id": top["node_id"]}),
                                        mindmap_answer(api(port, "/api/mindmaps/context", node_id=top["node_id"])))
            assert context["node"]["body"].startswith("A drip line on a timer")
            assert [a["title"] for a in context["ancestors"]] == ["Garden"]
            assert {r["title"] for r in context["relationships"]} == {"Tomatoes"}
            assert context["node"]["attachments"][0]["path"].endswith(".pdf")

            # A save through the API refreshes the index before it answers.
            content = api(port, "/api/mindmaps/map?project=notes&path=" + MAP)["content"]
            next(n for n in content["nodes"] if n["id"] == "watering")["title"] = "Irrigation"
            saved = api(port, "/api/mindmaps/save", {"project": "notes", "path": MAP, "map": content})
            assert saved["map"]["revision"] == 2 and saved["index_state"] == "current"
            renamed = (await s.call_tool("mindmap_search_nodes", {"query": "drip line timer"})).structured_content
            assert renamed["results"][0]["title"] == "Irrigation" and renamed["indexed_revision"] == 2

            # Another program edits the file: the watcher re-indexes it under the same document id.
            on_disk = json.loads((vault / MAP).read_text())
            compost = next(n for n in on_disk["nodes"] if n["id"] == "compost")
            compost["body"] += " A worm tower in the middle bed turns kitchen scraps into castings."
            on_disk["revision"] = 3
            (vault / MAP).write_text(json.dumps(on_disk, indent=2))
            refreshed = wait_for_revision(port, 3)
            assert refreshed["map"]["document_id"] == opened["map"]["document_id"]
            worms = (await s.call_tool("mindmap_search_nodes", {"query": "worm tower castings"})).structured_content
            assert worms["results"][0]["node_id"] == "compost" and worms["index_state"] == "current"

            for word in ("zebrastripe", "Kowalczyk", "quarksprocket"):  # private notes and attachment names
                answer = await s.call_tool("mindmap_search_nodes", {"query": word})
                assert not answer.is_error
                assert word.lower() not in json.dumps(answer.structured_content["results"]).lower()
            read = (await s.call_tool("read_note", {"note": MAP})).structured_content  # the map through read_note
            assert "Irrigation" in read["text"] and "zebrastripe" not in read["text"].lower()
            assert "kowalczyk" not in read["text"].lower() and "private_notes" not in read["text"]
            by_lines = await s.call_tool("read_note", {"note": MAP, "start_line": 1, "end_line": 40})
            assert by_lines.is_error and "without text lines" in by_lines.content[0].text
            doc_id = refreshed["map"]["document_id"]
            with pytest.raises(urllib.error.HTTPError) as refused:  # the raw file by lines, through the API
                api(port, f"/api/documents/{doc_id}", project="notes", start_line=1, end_line=40)
            assert refused.value.code == 400
            assert "private notes are never returned" in json.loads(refused.value.read())["detail"]
            gone = await s.call_tool("mindmap_get_context", {"node_id": "ghost"})
            assert gone.is_error and "no node 'ghost'" in gone.content[0].text

    run(scenario)
