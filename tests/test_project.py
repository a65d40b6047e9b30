"""Indexing a real folder with the real model, SQLite and ChromaDB: documents, chunks, vectors, edits, renames."""
from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest

from indexer.errors import EmbeddingsUnavailable
from indexer.model.embeddings import Embedder


@pytest.fixture
def project(home, vault):
    home.add_project(vault, "notes")
    with home.open_project("notes") as project:
        yield project


def doc(project, rel_path):
    row = project.store.document_by_path(rel_path)
    assert row is not None, f"{rel_path} is not indexed"
    return row


def tags_of(project, document_id):
    return sorted(r[0] for r in project.store.query("SELECT tag FROM tags WHERE document_id = ?", (document_id,)))


def test_indexes_every_supported_file_with_metadata(project, vault):
    report = project.sync()
    files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file())
    assert report.added == len(files) == 10
    stored = sorted(r[0] for r in project.store.query("SELECT rel_path FROM documents"))
    assert stored == files

    welcome = doc(project, "Welcome.md")
    assert welcome["title"] == "Welcome to SK Memory"
    assert welcome["file_type"] == "md"
    assert welcome["created"].startswith("2026-01-05")
    assert tags_of(project, welcome["document_id"]) == ["sk-memory", "start-here"]

    tmux = doc(project, "Reference/tmux cheatsheet.md")
    assert tags_of(project, tmux["document_id"]) == ["reference", "terminal", "terminal/tmux"]
    garden = doc(project, "Projects/Garden plan.md")
    assert json.loads(garden["frontmatter"])["status"] == "active"
    assert garden["frontmatter_type"] == "project"
    links = project.store.query("SELECT target, kind FROM links WHERE document_id = ?", (garden["document_id"],))
    assert ("Compost log", "wikilink") in [tuple(r) for r in links]
    tips = doc(project, "Reference/Search tips.md")
    tip_links = [tuple(r) for r in project.store.query("SELECT target, kind FROM links WHERE document_id = ?",
                                                       (tips["document_id"],))]
    assert ("Welcome", "related_to") in tip_links

    chat = doc(project, "Conversations/Trip planning.json")
    assert chat["file_type"] == "conversation"
    journal = doc(project, "Journal/2026-06-01.md")
    assert journal["title"] == "2026-06-01"

    # Sections packed into chunks that record each section's heading path and lines; frontmatter is not embedded.
    chunks = project.store.query("SELECT * FROM chunks WHERE document_id = ? ORDER BY ordinal",
                                 (garden["document_id"],))
    sections = [s for c in chunks for s in json.loads(c["sections"])]
    headings = [s["heading_path"] for s in sections]
    assert ["Garden plan", "Watering"] in headings
    watering = sections[headings.index(["Garden plan", "Watering"])]
    lines = (vault / "Projects/Garden plan.md").read_text().splitlines()
    assert lines[watering["lines"][0] - 1] == "## Watering"
    assert all("status: active" not in c["embed_text"] for c in chunks)
    assert all(c["embed_state"] == "pending" for c in chunks)


def test_embeds_pending_chunks_into_chroma_and_resync_does_nothing(project):
    project.sync()
    counts = project.store.counts()
    done = project.embed_pending()
    assert done == counts["chunks"] >= counts["documents_with_text"] == 10
    assert project.store.counts()["pending"] == 0
    ids, vectors = project.vectors.load_all()
    assert set(ids) == project.store.all_chunk_ids()
    assert vectors.dtype == np.float32 and vectors.shape == (len(ids), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)

    # The real model puts the sourdough chunk nearest to a question about bread.
    q = project.embedder.embed(["how long do I bake bread"])[0]
    best = ids[int(np.argmax(vectors @ q))]
    row = project.store.query("SELECT d.rel_path FROM chunks c JOIN documents d USING (document_id) WHERE chunk_id = ?",
                              (best,))
    assert row[0][0] == "Projects/Sourdough.md"

    again = project.sync()
    assert again.unchanged == 10 and not again.changed


