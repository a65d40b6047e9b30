"""The contract (indexer/contract/): every route of the app has its row in the one route table (or a named
exemption), the method behind each route returns the route's answer type and takes exactly one request, every answer
leaves by a door that sends only that type, and a filter is one record whose narrowing cannot be missing."""
from __future__ import annotations

import inspect
import typing

import pytest

from indexer import SearchRequest
from indexer.contract import filters as contract_filters
from indexer.contract.filters import FILTER_KEYS, FILTERS, Filter
from indexer.contract.routes import BY_KEY, EXEMPT, ROUTES
from indexer.contract.rows import ChunkHit, MemoryHit, NoteHit, NoteRow
from indexer.errors import InvalidQuery
from support import app_client, with_memory_note_and_map
from webapp import create_app
from webapp.mcp_link import AppClient

BASE = "http://127.0.0.1:8765"
MEMORY_NOTE = "---\nid: DEC-1\ntags: [database]\nrelated_to: [DEC-9]\n---\n# Use SQLite\n\nSourdough and SQLite.\n"


@pytest.fixture(scope="module")
def engine(make_module_engine):
    return make_module_engine(embedder="words", prepare=with_memory_note_and_map("DEC-1.md", MEMORY_NOTE))


@pytest.fixture(scope="module")
def app(engine):
    return create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})


# One asking of each route of the table, as a client sends it (the list each answer holds rows in, if any).
ASKED = {
    "search": ({"q": "sourdough starter", "explain": "true"}, "results"),
    "vault_search": ({"query": "sourdough starter", "explain": True, "include_leading_callout": True}, "results"),
    "by_tag": ({"tags": ["project"]}, "results"),
    "by_folder": ({"folder": "Projects"}, "results"),
    "by_property": ({"properties": {"id": "DEC-1"}}, "results"),
    "recent": ({}, "results"),
    "memory_search": ({"mode": "xref", "query": "DEC-1"}, "results"),
    "projects": ({}, "projects"),
    "health": ({}, None),
    "tags": ({}, "tags"),
    "properties": ({}, "properties"),
    "note_info": ({"note": "Projects/Garden plan.md"}, "outline"),
    "read_note": ({"note": "Projects/Garden plan.md"}, None),
    "links": ({"note": "Garden plan"}, None),
    "context": ({"q": "sourdough starter", "budget": 400}, "items"),
    "related_text": ({"text": "A sourdough starter needs flour and water.", "title": "Baking",
                      "url": "https://example.com/bread"}, "results"),
    "suggestions": ({"note": "Projects/Garden plan.md"}, None),
    "search_nodes": ({"q": "when does the drip line run", "path": "Maps/Garden.mmdata"}, "results"),
    "node_context": ({"node_id": "watering", "path": "Maps/Garden.mmdata"}, "ancestors"),
    "related": ({}, "results"),
    "documents": ({"project": "notes"}, "documents"),
    "light": ({"q": "sourdough"}, None),
}


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_of_the_table_answers_its_declared_type(app, engine, name):
    client, route = AppClient(app), ROUTES[name]
    assert name in ASKED, (f"add the route {name!r} to ASKED in tests/test_contract.py: one asking of it as a client "
                           "sends it, and the list its answer holds rows in (None if none)")
    payload, rows = ASKED[name]
    if name == "related":  # the first note something relates to
        documents = client.ask("documents", {"project": "notes"})["documents"]
        route_path = route.path
        for document in documents:
            found = client.get(route_path.replace("<document_id>", document["document_id"]))
            if found["results"]:
                break
        assert route.answer.problems(found) == []
        return
    found = client.ask(name, payload)  # the door sent the engine's answer; the client decoded it into its type
    assert isinstance(found, route.answer) and route.answer.problems(found) == []
    if rows:
        assert found[rows], f"{name} found nothing to check"


def test_group_document_answers_note_hits(app):
    found = AppClient(app).ask("search", {"q": "sourdough starter", "group": "document"})
    assert found["results"] and all(NoteHit.problems(r) == [] for r in found["results"])


