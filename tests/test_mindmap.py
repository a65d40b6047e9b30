"""Mind maps on real `.mmdata` files with the real model: the node index, node search, node context and the API."""
from __future__ import annotations

import json
import shutil

import pytest

from indexer.engine import Engine
from indexer.errors import DocumentNotFound, InvalidQuery
from indexer.errors import MapConflict, MapFormatError
from indexer.ingest.extract.mindmap_format import loads
from webapp import create_app
from support import GARDEN, app_client
from indexer import SearchRequest
from indexer import NodeSearchRequest

MAP = "Maps/Garden.mmdata"
BASE = "http://127.0.0.1:8765"
PRIVATE_WORDS = ("zebrastripe", "Kowalczyk")  # only in the Tomatoes node's private notes
ATTACHMENT_WORDS = ("quarksprocket", "bed-layout")  # only in attachment references


@pytest.fixture
def engine(make_engine, vault):
    (vault / "Maps").mkdir()
    shutil.copy(GARDEN, vault / MAP)
    return make_engine(vault)


@pytest.fixture
def garden(engine):
    """The Garden map, opened as the active map."""
    return engine.mindmaps.open("notes", path=MAP)


def edit_file(vault, change) -> dict:
    """Change the live map file on disk the way another editor would (a new revision), without saving it here."""
    value = json.loads((vault / MAP).read_text())
    change({n["id"]: n for n in value["nodes"]}, value)
    value["revision"] += 1
    (vault / MAP).write_text(json.dumps(value, indent=2))
    return value


def node_chunks(engine, document_id):
    rows = engine.index("notes").sql("SELECT content, ref FROM chunks WHERE document_id = ? ORDER BY ordinal",
                                     (document_id,))
    return [(r["content"], json.loads(r["ref"])) for r in rows]


def test_the_map_is_one_mindmap_semantic_document_with_one_chunk_per_node(engine, garden):
    doc_id = garden["map"]["document_id"]
    maps = engine.mindmaps.list("notes")["maps"]
    assert [(m["title"], m["path"], m["document_id"]) for m in maps] == [("Garden", MAP, doc_id)]
    assert engine.document(doc_id, "notes")["file_type"] == "mindmap-semantic"
    chunks = node_chunks(engine, doc_id)
    assert [ref["node_id"] for _, ref in chunks] == ["garden", "beds", "tomatoes", "herbs", "watering", "compost"]
    content, tomatoes = chunks[2]
    assert tomatoes == {"node_id": "tomatoes", "parent_id": "beds", "path": ["Garden", "Raised beds", "Tomatoes"],
                        "level": 2, "title": "Tomatoes", "tags": ["vegetables"], "revision": 1, "format": 1,
                        "relationships": [{"type": "needs", "direction": "outgoing", "node_id": "watering",
                                           "title": "Watering"}]}
    assert content.startswith("Tomatoes\n\nPlant out after the last frost") and "needs Watering" in content
    assert garden["index_state"] == "current" and garden["index_stale"] is False


def test_search_finds_nodes_by_meaning_with_their_path(engine, garden):
    found = engine.mindmaps.search_nodes(NodeSearchRequest("how long does the irrigation run each morning", limit=3))
    assert found["index_state"] == "current" and found["semantic_available"] is True
    top = found["results"][0]
    assert (top["node_id"], top["title"], top["path"], top["level"]) == \
        ("watering", "Watering", ["Garden", "Watering"], 1)
    assert top["parent_id"] == "garden" and top["indexed_revision"] == 1
    assert found["map"] == {"project": "notes", "document_id": garden["map"]["document_id"], "path": MAP,
                            "title": "Garden", "revision": 1}


