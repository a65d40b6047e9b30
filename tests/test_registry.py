"""Projects in the data home: add, list, rename, remove, and the single-writer lock."""
from __future__ import annotations

import json

import pytest

from indexer.config import Settings
from indexer.errors import InvalidProjectRoot, ProjectExists, ProjectLocked, ProjectNotFound, SKMemoryError
from indexer.home import Home
from indexer.store.lock import WriterLock


@pytest.fixture
def plain_home(data_home):
    return Home(Settings.from_env())


def test_add_list_rename_remove_keeps_user_files(plain_home, vault):
    info = plain_home.add_project(vault, "notes")
    assert [p.name for p in plain_home.projects()] == ["notes"]
    assert info.index_dir.parent.parent == plain_home.settings.home
    assert json.loads((info.index_dir / "project.json").read_text())["root"] == str(vault.resolve())  # its record
    (info.index_dir / "index.sqlite").write_text("x")

    renamed = plain_home.rename_project("notes", "work")
    assert renamed.index_dir == info.index_dir
    assert plain_home.project("WORK").name == "work"  # names are case-insensitive
    assert json.loads((info.index_dir / "project.json").read_text())["name"] == "work"

    plain_home.remove_project("work")
    assert plain_home.projects() == []
    assert not info.index_dir.exists()
    assert (vault / "Welcome.md").exists()


def test_add_rejects_bad_roots_and_duplicates(plain_home, vault, tmp_path):
    with pytest.raises(InvalidProjectRoot, match="does not exist"):
        plain_home.add_project(tmp_path / "missing")
    with pytest.raises(InvalidProjectRoot, match="is a file"):
        plain_home.add_project(vault / "Welcome.md")
    plain_home.add_project(vault, "notes")
    with pytest.raises(ProjectExists, match="already the project 'notes'"):
        plain_home.add_project(vault, "other")
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ProjectExists, match="already exists"):
        plain_home.add_project(other, "Notes")
    with pytest.raises(SKMemoryError, match="not a usable project name"):
        plain_home.add_project(other, "../evil")
    with pytest.raises(ProjectNotFound, match="Known projects: notes"):
        plain_home.project("nope")


def test_second_writer_is_told_who_holds_the_lock(plain_home, vault):
    info = plain_home.add_project(vault, "notes")
    with WriterLock(info.index_dir, "notes", "skmemory serve"):
        with pytest.raises(ProjectLocked, match=r"in use by skmemory serve \(pid \d+\)") as err:
            WriterLock(info.index_dir, "notes", "skmemory index").acquire()
        assert err.value.holder["role"] == "skmemory serve"
        with pytest.raises(ProjectLocked):
            plain_home.remove_project("notes")
    WriterLock(info.index_dir, "notes", "skmemory index").acquire().release()


def test_with_no_project_named_a_search_answers_from_the_users_notes_never_the_demo(make_engine, tmp_path):
    """Issue 60: an agent's question about a vault, with no project named, was answered from the demo (first by
    name: "Demo" sorts before "hub"), five irrelevant rows scored 1.0. The user's own project is the default; the
    answer names it and the others."""
    from indexer import SearchRequest, ensure_demo_project

    vault = tmp_path / "hub"
    vault.mkdir()
    (vault / "Dataview.md").write_text("# Dataview\n\nDataview tables list notes by their fields.\n")
    engine = make_engine(vault, project="hub", embedder="words")
    ensure_demo_project(engine.home)
    assert engine.project_names()[0] == "Demo"  # first by name, as before
    engine.reindex("Demo")
    found = engine.search(SearchRequest("dataview tables", "keyword"))
    assert found["project"] == "hub" and found["other_projects"] == ["Demo"], found
    assert [r["path"] for r in found["results"]] == ["Dataview.md"]
    assert engine.default_project() == "hub"
