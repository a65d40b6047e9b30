"""The background indexer following real file changes while watchfiles runs: the index follows the disk."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from indexer.background import BackgroundIndexer
from support import SKMEMORY


def eventually(check, timeout: float = 30.0):
    """Poll until check() is truthy; the generous timeout absorbs a noisy machine, it is not a speed target."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(0.1)


@pytest.fixture
def service(home, vault):
    home.add_project(vault, "notes")
    svc = BackgroundIndexer(home, role="test").start()
    assert svc.wait_idle(120), "initial sync did not finish"
    yield svc
    svc.stop()


def paths(service):
    return {r[0] for r in service.projects["notes"].store.query("SELECT rel_path FROM documents")}


def doc_id(service, rel):
    row = service.projects["notes"].store.document_by_path(rel)
    return row["document_id"] if row else None


def test_follows_create_edit_rename_move_delete(service, vault):
    store = service.projects["notes"].store
    assert len(paths(service)) == 10

    (vault / "New idea.md").write_text("# New idea\n\nA lighthouse keeper's diary.\n")
    eventually(lambda: "New idea.md" in paths(service))

    (vault / "New idea.md").write_text("# New idea\n\nA lighthouse keeper's logbook about storms.\n")
    eventually(lambda: store.query("SELECT 1 FROM chunks WHERE content LIKE '%logbook%'"))

    original = doc_id(service, "New idea.md")
    (vault / "New idea.md").rename(vault / "Lighthouse.md")
    eventually(lambda: doc_id(service, "Lighthouse.md"))
    assert doc_id(service, "Lighthouse.md") == original
    assert "New idea.md" not in paths(service)

    (vault / "Lighthouse.md").rename(vault / "Projects" / "Lighthouse.md")
    eventually(lambda: doc_id(service, "Projects/Lighthouse.md") == original)

    (vault / "Projects" / "Lighthouse.md").unlink()
    eventually(lambda: "Projects/Lighthouse.md" not in paths(service))


def test_follows_folder_rename_and_delete(service, vault):
    before = {p: doc_id(service, p) for p in paths(service) if p.startswith("Projects/")}
    (vault / "Projects").rename(vault / "Work")
    eventually(lambda: not any(p.startswith("Projects/") for p in paths(service))
               and sum(p.startswith("Work/") for p in paths(service)) == len(before))
    for old, document_id in before.items():
        assert doc_id(service, "Work/" + old.split("/", 1)[1]) == document_id

    for f in (vault / "Work").iterdir():
        f.unlink()
    (vault / "Work").rmdir()
    eventually(lambda: not any(p.startswith("Work/") for p in paths(service)))


def test_atomic_save_and_burst(service, vault):
    note = vault / "Reference" / "tmux cheatsheet.md"
    original = doc_id(service, "Reference/tmux cheatsheet.md")
    # An editor's atomic save: write a temp file beside it, then rename over the original.
    tmp = note.with_name(".tmux cheatsheet.md.swp")
    tmp.write_text(note.read_text() + "\nZoom a pane with Ctrl-b z.\n")
    os.replace(tmp, note)
    store = service.projects["notes"].store
    eventually(lambda: store.query("SELECT 1 FROM chunks WHERE content LIKE '%Zoom a pane%'"))
    assert doc_id(service, "Reference/tmux cheatsheet.md") == original

    burst = vault / "burst"
    burst.mkdir()
    for i in range(300):
        (burst / f"page {i}.md").write_text(f"# Page {i}\n\nBurst page number {i} about topic {i % 7}.\n")
    eventually(lambda: sum(p.startswith("burst/") for p in paths(service)) == 300, timeout=90)
    assert service.wait_idle(60)
    counts = store.counts()
    assert counts["documents"] == 310


def test_new_chunks_get_embedded_in_the_background(service, vault):
    project = service.projects["notes"]
    assert service.wait_idle(300, embeddings=True)
    assert project.store.counts()["pending"] == 0
    (vault / "Birds.md").write_text("# Birds\n\nA heron stood in the shallow water, waiting for fish.\n")
    eventually(lambda: project.store.document_by_path("Birds.md"))
    chunk_ids = set(project.store.chunk_ids(project.store.document_by_path("Birds.md")["document_id"]))
    eventually(lambda: chunk_ids <= project.vectors.ids(), timeout=60)


