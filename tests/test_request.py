"""One search request, checked once and parsed once: what every surface hands to the engine, how it crosses HTTP,
and the shape of the path from the API's route to the index."""
from __future__ import annotations

import functools
import inspect
import json

import pytest

from indexer import (ContextRequest, LightRequest, ListingRequest, MemoryRequest, NodeSearchRequest,
                     RelatedRequest, SearchRequest)
from indexer.errors import InvalidQuery
from indexer.search import query as query_module
from support import app_client

BASE = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def engine(make_module_engine):
    return make_module_engine(project="demo")


@pytest.mark.parametrize("fields, sentence", [
    ({"mode": "fuzzy"}, "Unknown search mode 'fuzzy'"),
    ({"limit": 0}, "limit must be a whole number from 1 to 100"),
    ({"limit": True}, "limit must be a whole number"),
    ({"scope": "everywhere"}, "Unknown scope 'everywhere'"),
    ({"query": "x" * 1001}, "shorten it to at most 1000"),
    ({"scope": "all", "explain_document": "abc"}, "explain_document looks inside one project"),
    ({"mode": "vault", "query": "  "}, "Type something to search for"),
    ({"mode": "vault", "query": "x", "filters": {"created": {"after": "June"}}}, "Use YYYY-MM-DD"),
    ({"mode": "vault", "query": "x", "filters": {"colour": "red"}}, "Unknown filter 'colour'"),
    ({"mode": "vault", "query": "x", "snippet_tokens": 65}, "snippet_tokens must be a whole number from 1 to 64"),
    ({"tags_all": [1]}, "tags_all must be a list of tags"),
])
def test_a_bad_request_is_refused_when_made_with_a_sentence(fields, sentence):
    with pytest.raises(InvalidQuery, match=sentence):
        SearchRequest(**{"query": "garden", **fields})


def test_a_request_crosses_http_unchanged():
    requests = [
        SearchRequest("keep a process running", "semantic", project="demo", tags_all=("linux", "cli"), limit=5),
        SearchRequest("tmux", "hybrid", scope="all", tags_any=("a",), group=True, explain=True),
        SearchRequest("tmux", "keyword", explain_document="abc"),
        SearchRequest("", "tag", tags_all=("project",)),
        SearchRequest("compost", "hybrid", filters={"folder": "Projects", "modified": {"after": "2020-01-01"}}),
    ]
    for request in requests:
        assert SearchRequest.from_params(request.to_params()) == request
    vault = SearchRequest("decision", "vault", filters={"folder": "Work"}, limit=3, snippet_tokens=12, explain=True)
    assert SearchRequest.from_body(json.loads(json.dumps(vault.to_params()))) == vault


@pytest.mark.parametrize("make, sentence", [
    (lambda: ListingRequest("colour"), "Unknown listing 'colour'; use one of: tag, folder, property, recent"),
    (lambda: ListingRequest("tag", tags=()), "tags must be a list of one or more tags"),
    (lambda: ListingRequest("tag", tags=("a",), match="some"), "match must be 'all' or 'any'"),
    (lambda: ListingRequest("folder", folder=3), "folder must be a path inside the project"),
    (lambda: ListingRequest("property", properties={}), "properties must name at least one frontmatter key"),
    (lambda: ListingRequest("recent", limit=0), "limit must be a whole number from 1 to 100"),
    (lambda: ListingRequest("recent", filters={"colour": "red"}), "Unknown filter 'colour'"),
    (lambda: ListingRequest.from_body("folder", {}), "needs a 'folder' field"),
    (lambda: ContextRequest("  "), "Type something to search for"),
    (lambda: ContextRequest("x", token_budget=10), "token_budget must be a whole number from"),
    (lambda: ContextRequest("x", scope="some"), "Unknown scope 'some'"),
    (lambda: ContextRequest.from_params({"q": "x", "budget": "lots"}), "budget must be a whole number"),
    (lambda: RelatedRequest(""), "Give the document's id"),
    (lambda: RelatedRequest("abc", limit=51), "limit must be a whole number from 1 to 50"),
    (lambda: MemoryRequest("d", "x"), "Unknown memory search mode 'd'; use frontmatter \\(A\\)"),
    (lambda: MemoryRequest.from_body({"mode": "content"}), "needs a 'query' field"),
    (lambda: NodeSearchRequest(""), "Type something to search for"),
    (lambda: LightRequest("x", scope="some"), "Unknown scope 'some'"),
    (lambda: SearchRequest.from_params({"q": "x", "filters": "{folder"}), "filters must be a JSON object"),
])
def test_every_search_like_request_is_refused_when_made_with_a_sentence(make, sentence):
    with pytest.raises(InvalidQuery, match=sentence):
        make()


