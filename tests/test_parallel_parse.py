"""Parsing in a pool of processes: the same documents and chunks as one process, bad files reported the same way,
grouped commits that keep each document whole, and the deep tail of long notes embedded last."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.config import Settings
from indexer.home import Home
from indexer.model.embeddings import Embedder
from indexer.ingest.parallel import PARALLEL_MIN_FILES
from indexer.ingest.rows import ChunkRow, StoredDocument
from indexer.store.database import LONG_NOTE_TAIL_FROM
from support import DEMO_NOTES, CORPORA


def snapshot(folder: Path, home_dir: Path, workers: str, monkeypatch) -> dict:
    """Index folder into a fresh data home with SKMEMORY_PARSE_WORKERS=workers; everything the index holds, by
    path (document ids are random, so rows are compared by what they say)."""
    monkeypatch.setenv("SKMEMORY_PARSE_WORKERS", workers)
    home = Home(Settings.from_env(home_dir), embedder=Embedder(home_dir / "no-model"))
    home.add_project(folder, "p")
    with home.open_project("p", role="tests") as project:
        report = project.sync().to_dict()
        q = project.store.query
        return {
            "report": report,
            "documents": [tuple(r) for r in q("""SELECT rel_path, file_type, title, frontmatter, created, size,
                                                     content_hash, warnings FROM documents ORDER BY rel_path""")],
            "chunks": [tuple(r) for r in q("""SELECT d.rel_path, c.ordinal, c.heading_path, c.content, c.embed_text,
                                                  c.start_line, c.end_line, c.content_hash, c.sections, c.keyword_only
                                           FROM chunks c JOIN documents d USING (document_id)
                                           ORDER BY d.rel_path, c.ordinal""")],
            "tags": [tuple(r) for r in q("SELECT d.rel_path, t.tag FROM tags t JOIN documents d USING (document_id) "
                                         "ORDER BY 1, 2")],
            "links": [tuple(r) for r in q("SELECT d.rel_path, l.target, l.kind FROM links l "
                                          "JOIN documents d USING (document_id) ORDER BY 1, 2, 3")],
            "errors": [tuple(r) for r in q("SELECT rel_path, error FROM file_errors ORDER BY 1")],
            "bm25": q("SELECT count(*) FROM chunks_bm25 WHERE chunks_bm25 MATCH 'water'")[0][0],
        }


@pytest.fixture
def many_notes(tmp_path: Path) -> Path:
    """The demo notes, enough notes of every shape to start the pool, and files that fail."""
    root = tmp_path / "many"
    shutil.copytree(DEMO_NOTES, root)
    for i in range(PARALLEL_MIN_FILES + 20):
        body = "\n\n".join(f"## Part {j}\n\nPlant {i} needs water on day {j}; see [[Note {i + 1}]]. #garden/n{i % 7}"
                           for j in range(1 + i % 13))
        (root / "generated" / f"group {i % 5}").mkdir(parents=True, exist_ok=True)
        (root / "generated" / f"group {i % 5}" / f"Note {i}.md").write_text(
            f"---\ntitle: Note {i}\ntags: [plants, n{i}]\ncreated: 2024-01-{1 + i % 28:02d}\n---\n{body}\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    (root / "bad frontmatter.md").write_text("---\ntitle: [unclosed\n---\nStill searchable text about water.\n")
    (root / "latin1.md").write_bytes("Caf\xe9 notes about water".encode("latin-1"))
    return root


def test_the_pool_indexes_what_one_process_indexes(many_notes, tmp_path, monkeypatch):
    one = snapshot(many_notes, tmp_path / "one", "0", monkeypatch)
    pool = snapshot(many_notes, tmp_path / "pool", "2", monkeypatch)
    assert one["report"]["added"] >= PARALLEL_MIN_FILES and one["report"]["failed"] >= 1  # the bad pdf
    assert pool == one
    assert any(path == "broken.pdf" for path, _error in pool["errors"])


@pytest.mark.parametrize("name", ["logseq-docs", "kepano-obsidian"])
def test_the_pool_indexes_what_one_process_indexes_on_a_real_vault(name, tmp_path, monkeypatch):
    folder = CORPORA / name
    if not folder.is_dir():
        pytest.skip(f"needs ../shared/corpora/{name}, which this checkout does not have")
    assert snapshot(folder, tmp_path / "pool", "2", monkeypatch) == snapshot(folder, tmp_path / "one", "0",
                                                                             monkeypatch)


def test_a_second_sync_with_the_pool_changes_only_what_changed(many_notes, tmp_path, monkeypatch):
    monkeypatch.setenv("SKMEMORY_PARSE_WORKERS", "2")
    home = Home(Settings.from_env(tmp_path / "home"), embedder=Embedder(tmp_path / "no-model"))
    home.add_project(many_notes, "p")
    with home.open_project("p", role="tests") as project:
        project.sync()
        for i in range(3):
            path = many_notes / "generated" / f"group {i}" / f"Note {i}.md"
            path.write_text(path.read_text() + "\nA new line about rain.\n")
        (many_notes / "generated" / "group 4" / "Note 4.md").rename(many_notes / "Moved note.md")
        (many_notes / "generated" / "group 3" / "Note 3.md").unlink()
        report = project.sync().to_dict()
        assert (report["updated"], report["moved"], report["deleted"], report["added"]) == (3, 1, 1, 0)
        assert project.store.document_by_path("Moved note.md") is not None


def test_grouped_commits_keep_each_document_whole(tmp_path):
    home = Home(Settings.from_env(tmp_path / "home"), embedder=Embedder(tmp_path / "no-model"))
    (tmp_path / "notes").mkdir()
    home.add_project(tmp_path / "notes", "p")

    def doc(n: int) -> StoredDocument:
        return StoredDocument(f"doc{n}", f"n{n}.md", "markdown", f"N{n}", {}, None, 0.0, 1, f"h{n}", 1, [])

    def chunk(cid: str, text: str) -> ChunkRow:
        return ChunkRow(cid, 0, [], text, text, 1, 1, cid)

    with home.open_project("p", role="tests") as project:
        store = project.store
        with store.grouped_commits():
            store.save_document(doc(1), [chunk("c1", "first note")], [], [])
            with pytest.raises(Exception):  # the same chunk id twice: the second insert fails half-way
                store.save_document(doc(2), [chunk("c2", "second"), chunk("c2", "again")], ["t"], [])
            store.save_document(doc(3), [chunk("c3", "third note")], [], [])
        assert [r[0] for r in store.query("SELECT rel_path FROM documents ORDER BY 1")] == ["n1.md", "n3.md"]
        assert [r[0] for r in store.query("SELECT chunk_id FROM chunks ORDER BY 1")] == ["c1", "c3"]
        assert not store.conn.in_transaction


def test_the_order_of_waiting_chunks_is_read_ahead_yet_a_note_saved_meanwhile_goes_first(tmp_path):
    """The embedder reads which chunks come next for several groups at once; a note saved meanwhile is still embedded
    next, and chunks that went meanwhile (here deleted by another connection, which this one cannot see) are
    skipped, not mistaken for the end of the work."""
    import sqlite3

    home = Home(Settings.from_env(tmp_path / "home"), embedder=Embedder(tmp_path / "no-model"))
    (tmp_path / "notes").mkdir()
    home.add_project(tmp_path / "notes", "p")

    def save(store, n: int) -> None:
        store.save_document(StoredDocument(f"doc{n}", f"n{n}.md", "markdown", f"N{n}", {}, None, float(n), 1, f"h{n}",
                                        1, []), [ChunkRow(f"c{n}", 0, [], f"note {n}", f"note {n}", 1, 1, f"c{n}")],
                            [], [])

    def next_ids(store, limit: int = 2) -> list[str]:
        return [r["chunk_id"] for r in store.pending_chunks(limit)]

    with home.open_project("p", role="tests") as project:
        store = project.store
        for n in range(1, 21):
            save(store, n)
        def embed_next(expected: list[str]) -> None:
            assert next_ids(store) == expected
            store.set_embedded(expected, [[0.1, 0.2]] * len(expected))

        embed_next(["c20", "c19"])  # newest first
        embed_next(["c18", "c17"])  # read ahead, and left current by its own embedding
        save(store, 99)
        embed_next(["c99", "c16"])  # the note saved meanwhile goes first
        other = sqlite3.connect(store.path)
        other.execute("DELETE FROM chunks WHERE chunk_id IN (" + ",".join(f"'c{n}'" for n in range(4, 16)) + ")")
        other.commit()
        other.close()
        assert next_ids(store) == ["c3", "c2"]  # the next two went: the order is read again, not the end
        embed_next(["c3", "c2"])  # taken before and not embedded: still waiting, so still first
        embed_next(["c1"])
        assert next_ids(store) == []


def test_the_deep_tail_of_a_long_note_is_embedded_after_the_top_of_every_note(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    paragraph = "The river floods the valley each spring and the farmers move their herds uphill. " * 14
    (notes / "Long.md").write_text("\n\n".join(f"## Chapter {i}\n\n{paragraph}" for i in range(40)))
    for i in range(4):
        (notes / f"Short {i}.md").write_text("\n\n".join(f"## Part {j}\n\n{paragraph}" for j in range(3)))
    home = Home(Settings.from_env(tmp_path / "home"), embedder=Embedder(tmp_path / "no-model"))
    home.add_project(notes, "p")
    with home.open_project("p", role="tests") as project:
        project.sync()
        order = [(r["document_id"], r["chunk_id"]) for r in project.store.pending_chunks(10_000)]
        ordinals = {r[0]: (r[1], r[2]) for r in project.store.query(
            "SELECT chunk_id, ordinal, (SELECT rel_path FROM documents d WHERE d.document_id = c.document_id) "
            "FROM chunks c")}
        seq = [ordinals[c] for _d, c in order]
        long_total = sum(1 for o, p in seq if p == "Long.md")
        assert long_total > LONG_NOTE_TAIL_FROM + 10
        first_tail = next(i for i, (o, _p) in enumerate(seq) if o >= LONG_NOTE_TAIL_FROM)
        assert all(o < LONG_NOTE_TAIL_FROM for o, _p in seq[:first_tail])  # every note's top first
        assert all(p == "Long.md" for _o, p in seq[first_tail:])  # then only the long note's tail
        assert [p for o, p in seq[:5]].count("Long.md") == 1  # note-first: one first chunk of each note
        assert project.store.counts()["long_note_pending"] == len(seq) - first_tail


def test_the_read_rate_counts_files_read_after_the_unchanged_ones():
    from indexer import ReadRate

    now = [100.0]
    rate = ReadRate(clock=lambda: now[0])
    assert rate.update(9_000, 10_000) == {"files_done": 9_000, "files_total": 10_000}  # unchanged, counted at once
    now[0] += 0.5
    assert "files_per_second" not in rate.update(9_040, 10_000)  # under a second: no rate to judge by yet
    now[0] += 1.5
    assert rate.update(9_200, 10_000) == {"files_done": 9_200, "files_total": 10_000, "files_per_second": 100.0,
                                          "eta_seconds": 8}


def test_ctrl_c_during_a_parallel_parse_says_one_sentence_not_the_workers_tracebacks(tmp_path):
    """Issue 40 row 30: a terminal's Ctrl+C reaches the parsing workers too, each of which printed its traceback."""
    import os
    import signal
    import subprocess
    import sys

    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(6000):
        (vault / f"note-{i:04}.md").write_text(f"# Note {i}\n\n" + " ".join(f"word{(i * 7 + j) % 997}"
                                                                          for j in range(400)) + "\n")
    env = {**os.environ, "SKMEMORY_HOME": str(tmp_path / "home"), "SKMEMORY_MODEL": str(tmp_path / "no-model")}
    skmemory = [sys.executable, "-m", "webapp.cli"]
    subprocess.run(skmemory + ["add", str(vault), "--name", "many"], env=env, check=True, capture_output=True)
    index = subprocess.Popen(skmemory + ["index", "many"], env=env, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    lines = []
    while "files parsed" not in (line := index.stderr.readline()):
        assert line, "index ended before it parsed"
        lines.append(line)
    import time
    time.sleep(2)  # the pool is parsing
    os.killpg(index.pid, signal.SIGINT)  # what Ctrl+C in a terminal does: the whole process group
    rest = index.communicate(timeout=60)[1]
    assert index.returncode == 130
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest[-2000:]
    assert "Stopped." in rest and "skmemory index many` goes on from there" in rest
