"""The bulk embedder on a CPU: ONNX Runtime, making torch's vectors (fp32, the default) or close to them (int8, opt-in)
on real text, loading without torch, and never mixing vectors of two kinds in one project."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from indexer.config import Settings
from indexer.engine import Engine
from indexer.home import Home
from indexer.ingest.embeddings import Embedder
from support import DEMO_NOTES, REPO, corpus


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
    assert embedder.load(), embedder.error
    return embedder


@pytest.fixture(scope="module")
def int8_embedder() -> Embedder:
    embedder = Embedder(backend="onnx-int8")
    assert embedder.load(), embedder.error
    return embedder


def test_the_cpu_default_is_onnx_and_makes_torchs_vectors_on_real_text(real_embedder, torch_embedder):
    assert real_embedder.backend == "onnx" and real_embedder.device == "cpu"
    assert real_embedder.fingerprint == torch_embedder.fingerprint  # the same vectors: nothing to embed again
    texts = real_passages()
    assert len(texts) >= 40
    cosine = np.sum(real_embedder.embed(texts) * torch_embedder.embed(texts), axis=1)
    assert cosine.min() >= 0.9999, cosine.min()


def test_int8_stays_close_to_torch_on_real_text(int8_embedder, torch_embedder):
    texts = real_passages()
    ours, theirs = int8_embedder.embed(texts), torch_embedder.embed(texts)
    cosine = np.sum(ours * theirs, axis=1)
    # Measured on 480 britannica-10k chunks: mean 0.994, min 0.986 (tests/bench/bench_embedders.py).
    assert cosine.mean() >= 0.99 and cosine.min() >= 0.97, (cosine.mean(), cosine.min())
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    assert int8_embedder.fingerprint != torch_embedder.fingerprint


@pytest.mark.parametrize("which", ["real_embedder", "int8_embedder"])
def test_a_texts_vector_does_not_depend_on_the_texts_embedded_with_it(which, request):
    embedder = request.getfixturevalue(which)
    texts = real_passages(40)
    together = embedder.embed(texts, batch_size=32)
    alone = np.stack([embedder.embed([t])[0] for t in texts[:8]])
    assert np.allclose(together[:8], alone, atol=1e-4)
    query = embedder.embed_query(texts[3])  # the query path (one thread) makes the same vector
    assert float(query @ together[3]) > 0.9999


def test_the_onnx_backend_loads_and_embeds_without_importing_torch(real_embedder, model_cache):
    assert real_embedder.available  # the session's cache holds the exported copy now
    script = ("import sys; from indexer.ingest.embeddings import Embedder; e = Embedder(); "
              "assert e.load(), e.error; v = e.embed(['sourdough starter']); "
              "print(v.shape[1], e.backend, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "SKMEMORY_MODEL_CACHE": str(model_cache)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["384", "onnx", "False"]


def test_a_change_of_backend_embeds_the_project_again_and_never_mixes_vectors(home, vault, int8_embedder):
    home.add_project(vault, "notes")
    engine = Engine(home)
    engine.embed_pending("notes")
    fp32 = engine.writer("notes")
    chunks = fp32.store.counts()["chunks"]
    assert fp32.vectors.count() == chunks and "fp32" in fp32.store.meta("embedding_model")
    engine.close()

    switched = Engine(Home(Settings.from_env(), embedder=int8_embedder))  # SKMEMORY_EMBED_BACKEND=onnx-int8
    try:
        project = switched.writer("notes")
        assert project.embedded_before_by and project.store.meta("embedding_model") == int8_embedder.fingerprint
        assert project.store.counts()["pending"] == chunks and project.vectors.count() == 0  # nothing kept
        switched.embed_pending("notes")
        assert project.vectors.count() == chunks and project.store.counts()["pending"] == 0
        found = switched.search("how do I keep my sourdough starter alive", mode="semantic")["results"]
        assert found[0]["path"] == "Projects/Sourdough.md"
    finally:
        switched.close()
