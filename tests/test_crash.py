"""A kill -9 in the middle of embedding, then a restart: no duplicate, orphan or lost chunk."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace

import pytest
from pathlib import Path

from indexer.config import Settings
from indexer.home import Home
from indexer.store.vectors import VectorStore

SKMEMORY = [sys.executable, "-m", "webapp.cli"]


def write_vault(root: Path, notes: int = 120) -> None:
    root.mkdir()
    topics = ["rivers", "volcanoes", "bread", "chess", "orbits", "gardens", "violins", "glaciers"]
    for i in range(notes):
        topic = topics[i % len(topics)]
        sections = "\n\n".join(
            f"## Part {j}\n\nNote {i} part {j} discusses {topic} and how {topic} change over seasons, "
            f"with example number {i * 10 + j} and a remark on measurement."
            for j in range(4)
        )
        (root / f"note-{i:03}.md").write_text(f"# Note {i} on {topic}\n\n{sections}\n")


def embedded_count(db: Path) -> tuple[int, int]:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT sum(embed_state='embedded'), sum(embed_state='pending') FROM chunks").fetchone()
        finally:
            conn.close()
        return int(row[0] or 0), int(row[1] or 0)
    except sqlite3.Error:
        return 0, 0


def test_kill_during_embedding_then_restart_is_consistent(data_home, tmp_path):
    vault = tmp_path / "vault"
    write_vault(vault)
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_EMBED_BATCH": "8"}
    subprocess.run(SKMEMORY + ["add", str(vault), "--name", "crash"], check=True, env=env, capture_output=True)
    info = Home(Settings.from_env(data_home)).project("crash")
    db = info.index_dir / "index.sqlite"

    proc = subprocess.Popen(SKMEMORY + ["index", "crash"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        embedded, pending = embedded_count(db)
        if embedded >= 16 and pending > 0:
            break
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.05)
    else:
        raise AssertionError("embedding never got under way")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    embedded_before, pending_before = embedded_count(db)
    assert pending_before > 0, "the kill came too late to test anything"

    done = subprocess.run(SKMEMORY + ["index", "crash"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

    conn = sqlite3.connect(db)
    docs = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    states = dict(conn.execute("SELECT embed_state, count(*) FROM chunks GROUP BY embed_state").fetchall())
    chunk_ids = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks")]
    per_doc = conn.execute("SELECT count(*) FROM (SELECT document_id, ordinal FROM chunks GROUP BY 1, 2 HAVING "
                           "count(*) > 1)").fetchone()[0]
    conn.close()
    assert docs == 120
    assert states == {"embedded": len(chunk_ids)} and len(chunk_ids) >= 120  # every chunk of every note embedded
    assert per_doc == 0  # no duplicate chunk at any position
    vectors = VectorStore.open(info.index_dir / "chroma", f"skm_{info.id}")
    try:
        assert vectors.ids() == set(chunk_ids)  # no orphan, no missing vector
        assert vectors.count() == len(chunk_ids)
    finally:
        vectors.close()


KILLED_AT = """
import os, signal, sys
from indexer.store import database, vectors
moment = sys.argv[1]
if moment == "recorded":  # the switch written to SQLite, Chroma not yet touched
    def emptying(self, ids):
        os.kill(os.getpid(), signal.SIGKILL)
    vectors.VectorStore.delete = emptying
