"""Every route's answer holds the row type it declares (indexer/search/answers.py), in one vocabulary."""
from __future__ import annotations

import pytest

from indexer.contract.rows import (ROUTE_ANSWERS, ChunkHit, MemoryHit, NoteHit, NoteRow, answer_problems)
from support import app_client
from webapp import create_app

BASE = "http://127.0.0.1:8765"
MEMORY_NOTE = "---\nid: DEC-1\ntags: [database]\nrelated_to: [DEC-9]\n---\n# Use SQLite\n\nSourdough and SQLite.\n"


@pytest.fixture(scope="module")
def client(make_module_engine):
    engine = make_module_engine(embedder="words", prepare=lambda folder: (folder / "DEC-1.md").write_text(
        MEMORY_NOTE, encoding="utf-8"))
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
    return client


def answer(client, route: str) -> dict:
    method, path = route.split(" ", 1)
    if path == "/api/documents/<id>/related":
        documents = client.get("/api/documents?project=notes", base_url=BASE).get_json()["documents"]
        for document in documents:  # the first note something relates to
            found = client.get(f"/api/documents/{document['document_id']}/related", base_url=BASE).get_json()
            if found["results"]:
                return found
    bodies = {
        "/api/vault_search": {"query": "sourdough starter", "explain": True, "include_leading_callout": True},
        "/api/vault_search/by_tag": {"tags": ["project"]},
        "/api/vault_search/by_folder": {"folder": "Projects"},
        "/api/vault_search/by_property": {"properties": {"id": "DEC-1"}},
        "/api/vault_search/recent": {},
        "/api/memory_search": {"mode": "xref", "query": "DEC-1"},
        "/api/related": {"text": "A sourdough starter needs flour and water.", "title": "Baking",
                         "url": "https://example.com/bread"},
    }
    queries = {"/api/search": "?q=sourdough+starter&explain=true", "/api/context": "?q=sourdough+starter&budget=400",
               "/api/search?group=document": "&q=sourdough+starter"}
    if method == "POST":
        response = client.post(path, json=bodies[path], base_url=BASE)
    else:
        response = client.get(path + queries.get(path, ""), base_url=BASE)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.mark.parametrize("route", sorted(ROUTE_ANSWERS))
def test_every_route_answers_rows_of_its_declared_type(client, route):
    found = answer(client, route)
    key, _ = ROUTE_ANSWERS[route]
    assert found[key], f"{route} found nothing to check"
    assert answer_problems(route, found) == []


def test_memory_rows_type_the_missing_note_too(client):
    found = answer(client, "POST /api/memory_search")
    assert [r["relevance"] for r in found["results"]] == ["related_to_outbound"]  # DEC-9 is no note
    assert MemoryHit.problems(found["results"][0]) == []


def test_one_vocabulary_with_the_specs_names_as_aliases():
    assert {"title", "path", "score"} <= ChunkHit.names() and {"title", "path", "score"} <= NoteHit.names()
    assert ChunkHit.ALIASES == {"document_title": "title", "relative_path": "path", "similarity": "score"}
    assert {"title", "path"} <= NoteRow.names() and "score" in NoteRow.EXTRA  # spec 001's own names
    assert MemoryHit.ALIASES == {"file_path": "path"}  # spec 002's


def test_a_row_that_breaks_its_type_is_named():
    row = {**dict.fromkeys(f for f in NoteHit.names()), "title": 3}
    problems = NoteHit.problems(row)
    assert "NoteHit.title is 3, not <class 'str'>" in problems
    assert any("unknown field 'folder'" in p for p in NoteHit.problems({**row, "folder": ""}))
    assert any("similarity" in p and "differs from score" in p for p in NoteHit.problems({**row, "score": 1.0,
                                                                                          "similarity": 0.5}))
