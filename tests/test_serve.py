"""A real `skmemory serve` process: the API over HTTP, `skmemory search` through it, one owner of the index."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from pathlib import Path

import pytest

from indexer.model import openvino_encoder
from support import SKMEMORY, free_port, running_server


def fetch(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as resp:
        return json.loads(resp.read())


def env_home(env: dict) -> Path:
    return Path(env["SKMEMORY_HOME"])


def run(*args, env, cwd=None):
    return subprocess.run(SKMEMORY + list(args), capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


@pytest.fixture
def server(vault, data_home, tmp_path):
    with running_server(tmp_path, vault, home=data_home, timeout=120) as live:
        yield live.port, live.env, live.proc


def test_cli_search_goes_through_the_running_server(server):
    port, env, _ = server
    out = run("search", "garden", "--json", env=env)
    assert out.returncode == 0, out.stderr
    via_cli = json.loads(out.stdout)
    via_api = fetch(port, "/api/search?q=garden&mode=hybrid&limit=10&scope=project")
    assert via_cli == via_api  # --json prints the API's response unchanged
    assert via_cli["results"][0]["path"] == "Projects/Garden plan.md"
    text = run("search", "keep a program alive after I disconnect", env=env)
    # Close in meaning and holding "program": found by both.
    assert "tmux cheatsheet" in text.stdout.splitlines()[0] and text.stdout.startswith("[hybrid ")


def test_server_owns_the_index(server):
    _, env, _ = server
    status = json.loads(run("status", "notes", "--json", env=env).stdout)
    assert status["owner"]["role"] == "skmemory serve" and status["embeddings_available"] is True
    watch = run("watch", "notes", env=env)
    assert watch.returncode == 2 and "already keeps every project indexed and watched" in watch.stderr


def search_api(port: int, **params) -> dict:
    return fetch(port, "/api/search?" + urllib.parse.urlencode(params))


def test_every_project_command_goes_through_the_running_server(server, vault, tmp_path):
    """add, index, status, projects, rename and remove while `skmemory serve` runs: the server sees each at once."""
    port, env, proc = server
    more = tmp_path / "more"
    more.mkdir()
    (more / "Herons.md").write_text("# Herons\n\nA grey heron stands still in the shallows for an hour.\n")

    added = run("add", str(more), "--name", "birds", env=env)
    assert added.returncode == 0, added.stderr
    assert "is indexing and watching it now" in added.stdout
    deadline = time.monotonic() + 60  # no restart: the server opened the project when it was added
    while not search_api(port, q="heron", mode="keyword", project="birds")["results"]:
        assert time.monotonic() < deadline, "the server never indexed the project added with `skmemory add`"
        time.sleep(0.3)

    (vault / "Kestrels.md").write_text("# Kestrels\n\nA kestrel hovers over the verge, watching for voles.\n")
    indexed = run("index", "notes", env=env)  # handed to the server and followed to the end
    assert indexed.returncode == 0, indexed.stderr
    assert "owns the index" in indexed.stderr and "notes: files parsed" in indexed.stderr
    assert search_api(port, q="kestrel", mode="keyword", project="notes")["results"]  # done when it returns
    status = json.loads(run("status", "notes", "--json", env=env).stdout)
    assert status["pending"] == 0 and status["owner"]["pid"] == proc.pid

    listed = json.loads(run("projects", "--json", env=env).stdout)
    assert {p["name"]: p["documents"] for p in listed}["birds"] == 1

    renamed = run("rename", "birds", "waders", env=env)
    assert renamed.returncode == 0, renamed.stderr
    assert search_api(port, q="heron", mode="keyword", project="waders")["results"]
    with pytest.raises(urllib.error.HTTPError) as gone:
        search_api(port, q="heron", mode="keyword", project="birds")
    assert gone.value.code == 404

    removed = run("remove", "waders", env=env)
    assert removed.returncode == 0, removed.stderr
    assert (more / "Herons.md").exists()
    assert "waders" not in {p["name"] for p in json.loads(run("projects", "--json", env=env).stdout)}
    relative = run("add", "more", "--name", "again", env=env, cwd=tmp_path)  # relative to this shell, not the server
    assert relative.returncode == 0, relative.stderr
    assert {p["name"]: p["root"] for p in json.loads(run("projects", "--json", env=env).stdout)}["again"] == str(more)
    assert proc.poll() is None


def test_the_server_follows_projects_registered_behind_its_back(server, tmp_path):
    """A project added or renamed by another process (an older CLI) is opened on first use, and Re-index works."""
    from indexer.config import Settings
    from indexer.registry import Registry

    port, env, _ = server
    folder = tmp_path / "side"
    folder.mkdir()
    (folder / "Owls.md").write_text("# Owls\n\nA barn owl hunts by sound along the hedge at dusk.\n")
    registry = Registry(Settings.from_env(env["SKMEMORY_HOME"]).home)
    registry.add(folder, "side")
    deadline = time.monotonic() + 60
    while not search_api(port, q="owl", mode="keyword", project="side")["results"]:
        assert time.monotonic() < deadline, "the server never opened the project registered behind its back"
        time.sleep(0.3)
    registry.rename("side", "hedgerow")
    (folder / "Voles.md").write_text("# Voles\n\nField voles run in tunnels under the grass.\n")
    form = urllib.request.Request(f"http://127.0.0.1:{port}/projects/hedgerow/reindex", data=b"", method="POST",
                                  headers={"Origin": f"http://127.0.0.1:{port}"})
    with urllib.request.urlopen(form, timeout=30) as response:
        assert "Re-indexing &#39;hedgerow&#39;" in response.read().decode()
    deadline = time.monotonic() + 60
    while not search_api(port, q="voles", mode="keyword", project="hedgerow")["results"]:
        assert time.monotonic() < deadline, "Re-index of a project renamed behind the server's back did nothing"
        time.sleep(0.3)


def test_commands_find_the_server_from_the_data_home_alone(server):
    """The server records its port in the data home: no SKMEMORY_PORT needed, and no second server for it."""
    port, env, proc = server
    bare = {k: v for k, v in env.items() if k != "SKMEMORY_PORT"}
    status = json.loads(run("status", "notes", "--json", env=bare).stdout)
    assert status["owner"] == {"role": "skmemory serve", "pid": proc.pid, "url": f"http://127.0.0.1:{port}/"}
    second = run("serve", "--port", str(free_port()), env=bare)
    assert second.returncode == 2
    assert f"already running for this data folder at http://127.0.0.1:{port}/" in second.stderr


def test_server_follows_a_new_file_and_stops_cleanly(server, vault):
    port, env, proc = server
    (vault / "Otters.md").write_text("# Otters\n\nSea otters hold hands while they sleep.\n")
    deadline = time.monotonic() + 30
    while not fetch(port, "/api/search?q=otters&mode=keyword")["results"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert not (env_home(env) / "server.json").exists()  # nothing left pointing at a stopped server
    after = run("index", "notes", env=env)  # the lock was released
    assert after.returncode == 0, after.stderr and "owns the index" not in after.stderr


def test_second_server_on_the_same_port_is_refused(server, tmp_path):
    port, env, _ = server
    second = run("serve", env={**env, "SKMEMORY_HOME": str(tmp_path / "another-home")})
    assert second.returncode == 2 and f"Port {port} is already in use" in second.stderr


def test_cli_search_without_a_server_opens_the_index(vault, data_home):
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_PORT": str(free_port())}
    run("add", str(vault), "--name", "notes", env=env)
    run("index", "notes", env=env)
    out = run("search", "sourdough", "--mode", "keyword", "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "Projects/Sourdough.md"
    bad = run("search", "x", "--project", "ghost", env=env)
    assert bad.returncode == 2 and "No project named 'ghost'" in bad.stderr


def _words_vault(root: Path, notes: int) -> Path:
    """Notes with enough text that embedding them takes a while on a CPU."""
    import random

    rng = random.Random(5)
    words = ("heron otter reed delta tide ledger ferry salt harbour lantern meadow orchard kiln loom anvil barley "
             "mill quarry thatch weir").split()
    root.mkdir()
    for n in range(notes):
        body = "\n\n".join(" ".join(rng.choice(words) for _ in range(180)) + "." for _ in range(4))
        (root / f"Note {n}.md").write_text(f"# Note {n}\n\n{body}\n")
    return root


def _words_project(tmp_path: Path, data_home: Path, notes: int) -> tuple[Path, dict]:
    """A words vault added as project "words" to a data home with no server; its folder and the commands' env."""
    vault = _words_vault(tmp_path / "words", notes)
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_PORT": str(free_port())}
    assert run("add", str(vault), "--name", "words", env=env).returncode == 0
    return vault, env


