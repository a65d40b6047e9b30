"""A big sync writes the substring (trigram) index and the word list of typo correction after the notes, and catches
them up in batches: keyword search finds every note meanwhile (the index where it has caught up, a scan after it),
says so, and both end whole and sound whatever was edited or deleted while they were behind."""
from __future__ import annotations

from pathlib import Path

import pytest

from indexer.store import project as project_module
from indexer import SearchRequest


def _notes(folder: Path, numbers) -> None:
    for n in numbers:
        (folder / f"Note {n}.md").write_text(f"# Note {n}\n\nThe heron waded past marker zq{n}xv in the reeds.\n",
                                             encoding="utf-8")


def _found(engine, text: str) -> list[str]:
    return sorted(r["path"] for r in engine.search(SearchRequest(text, mode="keyword", limit=100))["results"])


def _trigram_sound(store) -> None:
    # FTS5 compares an external-content index with its table, row by row: a missing or stray row fails here (so it
    # holds only for a whole index), as would a 'delete' of a row it never held, at any time before.
    store.conn.execute("INSERT INTO chunks_trigram(chunks_trigram, rank) VALUES ('integrity-check', 1)")


def _vocabulary(store) -> set[str]:
    return {r[0] for r in store.query("SELECT term FROM words_vocab")}


def _words_sound(store) -> None:
    # The word list is contentless: FTS5 cannot check it against the chunks, so it is compared with one built afresh
    # from them (every word, in as many chunks and titles); a lost, stray or wrongly deleted row shows as a count.
    conn = store.conn
    conn.execute("CREATE VIRTUAL TABLE temp.fresh USING fts5(text, content='', detail='none', "
                 "tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE temp.fresh_vocab USING fts5vocab(temp, fresh, 'row')")
    conn.execute("INSERT INTO temp.fresh(rowid, text) SELECT rowid * 2, content FROM chunks")
    conn.execute("INSERT INTO temp.fresh(rowid, text) SELECT rowid * 2 + 1, title FROM documents")
    fresh = conn.execute("SELECT term, doc FROM temp.fresh_vocab ORDER BY term").fetchall()
    kept = conn.execute("SELECT term, doc FROM words_vocab WHERE doc > 0 ORDER BY term").fetchall()
    conn.execute("DROP TABLE temp.fresh_vocab")
    conn.execute("DROP TABLE temp.fresh")
    assert [tuple(r) for r in kept] == [tuple(r) for r in fresh]