def test_while_the_model_loads_node_search_answers_by_the_words_and_says_so(engine, garden, vault):
    """Tried as a new user: node search answered [] with semantic_available false and no sentence while the model
    loaded. It answers by the question's words (any of them, BM25) and says why."""
    from indexer.config import Settings
    from indexer.home import Home
    from indexer.model.embeddings import Embedder

    loading = Embedder()
    loading.wait_for_load = False
    loading.load = lambda: False  # a server that has just started: the model never finishes here
    fresh = Engine(Home(Settings.from_env(), embedder=loading))
    try:
        fresh.mindmaps.open("notes", path=MAP)
        found = fresh.mindmaps.search_nodes(NodeSearchRequest("when should I stake and pinch the tomatoes", limit=3))
        assert found["semantic_available"] is False
        assert "BM25" in found["semantic_reason"] and "words" in found["semantic_reason"]
        assert found["results"][0]["node_id"] == "tomatoes" and found["results"][0]["search_type"] == "keyword"
    finally:
        fresh.close()


def test_a_rename_not_yet_saved_shows_the_live_title_and_reports_a_stale_index(engine, garden, vault):
    edit_file(vault, lambda nodes, _: nodes["watering"].update(title="Irrigation schedule"))
    found = engine.mindmaps.search_nodes(NodeSearchRequest("drip line timer rain barrels", limit=3))
    top = found["results"][0]
    assert top["node_id"] == "watering"
    assert top["title"] == "Irrigation schedule" and top["path"] == ["Garden", "Irrigation schedule"]
    assert top["changed_since_indexed"] is True
    assert (found["index_state"], found["index_stale"]) == ("stale", True)
    assert (found["indexed_revision"], found["live_revision"]) == (1, 2)
    assert "Save the map" in found["message"]

    loaded = engine.mindmaps.load("notes", path=MAP)
    saved = engine.mindmaps.save(MAP, loaded["content"], project="notes")
    assert saved["map"]["revision"] == 3 and saved["index_state"] == "current"
    assert saved["map"]["document_id"] == garden["map"]["document_id"]  # the same document, refreshed
    again = engine.mindmaps.search_nodes(NodeSearchRequest("drip line timer rain barrels", limit=3))
    assert again["index_stale"] is False and again["indexed_revision"] == 3
    assert again["results"][0]["title"] == "Irrigation schedule" and not again["results"][0]["changed_since_indexed"]


def test_a_deleted_node_is_filtered_out(engine, garden, vault):
    before = engine.mindmaps.search_nodes(NodeSearchRequest("basil thyme rosemary mint", limit=10))
    assert before["results"][0]["node_id"] == "herbs"

    def delete_herbs(nodes, value):
        value["nodes"] = [n for n in value["nodes"] if n["id"] != "herbs"]

    edit_file(vault, delete_herbs)
    after = engine.mindmaps.search_nodes(NodeSearchRequest("basil thyme rosemary mint", limit=10))
    assert after["index_stale"] is True
    assert "herbs" not in [r["node_id"] for r in after["results"]]
    with pytest.raises(DocumentNotFound, match="no node 'herbs'"):
        engine.mindmaps.node_context("herbs")


def test_an_oversized_node_becomes_sub_chunks_with_one_node_reference_and_one_result(engine, garden):
    content = engine.mindmaps.load("notes", path=MAP)["content"]
    filler = [f"Season note {i}: the soil in bed {i % 4} was turned, weeded and mulched with straw again."
              for i in range(120)]
    body = "\n\n".join(filler + ["The heron visits the pond at dawn and the overflow pipe floods the path."])
    content["nodes"].append({"id": "journal", "parent": "garden", "title": "Season journal", "body": body})
    saved = engine.mindmaps.save(MAP, content, project="notes")
    assert saved["index_state"] == "current" and saved["pending_embeddings"] == 0
    refs = [ref for _, ref in node_chunks(engine, saved["map"]["document_id"]) if ref["node_id"] == "journal"]
    assert len(refs) >= 5 and all(ref == refs[0] for ref in refs)  # every sub-chunk repeats the same node reference
    counter = engine.index("notes").counter
    assert all(counter.count(c) <= 256 for c, ref in node_chunks(engine, saved["map"]["document_id"]))

    found = engine.mindmaps.search_nodes(NodeSearchRequest("soil turned weeded mulched straw heron pond", limit=10))
    ids = [r["node_id"] for r in found["results"]]
    assert ids.count("journal") == 1 and ids[0] == "journal"
    assert len(ids) == len(set(ids))
    heron = engine.mindmaps.search_nodes(NodeSearchRequest("a heron visits the pond at dawn", limit=1))["results"][0]
    assert heron["node_id"] == "journal" and "heron" in heron["content"]