@pytest.mark.slow
def test_ctrl_c_while_embedding_stops_saying_what_was_saved_and_the_next_run_goes_on(tmp_path, data_home):
    _, env = _words_project(tmp_path, data_home, 150)
    # Small model batches, so that embedding outlasts the second waited below on any machine (a CI run once
    # embedded all 150 notes before the signal) and a stop is asked for between many of them.
    env["SKMEMORY_EMBED_BATCH"] = "2"
    # Ctrl+C as a terminal delivers it, whatever this run inherited: a shell that starts a job in the background
    # (`nohup … &`) ignores SIGINT for it, and an ignored signal stays ignored in every process it starts.
    proc = subprocess.Popen(SKMEMORY + ["index", "words"], env=env, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = ""
    while "chunks embedded" not in seen:  # the progress bar's label: embedding has begun
        line = proc.stderr.readline()
        assert line, f"index ended before embedding:\n{seen}"
        seen += line
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130
    assert "Stopped. words: 150 files parsed and" in rest and "`skmemory index words` goes on from there" in rest
    status = json.loads(run("status", "words", "--json", env=env).stdout)
    assert status["documents"] == 150 and status["pending"] > 0  # parsed and kept; the rest waits
    again = run("index", "words", env=env)
    assert again.returncode == 0, again.stderr
    assert "0 added, 0 updated" in again.stderr  # nothing parsed twice
    assert json.loads(run("status", "words", "--json", env=env).stdout)["pending"] == 0


@pytest.mark.slow
def test_ctrl_c_stops_the_server_saying_so(tmp_path, vault, data_home):
    with running_server(tmp_path, vault, home=data_home, timeout=180) as server:
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(30) == 0
        log = server.log.read_text()
        assert "Stopping SK Memory" in log and "Stopped. Everything indexed so far is saved" in log
        assert not (data_home / "server.json").exists()


@pytest.mark.slow
def test_two_servers_started_at_once_on_one_data_home_leave_one_that_serves_every_project(tmp_path, vault, data_home):
    env = {**os.environ, "SKMEMORY_HOME": str(data_home)}
    assert run("add", str(vault), "--name", "notes", env=env).returncode == 0
    ports = [free_port(), free_port()]
    procs = [subprocess.Popen(SKMEMORY + ["serve", "--port", str(port)], env=env, stderr=subprocess.PIPE, text=True)
             for port in ports]
    try:
        deadline = time.monotonic() + 120
        while all(p.poll() is None for p in procs):
            assert time.monotonic() < deadline, "neither server gave way"
            time.sleep(0.3)
        loser = next(p for p in procs if p.poll() is not None)
        winner_port = ports[1 - procs.index(loser)]
        assert loser.returncode == 2
        assert f"already running for this data folder at http://127.0.0.1:{winner_port}/" in loser.stderr.read()
        record = json.loads((data_home / "server.json").read_text())
        assert record["port"] == winner_port
        status = json.loads(run("status", "notes", "--json", env=env).stdout)
        assert status["owner"]["role"] == "skmemory serve" and status["owner"]["url"].endswith(f":{winner_port}/")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(30)


def found(port: int, word: str) -> bool:
    try:
        return bool(search_api(port, q=word, mode="keyword", project="words")["results"])
    except urllib.error.HTTPError:  # the project is not open yet
        return False


@pytest.mark.slow
def test_a_server_started_while_index_holds_a_project_takes_it_once_index_ends(tmp_path, data_home):
    vault, env = _words_project(tmp_path, data_home, 120)
    index = subprocess.Popen(SKMEMORY + ["index", "words"], env=env, stderr=subprocess.PIPE, text=True)
    while "files parsed" not in (line := index.stderr.readline()):
        assert line, "index ended before it held the project"
    serve = subprocess.Popen(SKMEMORY + ["serve"], env=env, stderr=subprocess.DEVNULL)
    try:
        port = int(env["SKMEMORY_PORT"])
        deadline = time.monotonic() + 60
        while True:  # the server is up, and says who holds the project
            try:
                held = fetch(port, "/api/status")
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.3)
        entry = next(p for p in held["projects"] if p["project"] == "words")
        if index.poll() is None:
            assert f"skmemory index (pid {index.pid})" in (entry.get("open_error") or "")
            # Searching is reading: the project answers as indexed so far (issue 40 row 30: it answered 404)
            answer = search_api(port, q="heron", mode="keyword", project="words")
            assert "results" in answer
        index.communicate(timeout=300)
        deadline = time.monotonic() + 60
        while not found(port, "heron"):
            assert time.monotonic() < deadline, "the project stayed closed after index let go of it"
            time.sleep(0.5)
        vault.joinpath("Late.md").write_text("# Late\n\nA kingfisher arrived after the server took over.\n")
        deadline = time.monotonic() + 60
        while not found(port, "kingfisher"):
            assert time.monotonic() < deadline, "the project is searchable but not watched"
            time.sleep(0.5)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(30)


