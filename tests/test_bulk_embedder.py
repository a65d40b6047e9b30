"""The bulk embedder on a CPU: OpenVINO's static int8 copy (the default where it is installed) or ONNX Runtime's
dynamic one, making vectors close to torch's, or ONNX Runtime's fp32 making torch's own, on real text, on several
worker threads without a vector depending on its neighbours, loading without torch, made without reaching the network
or writing outside the model cache, and never mixing vectors of two kinds in one project."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from indexer.config import Settings
from indexer.engine import Engine
from indexer.home import Home
from indexer.model import openvino_encoder
from indexer.model.embeddings import Embedder
from support import DEMO_NOTES, REPO, corpus
from indexer import SearchRequest


def real_passages(limit: int = 120) -> list[str]:
    """Paragraphs of real notes: the demo's and the user guide's (in every checkout), and a shared vault's when this
    checkout has it."""
    folders = [DEMO_NOTES, REPO / "indexer" / "content" / "docs" / "user"]
    try:
        folders.append(corpus("logseq-docs"))
    except pytest.skip.Exception:
        pass
    texts = []
    for folder in folders:
        for path in sorted(folder.rglob("*.md")):
            texts += [p.strip() for p in path.read_text(encoding="utf-8", errors="replace").split("\n\n")
                      if len(p.split()) >= 8]
    step = max(1, len(texts) // limit)
    return texts[::step][:limit]


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    embedder = Embedder(backend="torch", query_backend="torch")
    assert embedder.load(), embedder.now.reason
    return embedder


@pytest.fixture(scope="module")
def fp32_embedder() -> Embedder:
    embedder = Embedder(backend="onnx")
    assert embedder.load(), embedder.now.reason
    return embedder


def test_the_onnx_fp32_backend_makes_torchs_vectors_on_real_text(fp32_embedder, torch_embedder):
    assert fp32_embedder.fingerprint == torch_embedder.fingerprint  # the same vectors: nothing to embed again
    texts = real_passages()
    assert len(texts) >= 40
    cosine = np.sum(fp32_embedder.embed(texts) * torch_embedder.embed(texts), axis=1)
    assert cosine.min() >= 0.9999, cosine.min()


CPU_DEFAULT = "openvino-int8" if openvino_encoder.available() else "onnx-int8"


def test_the_cpu_default_is_int8_and_stays_close_to_torch_on_real_text(real_embedder, torch_embedder):
    assert real_embedder.backend == CPU_DEFAULT and real_embedder.device == "cpu"
    texts = real_passages()
    ours, theirs = real_embedder.embed(texts), torch_embedder.embed(texts)
    cosine = np.sum(ours * theirs, axis=1)
    # Measured on 480 britannica-10k chunks: mean 0.994, min 0.986 (tests/bench/bench_embedders.py).
    assert cosine.mean() >= 0.99 and cosine.min() >= 0.97, (cosine.mean(), cosine.min())
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    assert real_embedder.fingerprint != torch_embedder.fingerprint


@pytest.fixture(scope="module")
def onnx_int8_embedder() -> Embedder:
    embedder = Embedder(backend="onnx-int8")
    assert embedder.load(), embedder.now.reason
    return embedder


def test_without_openvino_the_cpu_default_is_onnx_runtimes_int8(monkeypatch):
    monkeypatch.setattr(openvino_encoder, "available", lambda: False)
    assert Embedder().backend == "onnx-int8"
    monkeypatch.setattr(openvino_encoder, "available", lambda: True)
    assert Embedder().backend == "openvino-int8" and Embedder(backend="onnx-int8").backend == "onnx-int8"


def test_both_int8_backends_stay_on_fp32s_scale_on_real_text(real_embedder, onnx_int8_embedder, fp32_embedder):
    texts = real_passages()
    fp32 = fp32_embedder.embed(texts)
    for embedder in (real_embedder, onnx_int8_embedder):
        cosine = np.sum(embedder.embed(texts) * fp32, axis=1)
        # 600 britannica-10k and tldr-en passages: OpenVINO 0.9961 mean, 0.986 least; ONNX Runtime 0.9976, 0.993.
        assert cosine.mean() >= 0.993 and cosine.min() >= 0.97, (embedder.backend, cosine.mean(), cosine.min())
    assert real_embedder.fingerprint != onnx_int8_embedder.fingerprint or real_embedder.backend == "onnx-int8"


@pytest.mark.parametrize("which", ["real_embedder", "onnx_int8_embedder", "fp32_embedder"])
def test_a_texts_vector_does_not_depend_on_the_texts_embedded_with_it(which, request):
    embedder = request.getfixturevalue(which)
    texts = real_passages(40)
    together = embedder.embed(texts, batch_size=32)
    alone = np.stack([embedder.embed([t])[0] for t in texts[:8]])
    assert np.allclose(together[:8], alone, atol=1e-4)


def test_questions_are_embedded_by_the_fp32_weights_whatever_embeds_the_passages(real_embedder, fp32_embedder):
    texts = real_passages(40)
    fp32 = fp32_embedder.embed(texts)
    for embedder in (real_embedder, fp32_embedder):  # int8 passages, or fp32 ones: the question is fp32's
        assert float(embedder.embed_query(texts[3]) @ fp32[3]) > 0.9999
    # On the demo's own question the int8 passages then score as fp32's do, each on the same side of hybrid's 0.3
    # floor (int8 questions put systemd at 0.262 against fp32's 0.284 and tmux's line under the floor).
    question = "keep a program alive after I disconnect"
    for name in ("Reference/tmux cheatsheet.md", "Reference/systemd services.md"):
        paragraphs = [p for p in (DEMO_NOTES / name).read_text(encoding="utf-8").split("\n\n") if len(p.split()) > 5]
        int8 = real_embedder.embed(paragraphs) @ real_embedder.embed_query(question)
        fp32_scores = fp32_embedder.embed(paragraphs) @ fp32_embedder.embed_query(question)
        assert np.abs(int8 - fp32_scores).max() < 0.02, (name, int8, fp32_scores)
        assert ((int8 >= 0.3) == (fp32_scores >= 0.3)).all(), (name, int8, fp32_scores)


def test_bulk_work_shared_among_threads_makes_the_vectors_of_one(real_embedder):
    texts = real_passages(60)
    one = Embedder(backend=real_embedder.backend, workers=1)
    three = Embedder(backend=real_embedder.backend, workers=3)
    assert np.array_equal(one.embed(texts), three.embed(texts))
    assert three.workers == 3 and three._model.workers == 3


@pytest.mark.skipif(not openvino_encoder.available(), reason="OpenVINO and NNCF are not installed here")
def test_an_idle_bulk_embedder_frees_its_run_buffers_and_embeds_the_same_after(real_embedder):
    """The server frees them after 30 s with nothing to embed (about 270 MB each once a vault was embedded): the
    next texts, on every worker thread, get the same vectors as before."""
    texts = real_passages(60)
    three = Embedder(backend="openvino-int8", workers=3)
    before = three.embed(texts)
    assert three.release_bulk() and not three.release_bulk()  # freed once; nothing left to free
    assert np.array_equal(three.embed(texts), before)
    assert three.release_bulk()


def test_the_index_cpu_setting_caps_the_bulk_threads(monkeypatch):
    from indexer.config import available_cores
    from indexer.errors import SKMemoryError

    monkeypatch.setenv("SKMEMORY_INDEX_CPU", "1")
    assert Settings.from_env().embed_workers == 1 and Embedder().workers == 1
    monkeypatch.setenv("SKMEMORY_INDEX_CPU", "999")
    assert Settings.from_env().embed_workers == available_cores()  # never more threads than cores
    monkeypatch.delenv("SKMEMORY_INDEX_CPU")
    assert Settings.from_env().embed_workers == available_cores()
    monkeypatch.setenv("SKMEMORY_INDEX_CPU", "half")
    with pytest.raises(SKMemoryError, match="SKMEMORY_INDEX_CPU must be a whole number"):
        Settings.from_env()


def test_the_onnx_backend_loads_and_embeds_without_importing_torch(real_embedder, model_cache):
    assert real_embedder.load()  # the session's cache holds the exported copy now
    script = ("import sys; from indexer.model.embeddings import Embedder; e = Embedder(); "
              "assert e.load(), e.now.reason; v = e.embed(['sourdough starter']); "
              "print(v.shape[1], e.backend, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "SKMEMORY_MODEL_CACHE": str(model_cache)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["384", CPU_DEFAULT, "False"]


def test_a_change_of_backend_embeds_the_project_again_and_never_mixes_vectors(home, vault, fp32_embedder):
    home.add_project(vault, "notes")
    engine = Engine(home)
    engine.embed_pending("notes")
    int8 = engine.writer("notes")
    chunks = int8.store.counts()["chunks"]
    assert int8.vectors.count() == chunks and "int8" in int8.store.meta("embedding_model")
    engine.close()

    switched = Engine(Home(Settings.from_env(), embedder=fp32_embedder))  # SKMEMORY_EMBED_BACKEND=onnx
    try:
        project = switched.writer("notes")
        assert project.embedded_before_by and project.store.meta("embedding_model") == fp32_embedder.fingerprint
        assert project.store.counts()["pending"] == chunks and project.vectors.count() == 0  # nothing kept
        switched.embed_pending("notes")
        assert project.vectors.count() == chunks and project.store.counts()["pending"] == 0
        found = switched.search(SearchRequest("how do I keep my sourdough starter alive", mode="semantic"))["results"]
        assert found[0]["path"] == "Projects/Sourdough.md"
    finally:
        switched.close()


def test_bulk_embedding_steps_aside_while_a_search_runs(real_embedder, make_engine, monkeypatch):
    import threading

    from indexer.model.embeddings import FOREGROUND, Foreground
    from indexer.search import pipeline

    gate = Foreground(patience=30)
    events: list[str] = []
    with gate:  # a search in progress: a worker asking before its next text waits for it to end
        worker = threading.Thread(target=lambda: (gate.wait_clear(), events.append("embedded")))
        worker.start()
        worker.join(0.5)
        events.append("search answered")
    worker.join(5)
    assert events == ["search answered", "embedded"]
    patient = Foreground(patience=0.05)
    with patient:
        patient.wait_clear()  # a stream of searches slows embedding, never stops it

    # The model's bulk encoder asks before every run of the model (one text, or at most RUN_TEXTS short ones), and a
    # search marks itself in progress.
    asked = []
    real_embedder._model.before_each = lambda: asked.append(FOREGROUND.busy)
    try:
        real_embedder.embed(real_passages(24))
    finally:
        from indexer.model.embeddings import FOREGROUND as shared

        real_embedder._model.before_each = shared.wait_clear
    assert len(asked) >= 24 / openvino_encoder.RUN_TEXTS and not any(asked)
    engine = make_engine(embedder="words")
    seen = []
    real = pipeline.search
    monkeypatch.setattr(pipeline, "search", lambda *a, **k: (seen.append(FOREGROUND.busy), real(*a, **k))[1])
    engine.search(SearchRequest("sourdough", mode="hybrid"))
    assert seen == [True] and not FOREGROUND.busy



def english_copy(model_cache, name: str):
    """The English model's copy of this name in the run's model cache (the multilingual model's copies sit beside
    it, under names of their own)."""
    from indexer.config import default_model_path
    from indexer.model.onnx_encoder import exported_path

    return exported_path(default_model_path(), model_cache).with_name(name)

@pytest.mark.skipif(not openvino_encoder.available(), reason="OpenVINO and NNCF are not installed here")
def test_the_openvino_copy_is_made_without_the_network_or_files_outside_the_model_cache(real_embedder, model_cache,
                                                                                         tmp_path):
    # A fresh cache holding only the exported fp32 file, and a home folder of its own: NNCF's usage statistics, if
    # they were imported, would write a client id under ~/intel and post an event.
    exported = english_copy(model_cache, "model.onnx")
    cache = tmp_path / "cache" / exported.parent.name
    cache.mkdir(parents=True)
    (cache / "model.onnx").write_bytes(exported.read_bytes())
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    script = (
        "import socket, sys\n"
        "tried = []\n"
        "def refuse(self, address, *a): tried.append(address); raise OSError('no network')\n"
        "socket.socket.connect = refuse; socket.socket.connect_ex = refuse\n"
        "from pathlib import Path\n"
        "from indexer.config import default_model_path\n"
        "from indexer.model.openvino_encoder import OpenVinoEncoder, openvino_int8_copy\n"
        f"path = openvino_int8_copy(Path({str(cache / 'model.onnx')!r}), default_model_path())\n"
        "vectors = OpenVinoEncoder(path, default_model_path(), quantized=True).embed(['sourdough starter'])\n"
        "print(path.name, vectors.shape[1], len(tried), 'openvino_telemetry' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HOME": str(user_home)})
    assert out.returncode == 0, out.stderr[-3000:]
    # One line: no progress bars on the console either.
    assert out.stdout.split() == [f"model{openvino_encoder.OV_SUFFIX}.xml", "384", "0", "False"], out.stdout
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        ["model.onnx", f"model{openvino_encoder.OV_SUFFIX}.xml", f"model{openvino_encoder.OV_SUFFIX}.bin",
         openvino_encoder.COMPILED_CACHE, "made.json"])  # OpenVINO's compiled forms of the copy, and its record
    assert list(user_home.iterdir()) == []  # no ~/intel, nothing else


@pytest.mark.skipif(not openvino_encoder.available(), reason="OpenVINO and NNCF are not installed here")
def test_openvino_compiles_the_copy_once_and_later_starts_read_it_back(real_embedder, model_cache, tmp_path):
    # Fresh processes on a copy of the int8 files: the first compiles and keeps the compiled form beside the copy,
    # the next reads it back (the same file, untouched) and makes the same vectors; a cache that cannot be made (a
    # file where its folder goes) costs the start-up time, never the vectors.
    xml = english_copy(model_cache, f"model{openvino_encoder.OV_SUFFIX}.xml")
    for part in (xml, xml.with_suffix(".bin")):
        (tmp_path / part.name).write_bytes(part.read_bytes())
    script = ("import sys; from pathlib import Path; from indexer.config import default_model_path\n"
              "from indexer.model.openvino_encoder import OpenVinoEncoder\n"
              f"e = OpenVinoEncoder(Path({str(tmp_path / xml.name)!r}), default_model_path(), quantized=True, "
              "workers=2)\n"
              "print(e.embed(['a heron by the river', 'tar -xzf archive.tar.gz']).tobytes().hex())\n")

    def vectors() -> str:
        out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip()

    cache = tmp_path / openvino_encoder.COMPILED_CACHE
    first = vectors()
    blobs = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert blobs, "the compiled model is kept beside the copy"
    assert vectors() == first
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == blobs, "read back, not compiled again"
    shutil.rmtree(cache)
    cache.write_text("not a folder")
    assert vectors() == first


@pytest.mark.skipif(not openvino_encoder.available(), reason="OpenVINO and NNCF are not installed here")
def test_openvino_workers_starting_together_never_deadlock(real_embedder, model_cache):
    # Each worker's first run sets up the bindings' numpy bridge; two at once deadlocked about one fresh process in
    # twelve (`skmemory index` stuck in its first texts for good). Fresh processes, four workers starting together.
    xml = english_copy(model_cache, f"model{openvino_encoder.OV_SUFFIX}.xml")
    script = ("import sys; from pathlib import Path; from indexer.config import default_model_path\n"
              "from indexer.model.openvino_encoder import OpenVinoEncoder\n"
              f"e = OpenVinoEncoder(Path({str(xml)!r}), default_model_path(), quantized=True, workers=4)\n"
              "print(e.embed([f'a heron by the river, number {i}' for i in range(16)]).shape)\n")
    for attempt in range(12):
        try:
            out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"fresh process {attempt + 1}: the workers never finished their first texts")
        assert out.returncode == 0 and out.stdout.strip() == "(16, 384)", out.stderr[-2000:]


@pytest.mark.skipif(not openvino_encoder.available(), reason="OpenVINO and NNCF are not installed here")
def test_openvino_pads_texts_to_a_few_shapes_without_changing_a_vector(real_embedder):
    encoder = real_embedder._model
    assert isinstance(encoder, openvino_encoder.OpenVinoEncoder)
    for text in real_passages(12):
        ids = np.array([encoder.tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        padded = np.array(encoder._hidden(ids, mask))  # run at the next multiple of PAD_TO tokens (a copy: the
        # request's output buffer is used again by the next run)
        exact = np.array(encoder._run_padded(ids, mask))  # run at the text's own length
        assert padded.shape == exact.shape == (1, ids.shape[1], 384)
        assert np.allclose(padded, exact, atol=1e-5), text[:60]


@pytest.mark.skipif(not openvino_encoder.available(), reason="OpenVINO and NNCF are not installed here")
def test_openvino_runs_short_passages_together_and_each_vector_stays_its_own(real_embedder):
    encoder = real_embedder._model
    texts = real_passages(40)
    runs = []
    encoder.before_each = lambda: runs.append(1)
    try:
        together = encoder.embed(texts)
    finally:
        from indexer.model.embeddings import FOREGROUND

        encoder.before_each = FOREGROUND.wait_clear
    assert len(runs) < len(texts) / 2, "short passages share runs of the model"
    tokens = [e.ids for e in encoder.tokenizer.encode_batch(texts)]
    for run in encoder._runs(sorted(range(len(texts)), key=lambda i: len(tokens[i])), tokens, 32):
        width = max(openvino_encoder.padded_width(len(tokens[i])) for i in run)
        assert len(run) <= openvino_encoder.RUN_TEXTS
        assert len(run) == 1 or width * len(run) <= openvino_encoder.RUN_TOKENS
    alone = np.stack([encoder.embed([t])[0] for t in texts])
    assert np.array_equal(together, alone), "a run's static scales make each vector the same as the text alone"


def test_openvinos_bf16_vectors_are_never_mixed_with_its_f32_ones(monkeypatch):
    monkeypatch.setattr(openvino_encoder, "precision", lambda: "bf16")
    bf16 = Embedder(backend="openvino-int8").fingerprint
    monkeypatch.setattr(openvino_encoder, "precision", lambda: "f32")
    f32 = Embedder(backend="openvino-int8").fingerprint
    assert bf16 != f32 and "bf16" in bf16
    assert Embedder(backend="onnx-int8").precision is None