def test_a_churning_file_name_that_is_not_utf8_never_stops_the_other_projects_watch(tmp_path):
    from indexer.ingest.watcher import Watcher

    roots = {"sync": tmp_path / "sync", "notes": tmp_path / "notes"}
    for root in roots.values():
        root.mkdir()
    (roots["sync"] / "old.md").write_text("deleted while the watch is down\n")
    seen: list[tuple[str, set[str] | None]] = []
    watcher = Watcher(roots, lambda name, rels: seen.append((name, rels)), lambda name, rel: False).start()
    assert watcher.ready.wait(10)
    stop = time.monotonic() + 6
    churn = os.fsencode(roots["sync"]) + b"/temp-\xff.log"  # a sync tool's temp file, rewritten all the time

    try:
        while time.monotonic() < stop:
            with open(churn, "ab") as f:
                f.write(b"tick\n")
            time.sleep(0.2)
            if time.monotonic() > stop - 4 and not (roots["notes"] / "Otters.md").exists():
                (roots["notes"] / "Otters.md").write_text("# Otters\n")
                (roots["sync"] / "old.md").unlink()
        eventually(lambda: ("notes", {"Otters.md"}) in seen, timeout=10)
        # The failing project's own changes come back through a look at its whole folder after each restart.
        eventually(lambda: ("sync", None) in seen, timeout=10)
        assert watcher.failures["sync"] >= 1 and watcher.failures["notes"] == 0
        assert watcher.state["running"]
    finally:
        watcher.stop()


def test_a_project_folder_removed_and_made_again_is_watched_again(service, vault):
    """Issue 40 row 25: the old watch saw nothing of the new folder, while status said `running, restarts 0`."""
    shutil.rmtree(vault)
    time.sleep(1.5)  # noticed as gone (the status then lists it as missing)
    vault.mkdir()
    (vault / "Returned.md").write_text("# Returned\n\nThe folder came back with a note about a kingfisher.\n")
    eventually(lambda: "Returned.md" in paths(service))
    (vault / "Later.md").write_text("# Later\n\nWritten after the folder came back: an otter.\n")
    eventually(lambda: "Later.md" in paths(service))  # watched, not only read once
    watcher = service.status()["watcher"]
    assert watcher["running"] and watcher["missing"] == [] and watcher["restarts"] >= 1
    assert "notes" in watcher["last_error"]


def test_a_drive_unmounted_and_mounted_again_is_watched_again(home, tmp_path):
    drive = tmp_path / "drive"
    drive.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(drive)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("needs to mount a tmpfs as the project's drive (run as root)")
    try:
        (drive / "First.md").write_text("# First\n\nOn the drive before it was unmounted: a badger.\n")
        home.add_project(drive, "drive")
        svc = BackgroundIndexer(home, role="test").start()
        try:
            assert svc.wait_idle(120)

            def project_paths() -> set[str]:
                return {r[0] for r in svc.projects["drive"].store.query("SELECT rel_path FROM documents")}

            assert project_paths() == {"First.md"}
            subprocess.run(["umount", str(drive)], check=True)
            time.sleep(2)  # the empty mount point left behind is not read as a folder whose notes were deleted
            assert project_paths() == {"First.md"}
            assert svc.status()["watcher"]["missing"] == ["drive"]
            subprocess.run(mount, check=True)
            (drive / "First.md").write_text("# First\n\nOn the drive before it was unmounted: a badger.\n")
            (drive / "Second.md").write_text("# Second\n\nWritten on the drive mounted again: a stoat.\n")
            eventually(lambda: project_paths() == {"First.md", "Second.md"})
        finally:
            svc.stop()
    finally:
        subprocess.run(["umount", "-l", str(drive)], capture_output=True)


def test_a_project_folder_missing_at_start_is_watched_once_it_appears(home, tmp_path):
    folder = tmp_path / "later"
    folder.mkdir()
    home.add_project(folder, "later")
    folder.rmdir()
    svc = BackgroundIndexer(home, role="test").start()
    try:
        time.sleep(1)
        folder.mkdir()
        (folder / "Arrived.md").write_text("# Arrived\n\nA note in a folder that was not there at start.\n")
        eventually(lambda: svc.projects["later"].store.document_by_path("Arrived.md"))
        (folder / "Next.md").write_text("# Next\n\nAnd one written after it was found.\n")
        eventually(lambda: svc.projects["later"].store.document_by_path("Next.md"))
        assert svc.status()["watcher"]["missing"] == []
    finally:
        svc.stop()


