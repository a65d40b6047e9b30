"""An upgrade that changes the embedding backend of the same model (onnx-int8 to openvino-int8, or back) embeds
every passage again; meaning search answers throughout, from the old vectors until each passage's new one comes."""
from __future__ import annotations

import dataclasses

from indexer import Engine, Home, SearchRequest, Settings
from indexer.model.embeddings import Embedder

QUESTIONS = ["baking bread with a sourdough starter", "when should I water the tomatoes", "composting kitchen scraps"]


def top(engine: Engine, question: str) -> list[str]:
    return [r["path"] for r in engine.search(SearchRequest(question, mode="semantic", project="notes",
                                                             limit=3))["results"]]


def test_meaning_search_answers_throughout_a_backend_change(data_home, vault, model_cache):
    before = Embedder(backend="onnx-int8")
    home = Home(Settings.from_env(), embedder=before)
    home.add_project(vault, "notes")
    engine = Engine(home)
    try:
        engine.reindex("notes")
        engine.embed_pending("notes")
        expected = {q: top(engine, q) for q in QUESTIONS}
        total = engine.writer("notes").store.counts()["embedded"]
    finally:
        engine.close()
    assert all(expected.values()) and total >= 8

    after = Embedder(backend="openvino-int8")
    engine = Engine(Home(Settings.from_env(), embedder=after))  # the upgraded server opens the same index
    try:
        project = engine.writer("notes")
        project.settings = dataclasses.replace(project.settings, embed_batch_size=1)  # a passage or so a batch
        assert project.embedded_before_by and "onnx int8" in project.embedded_before_by
        assert project.store.counts()["embedded"] == 0 and project.store.stale_vectors() == total
        seen = []
        while True:  # a few passages at a time, searching between
            for q in QUESTIONS:
                assert top(engine, q)[:1] == expected[q][:1], (q, project.store.counts())
            seen.append(project.store.stale_vectors())
            if not project.embed_pending(max_batches=1):
                break
        assert len(seen) > 2 and seen == sorted(seen, reverse=True)  # the old vectors went as the new came
        assert project.store.stale_vectors() == 0 and project.store.counts()["embedded"] == total
        assert {q: top(engine, q) for q in QUESTIONS} == expected
    finally:
        engine.close()
