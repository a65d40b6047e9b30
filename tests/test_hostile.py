"""Hostile folders and careless neighbours: each test writes the bad input itself (real files, real symlinks)."""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from indexer.engine import Engine
from indexer.errors import SKMemoryError
from indexer.text.frontmatter import read_frontmatter
from support import SKMEMORY, app_client, free_port, running_server
from webapp import create_app
from indexer import SearchRequest

BASE = "http://127.0.0.1:8765"
BAD_NAME = os.fsdecode(b"b-\xff.md")  # a file name that is not UTF-8, as a Windows or old Linux tool may write
BILLION_LAUGHS = "---\n" + "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi")) + "---\nThe body.\n"


def run(*args, env, timeout=300):
    return subprocess.run(SKMEMORY + list(args), capture_output=True, text=True, env=env, timeout=timeout)


def cli_env(data_home: Path) -> dict:
    return {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_PORT": str(free_port())}


def hostile_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder with a non-UTF-8 name, a link out of it, a link inside it, and two ordinary notes."""
    root, outside = tmp_path / "r", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("the vault combination is kumquat\n")
    (root / "a.md").write_text("# A\n\nAlpha note about herons.\n")
    (root / BAD_NAME).write_text("# B\n\nBravo note.\n")
    (root / "c.md").write_text("# C\n\nCharlie note about herons.\n")
    (root / "inner").mkdir()
    (root / "inner" / "n.md").write_text("# Inner\n\nA note reached through a link inside the folder.\n")
    os.symlink(outside / "secret.txt", root / "p.txt")
    os.symlink("inner/n.md", root / "ok-link.md")
    return root, outside


@pytest.mark.slow
def test_bad_names_and_links_out_are_listed_and_everything_else_is_indexed(tmp_path, data_home):
    root, _ = hostile_folder(tmp_path)
    env = cli_env(data_home)
    assert run("add", str(root), "--name", "r", env=env).returncode == 0
    indexed = run("index", "r", "--no-embed", env=env)
    assert indexed.returncode == 0, indexed.stderr
    status = json.loads(run("status", "r", "--json", env=env).stdout)
    reasons = {e["path"]: e["error"] for e in status["errors"]}
    assert "not valid UTF-8" in reasons["b-\\xff.md"]
    assert "link to a file outside the project's folder" in reasons["p.txt"]
    assert status["documents"] == 4  # a.md, c.md, inner/n.md and the link inside the folder
    leaked = json.loads(run("search", "kumquat", "--mode", "keyword", "--json", env=env).stdout)
    assert leaked["results"] == []
    found = json.loads(run("search", "herons", "--mode", "keyword", "--json", env=env).stdout)
    assert {r["path"] for r in found["results"]} == {"a.md", "c.md"}
    (root / BAD_NAME).rename(root / "b.md")  # renamed as told: indexed, and the status line goes
    run("index", "r", "--no-embed", env=env)
    status = json.loads(run("status", "r", "--json", env=env).stdout)
    assert [e["path"] for e in status["errors"]] == ["p.txt"] and status["documents"] == 5


@pytest.mark.slow
def test_a_bad_name_under_serve_does_not_stop_the_watcher(vault, data_home, tmp_path):
    with running_server(tmp_path, vault, home=data_home, timeout=180) as server:
        (vault / BAD_NAME).write_text("# B\n\nBravo.\n")
        time.sleep(1.5)  # watchfiles gives up on that name: the watcher must start again
        (vault / "Otters.md").write_text("# Otters\n\nSea otters hold hands while they sleep.\n")
        deadline = time.monotonic() + 60
        query = urllib.parse.urlencode({"q": "otters", "mode": "keyword"})
        while True:
            with urllib.request.urlopen(f"{server.url}/api/search?{query}", timeout=30) as response:
                if json.load(response)["results"]:
                    break
            assert time.monotonic() < deadline, "an edit after the bad file name was never indexed"
            time.sleep(0.3)
        with urllib.request.urlopen(f"{server.url}/api/status", timeout=30) as response:
            status = json.load(response)
        assert status["watcher"]["running"] and status["watcher"]["restarts"] >= 1
        notes = next(p for p in status["projects"] if p["project"] == "notes")
        assert any(e["path"] == "b-\\xff.md" and "not valid UTF-8" in e["error"] for e in notes["errors"])
        with urllib.request.urlopen(f"{server.url}/status", timeout=30) as response:
            assert "The file watcher had to start again" in response.read().decode()


def test_an_alias_bomb_in_frontmatter_is_refused():
    assert len(BILLION_LAUGHS) < 500
    meta = read_frontmatter(BILLION_LAUGHS.splitlines())  # it used to take minutes and gigabytes (bench: the note)
    assert meta.data == {} and meta.body_start == 0  # the block stays in the body as text
    assert "expands to more than 20,000 values" in meta.warnings[0]
    shared = read_frontmatter("---\nbase: &b {k: 1}\nother: *b\ntags: [x]\n---\nbody".splitlines())
    assert shared.data == {"base": {"k": 1}, "other": {"k": 1}, "tags": ["x"]} and not shared.warnings
    huge = read_frontmatter(["---", "notes: " + json.dumps("x" * 70_000), "---", "body"])
    assert huge.data == {} and "more than the 64 KB" in huge.warnings[0]


def test_the_file_system_root_and_a_folder_holding_the_data_home_are_refused(home, data_home, tmp_path):
    with pytest.raises(SKMemoryError, match="the whole file system"):
        home.add_project("/")
    with pytest.raises(SKMemoryError, match="holds SK Memory's own data folder"):
        home.add_project(data_home.parent)


def test_the_data_home_inside_a_project_is_never_indexed(home, tmp_path):
    root = home.settings.home.parent  # registered the old way (straight into the registry), around the home
    (root / "Note.md").write_text("# Note\n\nAn ordinary note.\n")
    (home.settings.home / "stray.md").write_text("# Stray\n\nApp data that looks like a note.\n")
    home.registry.add(root, "around")
    with home.open_project("around") as project:
        project.sync()
        paths = {r[0] for r in project.store.query("SELECT rel_path FROM documents")}
    assert paths == {"Note.md"}


@pytest.fixture
def api(home, tmp_path):
    root, outside = hostile_folder(tmp_path)
    os.symlink(outside, root / "linkout")
    home.add_project(root, "r")
    engine = Engine(home)
    engine.reindex("r")
    app = create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})
    yield app_client(app), root, outside
    engine.close()


MAP = {"title": "Garden", "nodes": [{"id": "n1", "title": "Beds"}]}


def test_map_paths_that_leave_the_folder_or_break_the_file_system_are_400(api):
    client, root, outside = api
    save = lambda path: client.post("/api/mindmaps/save", json={"project": "r", "path": path, "map": MAP},  # noqa: E731
                                    base_url=BASE)
    through_link = save("linkout/sub/x.mmdata")
    assert through_link.status_code == 400 and "leads out of the project's folder" in through_link.get_json()["detail"]
    assert list(outside.rglob("*.mmdata")) == []
    assert save("x\x00.mmdata").status_code == 400
    assert "too long" in save("a" * 300 + ".mmdata").get_json()["detail"]
    assert client.get("/api/mindmaps/map?project=r&path=x%00.mmdata", base_url=BASE).status_code == 400
    assert client.get("/mindmap?project=r&path=x%00.mmdata", base_url=BASE).status_code == 400
    (outside / "y.mmdata").write_text(json.dumps({**MAP, "revision": 1}))
    read_out = client.get("/api/mindmaps/map?project=r&path=linkout/y.mmdata", base_url=BASE)
    assert read_out.status_code == 400
    deep = "[" * 100_000 + "]" * 100_000
    for path in ("/api/mindmaps/save", "/api/vault_search"):
        nested = client.post(path, data=deep, content_type="application/json", base_url=BASE)
        assert nested.status_code == 400 and "nested too deeply" in nested.get_json()["detail"]


def test_saving_a_map_keeps_its_permissions(api):
    client, root, _ = api
    first = client.post("/api/mindmaps/save", json={"project": "r", "path": "Maps/G.mmdata", "map": MAP}, base_url=BASE)
    assert first.status_code == 200
    path = root / "Maps" / "G.mmdata"
    os.chmod(path, 0o664)
    revision = json.loads(path.read_text())["revision"]
    again = client.post("/api/mindmaps/save", json={"project": "r", "path": "Maps/G.mmdata",
                                                    "map": {**MAP, "revision": revision}}, base_url=BASE)
    assert again.status_code == 200
    assert path.stat().st_mode & 0o777 == 0o664


@pytest.mark.slow
def test_searches_run_beside_a_writer_and_beside_each_other(vault, data_home):
    env = cli_env(data_home)
    run("add", str(vault), "--name", "notes", env=env)
    run("index", "notes", "--no-embed", env=env)
    writer = subprocess.Popen(SKMEMORY + ["watch", "notes"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while "Watching" not in (writer.stderr.readline() or ""):  # it holds the writer lock from here on
            assert writer.poll() is None and time.monotonic() < deadline
        searches = [subprocess.Popen(SKMEMORY + ["search", "sourdough", "--mode", "keyword", "--json"], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
        for search in searches:
            out, err = search.communicate(timeout=300)
            assert search.returncode == 0, err
            assert json.loads(out)["results"][0]["path"] == "Projects/Sourdough.md"
    finally:
        writer.terminate()
        writer.wait(30)


def chain(depth: int) -> dict:
    return {"title": "Deep", "nodes": [{"id": f"n{i}", "parent": f"n{i - 1}" if i else None, "title": f"step {i}"}
                                       for i in range(depth + 1)]}


def test_deep_or_huge_maps_are_refused_and_the_deepest_allowed_is_read_whole(api):
    client, root, _ = api
    save = lambda path, value: client.post("/api/mindmaps/save", json={"project": "r", "path": path,  # noqa: E731
                                                                       "map": value}, base_url=BASE)
    deep = save("deep.mmdata", chain(9000))  # was 92 s and 731 MB of index
    assert deep.status_code == 400 and "may be at most 100 levels deep" in deep.get_json()["detail"]
    wide = {"title": "Wide", "nodes": [{"id": "r", "parent": None, "title": "root"}]
            + [{"id": f"c{i}", "parent": "r", "title": f"child {i}"} for i in range(10_000)]}
    huge = save("wide.mmdata", wide)
    assert huge.status_code == 400 and "at most 10,000" in huge.get_json()["detail"]
    assert not (root / "deep.mmdata").exists() and not (root / "wide.mmdata").exists()
    allowed = save("ok.mmdata", chain(100))
    assert allowed.status_code == 200
    document_id = allowed.get_json()["map"]["document_id"]
    outline = client.get(f"/api/documents/{document_id}?project=r", base_url=BASE).get_json()["outline"]
    assert len(outline) == 101


def test_a_machine_written_giant_is_searchable_by_keyword_and_embedded_only_up_to_its_budget(home, tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    lines = [f"2026-11-30T10:{i // 60 % 60:02d}:{i % 60:02d} worker-{i % 7} request id={i:08x} status=200\n"
             for i in range(40_000)]
    (root / "app.log").write_text("".join(lines))
    (root / "Note.md").write_text("# Note\n\nA short note about the worker pool.\n")
    home.add_project(root, "logs")
    with home.open_project("logs") as project:
        project.sync()
        counts = project.store.counts()
        assert counts["pending"] <= home.settings.machine_embed_chunks + 1  # the log's budget plus the note
        status = project.status()
    warning = next(e["error"] for e in status["errors"] if e["path"] == "app.log")
    assert f"Only the first {home.settings.machine_embed_chunks:,} of its" in warning
    engine = Engine(home)
    try:
        late = engine.search(SearchRequest("id=00009c3f", mode="keyword",
                                           project="logs"))["results"]  # line 40,000: past the budget
        assert late and late[0]["path"] == "app.log"
    finally:
        engine.close()


def _document_id(client, rel_path: str) -> str:
    listed = client.get("/api/documents?project=r", base_url=BASE).get_json()["documents"]
    return next(d["document_id"] for d in listed if d["path"] == rel_path)


def test_a_note_swapped_for_a_link_out_is_never_read_through_a_line_range(api):
    client, root, outside = api
    doc = _document_id(client, "a.md")
    before = client.get(f"/api/documents/{doc}?project=r&start_line=1&end_line=5", base_url=BASE)
    assert "herons" in before.get_json()["content"]
    (root / "a.md").unlink()
    os.symlink(outside / "secret.txt", root / "a.md")  # the swap a careless sync tool or an attacker makes
    answer = client.get(f"/api/documents/{doc}?project=r&start_line=1&end_line=5", base_url=BASE)
    assert answer.status_code == 404
    assert "kumquat" not in answer.get_data(as_text=True)
    assert "outside the project's folder" in answer.get_json()["detail"]


def test_a_note_swapped_for_a_fifo_is_refused_at_once_not_waited_on(api):
    client, root, _ = api
    doc = _document_id(client, "c.md")
    (root / "c.md").unlink()
    os.mkfifo(root / "c.md")  # nothing ever writes to it: reading it the plain way would hang forever
    answer = client.get(f"/api/documents/{doc}?project=r&start_line=1", base_url=BASE)
    assert answer.status_code == 404 and "not a regular file" in answer.get_json()["detail"]


def test_the_indexer_refuses_a_fifo_and_a_link_out_swapped_in_and_goes_on(home, tmp_path):
    root, outside = hostile_folder(tmp_path)
    home.add_project(root, "r")
    engine = Engine(home)
    try:
        (root / "a.md").unlink()
        os.mkfifo(root / "a.md")
        engine.reindex("r")
        reasons = {e["path"]: e["error"] for e in home.status("r")["errors"]}
        assert "not a regular file" in reasons["a.md"]
        found = engine.search(SearchRequest("herons", mode="keyword", project="r"))["results"]
        assert [r["path"] for r in found] == ["c.md"]
    finally:
        engine.close()


def test_a_nul_or_a_lone_surrogate_is_refused_with_a_sentence_by_every_route(api):
    client, _, _ = api
    rules = [r for r in client.application.url_map.iter_rules() if r.endpoint != "static"]
    assert len(rules) > 30
    for rule in rules:
        path = rule.rule
        for name in rule.arguments:
            path = path.replace(f"<{name}>", "x").replace(f"<path:{name}>", "x").replace(f"<int:{name}>", "1")
        for method in sorted(rule.methods & {"GET", "POST", "PUT", "DELETE"}):
            if method == "GET":
                answers = [client.get(path, base_url=BASE, query_string={"q": "kan\x00ban", "query": "kan\x00ban",
                                                                          "tag": "a\x00", "project": "r"})]
            else:
                answers = [client.open(path, method=method, base_url=BASE, content_type="application/json",
                                       data='{"query": "kan' + bad + 'ban", "project": "r", "tags": ["a"]}')
                           for bad in ("\\u0000", "\\ud800")]
            for answer in answers:
                text = answer.get_data(as_text=True)
                assert answer.status_code == 400, (method, path, answer.status_code, text[:200])
                assert "U+0000" in text or "U+D800" in text, (method, path, text[:200])
    # The same words without the bad character are searched as usual.
    assert client.get("/api/search?q=herons&mode=keyword&project=r", base_url=BASE).status_code == 200
    address = client.get("/api/documents/a%00b?project=r", base_url=BASE)
    assert address.status_code == 400 and "document id in the address" in address.get_json()["detail"]


def test_folders_that_are_links_are_listed_in_status_and_a_short_note_with_a_stray_nul_is_indexed(home, tmp_path):
    root, outside = hostile_folder(tmp_path)
    os.symlink(outside, root / "linkout")  # a folder link leaving the project
    os.symlink(".", root / "inner" / "loop")  # a folder link looping back
    (root / "stray.md").write_bytes(b"# Stray\n\nA short note about \x00kestrels.\n")
    home.add_project(root, "r")
    with home.open_project("r") as project:
        report = project.sync()
        errors = {e["path"]: e for e in project.status()["errors"]}
        docs = {r[0] for r in project.store.query("SELECT rel_path FROM documents")}
    assert "links to folders are not followed" in errors["linkout/"]["error"]
    assert "links to folders are not followed" in errors["inner/loop/"]["error"]
    assert "stray.md" in docs and "NUL byte" in errors["stray.md"]["error"] and errors["stray.md"]["indexed"]
    assert report.vanished == 0


def test_a_new_file_gone_before_it_is_read_is_counted_as_vanished_not_unchanged(home, tmp_path):
    from indexer.ingest.pipeline import index_file

    root, _ = hostile_folder(tmp_path)
    home.add_project(root, "r")
    with home.open_project("r") as project:
        outcome, removed, added = index_file(project.store, root, "never-there.md", project.counter, 2**20)
    assert (outcome, removed, added) == ("vanished", [], 0)
