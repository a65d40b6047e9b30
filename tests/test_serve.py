"""A real `skmemory serve` process: the API over HTTP, `skmemory search` through it, one owner of the index."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request

import pytest

from support import SKMEMORY, free_port, running_server


def fetch(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as resp:
        return json.loads(resp.read())


def run(*args, env):
    return subprocess.run(SKMEMORY + list(args), capture_output=True, text=True, env=env, timeout=300)


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
    assert via_cli["results"][0]["relative_path"] == "Projects/Garden plan.md"
    text = run("search", "keep a program alive after I disconnect", env=env)
    assert "tmux cheatsheet" in text.stdout.splitlines()[0] and "[semantic" in text.stdout


def test_server_owns_the_index(server):
    _, env, _ = server
    refused = run("index", "notes", env=env)
    assert refused.returncode == 2 and "in use by skmemory serve" in refused.stderr
    status = json.loads(run("status", "notes", "--json", env=env).stdout)
    assert status["owner"]["role"] == "skmemory serve" and status["embeddings_available"] is True


def test_server_follows_a_new_file_and_stops_cleanly(server, vault):
    port, env, proc = server
    (vault / "Otters.md").write_text("# Otters\n\nSea otters hold hands while they sleep.\n")
    deadline = time.monotonic() + 30
    while not fetch(port, "/api/search?q=otters&mode=keyword")["results"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    after = run("index", "notes", env=env)  # the lock was released
    assert after.returncode == 0, after.stderr


def test_second_server_on_the_same_port_is_refused(server):
    port, env, _ = server
    second = run("serve", env=env)
    assert second.returncode == 2 and f"Port {port} is already in use" in second.stderr


def test_cli_search_without_a_server_opens_the_index(vault, data_home):
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_PORT": str(free_port())}
    run("add", str(vault), "--name", "notes", env=env)
    run("index", "notes", env=env)
    out = run("search", "sourdough", "--mode", "keyword", "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["relative_path"] == "Projects/Sourdough.md"
    bad = run("search", "x", "--project", "ghost", env=env)
    assert bad.returncode == 2 and "No project named 'ghost'" in bad.stderr