def test_every_json_route_of_the_app_has_a_row_or_an_exemption(app):
    served = {f"{method} {rule.rule}" for rule in app.url_map.iter_rules() if rule.rule.startswith("/api/")
              for method in rule.methods - {"HEAD", "OPTIONS"}}
    assert sorted(served - set(BY_KEY) - set(EXEMPT)) == [], "add a row to indexer/contract/routes.py"
    assert sorted((set(BY_KEY) | set(EXEMPT)) - served) == [], "the table names a route the app does not serve"
    assert not set(BY_KEY) & set(EXEMPT)


def test_each_route_holds_its_request_reader_and_the_method_that_returns_its_answer():
    import functools

    from webapp.api.door import ANSWERING

    for module in ANSWERING:  # importing them marks the methods that answer the routes
        __import__(module)

    for route in ROUTES.values():
        method = route.engine
        assert callable(method), route.name
        hints = typing.get_type_hints(method)
        assert hints["return"] is route.answer, f"{method.__qualname__} returns {hints['return']}, not {route.answer}"
        if route.request is None:
            continue
        assert callable(route.request), route.name
        reader = route.request.func if isinstance(route.request, functools.partial) else route.request
        kind = reader.__self__  # the request type whose classmethod reads it
        # the method takes exactly the one request, no loose fields beside it
        params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
        assert [p.name for p in params] == ["request"] and hints["request"] is kind, method.__qualname__


def test_the_door_sends_only_an_answer_of_its_routes_type(app, engine, monkeypatch):
    monkeypatch.setattr(type(engine), "tags", lambda self, *args: {"project": "notes", "tags": []})
    response = app_client(app).get("/api/tags", base_url=BASE)
    assert response.status_code == 500
    assert response.get_json()["error"] == "answer_contract"
    assert "answered a dict for GET /api/tags, not a TagsAnswer" in response.get_json()["detail"]


def test_an_answer_is_built_with_its_fields_and_decoded_with_its_types():
    from indexer.contract.answers import TagsAnswer

    with pytest.raises(TypeError, match="TagsAnswer lacks more"):
        TagsAnswer(project="notes", total=0, total_is_exact=True, tags=[])
    with pytest.raises(TypeError, match="TagsAnswer has no field colour"):
        TagsAnswer(project="notes", total=0, total_is_exact=True, more=False, tags=[], colour="red")
    with pytest.raises(ValueError, match="TagsAnswer.project is 3"):
        TagsAnswer.decode({"project": 3, "total": 0, "total_is_exact": True, "more": False, "tags": []})


def test_every_filter_is_one_whole_record():
    import indexer.search.filters  # noqa: F401  (gives each record its narrowing)

    missing = [key for key, record in FILTERS.items() if record.narrow is None]
    assert missing == [], f"filters without a narrowing in indexer/search/filters.py: {missing}"
    for key in FILTER_KEYS:
        assert FILTERS[key].schema.get("description"), f"filters.{key} has no schema for an agent to read"
    assert set(contract_filters.FILTERS_SCHEMA["properties"]) == set(FILTER_KEYS)


def test_a_filter_without_its_narrowing_is_refused_not_ignored(engine, monkeypatch):
    """A key added to the registry but given no narrowing must not narrow nothing in silence."""
    monkeypatch.setitem(FILTERS, "language", Filter("language", lambda key, value: value, {"type": "string"}))
    monkeypatch.setattr(contract_filters, "FILTER_KEYS", (*FILTER_KEYS, "language"))
    request = SearchRequest("sourdough", mode="vault", filters={"language": "de"})
    with pytest.raises(InvalidQuery, match="narrows nothing"):
        engine.search(request)


def test_an_unknown_filter_key_is_refused_with_the_keys_to_use():
    with pytest.raises(InvalidQuery, match="Unknown filter 'colour'; use any of: folder, tags"):
        SearchRequest("x", mode="vault", filters={"colour": "red"})


# --- the rows, in one vocabulary ---------------------------------------------------------------------------------

def test_memory_rows_type_the_missing_note_too(app):
    found = AppClient(app).ask("memory_search", {"mode": "xref", "query": "DEC-1"})
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


# --- decided once ---------------------------------------------------------------------------------------------