def test_embedding_progress_reaches_the_whole_count_without_a_scan_per_group(project, monkeypatch):
    """`skmemory index` shows a bar: it must end full, never run backwards, and not re-count every chunk after each
    group (a scan of the whole table, 2-3 minutes of a britannica-10k run when it did)."""
    project.sync()
    pending = project.store.counts()["pending"]
    monkeypatch.setattr(type(project), "embed_group_size", property(lambda self: 3))
    scans = []
    counts = project.store.counts
    monkeypatch.setattr(project.store, "counts", lambda: scans.append(1) or counts())
    shown = []
    done = project.embed_pending(progress=lambda done, total: shown.append((done, total)))
    assert done == pending and len(shown) >= pending // 3 >= 3
    assert shown[-1] == (pending, pending)
    assert all(d <= t for d, t in shown) and [d for d, _ in shown] == sorted(d for d, _ in shown)
    assert len(scans) == 1  # the count at the start; the groups add what they embedded


def test_chroma_opens_while_the_model_loads_when_chunks_wait(vault, real_embedder, monkeypatch):
    """A fresh `skmemory index` process: Chroma (0.6 s to import) opens beside the model's load, not after it."""
    from indexer.config import Settings
    from indexer.home import Home
    from indexer.store.vectors import VectorStore

    indexing = Home(Settings.from_env(), embedder=real_embedder)
    indexing.add_project(vault, "notes")
    with indexing.open_project("notes") as project:
        project.sync()  # keyword-only, closed: what the process finds
    fresh = Embedder()  # not loaded yet, as in a process that has just started
    home = Home(Settings.from_env(), embedder=fresh)
    opening = threading.Event()
    opened_by = []
    real_open = VectorStore.open

    def open_(*args, **kwargs):
        opened_by.append(threading.current_thread().name)
        opening.set()
        return real_open(*args, **kwargs)

    monkeypatch.setattr(VectorStore, "open", open_)
    real_load = fresh.load
    while_loading = []

    def load():
        if not while_loading:
            while_loading.append(opening.wait(20))
        return real_load()

    monkeypatch.setattr(fresh, "load", load)
    with home.open_project("notes") as project:
        done = project.embed_pending()
    assert done == 10 and while_loading == [True]
    assert opened_by == ["skmemory-open-vectors"]


def test_editing_one_paragraph_reembeds_one_chunk(project, vault):
    note = vault / "Projects/Garden plan.md"
    project.sync()
    project.embed_pending()
    before = project.store.all_chunk_ids()
    note.write_text(note.read_text().replace("early in the morning", "at dawn"))
    report = project.sync()
    assert report.updated == 1
    assert report.chunks_added == 1 and len(report.removed_chunk_ids) == 1
    assert project.embed_pending() == 1
    after = project.store.all_chunk_ids()
    assert len(after - before) == 1 and len(before - after) == 1
    assert project.vectors.ids() == after


def test_rename_and_move_keep_document_id(project, vault):
    project.sync()
    project.embed_pending()
    original = doc(project, "Projects/Sourdough.md")["document_id"]
    (vault / "Archive").mkdir()
    (vault / "Projects/Sourdough.md").rename(vault / "Archive/Bread.md")
    report = project.sync()
    assert report.moved == 1 and report.deleted == 0 and report.added == 0
    assert doc(project, "Archive/Bread.md")["document_id"] == original
    assert project.store.document_by_path("Projects/Sourdough.md") is None


def test_deleting_files_removes_chunks_and_vectors(project, vault):
    project.sync()
    project.embed_pending()
    sourdough = doc(project, "Projects/Sourdough.md")["document_id"]
    gone = set(project.store.chunk_ids(sourdough))
    (vault / "Projects/Sourdough.md").unlink()
    report = project.sync()
    assert report.deleted == 1
    assert not gone & project.store.all_chunk_ids()
    assert not gone & project.vectors.ids()


