"""The `skmemory` command line run as a real process: projects, index with progress, status, clear errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from indexer.config import Settings
from indexer.home import Home
from indexer.store.lock import WriterLock


def skmemory(*args, env=None, check=False):
    result = subprocess.run([sys.executable, "-m", "webapp.cli", *args], capture_output=True, text=True,
                            env={**os.environ, **(env or {})}, timeout=600)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_add_index_status_remove(vault, data_home):
    out = skmemory("add", str(vault), "--name", "notes", check=True)
    assert "Added project 'notes'" in out.stdout
    listed = json.loads(skmemory("projects", "--json", check=True).stdout)
    assert [(p["name"], p["root"]) for p in listed] == [("notes", str(vault.resolve()))]

    (vault / "broken.json").write_text("{not json")
    indexed = skmemory("index", "notes", check=True)
    assert "files parsed" in indexed.stderr and "chunks embedded" in indexed.stderr
    assert "chunks/s" in indexed.stderr
    assert "11 added" in indexed.stderr

    status = json.loads(skmemory("status", "notes", "--json", check=True).stdout)
    assert status["documents"] == 11
    assert status["embedded"] == status["chunks"] > 0 and status["pending"] == 0
    assert status["embeddings_available"] is True
    assert [e["path"] for e in status["errors"]] == ["broken.json"]
    text = skmemory("status", "notes", check=True).stdout
    assert "documents: 11" in text and "broken.json" in text

    typo = skmemory("search", "sourdugh", "--documents", check=True)  # a typo is corrected, and says so
    assert "Showing results for: sourdough" in typo.stderr and "Sourdough" in typo.stdout
    as_typed = skmemory("search", "sourdugh", "--mode", "keyword", "--no-correct", check=True)
    assert "Showing results for" not in as_typed.stderr and "No results." in as_typed.stdout

    removed = skmemory("remove", "notes", check=True)
    assert "untouched" in removed.stdout
    assert (vault / "Welcome.md").exists()
    assert json.loads(skmemory("projects", "--json", check=True).stdout) == []


def test_errors_are_one_sentence_and_exit_2(vault, tmp_path, data_home):
    missing = skmemory("add", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0 and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr

    unknown = skmemory("index", "ghost")
    assert unknown.returncode == 2 and "No project named 'ghost'" in unknown.stderr

    skmemory("add", str(vault), "--name", "notes", check=True)
    info = Home(Settings.from_env(data_home)).project("notes")
    with WriterLock(info.index_dir, "notes", "skmemory serve"):
        locked = skmemory("index", "notes")
    assert locked.returncode == 2
    assert "in use by skmemory serve (pid" in locked.stderr and "Traceback" not in locked.stderr


def test_index_without_model_still_indexes_for_keywords(vault, tmp_path):
    skmemory("add", str(vault), "--name", "notes", check=True)
    env = {"SKMEMORY_MODEL": str(tmp_path / "missing-model")}
    out = skmemory("index", "notes", env=env, check=True)
    assert "embeddings are unavailable" in out.stderr
    status = json.loads(skmemory("status", "notes", "--json", env=env, check=True).stdout)
    assert status["documents"] == 10 and status["embedded"] == 0
    assert status["embeddings_available"] is False
    assert "missing-model" in status["embeddings_unavailable_reason"]