else:  # half of the old vectors deleted from Chroma
    deleting = vectors.VectorStore.delete
    def emptying(self, ids):
        deleting(self, ids[: len(ids) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    vectors.VectorStore.delete = emptying
from webapp.cli import cli
cli(["index", "notes"])
"""


@pytest.mark.model
@pytest.mark.parametrize("moment", ["emptying"])  # "recorded" (before Chroma is touched) too, by hand: 70 s each
def test_a_kill_during_a_model_switch_leaves_no_vector_of_the_old_model(data_home, tmp_path, moment):
    """Issue 62: kill -9 a switch from the English model to the multilingual one, and start again: every vector is
    the new model's, and meaning search finds the note. Before, the next start took the English vectors left in
    Chroma for upserts SQLite had missed and kept them ("embedded 1013, pending 0", every semantic search empty)."""
    import shutil

    import numpy as np

    from indexer import SearchRequest
    from indexer.engine import Engine
    from indexer.model.embeddings import Embedder
    from support import DEMO_NOTES

    shutil.copytree(DEMO_NOTES, tmp_path / "notes")
    env = {**os.environ, "SKMEMORY_HOME": str(data_home), "SKMEMORY_EMBED_MODEL": "english"}
    subprocess.run(SKMEMORY + ["add", str(tmp_path / "notes"), "--name", "notes"], check=True, env=env,
                   capture_output=True)
    subprocess.run(SKMEMORY + ["index", "notes"], check=True, env=env, capture_output=True)  # by the English model
    switched = {**env, "SKMEMORY_EMBED_MODEL": "multilingual", "PYTHONPATH": str(Path(__file__).parents[1])}
    killed = subprocess.run([sys.executable, "-c", KILLED_AT, moment], env=switched, capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]

    # Meanwhile, meaning search answers by the English model's vectors with its own query encoder, and says so: in
    # the exact cache of a read-only search, and in HNSW mode, whose Chroma the switch emptied.
    question = "detach a terminal session and reattach to it later"
    status = subprocess.run(SKMEMORY + ["status", "notes"], env=switched, capture_output=True, text=True).stdout
    assert "moving from all-MiniLM-L6-v2 to multilingual-e5-small" in status, status
    for vector_search in ("exact", "hnsw"):
        settings = replace(Settings.from_env(data_home), embed_model="multilingual", vector_search=vector_search)
        engine = Engine(Home(settings))
        try:
            if vector_search == "hnsw":  # the writer's own read side: Chroma's approximate search
                from indexer.search.pipeline import search

                meanwhile = search([engine._read_side(engine.writer("notes"))],
                                   SearchRequest(question, project="notes", mode="semantic", limit=3))
            else:
                meanwhile = engine.search(SearchRequest(question, project="notes", mode="semantic", limit=3))
        finally:
            engine.close()
        assert [r["title"] for r in meanwhile["results"]][:1] == ["tmux cheatsheet"], (vector_search, meanwhile)
        assert "searched by meaning with all-MiniLM-L6-v2" in meanwhile["notice"]

    done = subprocess.run(SKMEMORY + ["index", "notes"], env=switched, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    info = Home(Settings.from_env(data_home)).project("notes")
    conn = sqlite3.connect(info.index_dir / "index.sqlite")
    rows = conn.execute("SELECT chunk_id, content FROM chunks WHERE NOT keyword_only").fetchall()
    states = dict(conn.execute("SELECT embed_state, count(*) FROM chunks WHERE NOT keyword_only GROUP BY 1"))
    conn.close()
    assert states == {"embedded": len(rows)}, states
    store = VectorStore.open(info.index_dir / "chroma", f"skm_{info.id}")
    try:
        assert store.ids() == {cid for cid, _ in rows}
        ids, stored = store.get(sorted(store.ids()))
    finally:
        store.close()
    by_id = dict(rows)
    multilingual = Embedder(model="multilingual")
    made = multilingual.embed([by_id[cid] for cid in ids])
    agreement = np.sum(np.asarray(stored) * made, axis=1)
    assert agreement.min() > 0.9, f"{int((agreement < 0.9).sum())} of {len(ids)} vectors are another model's"

    os.environ["SKMEMORY_EMBED_MODEL"] = "multilingual"  # as the switched processes ran
    try:
        engine = Engine(Home(Settings.from_env(data_home)))
        try:
            answer = engine.search(SearchRequest("detach a terminal session and reattach to it later",
                                                 project="notes", mode="semantic", limit=3))
        finally:
            engine.close()
    finally:
        os.environ.pop("SKMEMORY_EMBED_MODEL", None)
    assert [r["title"] for r in answer["results"]][:1] == ["tmux cheatsheet"]
    assert "notice" not in answer  # the switch is done: the new vectors answer, and the old ones are gone
    conn = sqlite3.connect(info.index_dir / "index.sqlite")
    assert conn.execute("SELECT count(*) FROM previous_vectors").fetchone()[0] == 0
    conn.close()