def test_private_notes_and_attachments_never_reach_the_index(engine, garden):
    doc_id = garden["map"]["document_id"]
    for word in PRIVATE_WORDS + ATTACHMENT_WORDS:
        assert engine.search(SearchRequest(word, mode="keyword", project="notes"))["results"] == [], word
        assert all(word.lower() not in r["content"].lower()
                   for r in engine.search(SearchRequest(word, mode="hybrid", project="notes", limit=50))["results"])
        for r in engine.mindmaps.search_nodes(NodeSearchRequest(word, limit=20))["results"]:
            assert word.lower() not in json.dumps(r).lower()
    stored = json.dumps([list(c) for c in node_chunks(engine, doc_id)]).lower()
    assert not any(w.lower() in stored for w in PRIVATE_WORDS + ATTACHMENT_WORDS)
    document = json.dumps(engine.document(doc_id, "notes")).lower()
    assert not any(w.lower() in document for w in PRIVATE_WORDS + ATTACHMENT_WORDS)
    # The file keeps them: a save round-trips private notes and attachments untouched.
    content = engine.mindmaps.load("notes", path=MAP)["content"]
    engine.mindmaps.save(MAP, content, project="notes")
    live = loads(engine.index("notes").root.joinpath(MAP).read_bytes())
    assert "zebrastripe" in live.by_id["tomatoes"].private_notes
    assert live.by_id["watering"].attachments[0]["path"].endswith("quarksprocket-manual.pdf")


def test_context_gives_the_live_node_and_its_neighbourhood(engine, garden):
    context = engine.mindmaps.node_context("tomatoes")
    node = context["node"]
    assert (node["title"], node["path"], node["level"], node["parent_id"]) == \
        ("Tomatoes", ["Garden", "Raised beds", "Tomatoes"], 2, "beds")
    assert node["body"].startswith("Plant out after the last frost") and node["has_private_notes"] is True
    assert [a["node_id"] for a in context["ancestors"]] == ["garden", "beds"]
    assert [s["title"] for s in context["siblings"]] == ["Herbs"] and context["children"] == []
    assert context["relationships"] == [{"type": "needs", "direction": "outgoing", "node_id": "watering",
                                         "title": "Watering"}]
    assert "zebrastripe" not in json.dumps(context)
    beds = engine.mindmaps.node_context("beds")
    assert [c["title"] for c in beds["children"]] == ["Tomatoes", "Herbs"]
    assert beds["relationships"][0] == {"type": "feeds", "direction": "incoming", "node_id": "compost",
                                        "title": "Compost"}
    assert beds["node"]["attachments"] == [{"name": "Bed layout", "path": "Attachments/bed-layout.pdf"}]


def test_an_older_format_index_asks_for_a_save(engine, garden):
    store = engine.writer("notes").store
    with store.lock, store.conn:
        store.conn.execute("UPDATE chunks SET ref = json_set(ref, '$.format', 0) WHERE ref IS NOT NULL")
    old = engine.mindmaps.search_nodes(NodeSearchRequest("compost bins", limit=5))
    assert old["index_state"] == "older_format" and old["index_stale"] is True and old["results"] == []
    assert "Save the map" in old["message"]
    engine.mindmaps.save(MAP, engine.mindmaps.load("notes", path=MAP)["content"], project="notes")
    fresh = engine.mindmaps.search_nodes(NodeSearchRequest("compost bins", limit=5))
    assert fresh["index_state"] == "current" and fresh["results"][0]["node_id"] == "compost"