def test_skmemoryignore_and_hidden_folders_are_skipped(home, vault):
    (vault / ".skmemoryignore").write_text("Journal/\n*.csv\n")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian/workspace.json").write_text("{}")
    (vault / "node_modules/pkg").mkdir(parents=True)
    (vault / "node_modules/pkg/readme.md").write_text("# hidden")
    (vault / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    home.add_project(vault, "notes")
    with home.open_project("notes") as project:
        project.sync()
        paths = {r[0] for r in project.store.query("SELECT rel_path FROM documents")}
    assert "Journal/2026-06-01.md" not in paths
    assert "Reference/Reading list.csv" not in paths
    assert not any(p.startswith((".obsidian", "node_modules")) or p.endswith(".png") for p in paths)
    assert "Welcome.md" in paths


def test_unavailable_model_keeps_keyword_indexing(data_home, vault):
    from indexer.config import Settings
    from indexer.home import Home

    home = Home(Settings.from_env(), embedder=Embedder(data_home / "no-such-model"))
    home.add_project(vault, "notes")
    with home.open_project("notes") as project:
        report = project.sync()
        assert report.added == 10
        with pytest.raises(EmbeddingsUnavailable, match="no-such-model"):
            project.embed_pending()
        status = project.status()
    assert status["embeddings"] == "unavailable"
    assert "SKMEMORY_MODEL" in status["embeddings_unavailable_reason"]
    assert status["pending"] == status["chunks"] > 0


def test_vectors_can_live_on_a_chroma_server(data_home, vault, chroma_server, real_embedder, monkeypatch):
    from indexer.config import Settings
    from indexer.home import Home
    from indexer.store.vectors import VectorStore

    monkeypatch.setenv("SKMEMORY_CHROMA_URL", chroma_server)
    home = Home(Settings.from_env(), embedder=real_embedder)
    info = home.add_project(vault, "served")
    with home.open_project("served") as project:
        project.sync()
        embedded = project.embed_pending()
        ids = project.store.all_chunk_ids()
    assert embedded == len(ids) > 0
    assert not (info.index_dir / "chroma").exists()  # nothing went to a local Chroma folder
    remote = VectorStore.open(info.index_dir / "chroma", f"skm_{info.id}", chroma_server)
    try:
        assert remote.ids() == ids
    finally:
        remote.close()
    home.remove_project("served")  # drops the server-side collection too
    again = VectorStore.open(info.index_dir / "chroma", f"skm_{info.id}", chroma_server)
    try:
        assert again.count() == 0
    finally:
        again.close()


def test_the_embedding_rate_counts_time_spent_embedding_not_idle_time():
    from indexer.background import EmbedRate

    rate = EmbedRate(batches=4)
    assert rate.per_second == 0.0  # nothing measured yet: no rate, no ETA
    rate.add(64, 1.0)  # an edit's batch, then a minute idle, then a new folder's batches
    for _ in range(3):
        rate.add(64, 0.5)
    assert rate.per_second == pytest.approx(256 / 2.5)
    rate.add(32, 0.25)  # only the last four batches count
    assert rate.per_second == pytest.approx((64 * 3 + 32) / 1.75)


def test_start_up_repair_is_free_when_the_stores_agree_and_finds_each_kind_of_drift(project):
    project.sync()
    project.embed_pending()
    embedded = sorted(project.store.embedded_ids())
    assert project.reconcile() == type(project.reconcile())()  # agreeing stores: nothing found, no id read back

    # An orphan vector (its chunk gone from SQLite) and a missing one (SQLite says embedded, Chroma lost it):
    # equal in number, so the counts alone would agree; the lost one is also the pending check's business.
    project.vectors.upsert(["orphan-chunk"], np.ones((1, 384), dtype=np.float32), [{"document_id": "gone"}])
    project.vectors.delete([embedded[0]])
    project.store.set_embed_state([embedded[1]], "pending")  # upserted, then killed before SQLite heard
    report = project.reconcile()
    assert (report.orphan_vectors, report.missing_vectors, report.recovered) == (1, 1, 1)
    assert "orphan-chunk" not in project.vectors.ids()
    assert embedded[1] in project.store.embedded_ids()
    # The lost vector is put back from SQLite's own copy, not embedded again; without a sound copy it would wait.
    assert report.restored == 1 and embedded[0] in project.vectors.ids() and embedded[0] in project.store.embedded_ids()
    project.vectors.delete([embedded[2]])
    with project.store.conn:
        project.store.conn.execute("UPDATE chunks SET vector = NULL WHERE chunk_id = ?", (embedded[2],))
    report = project.reconcile()
    assert (report.missing_vectors, report.restored) == (1, 0)
    assert project.store.query("SELECT embed_state FROM chunks WHERE chunk_id = ?", (embedded[2],))[0][0] == "pending"


def test_a_clean_close_spares_the_next_start_any_look_at_chroma(home, vault):
    home.add_project(vault, "notes")
    with home.open_project("notes") as project:
        project.sync()
        project.embed_pending()
    with home.open_project("notes") as project:

        def untouched(*args, **kwargs):
            raise AssertionError("a clean start reads nothing back from Chroma")

        project.vectors.count = project.vectors.ids = project.vectors.get = untouched
        assert project.reconcile() == type(project.reconcile())()
        del project.vectors.count, project.vectors.ids, project.vectors.get


def test_a_stopped_sync_keeps_what_it_indexed_deletes_nothing_and_the_next_goes_on(project, vault):
    import threading

    project.sync()
    (vault / "Projects/Sourdough.md").unlink()  # gone from disk: only a finished walk may delete it
    for n in range(6):
        (vault / f"new-{n}.md").write_text(f"# New {n}\n\nA fresh note about kestrels, number {n}.\n")
    stop = threading.Event()
    reported: list[int] = []

    def stop_after_two(done: int, total: int) -> None:  # the first report counts the unchanged files at once
        reported.append(done)
        if done == reported[0] + 2:
            stop.set()

    report = project.sync(progress=stop_after_two, stop=stop)
    assert report.added == 2 and report.unchanged == reported[0]  # ended after the file in hand
    assert project.store.document_by_path("Projects/Sourdough.md") is not None
    rest = project.sync()
    assert rest.deleted == 1 and project.store.document_by_path("Projects/Sourdough.md") is None
    assert all(project.store.document_by_path(f"new-{n}.md") for n in range(6))


OPEN_TWICE = """
import sys
from pathlib import Path
from indexer import SearchRequest
from indexer.config import Settings
from indexer.engine import Engine
from indexer.home import Home

home = Home(Settings(home=Path(sys.argv[1])))
if sys.argv[2] == "first":
    home.add_project(Path(sys.argv[3]), "notes")
engine = Engine(home)
engine.reindex("notes")  # opens the project as its writer and reads the folder (as serve's first sync does)
found = engine.search(SearchRequest("watering", "keyword", project="notes"))
print(sys.argv[2], "chromadb" in sys.modules, [r["path"] for r in found["results"]])
engine.close()
"""


def test_a_project_closed_cleanly_opens_and_answers_without_chroma(tmp_path, vault):
    """Chroma (a second's import) is opened when vectors change, not when a project opens: a server's first answer
    does not wait for it (issue 40 row 6). Its first open still repairs through Chroma; the next needs none."""
    import subprocess
    import sys

    from support import REPO

    env = {**os.environ, "SKMEMORY_MODEL": str(tmp_path / "no-model")}
    lines = []
    for turn in ("first", "again"):
        done = subprocess.run([sys.executable, "-c", OPEN_TWICE, str(tmp_path / "home"), turn, str(vault)],
                              capture_output=True, text=True, timeout=120, env=env, cwd=str(REPO))
        assert done.returncode == 0, done.stderr
        lines.append(done.stdout.strip())
    assert lines[1] == "again False ['Projects/Garden plan.md']", lines