def _wait_for(port: int, ready, timeout: float = 180) -> dict:
    """The server's status once ready(status) holds (fails after timeout seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = fetch(port, "/api/status")
            if ready(state):
                return state
        except OSError:
            pass
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.3)


def test_embedding_paused_stays_paused_across_a_start_and_resume_embeds_the_rest(tmp_path, data_home):
    _, env = _words_project(tmp_path, data_home, 60)
    said = run("pause", env=env)
    assert said.returncode == 0 and "next `skmemory serve` starts with embedding paused" in said.stdout
    proc = subprocess.Popen(SKMEMORY + ["serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = int(env["SKMEMORY_PORT"])
    try:
        state = _wait_for(port, lambda s: s["embeddings"] == "ready" and any(
            p.get("documents") == 60 for p in s["projects"]))
        time.sleep(3)  # the embedder would have taken passages by now
        state = fetch(port, "/api/status")
        words = next(p for p in state["projects"] if p["project"] == "words")
        assert state["embedding_paused"] is True and words["embedded"] == 0 and words["pending"] > 0
        shown = run("status", "words", env=env).stdout
        assert "embedding: paused (`skmemory resume` goes on)" in shown
        how = "int8 ONNX on"
        if openvino_encoder.available():  # int8 with bf16 between where the CPU computes bf16
            how = "int8/bf16 OpenVINO on" if openvino_encoder.precision() == "bf16" else "int8 OpenVINO on"
        assert how in shown and "at low priority" in shown
        found = fetch(port, "/api/search?q=heron&mode=keyword&project=words")
        assert found["results"], "keyword search works while embedding is paused"

        said = run("resume", env=env)
        assert said.returncode == 0 and said.stdout.strip() == "Embedding goes on."
        state = _wait_for(port, lambda s: next(p for p in s["projects"] if p["project"] == "words")["pending"] == 0)
        assert state["embedding_paused"] is False
        assert not (data_home / "embedding-paused").exists()

        # Paused through the API while it works: the count holds still.
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/embedding", data=b'{"paused": true}',
                                         headers={"Content-Type": "application/json", "X-SKMemory-Client": "test"},
                                         method="POST")
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert json.loads(resp.read()) == {"embedding_paused": True, "server": True}
        assert fetch(port, "/api/status")["embedding_paused"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    assert (data_home / "embedding-paused").exists()
    said = run("resume", env=env).stdout.strip()
    assert said == "Embedding is not paused: the next `skmemory serve` embeds as usual."