def test_query_strings_and_bodies_are_refused_by_the_field_they_got_wrong():
    with pytest.raises(InvalidQuery, match="group must be 'chunk' or 'document'"):
        SearchRequest.from_params({"q": "x", "group": "page"})
    with pytest.raises(InvalidQuery, match="explain must be true or false"):
        SearchRequest.from_params({"q": "x", "explain": "maybe"})
    with pytest.raises(InvalidQuery, match="'limit' must be a whole number"):
        SearchRequest.from_body({"query": "x", "limit": "5"})
    with pytest.raises(InvalidQuery, match="needs a 'query' field"):
        SearchRequest.from_body({})


def test_the_api_answers_what_the_engine_answers_for_the_same_request(engine):
    client = app_client_for(engine)
    for request in [SearchRequest("garden tomatoes", "hybrid", limit=5, explain=True),
                    SearchRequest("tmux", "keyword", group=True),
                    SearchRequest("", "tag", tags_all=("project",))]:
        answer = client.get("/api/search", query_string=request.to_params()).get_json()
        assert answer == json.loads(json.dumps(engine.search(request)))
    vault = SearchRequest("garden", "vault", limit=3)
    assert client.post("/api/vault_search", json=vault.to_params()).get_json() == \
        json.loads(json.dumps(engine.search(vault)))


def test_each_sibling_route_answers_what_the_engine_answers_for_its_request(engine):
    client = app_client_for(engine)
    sourdough = client.get("/api/documents?project=demo&name=Sourdough").get_json()["documents"][0]["document_id"]
    asked = [
        ("POST", "/api/vault_search/by_tag", {"tags": ["project"], "match": "any"},
         ListingRequest("tag", tags=("project",), match="any")),
        ("POST", "/api/vault_search/by_folder", {"folder": "Projects", "limit": 3},
         ListingRequest("folder", folder="Projects", limit=3)),
        ("POST", "/api/vault_search/recent", {"filters": {"folder": "Projects"}},
         ListingRequest("recent", filters={"folder": "Projects"})),
        ("GET", "/api/context", {"q": "sourdough starter", "budget": "300"},
         ContextRequest("sourdough starter", token_budget=300)),
        ("GET", f"/api/documents/{sourdough}/related", {"limit": "3"}, RelatedRequest(sourdough, limit=3)),
        ("POST", "/api/memory_search", {"mode": "content", "query": "starter"}, MemoryRequest("content", "starter")),
    ]
    for method, route, params, request in asked:
        response = (client.post(route, json=params) if method == "POST" else
                    client.get(route, query_string=params))
        assert response.status_code == 200, response.get_json()
        by_engine = {"ListingRequest": engine.list_notes, "ContextRequest": engine.context,
                     "RelatedRequest": engine.related, "MemoryRequest": engine.memory_search}
        assert response.get_json() == json.loads(json.dumps(by_engine[type(request).__name__](request))), route


def test_filters_cross_http_for_hybrid(engine):
    client = app_client_for(engine)
    request = SearchRequest("garden", "hybrid", filters={"folder": "Projects"}, limit=20)
    narrowed = client.get("/api/search", query_string=request.to_params()).get_json()["results"]
    everywhere = client.get("/api/search", query_string=request.but(filters=None).to_params()).get_json()["results"]
    assert narrowed and all(r["path"].startswith("Projects/") for r in narrowed)
    assert any(not r["path"].startswith("Projects/") for r in everywhere)