def test_a_rewrite_that_keeps_size_and_mtime_is_indexed(service, vault):
    """Issue 40 row 29: `rsync -a`, `cp -p` or a FAT clock's two seconds keep a rewritten note's size and mtime."""
    note = vault / "Reference" / "tmux cheatsheet.md"
    store = service.projects["notes"].store
    before = note.stat()
    text = note.read_text()
    assert "Ctrl-b" in text
    note.write_text(text.replace("Ctrl-b", "Ctrl-q"))  # same length
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (note.stat().st_size, note.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    eventually(lambda: store.query("SELECT 1 FROM chunks WHERE content LIKE '%Ctrl-q%'"))

    # The same, done the way rsync does it (a new file renamed over the note), and read by a full sync.
    copy = vault / "Reference" / ".copy.tmp"
    copy.write_text(text.replace("Ctrl-b", "Ctrl-z"))
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    service.stop()
    os.replace(copy, note)
    again = BackgroundIndexer(service.home, role="test").start()
    try:
        assert again.wait_idle(120)
        assert again.projects["notes"].store.query("SELECT 1 FROM chunks WHERE content LIKE '%Ctrl-z%'")
        assert not again.projects["notes"].store.query("SELECT 1 FROM chunks WHERE content LIKE '%Ctrl-q%'")
    finally:
        again.stop()


def test_one_big_note_never_holds_up_another_projects_edits_or_a_stop(tmp_path):
    """Issue 40 row 26: a 19.9 MB one-paragraph note in one project held every project's indexing (an edit in
    another was searchable after 29.5 s) and Ctrl+C waited 13-26 s for it. Real `serve`, real watcher."""
    import random
    import signal

    from support import running_server, status as server_status

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "Small.md").write_text("# Small\n\nA small note in project a.\n")
    (b / "First.md").write_text("# First\n\nA note in project b.\n")
    env = {"SKMEMORY_MODEL": str(tmp_path / "no-model")}
    words = [f"w{n}" for n in range(5000)]
    rng = random.Random(7)
    big = "# Big\n\n" + " ".join(rng.choice(words) for _ in range(1_800_000)) + " glaucous\n"  # ~11 MB
    subprocess.run(SKMEMORY + ["add", str(b), "--name", "b"], env={**os.environ, **env,
                   "SKMEMORY_HOME": str(tmp_path / "home")}, check=True, capture_output=True)

    def search(server, project: str, word: str) -> int:
        import json
        import urllib.request
        with urllib.request.urlopen(f"{server.url}/api/search?q={word}&project={project}&mode=keyword",
                                    timeout=30) as response:
            return len(json.load(response)["results"])

    with running_server(tmp_path, a, env=env, projects={"notes", "b"}) as server:
        (a / "Big.md").write_text(big)  # about 18 s to parse
        eventually(lambda: (next(p for p in server_status(server.port)["projects"] if p["project"] == "notes")
                            .get("sync") or {}).get("running"), timeout=10)  # status shows it being read
        (b / "Edit.md").write_text("# Edit\n\nA kingfisher, written while project a reads its big note.\n")
        eventually(lambda: search(server, "b", "kingfisher") == 1, timeout=10)
        assert search(server, "notes", "glaucous") == 0  # the big note is still being read: b did not wait
        started = time.monotonic()
        server.proc.send_signal(signal.SIGINT)
        server.proc.wait(30)
        assert time.monotonic() - started < 8, "Ctrl+C waited for the big note"
    with running_server(tmp_path, None, home=tmp_path / "home", env=env, projects={"notes", "b"}) as server:
        eventually(lambda: search(server, "notes", "glaucous") == 1, timeout=120)  # read whole at the next start


def test_removing_a_project_while_it_embeds_stops_quietly_and_deletes_its_index(home, vault, monkeypatch, caplog):
    """Row 30 of issue 40: a project removed while a batch of its passages was in the model logged "Embedding for
    notes failed" with a traceback (the batch came back to a closed index)."""
    import logging
    import threading

    from indexer.engine import Engine

    home.add_project(vault, "notes")
    in_model, release, returned = threading.Event(), threading.Event(), threading.Event()
    real = home.embedder.embed

    def held(texts, **kwargs):  # the first batch waits in the model until the project is removed
        in_model.set()
        release.wait(60)
        try:
            return real(texts, **kwargs)
        finally:
            returned.set()

    monkeypatch.setattr(home.embedder, "embed", held)
    caplog.set_level(logging.INFO, logger="indexer")
    svc = BackgroundIndexer(home, role="test").start()
    try:
        assert in_model.wait(120), "embedding never started"
        index_dir = home.project("notes").index_dir
        Engine(home, background=svc).remove_project("notes")
        release.set()
        assert returned.wait(60)
        eventually(lambda: any("removed" in r.getMessage() for r in caplog.records))
        assert not index_dir.exists()
        assert "notes" not in svc.projects
        assert [p["project"] for p in svc.status()["projects"]] == []
        assert [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING] == []
    finally:
        release.set()
        svc.stop()


def test_a_note_replaced_by_a_folder_of_the_same_name_leaves_the_index(service, vault):
    """Row 30 of issue 40: a file replaced by a folder stayed indexed until the next run."""
    note = vault / "Reading list.md"
    note.write_text("# Reading list\n\nA lighthouse keeper's diary.\n")
    eventually(lambda: "Reading list.md" in paths(service))
    note.unlink()
    note.mkdir()
    (note / "Later.md").write_text("# Later\n\nBooks for the winter.\n")
    eventually(lambda: "Reading list.md/Later.md" in paths(service))
    eventually(lambda: "Reading list.md" not in paths(service))
