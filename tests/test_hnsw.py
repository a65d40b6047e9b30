"""SKMEMORY_VECTOR_SEARCH=hnsw: semantic search through Chroma's HNSW index (embedded, and on a real `chroma run`),
its recall measured against exact search and shown in status; exact search stays the default."""
from __future__ import annotations

import time

import pytest

from indexer.config import Settings
from indexer.engine import Engine
from indexer.errors import SKMemoryError
from indexer.home import Home
from indexer.background import BackgroundIndexer
from indexer.search.hnsw import HnswVectors
from indexer.search.calibration import calibrate
from indexer import SearchRequest


def chunks(response):
    return [(r["chunk_id"], round(r["similarity"], 4)) for r in response["results"]]


@pytest.fixture(params=["embedded", "server"])
def chroma_url(request):
    return request.getfixturevalue("chroma_server") if request.param == "server" else None


def test_hnsw_answers_as_exact_search_does_and_says_how_well(data_home, vault, real_embedder, monkeypatch,
                                                             chroma_url):
    if chroma_url:
        monkeypatch.setenv("SKMEMORY_CHROMA_URL", chroma_url)
    exact_home = Home(Settings.from_env(), embedder=real_embedder)
    exact_home.add_project(vault, "notes")
    engine = Engine(exact_home)
    try:
        engine.embed_pending("notes")
        questions = ["bread", "how do I keep a server running after logout", "what to plant in spring"]
        expected = {q: chunks(engine.search(SearchRequest(q, mode="semantic", limit=5))) for q in questions}
        tagged = chunks(engine.search(SearchRequest("green", mode="semantic", tags_all=["outdoors"])))
    finally:
        engine.close()

    monkeypatch.setenv("SKMEMORY_VECTOR_SEARCH", "hnsw")
    home = Home(Settings.from_env(), embedder=real_embedder)
    engine = Engine(home)
    try:
        engine.writer("notes")  # a start in HNSW mode, as `skmemory serve` opens the project
        index = engine.index("notes")
        assert isinstance(index.cache.inner, HnswVectors)  # nothing of the vectors held here
        measured = calibrate(engine.writer("notes"))
        assert measured["recall_at_10"] >= 0.98 and measured["vectors"] == len(index.cache)
        assert measured["ladder"][-1] == [measured["ef_search"], measured["recall_at_10"]]
        for q in questions:  # a demo-sized project: HNSW finds the exact answer, rescored to the exact scores
            assert chunks(engine.search(SearchRequest(q, mode="semantic", limit=5))) == expected[q]
        assert chunks(engine.search(SearchRequest("green", mode="semantic", tags_all=["outdoors"]))) == tagged
        status = engine.status()
        assert status["vector_search"] == "hnsw"
        assert status["projects"][0]["hnsw"]["ef_search"] == measured["ef_search"]
    finally:
        engine.close()


def test_the_server_measures_recall_once_nothing_waits(data_home, vault, real_embedder, monkeypatch):
    monkeypatch.setenv("SKMEMORY_VECTOR_SEARCH", "hnsw")
    home = Home(Settings.from_env(), embedder=real_embedder)
    home.add_project(vault, "notes")
    service = BackgroundIndexer(home, role="test").start()
    try:
        assert service.wait_idle(timeout=120, embeddings=True)
        deadline = time.monotonic() + 60
        while "hnsw" not in service.status()["projects"][0] and time.monotonic() < deadline:
            time.sleep(0.5)
        project = service.status()["projects"][0]
        assert project["hnsw"]["recall_at_10"] >= 0.98 and project["hnsw"]["vectors"] == project["embedded"]
    finally:
        service.stop()


def test_exact_stays_the_default_and_a_wrong_mode_says_what_to_write(data_home, monkeypatch):
    assert Settings.from_env().vector_search == "exact"
    monkeypatch.setenv("SKMEMORY_VECTOR_SEARCH", "approximate")
    with pytest.raises(SKMemoryError, match="SKMEMORY_VECTOR_SEARCH must be one of exact, hnsw"):
        Settings.from_env()


def test_a_deleted_chroma_index_is_restored_from_the_index_s_own_copies(data_home, vault, real_embedder,
                                                                          monkeypatch):
    """Row 24 of issue 40: in HNSW mode a deleted Chroma folder answered every meaning search with nothing, and
    said nothing. Its vectors are restored from SQLite's copies at the next open (no passage embedded again)."""
    import shutil

    monkeypatch.setenv("SKMEMORY_VECTOR_SEARCH", "hnsw")
    home = Home(Settings.from_env(), embedder=real_embedder)
    info = home.add_project(vault, "notes")
    questions = ["baking bread with a sourdough starter", "tmux cheatsheet"]
    engine = Engine(home)
    try:
        engine.reindex("notes")
        engine.embed_pending("notes")
        expected = {q: chunks(engine.search(SearchRequest(q, mode="semantic", limit=5))) for q in questions}
        embedded = engine.status()["projects"][0]["embedded"]
    finally:
        engine.close()
    assert all(expected.values())

    shutil.rmtree(info.index_dir / "chroma")
    engine = Engine(Home(Settings.from_env(), embedder=real_embedder))
    try:
        project = engine.writer("notes")  # as `skmemory serve` opens it
        for q in questions:
            assert chunks(engine.search(SearchRequest(q, mode="semantic", limit=5))) == expected[q]
        status = project.status()  # what the server's status shows
        assert status["embedded"] == embedded and status["pending"] == 0  # restored, not embedded again
        assert project.vectors.count() == embedded
        assert "restored" in status["repair"] and "notes" in status["repair"]
    finally:
        engine.close()