def test_a_new_map_saved_without_an_index_and_the_missing_state(engine, vault):
    (vault / "Maps" / "Trips.mmdata").write_text(json.dumps(
        {"format": "skmemory-mindmap", "version": 1, "title": "Trips", "revision": 4,
         "nodes": [{"id": "t", "parent": None, "title": "Trips", "body": "Lisbon in May, by train."}]}))
    opened = engine.mindmaps.open("notes", path="Maps/Trips.mmdata")  # on disk, never indexed by this engine
    assert opened["map"]["document_id"] is None and opened["index_state"] == "missing"
    missing = engine.mindmaps.search_nodes(NodeSearchRequest("train to Lisbon", limit=5))
    assert missing["results"] == [] and "Save the map" in missing["message"]
    saved = engine.mindmaps.save("Maps/Trips.mmdata", engine.mindmaps.load("notes",
                                                                           path="Maps/Trips.mmdata")["content"],
                                project="notes")
    assert saved["map"]["revision"] == 5 and saved["map"]["document_id"]
    assert engine.mindmaps.active()["map"]["document_id"] == saved["map"]["document_id"]
    assert engine.mindmaps.search_nodes(NodeSearchRequest("train to Lisbon", limit=5))["results"][0]["node_id"] == "t"


def test_the_active_map_survives_a_restart_and_follows_a_rename(home, engine, garden, vault):
    engine.close()
    (vault / "Maps" / "Garden.mmdata").rename(vault / "Maps" / "Vegetable garden.mmdata")
    restarted = Engine(home)
    try:
        restarted.reindex("notes")  # the restart syncs the project: the rename keeps the document id
        active = restarted.mindmaps.active()
        assert active["map"]["document_id"] == garden["map"]["document_id"]
        assert active["map"]["path"] == "Maps/Vegetable garden.mmdata"
        assert restarted.mindmaps.node_context("compost")["node"]["title"] == "Compost"
    finally:
        restarted.close()


def test_bad_maps_and_requests_get_sentences(engine, garden):
    with pytest.raises(MapConflict, match="revision 1 on disk"):
        engine.mindmaps.save(MAP, {**engine.mindmaps.load("notes", path=MAP)["content"], "revision": 0},
                            project="notes")
    with pytest.raises(InvalidQuery, match="two nodes with id 'a'"):
        engine.mindmaps.save("Maps/New.mmdata", {"title": "x", "nodes": [{"id": "a", "title": "A"},
                                                                        {"id": "a", "title": "B"}]}, project="notes")
    with pytest.raises(InvalidQuery, match="ends in '.mmdata'"):
        engine.mindmaps.save("Maps/New.json", {"nodes": []}, project="notes")
    with pytest.raises(InvalidQuery, match="inside the project"):
        engine.mindmaps.save("../escape.mmdata", {"nodes": []}, project="notes")
    with pytest.raises(InvalidQuery, match="hidden or ignored"):
        engine.mindmaps.save(".private/x.mmdata", {"nodes": [{"id": "a", "parent": None, "title": "A"}]},
                            project="notes")
    with pytest.raises(MapFormatError, match="is its own ancestor"):
        loads(json.dumps({"nodes": [{"id": "r", "title": "R"}, {"id": "a", "parent": "b", "title": "A"},
                                    {"id": "b", "parent": "a", "title": "B"}]}))
    with pytest.raises(InvalidQuery, match="not a mind map"):
        engine.mindmaps.open("notes", document_id=engine.documents("notes", folder="Projects")["documents"][0]
                            ["document_id"])
    with pytest.raises(InvalidQuery, match="query is empty"):
        engine.mindmaps.search_nodes(NodeSearchRequest("  "))


def test_without_an_open_map_a_map_is_named_or_the_only_one_used(engine, vault):
    assert engine.mindmaps.active()["map"] is None
    # no one has opened a map
    only = engine.mindmaps.search_nodes(NodeSearchRequest("irrigation timer", project="notes"))
    assert only["map"]["path"] == MAP and only["results"][0]["node_id"] == "watering"
    assert engine.mindmaps.active()["map"] is None  # naming or using a map does not open it in the window

    shutil.copy(GARDEN, vault / "Maps" / "Second.mmdata")
    engine.writer("notes").sync(["Maps/Second.mmdata"])
    with pytest.raises(InvalidQuery, match="No mind map is active. Name one by its path") as told:
        engine.mindmaps.search_nodes(NodeSearchRequest("garden"))
    assert "Maps/Garden.mmdata" in str(told.value) and "Maps/Second.mmdata" in str(told.value)
    named = engine.mindmaps.node_context("watering", project="notes", path="Maps/Second.mmdata")
    assert named["map"]["path"] == "Maps/Second.mmdata" and named["node"]["title"] == "Watering"