@pytest.fixture
def behind(make_engine, tmp_path, monkeypatch):
    """An engine whose project has just had a big sync that left the substring index behind (40 notes)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    _notes(folder, [0])
    engine = make_engine(folder, embedder="none")
    monkeypatch.setattr(project_module, "DEFER_SUBSTRINGS_FILES", 10)
    monkeypatch.setattr(project_module, "SUBSTRING_BATCH", 15)
    _notes(folder, range(1, 41))
    writer = engine.writer("notes")
    report = writer.sync(defer_substrings=True)
    assert report.added == 40
    return engine, writer, folder


def test_keyword_search_finds_every_note_while_the_substring_index_catches_up_and_says_so(behind):
    engine, writer, _ = behind
    assert writer.store.substring_backlog() == 40  # Note 0 was in before; the 40 new chunks wait
    assert "zq0xv" in _vocabulary(writer.store) and "zq17xv" not in _vocabulary(writer.store)  # the word list too
    answer = engine.search(SearchRequest("q17x",
                                         mode="keyword"))  # inside a word: only a substring index (or a scan) finds it
    assert [r["path"] for r in answer["results"]] == ["Note 17.md"]
    assert "still being indexed in notes (1 of 41 passages so far" in answer["substring_notice"]
    assert _found(engine, "heron") == sorted(f"Note {n}.md" for n in range(41))
    assert [r["path"] for r in engine.search(SearchRequest("zq0xv", mode="keyword"))["results"]] == ["Note 0.md"]

    assert writer.catch_up_substrings(batches=1) == 25  # one batch of 15 a commit
    assert _found(engine, "heron") == sorted(f"Note {n}.md" for n in range(41))
    assert [r["path"] for r in engine.search(SearchRequest("zq3xv",
                                                           mode="keyword"))["results"]] == ["Note 3.md"]  # indexed now
    assert [r["path"] for r in engine.search(SearchRequest("zq33xv",
                                                           mode="keyword"))["results"]] == ["Note 33.md"]  # scanned
    hybrid = engine.search(SearchRequest("zq33xv heron", mode="hybrid"))
    assert hybrid["results"][0]["path"] == "Note 33.md" and "substring_notice" in hybrid

    assert writer.catch_up_substrings() == 0
    _trigram_sound(writer.store)
    _words_sound(writer.store)
    assert {f"zq{n}xv" for n in range(41)} <= _vocabulary(writer.store)
    whole = engine.search(SearchRequest("q17x", mode="keyword"))
    assert [r["path"] for r in whole["results"]] == ["Note 17.md"] and "substring_notice" not in whole
    assert writer.status()["substring_backlog"] == 0


def test_edits_and_deletions_while_it_is_behind_leave_the_index_sound(behind):
    engine, writer, folder = behind
    writer.catch_up_substrings(batches=1)  # chunks up to the 15th new one are indexed, the rest wait
    (folder / "Note 2.md").write_text("# Note 2\n\nRewritten: a kingfisher zzedit2 now.\n", encoding="utf-8")
    (folder / "Note 39.md").write_text("# Note 39\n\nRewritten: an otter zzedit39 now.\n", encoding="utf-8")
    (folder / "Note 5.md").unlink()
    (folder / "Note 38.md").unlink()
    writer.sync(["Note 2.md", "Note 39.md", "Note 5.md", "Note 38.md"], defer_substrings=True)
    assert _found(engine, "zzedit") == ["Note 2.md", "Note 39.md"]
    assert _found(engine, "zq5xv") == [] and _found(engine, "zq38xv") == []

    writer.sync()  # a sync that does not defer ends with the index whole
    assert writer.store.substring_backlog() == 0
    _trigram_sound(writer.store)
    _words_sound(writer.store)
    assert _found(engine, "zzedit") == ["Note 2.md", "Note 39.md"]
    assert _found(engine, "heron") == sorted(f"Note {n}.md" for n in range(41) if n not in (2, 5, 38, 39))
    _notes(folder, [50])  # written from now on with each chunk, as before
    writer.sync(["Note 50.md"], defer_substrings=True)
    assert writer.store.substring_backlog() == 0 and _found(engine, "q50x") == ["Note 50.md"]


def test_a_small_sync_writes_the_substring_index_with_each_chunk(make_engine, tmp_path):
    folder = tmp_path / "few"
    folder.mkdir()
    _notes(folder, range(5))
    engine = make_engine(folder, embedder="none")
    _notes(folder, range(5, 9))
    writer = engine.writer("notes")
    writer.sync(defer_substrings=True)  # 4 files: under DEFER_SUBSTRINGS_FILES
    assert writer.store.substring_backlog() == 0
    assert "substring_notice" not in engine.search(SearchRequest("q7x", mode="keyword"))


def test_an_index_upgraded_while_its_substrings_catch_up_keeps_a_sound_word_list(behind):
    # Before migration 16 the word list took every chunk as it was written, behind or not: an index upgraded in the
    # middle of a catch-up holds the waiting chunks' words once already, and must not hold them twice after it.
    from indexer.store.migrations import migrate

    engine, writer, folder = behind
    conn = writer.store.conn
    with conn:
        conn.execute("INSERT INTO words(rowid, text) SELECT rowid * 2, content FROM chunks "
                     "WHERE rowid > (SELECT upto FROM trigram_state WHERE id = 1)")
        conn.execute("DELETE FROM _migrations WHERE number = 16")
    assert "zq17xv" in _vocabulary(writer.store)  # as the old triggers left it
    migrate(conn)
    assert "zq17xv" not in _vocabulary(writer.store)  # it waits with the substrings now
    (folder / "Note 17.md").unlink()  # a waiting chunk deleted: no 'delete' of a row the list no longer holds
    writer.sync(["Note 17.md"])
    assert writer.catch_up_substrings() == 0
    _words_sound(writer.store)