def app_client_for(engine):
    from webapp import create_app

    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
    client.get = functools.partial(client.get, base_url=BASE)  # the only host the server answers to
    client.post = functools.partial(client.post, base_url=BASE)
    return client


@pytest.mark.parametrize("request_", [
    SearchRequest("garden tomatoes", "hybrid"),
    SearchRequest("garden tomatoes", "hybrid", explain=True, group=True),
    SearchRequest("garden", "hybrid", explain_document="nope"),
    SearchRequest("watering", "semantic"),
    SearchRequest("how to water", "recency"),
    SearchRequest("tmux", "keyword", tags_any=("project",)),
    SearchRequest("tmux", "hybrid", scope="all"),
    SearchRequest("", "tag", tags_all=("project",)),
    SearchRequest("garden", "vault", explain=True),
], ids=lambda r: f"{r.mode}-{r.scope}-{'explain' if r.explain or r.explain_document else 'plain'}")
def test_one_parse_per_search(engine, monkeypatch, request_):
    """Every grammar (keyword terms, FTS5 expression, highlight words) reads the text once per search, however many
    legs, projects and explanations it has."""
    calls = {"parse_terms": 0, "parse_query": 0, "query_words": 0}
    for name in calls:
        original = getattr(query_module, name)

        def counting(text, _name=name, _original=original):
            calls[_name] += 1
            return _original(text)

        monkeypatch.setattr(query_module, name, counting)
    engine.search(request_)
    assert calls == {"parse_terms": 1, "parse_query": 1, "query_words": 1}


def test_context_parses_its_question_once(engine, monkeypatch):
    seen = []
    original = query_module.Query.parse.__func__
    monkeypatch.setattr(query_module.Query, "parse", classmethod(lambda cls, *a, **k: seen.append(a[0]) or
                                                                    original(cls, *a, **k)))
    engine.context(ContextRequest("when should I water the garden", project="demo"))
    assert seen == ["when should I water the garden"]


FIRST_SQL_LIMIT = 5


@pytest.mark.parametrize("params", [
    {"q": "tmux", "mode": "keyword"},
    {"q": "garden tomatoes", "mode": "hybrid"},
    {"q": "garden tomatoes", "mode": "hybrid", "explain": "true", "group": "document"},
    {"q": "when should I sow tomato seeds", "mode": "semantic"},
    {"q": "", "mode": "tag", "tags_all": "project"},
], ids=lambda p: p["mode"] + ("-window" if "group" in p else ""))
def test_the_api_route_reaches_its_first_query_in_five_frames(engine, params):
    """From the /api/search route (the door's one view of every route that reads a request) to the function that asks
    the index its first question, by name (a function of chunk_reads.py or note_reads.py): at most five frames, the
    route and that function included."""
    client = app_client_for(engine)
    client.get("/api/search", query_string=params)  # opened and warmed: what is measured is a search
    readers = list(engine.index("demo")._opened)  # the project's read connections, made by the warm-up
    depths: list[list[str]] = []

    def trace(statement: str) -> None:
        if depths:
            return
        frames = inspect.stack()[1:]
        names = [f"{f.filename.rsplit('/', 1)[-1]}:{f.function}" for f in frames]
        route = next(i for i, n in enumerate(names) if n == "door.py:view" and "webapp" in frames[i].filename)
        asker = max(i for i, n in enumerate(names[:route]) if n.startswith(("chunk_reads.py:", "note_reads.py:")))
        depths.append(list(reversed(names[asker:route + 1])))

    for db in readers:
        db.set_trace_callback(trace)
    try:
        assert client.get("/api/search", query_string=params).status_code == 200
    finally:
        for db in readers:
            db.set_trace_callback(None)
    assert depths, "no query reached the index"
    assert len(depths[0]) <= FIRST_SQL_LIMIT, " -> ".join(depths[0])