# --- the JSON API ----------------------------------------------------------------------------------------------

@pytest.fixture
def client(engine):
    return app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))


def get(client, path):
    return client.get(path, base_url=BASE)  # the server answers only to its own address


def post(client, path, body):
    return client.post(path, json=body, base_url=BASE)


def test_api_open_search_context_and_save(client, vault):
    assert get(client, "/api/mindmaps/active").json["map"] is None
    listed = get(client, "/api/mindmaps?project=notes").json
    assert [m["path"] for m in listed["maps"]] == [MAP] and listed["active"] is None
    opened = post(client, "/api/mindmaps/active", {"project": "notes", "path": MAP}).json
    assert opened["map"]["title"] == "Garden" and opened["index_state"] == "current"
    assert get(client, "/api/mindmaps?project=notes").json["active"]["path"] == MAP

    found = get(client, "/api/mindmaps/search_nodes?q=keep+the+mint+from+spreading&limit=2").json
    assert found["results"][0]["node_id"] == "herbs" and found["total"] <= 2
    context = get(client, "/api/mindmaps/context?node_id=herbs").json
    assert context["node"]["path"] == ["Garden", "Raised beds", "Herbs"] and context["map"]["path"] == MAP

    loaded = get(client, f"/api/mindmaps/map?project=notes&path={MAP}").json
    assert loaded["content"]["revision"] == 1
    content = loaded["content"]
    next(n for n in content["nodes"] if n["id"] == "herbs")["title"] = "Kitchen herbs"
    saved = post(client, "/api/mindmaps/save", {"project": "notes", "path": MAP, "map": content})
    assert saved.status_code == 200 and saved.json["map"]["revision"] == 2 and saved.json["index_stale"] is False
    on_disk = json.loads((vault / MAP).read_text())
    assert on_disk["revision"] == 2 and on_disk["nodes"][3]["title"] == "Kitchen herbs"
    assert get(client, "/api/mindmaps/search_nodes?q=basil").json["results"][0]["title"] == "Kitchen herbs"

    stale = post(client, "/api/mindmaps/save", {"project": "notes", "path": MAP, "map": content})
    assert stale.status_code == 409 and stale.json["error"] == "conflict" and "reload" in stale.json["detail"]


def test_api_errors_are_json_sentences(client):
    no_map = get(client, "/api/mindmaps/search_nodes?q=garden&project=notes&path=Maps/Ghost.mmdata")
    assert no_map.status_code == 404 and "Maps/Ghost.mmdata" in no_map.json["detail"]
    post(client, "/api/mindmaps/active", {"project": "notes", "path": MAP})
    unknown = get(client, "/api/mindmaps/context?node_id=ghost")
    assert unknown.status_code == 404 and "no node 'ghost'" in unknown.json["detail"]
    assert get(client, "/api/mindmaps/context").status_code == 400
    assert get(client, "/api/mindmaps/search_nodes?q=x&limit=0").json["error"] == "invalid_request"
    bad = post(client, "/api/mindmaps/save", {"project": "notes", "path": "Maps/B.mmdata", "map": {"nodes": 3}})
    assert bad.status_code == 400 and "'nodes' list" in bad.json["detail"]
    missing = post(client, "/api/mindmaps/active", {"project": "notes", "path": "Maps/Nope.mmdata"})
    assert missing.status_code == 404 and "does not exist" in missing.json["detail"]
    assert post(client, "/api/mindmaps/save", {"project": "notes"}).json["detail"] == \
        "The request body needs a 'path' field."