def test_a_search_resolves_its_project_once_and_a_warm_one_opens_no_registry(app, engine, monkeypatch):
    import os
    import time

    from indexer.engine import Engine
    from indexer.registry import Registry

    registry = engine.home.registry
    past = time.time() - 60  # a registry nobody has written for a minute: its rows are kept
    os.utime(registry._db, (past, past))
    opened, resolved = [], []
    connect, resolve = Registry._connect, Engine._resolve
    monkeypatch.setattr(Registry, "_connect", lambda self: opened.append(1) or connect(self))
    monkeypatch.setattr(Engine, "_resolve", lambda self, name: resolved.append(name) or resolve(self, name))
    client = app_client(app)
    for project in ("notes", None):
        opened.clear(), resolved.clear()
        asked = "/api/search?q=sourdough" + (f"&project={project}" if project else "")
        assert client.get(asked, base_url=BASE).status_code == 200
        assert len(opened) <= 1 and len(resolved) == 1, (project, opened, resolved)
        opened.clear(), resolved.clear()
        assert client.get(asked, base_url=BASE).status_code == 200
        assert opened == [] and resolved == [project]  # warm: the rows as read, the project resolved once


def test_a_registry_changed_by_another_process_is_read_again(engine, tmp_path):
    import os
    import time

    from indexer.registry import Registry

    other = Registry(engine.home.settings.home)  # another process's view of the same data home
    past = time.time() - 60
    os.utime(other._db, (past, past))
    before = [p.name for p in other.list()]
    folder = tmp_path / "Later"
    folder.mkdir()
    engine.home.registry.add(folder, "later")  # written by "this" process
    try:
        assert [p.name for p in other.list()] == sorted(before + ["later"], key=str.casefold)
        assert other.get("LATER").root == folder.resolve()
    finally:
        engine.home.registry.remove("later")
    assert "later" not in [p.name for p in other.list()]


def test_a_row_read_as_its_type_reads_by_name_and_refuses_another_shape(app):
    found = AppClient(app).ask("search", {"q": "sourdough starter", "group": "document"})
    hit = NoteHit.decode(found["results"][0])
    assert hit.title == found["results"][0]["title"] and hit.path.endswith(".md")
    assert all(type(p).__name__ == "Passage" for p in hit.more_passages)
    with pytest.raises(ValueError, match="ChunkHit has an unknown field 'passages'"):
        ChunkHit.decode(found["results"][0])


def test_every_counted_answer_says_total_and_more_in_one_meaning():
    """Issue 60: `total` meant "rows held" in four envelopes and "every match" in four, and MCP worked out "the limit
    cut the list" in its own ways; every answer that counts now says total, total_is_exact and more."""

    from indexer.contract.answers import ANSWERS

    for answer in ANSWERS:
        names = set(answer.FIELDS)
        if "total" in names:
            assert {"total_is_exact", "more"} <= names, f"{answer.__name__} counts without total_is_exact and more"


@pytest.mark.parametrize("route, body, rows", [
    ("search", {"q": "garden", "mode": "keyword"}, "results"),
    ("search", {"q": "garden", "mode": "keyword", "group": "document"}, "results"),
    ("vault_search", {"query": "garden"}, "results"),
    ("recent", {}, "results"),
    ("tags", {}, "tags"),
    ("properties", {}, "properties"),
    ("documents", {"project": "notes"}, "documents"),
    ("related_text", {"text": "The garden plan: watering, compost and the drip line."}, "results"),
])
def test_a_list_cut_at_its_limit_says_more_and_one_past_it_says_all(app, route, body, rows):
    """The engine ranks one row past the limit (or counts every match): at limit 1, more; at a limit past every
    match, no more, and total is the rows held, exactly."""
    client = AppClient(app)
    everything = client.ask(ROUTES[route].name, {**body, "limit": 50})
    held = len(everything[rows])
    assert held >= 2 and not everything["more"] and everything["total"] == held and everything["total_is_exact"]
    one = client.ask(ROUTES[route].name, {**body, "limit": 1})
    assert len(one[rows]) == 1 and one["more"] and one[rows][0] == everything[rows][0]
    assert one["total"] == held if one["total_is_exact"] else one["total"] == 2
