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
    words = " ".join(f"word{i}" for i in range(300))  # long sections: two passages, each naming the herons
    (vault / "Herons.md").write_text(f"# Herons\n\n## Spring\n\nThe herons came back. {words}\n\n"
                                     f"## Autumn\n\nThe herons left again. {words}\n")
    indexed = skmemory("index", "notes", check=True)
    assert "files parsed" in indexed.stderr and "chunks embedded" in indexed.stderr
    assert "chunks/s" in indexed.stderr
    assert "12 added" in indexed.stderr

    status = json.loads(skmemory("status", "notes", "--json", check=True).stdout)
    assert status["documents"] == 12
    assert status["embedded"] == status["chunks"] > 0 and status["pending"] == 0
    assert status["embeddings_available"] is True
    assert [e["path"] for e in status["errors"]] == ["broken.json"]
    text = skmemory("status", "notes", check=True).stdout
    assert "documents: 12" in text and "broken.json" in text

    typo = skmemory("search", "sourdugh", "--documents", check=True)  # a typo is corrected, and says so
    assert "Showing results for: sourdough" in typo.stderr and "Sourdough" in typo.stdout
    as_typed = skmemory("search", "sourdugh", "--mode", "keyword", "--no-correct", check=True)
    assert "Showing results for" not in as_typed.stderr and "Nothing in 'notes' matches" in as_typed.stdout

    # Issue 40 row 19: one row per note by default (a note twice in a row was one row per passage); --passages
    # lists each passage, and --json stays the API's answer.
    per_note = skmemory("search", "herons", "--mode", "keyword", check=True).stdout
    assert per_note.count("Herons  (Herons.md)") == 1, per_note
    per_passage = skmemory("search", "herons", "--mode", "keyword", "--passages", check=True).stdout
    assert per_passage.count("Herons  (Herons.md)") >= 2, per_passage
    answer = json.loads(skmemory("search", "herons", "--mode", "keyword", "--json", check=True).stdout)
    assert [r["path"] for r in answer["results"]].count("Herons.md") >= 2 and "grouped" not in answer

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


def _modules_after(*args, env=None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run one command in a fresh interpreter and name the heavy modules it imported."""
    script = ("import runpy, sys\nsys.argv = ['skmemory', *sys.argv[1:]]\ntry:\n"
              "    runpy.run_module('webapp.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
              "print('IMPORTED', *[m for m in ('torch', 'onnxruntime', 'sentence_transformers', 'chromadb') "
              "if m in sys.modules], file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                            env={**os.environ, **(env or {})}, timeout=600)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if line.startswith("IMPORTED"))
    return result, set(line.split()[1:])


def test_commands_that_need_no_model_never_load_it(vault, data_home, tmp_path, model_cache):
    skmemory("add", str(vault), "--name", "notes", check=True)
    skmemory("index", "notes", check=True)
    empty_cache = tmp_path / "no-copies-yet"  # a machine where the model was never exported: nothing may export it
    env = {"SKMEMORY_MODEL_CACHE": str(empty_cache)}
    for args in (("status",), ("status", "notes", "--json"), ("projects",),
                 ("search", "tmux", "--mode", "keyword"), ("search", "--mode", "tag", "--tag", "linux")):
        result, heavy = _modules_after(*args, env=env)
        assert not heavy & {"torch", "onnxruntime", "sentence_transformers"}, (args, heavy)
    assert not empty_cache.exists()
    everywhere, _ = _modules_after("search", "tmux", "--mode", "keyword", "--all", "--json", env=env)
    assert json.loads(everywhere.stdout)["keyword_only_projects"] == []  # keyword search lacks nothing
    status, _ = _modules_after("status", "notes", "--json", env=env)
    assert json.loads(status.stdout)["embeddings_available"] is True  # said without loading the model

    # Meaning search encodes with the model's ONNX copy (made once per user), never with torch; unquoted words
    # are one query.
    hybrid, heavy = _modules_after("search", "keep", "a", "program", "alive", "after", "I", "disconnect",
                                   env={"SKMEMORY_MODEL_CACHE": str(model_cache)})
    assert "onnxruntime" in heavy and "torch" not in heavy
    assert hybrid.stdout.splitlines()[0].endswith("tmux cheatsheet  (Reference/tmux cheatsheet.md)")


def test_help_and_errors_speak_the_commands_words(vault, data_home):
    """Issue 40 row 19: `--help` cut each command's line with "...", and a tag error named the API's fields."""
    listing = skmemory("--help", check=True).stdout
    commands = listing[listing.index("Commands:"):]
    assert "..." not in commands and "running server starts indexing it at once" in " ".join(commands.split())
    keywords = {"SKMEMORY_MODEL": str(data_home / "no-model")}  # the refusal needs an index, not meaning
    skmemory("add", str(vault), "--name", "notes", env=keywords, check=True)
    skmemory("index", "notes", env=keywords, check=True)
    refused = skmemory("search", "--mode", "tag", env=keywords)
    assert refused.returncode == 2
    assert "give --tag or --any-tag" in refused.stderr and "tags_all" not in refused.stderr


def test_status_says_a_model_that_is_still_loading_is_loading_never_unavailable_none():
    """Issue 61: while the multilingual model was being prepared, `skmemory status zh` said "embeddings: unavailable:
    None"."""
    from webapp.cli import embeddings_state

    loading = {"embeddings_available": False, "embeddings_unavailable_reason": None, "model": "multilingual-e5-small"}
    said = embeddings_state(loading)
    assert said.startswith("not ready yet: the multilingual-e5-small model is loading") and "None" not in said
    failed = {**loading, "embeddings_unavailable_reason": "the model folder is missing"}
    assert embeddings_state(failed) == "unavailable: the model folder is missing"
    assert embeddings_state({"embeddings_available": True, "model": "all-MiniLM-L6-v2"}).startswith("available")


def test_index_through_a_server_waits_for_the_model_switch_its_re_read_starts(monkeypatch, capsys):
    """Issue 62: `skmemory index` asked the server to re-read a project whose notes had turned Chinese; nothing was
    pending at that moment, the language was told a second later, and the command returned in 1 s, rc 0, without
    following the 3.7-minute re-embedding it had started. It now waits for the language to be told first."""
    from webapp import indexing

    switch = {"from": "all-MiniLM-L6-v2", "to": "multilingual-e5-small", "done": 0, "total": 40,
              "sentence": "moving from all-MiniLM-L6-v2 to multilingual-e5-small: 0 of 40 passages embedded again"}
    answers = iter([{"language_due": True, "pending": 0}, {"language_due": True, "pending": 0},
                    {"pending": 40, "model_switch": switch}, {"pending": 25, "model_switch": switch},
                    {"pending": 0, "documents_embedded": 12, "documents_with_text": 12}])
    asked = []

    class Server:
        def status(self):
            entry = next(answers)
            asked.append(entry)
            return {"embeddings": "ready", "projects": [{"project": "notes", **entry}]}

    monkeypatch.setattr(indexing, "POLL_SECONDS", 0)
    indexing._follow_embeddings(Server(), "notes")
    assert len(asked) == 5 and asked[-1]["pending"] == 0  # followed to the end, not left at the first answer
    assert "moving from all-MiniLM-L6-v2 to multilingual-e5-small" in capsys.readouterr().err
