"""A whole sync ends as the folder is at its end: files replaced by folders, deleted or saved again while it read
the others (issue 55: `skmemory index` left 4 stale documents when files became folders meanwhile)."""
from __future__ import annotations

from indexer.config import Settings
from indexer.home import Home
from support import WordEmbedder


def test_what_changes_while_a_sync_reads_is_read_before_it_ends(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(30):
        (notes / f"note-{i:02}.md").write_text(f"# Note {i}\n\nAbout herons, number {i}.\n")
    home = Home(Settings.from_env(tmp_path / "home"), embedder=WordEmbedder())
    home.add_project(notes, "p")

    def meanwhile(done: int, total: int) -> None:
        if done == 20:  # notes 00-19 are stored by now: change three of them, and add one
            for i in (3, 7):
                (notes / f"note-{i:02}.md").unlink()
                (notes / f"note-{i:02}.md").mkdir()
                (notes / f"note-{i:02}.md" / "inner.md").write_text(f"# Inner {i}\n\nA folder now.\n")
            (notes / "note-11.md").unlink()
            (notes / "note-12.md").write_text("# Note 12\n\nAbout cranes now.\n")
            (notes / "later.md").write_text("# Later\n\nWritten while the sync ran.\n")

    with home.open_project("p", role="tests") as project:
        report = project.sync(progress=meanwhile)
        paths = {r[0] for r in project.store.query("SELECT rel_path FROM documents")}
        cranes = project.store.query("SELECT 1 FROM chunks WHERE content LIKE '%cranes%'")
    on_disk = {str(p.relative_to(notes)) for p in notes.rglob("*.md") if p.is_file()}
    assert paths == on_disk  # no document for a path that is a folder or gone, none missing
    assert {"note-03.md/inner.md", "note-07.md/inner.md", "later.md"} <= paths and "note-11.md" not in paths
    assert cranes and report.deleted == 3 and report.added == 33


def test_status_beside_a_project_closed_meanwhile_is_a_sentence_not_a_traceback(tmp_path, vault):
    """Issue 55: each rebuild of a damaged index logged one 'closed database' traceback: the status read the old
    project, closed by the rebuild, between taking the list of projects and reading each."""
    import sqlite3

    from indexer.background import BackgroundIndexer
    from indexer.model.embeddings import Embedder

    home = Home(Settings.from_env(tmp_path / "home"), embedder=Embedder(tmp_path / "no-model"))
    home.add_project(vault, "notes")
    service = BackgroundIndexer(home, role="test").start()
    try:
        assert service.wait_idle(timeout=60)
        old = service.projects["notes"]
        service._rebuilding["notes"] = ("SQLite says: database disk image is malformed", None)  # as report_damage

        def rebuilt_meanwhile():  # the rebuild swaps the project and closes the old one while status reads it
            service.projects["notes"] = object()
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")

        old.status = rebuilt_meanwhile
        service.projects["notes"] = old
        (entry,) = [p for p in service.status()["projects"] if p["project"] == "notes"]
        assert "being rebuilt from the notes" in entry["repair"]
    finally:
        service.projects["notes"] = old
        service.stop()
