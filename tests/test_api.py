"""The JSON API through Flask's test client on a real indexed vault: answers, status codes, Host and Origin."""
from __future__ import annotations

import pytest

from indexer.engine import Engine
from webapp import create_app
from support import app_client

BASE = "http://127.0.0.1:8765"


@pytest.fixture
def client(home, vault):
    home.add_project(vault, "notes")
    engine = Engine(home)
    engine.embed_pending("notes")
    app = create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765, "EXTENSION_ID": "a" * 32})
    yield app_client(app)
    engine.close()


def get(client, path, **kw):
    return client.get(path, base_url=BASE, **kw)


def test_search_matches_the_engine(client, home):
    response = get(client, "/api/search?q=garden&limit=5")
    assert response.status_code == 200
    body = response.get_json()
    assert body["mode"] == "hybrid" and body["project"] == "notes"
    assert body["results"][0]["path"] == "Projects/Garden plan.md"
    assert set(body["results"][0]) >= {"chunk_id", "document_id", "content", "document_title", "relative_path",
                                       "absolute_path", "file_type", "similarity", "search_type", "project", "tags",
                                       "created", "modified", "snippet"}
    tagged = get(client, "/api/search?mode=tag&tags_all=project&tags_all=outdoors").get_json()
    assert sorted(r["path"] for r in tagged["results"]) == ["Projects/Compost log.md",
                                                                     "Projects/Garden plan.md"]
    everywhere = get(client, "/api/search?q=bread&scope=all").get_json()
    assert everywhere["scope"] == "all" and everywhere["results"][0]["project"] == "notes"


def test_documents_tags_related_projects_status_health(client):
    tags = get(client, "/api/tags?prefix=pro").get_json()["tags"]
    assert tags == [{"tag": "project/garden", "count": 2}]
    docs = get(client, "/api/documents?folder=Projects").get_json()
    assert docs["total"] == 3
    garden = next(d for d in docs["documents"] if d["title"] == "Garden plan")
    detail = get(client, f"/api/documents/{garden['document_id']}").get_json()
    assert [o["heading"] for o in detail["outline"]] == ["Garden plan", "Spring", "Watering"]
    assert detail["links"][0]["path"] == "Projects/Compost log.md"
    related = get(client, f"/api/documents/{garden['document_id']}/related").get_json()
    assert garden["document_id"] not in {r["document_id"] for r in related["results"]}
    assert "Projects/Compost log.md" in [r["path"] for r in related["results"]]
    assert get(client, "/api/projects").get_json()["projects"][0]["documents"] == 10
    assert get(client, "/api/status").status_code == 200
    assert get(client, "/api/health").get_json()["status"] == "ok"


@pytest.mark.parametrize("path,status,words", [
    ("/api/search?q=x&mode=fuzzy", 400, "use one of"),
    ("/api/search?q=x&limit=abc", 400, "whole number"),
    ("/api/search?q=x&limit=5000", 400, "from 1 to 100"),
    ("/api/search?q=" + "x" * 1200, 400, "shorten"),
    ("/api/search?q=x&project=ghost", 404, "No project named 'ghost'"),
    ("/api/search?q=x&scope=galaxy", 400, "scope"),
    ("/api/search?q=x&group=paragraph", 400, "group must be 'chunk' or 'document', not 'paragraph'"),
    ("/api/documents/nope", 404, "No document"),
    ("/api/nothing-here", 404, "no API endpoint"),
])
def test_errors_are_json_with_a_sentence(client, path, status, words):
    response = get(client, path)
    assert response.status_code == status
    body = response.get_json()
    assert set(body) == {"error", "detail"} and words in body["detail"]


def test_foreign_host_is_refused(client):
    response = client.get("/api/health", base_url="http://evil.example:8765")
    assert response.status_code == 400 and response.get_json()["error"] == "bad_host"
    assert client.get("/api/health", base_url="http://localhost:8765").status_code == 200
    assert client.get("/api/health", base_url="http://127.0.0.1:9999").status_code == 400


