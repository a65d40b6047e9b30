"""Bad input loses nothing: each malformed or hostile file is recorded in status and indexing goes on."""
from __future__ import annotations

import os

import pytest



@pytest.fixture
def bad_vault(tmp_path):
    root = tmp_path / "bad"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nThis note is fine and mentions otters.\n")
    (root / "latin1.txt").write_bytes("caf\xe9 au lait and cr\xe8me br\xfbl\xe9e".encode("latin-1"))
    (root / "bad-yaml.md").write_text("---\ntitle: [unclosed\ncreated: {{date}}\n---\n# Body\n\nStill searchable "
                                      "walrus.\n")
    (root / "bad.json").write_text('{"name": "broken", "items": [1, 2,, }')
    (root / "bad.csv").write_text('a,b\n"unterminated,quote\n1,2\n')
    (root / "binary.txt").write_bytes(b"\x00\x01\x02PNG" * 100)
    (root / "huge.log").touch()
    os.truncate(root / "huge.log", 200 * 1024 * 1024)  # a 200 MB log, sparse on disk
    os.symlink("loop-b.md", root / "loop-a.md")
    os.symlink("loop-a.md", root / "loop-b.md")
    (root / "sub").mkdir()
    os.symlink("..", root / "sub" / "parent-loop")  # a folder loop the walk must not follow
    return root


def test_every_bad_file_is_recorded_and_the_rest_indexed(home, bad_vault):
    home.add_project(bad_vault, "bad")
    with home.open_project("bad") as project:
        report = project.sync()
        status = project.status()
        docs = {r["rel_path"]: r for r in project.store.query("SELECT * FROM documents")}
        found = project.store.query("SELECT 1 FROM chunks WHERE content LIKE '%walrus%'")
    errors = {e["path"]: e for e in status["errors"]}

    assert {"good.md", "latin1.txt", "bad-yaml.md", "bad.json", "bad.csv"} <= set(docs)
    assert found, "a note with malformed frontmatter is still searchable as text"
    assert "YAML" in errors["bad-yaml.md"]["error"] and errors["bad-yaml.md"]["indexed"]
    assert "UTF-8" in errors["latin1.txt"]["error"]
    assert errors["bad.json"]["indexed"] and "JSON" in errors["bad.json"]["error"]
    assert not errors["binary.txt"]["indexed"]
    assert "limit" in errors["huge.log"]["error"] and not errors["huge.log"]["indexed"]
    assert "loop" in errors["loop-a.md"]["error"].lower()
    assert not any(p.startswith("sub/parent-loop") for p in docs)
    assert report.failed >= 3


def test_permission_denied_is_recorded(home, bad_vault, monkeypatch):
    # The tests run as root, for whom chmod 000 is no obstacle, so the OS refusal is simulated at os.open().
    real_open = os.open

    def refusing_open(file, *args, **kwargs):
        if str(file).endswith("good.md"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    home.add_project(bad_vault, "bad")
    with home.open_project("bad") as project:
        project.sync()
        errors = {e["path"]: e["error"] for e in project.status()["errors"]}
    assert "Permission denied" in errors["good.md"]


def test_file_replaced_or_deleted_mid_read(home, bad_vault, monkeypatch):
    target = bad_vault / "good.md"
    real_open = os.open
    calls = {"n": 0}

    def replacing_open(file, *args, **kwargs):
        fh = real_open(file, *args, **kwargs)
        if str(file) == str(target) and calls["n"] == 0:
            calls["n"] += 1
            target.write_text("# Good\n\nReplaced while reading: now about beavers, a longer text.\n")
        return fh

    monkeypatch.setattr(os, "open", replacing_open)
    home.add_project(bad_vault, "bad")
    with home.open_project("bad") as project:
        project.sync()
        assert project.store.query("SELECT 1 FROM chunks WHERE content LIKE '%beavers%'")

        def vanishing_open(file, *args, **kwargs):
            if str(file).endswith("latin1.txt"):
                os.unlink(file)
                raise FileNotFoundError(2, "No such file", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", vanishing_open)
        (bad_vault / "latin1.txt").write_text("changed")
        project.sync(["latin1.txt"])
        assert project.store.document_by_path("latin1.txt") is None
        assert "latin1.txt" not in {e["path"] for e in project.status()["errors"]}


def test_a_note_caught_half_written_comes_back_under_its_id(home, bad_vault):
    # An editor that truncates and then writes can be read in between; what fails to parse leaves the index, and
    # when it parses again it keeps the id mind maps and agents hold.
    home.add_project(bad_vault, "bad")
    with home.open_project("bad") as project:
        project.sync()
        before = project.store.document_by_path("good.md")["document_id"]
        (bad_vault / "good.md").write_bytes(b"\x00\x01\x02PNG" * 100)  # mid-write garbage: refused as binary
        project.sync(["good.md"])
        assert project.store.document_by_path("good.md") is None
        assert "good.md" in {e["path"] for e in project.status()["errors"]}
        (bad_vault / "good.md").write_text("# Good\n\nThis note is fine and mentions otters and herons.\n")
        project.sync(["good.md"])
        assert project.store.document_by_path("good.md")["document_id"] == before
        assert "good.md" not in {e["path"] for e in project.status()["errors"]}