@pytest.mark.parametrize("harm", ["header", "data_level0", "chroma.sqlite3", "data_level0 cut", "data_level0 zeroed"])
def test_a_scribbled_chroma_index_is_rebuilt_from_the_index_s_own_copies(data_home, tmp_path, real_embedder,
                                                                           monkeypatch, harm):
    """Row 24 of issue 40 and issue 55: in HNSW mode a scribbled Chroma index failed every meaning search ("Error
    loading hnsw index"), and a scribbled data_level0.bin crashed the process that read it (a segfault at every
    start). It is read in a process of its own at the next open, set aside, and rebuilt from SQLite's copies."""
    import os

    vault = tmp_path / "many"
    vault.mkdir()
    topics = ["bread", "tides", "violins", "glaciers", "beetles", "bridges", "comets", "orchards"]
    for i in range(1200):  # enough vectors for Chroma to keep an HNSW index on disk
        (vault / f"note {i}.md").write_text(f"# Note {i}\n\nA short note about {topics[i % 8]}, number {i}.\n")
    monkeypatch.setenv("SKMEMORY_VECTOR_SEARCH", "hnsw")
    home = Home(Settings.from_env(), embedder=real_embedder)
    info = home.add_project(vault, "notes")
    engine = Engine(home)
    try:
        engine.reindex("notes")
        engine.embed_pending("notes")
        expected = chunks(engine.search(SearchRequest("glaciers", mode="semantic", limit=5)))
    finally:
        engine.close()
    assert len(expected) == 5

    chroma = info.index_dir / "chroma"
    files = {"header": list(chroma.glob("*/header.bin")), "data_level0": list(chroma.glob("*/data_level0.bin")),
             "chroma.sqlite3": [chroma / "chroma.sqlite3"]}[harm.split()[0]]
    assert files and all(f.exists() for f in files), f"Chroma kept no {harm} on disk"
    for path in files:
        size = path.stat().st_size
        with open(path, "r+b") as f:
            if harm.endswith("cut"):  # issue 62: a file cut short (a full disk) answered one neighbour, the wrong one
                f.truncate(size // 3)
            elif harm.endswith("zeroed"):  # ... and so did one zeroed
                f.write(bytes(size))
            else:  # noise over the middle: the file is still there, and still its size
                f.seek(size // 4)
                f.write(os.urandom(max(1, size // 2)))
    engine = Engine(Home(Settings.from_env(), embedder=real_embedder))
    try:
        project = engine.writer("notes")  # as `skmemory serve` opens it: never crashes, whatever the damage
        assert list(info.index_dir.glob("chroma.damaged-*"))  # kept aside for a look, never opened here
        found = engine.search(SearchRequest("glaciers", mode="semantic", limit=5))
        assert [c for c, _ in chunks(found)] == [c for c, _ in expected]
        status = project.status()
        assert status["pending"] == 0 and "damaged" in status["repair"] and "restored" in status["repair"]
    finally:
        engine.close()


def test_a_server_comes_up_over_a_scribbled_hnsw_file_and_serves_every_project(tmp_path):
    """Issue 55: a scribbled data_level0.bin made `serve` segfault at every start, in the damage check itself. A real
    server starts over it, rebuilds that project's Chroma index from SQLite's copies and says so, and answers every
    project by meaning meanwhile and after."""
    import json
    import os
    import urllib.parse
    import urllib.request

    from support import running_server

    vault = tmp_path / "many"
    vault.mkdir()
    topics = ["bread", "tides", "violins", "glaciers", "beetles", "bridges", "comets", "orchards"]
    for i in range(1200):  # enough vectors for Chroma to keep an HNSW index on disk
        (vault / f"note {i}.md").write_text(f"# Note {i}\n\nA short note about {topics[i % 8]}, number {i}.\n")
    env = {"SKMEMORY_VECTOR_SEARCH": "hnsw"}

    def ask(server, query: str) -> list[str]:
        url = f"{server.url}/api/search?" + urllib.parse.urlencode({"q": query, "mode": "semantic", "limit": 5})
        with urllib.request.urlopen(url, timeout=60) as response:
            return [r["chunk_id"] for r in json.load(response)["results"]]

    with running_server(tmp_path, vault, env=env) as server:
        expected = ask(server, "glaciers")
    assert len(expected) == 5
    home = tmp_path / "home"
    scribbled = list(home.glob("projects/*/chroma/*/data_level0.bin"))
    assert scribbled
    for data_level0 in scribbled:
        size = data_level0.stat().st_size
        with open(data_level0, "r+b") as f:
            f.seek(size // 4)
            f.write(os.urandom(size // 2))
    with running_server(tmp_path, None, home=home, env=env) as server:
        assert server.proc.poll() is None  # up, not crashed
        assert ask(server, "glaciers") == expected
        with urllib.request.urlopen(f"{server.url}/api/status", timeout=60) as response:
            (project,) = [p for p in json.load(response)["projects"] if p["project"] == "notes"]
        assert "damaged" in project["repair"] and "restored" in project["repair"], project
    assert "Traceback" not in server.log.read_text()