def test_state_changes_only_from_own_origin_and_no_wildcard_cors(client):
    foreign = client.post("/api/search", base_url=BASE, headers={"Origin": "https://evil.example"}, json={})
    assert foreign.status_code == 403 and foreign.get_json()["error"] == "bad_origin"
    cross_site = client.post("/api/search", base_url=BASE, headers={"Sec-Fetch-Site": "cross-site"}, json={})
    assert cross_site.status_code == 403
    own = client.post("/api/search", base_url=BASE, headers={"Origin": BASE}, json={})
    assert own.status_code == 405  # passes the check; search itself is GET only
    ext = get(client, "/api/search?q=bread", headers={"Origin": "chrome-extension://" + "a" * 32})
    assert ext.headers["Access-Control-Allow-Origin"] == "chrome-extension://" + "a" * 32
    for path in ("/api/documents?project=notes", "/api/status", "/api/mindmaps"):  # only health and search
        refused = get(client, path, headers={"Origin": "chrome-extension://" + "a" * 32})
        assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused.headers, path
    ext_change = client.post("/api/vault_search", base_url=BASE, json={"query": "bread"},
                             headers={"Origin": "chrome-extension://" + "a" * 32})
    assert ext_change.status_code == 403 and "only check the server" in ext_change.get_json()["detail"]
    assert client.post("/api/vault_search", base_url=BASE, json={"query": "bread"}).status_code == 200  # a program
    anonymous = client.application.test_client().post("/api/vault_search", base_url=BASE, json={"query": "bread"})
    assert anonymous.status_code == 403 and "X-SKMemory-Client" in anonymous.get_json()["detail"]
    other = get(client, "/api/search?q=bread", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_projects_are_managed_through_the_api_with_clear_refusals(client, tmp_path):
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "Herons.md").write_text("# Herons\n\nA grey heron waits in the shallows.\n")
    post = lambda path, body, **kw: client.post(path, json=body, base_url=BASE, **kw)  # noqa: E731

    added = post("/api/projects", {"path": str(folder), "name": "birds"})
    assert added.status_code == 201 and added.get_json()["root"] == str(folder.resolve())
    queued = post("/api/projects/birds/reindex", {})
    assert queued.status_code == 202 and queued.get_json()["project"] == "birds"
    assert get(client, "/api/search?q=heron&mode=keyword&project=birds").get_json()["results"]
    renamed = post("/api/projects/birds/rename", {"name": "waders"})
    assert renamed.get_json()["name"] == "waders"
    assert get(client, "/api/search?q=heron&project=birds").status_code == 404
    removed = client.delete("/api/projects/waders", base_url=BASE)
    assert removed.status_code == 200 and (folder / "Herons.md").exists()

    relative = post("/api/projects", {"path": "notes/elsewhere"})
    assert relative.status_code == 400 and "full path" in relative.get_json()["detail"]
    assert post("/api/projects", {"name": "x"}).get_json()["detail"] == "The request body needs a 'path' field."
    missing = post("/api/projects", {"path": str(tmp_path / "nowhere")})
    assert missing.status_code == 400 and "does not exist" in missing.get_json()["detail"]
    builtin_free = post("/api/projects/ghost/rename", {"name": "y"})
    assert builtin_free.status_code == 404 and "No project named 'ghost'" in builtin_free.get_json()["detail"]
    extension = post("/api/projects", {"path": str(folder)}, headers={"Origin": "chrome-extension://" + "a" * 32})
    assert extension.status_code == 403 and "only check the server" in extension.get_json()["detail"]
    foreign = post("/api/projects", {"path": str(folder)}, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    assert [p["name"] for p in get(client, "/api/projects").get_json()["projects"]] == ["notes"]


def test_the_extension_s_searches_go_before_agents_and_an_api_client_s_do_not(client, monkeypatch):
    """The Chrome extension's popup is a person typing: its searches join the person's line (as the window's do);
    a program calling the API, or a page claiming another extension's origin, joins the agents' line."""
    from indexer.search.slots import PERSON_FIRST

    engine = client.application.config["ENGINE"]
    seen = []
    real = engine.search_hits  # what GET /api/search and the window both reach
    monkeypatch.setattr(engine, "search_hits", lambda *a, **kw: seen.append(PERSON_FIRST.get()) or real(*a, **kw))
    assert get(client, "/api/search?q=garden", headers={"Origin": "chrome-extension://" + "a" * 32}).status_code == 200
    assert get(client, "/api/search?q=garden").status_code == 200
    assert get(client, "/api/search?q=garden", headers={"Origin": "chrome-extension://" + "b" * 32}).status_code == 200
    assert get(client, "/search?q=garden").status_code == 200  # the window's page
    assert seen == [True, False, False, True]
