"""Why each result ranked (explain) and where one document went (explain_document), on the demo notes with the
real model, the real SQLite file and vector cache: the numbers must be the ones the legs themselves produce."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from indexer.engine import Engine
from indexer.errors import InvalidQuery
from indexer.search.vault import MAX_MIN_BONUS
from webapp import create_app
from support import app_client
from indexer import SearchRequest

BASE = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def engine(make_module_engine):
    return make_module_engine(project="demo")


def doc_id(engine: Engine, path: str) -> str:
    return next(d["document_id"] for d in engine.documents("demo")["documents"] if d["path"] == path)


def by_title(results: list[dict], title: str) -> dict:
    return next(r for r in results if r.get("document_title", r.get("title")) == title)


def test_a_result_found_by_both_legs_shows_both_ranks_and_the_numbers_each_leg_gives(engine):
    answer = engine.search(SearchRequest("tmux", project="demo", explain=True))
    tmux = by_title(answer["results"], "tmux cheatsheet")
    why = tmux["explain"]
    assert tmux["search_type"] == "hybrid"
    keyword, semantic = why["legs"]["keyword"], why["legs"]["semantic"]
    assert keyword["found"] and semantic["found"]
    # The ranks are the places the chunk holds in each mode run on its own.
    alone = [r["chunk_id"] for r in engine.search(SearchRequest("tmux", mode="keyword", project="demo",
                                                                limit=100))["results"]]
    assert keyword["rank"] == alone.index(tmux["chunk_id"]) + 1
    assert keyword["title"] == ["tmux"]
    # The rule for a chunk found both ways (spec 000: at least 1.0, boosted), written out with its numbers: "tmux"
    # stands whole in the note's title (name 0.5), its note leads the note ranking, and it is its note's best passage.
    boost = why["boost"]
    assert boost["name"] == 1 and boost["name_bonus"] == 0.5 and 0 < boost["note_score"] <= 1.3
    assert boost["share"] == pytest.approx(1.0)
    assert tmux["similarity"] == pytest.approx(
        1 + (boost["note_score"] + 0.5) * boost["share"] + 0.05 * semantic["similarity"], abs=1e-3)
    assert why["score"] == tmux["similarity"] and "1 + (note score" in why["rule"] and "name 0.5" in why["rule"]
    assert why["matched_words"] == ["tmux"]
    assert why["rank"] == answer["results"].index(tmux) + 1


def test_explain_changes_no_order_and_no_score(engine):
    for mode in ("hybrid", "semantic", "keyword", "recency"):
        plain = engine.search(SearchRequest("keep a process running after logout", mode=mode, project="demo", limit=10))
        told = engine.search(SearchRequest("keep a process running after logout", mode=mode, project="demo", limit=10,
                                           explain=True))
        assert [(r["chunk_id"], r["similarity"]) for r in told["results"]] == \
               [(r["chunk_id"], r["similarity"]) for r in plain["results"]]
        assert all("explain" not in r for r in plain["results"])


def test_a_chunk_found_by_meaning_alone_says_which_words_it_lacks(engine):
    results = engine.search(SearchRequest("daemon survives hangup", project="demo", limit=30, explain=True))["results"]
    alone = [r for r in results if r["search_type"] == "semantic"]
    assert "systemd services" in [r["title"] for r in alone]
    for r in alone:
        legs = r["explain"]["legs"]
        assert not legs["keyword"]["found"] and "hangup" in legs["keyword"]["why"]
        assert legs["semantic"]["similarity"] == pytest.approx(r["similarity"], abs=1e-4)
        assert legs["semantic"]["threshold"] == 0.3 and r["similarity"] < 1.0
    # Every passage that shares some of the question's words and is close in meaning ranks above them.
    assert [r["search_type"] for r in results[:len(results) - len(alone)]] == ["hybrid"] * (len(results) - len(alone))


def test_a_long_question_counts_a_strong_partial_word_match_as_found_by_both(engine):
    garden = by_title(engine.search(SearchRequest("when should I sow tomato seeds", project="demo",
                                                  explain=True))["results"],
                      "Garden plan")
    keyword = garden["explain"]["legs"]["keyword"]
    assert garden["search_type"] == "hybrid" and garden["similarity"] > 1.5
    assert keyword["found"] and keyword["partial"] and keyword["bm25_rank"] >= 1
    assert "sow" in garden["explain"]["matched_words"]


def test_vault_search_explains_each_leg_and_writes_the_fusion_out(engine):
    answer = engine.search(SearchRequest("process running after logout", mode="vault", project="demo", explain=True,
                                         limit=5))
    assert answer["results"]
    for place, note in enumerate(answer["results"], start=1):
        why = note["explain"]
        assert why["fusion"] == "max_min" and why["fused_rank"] == place
        parts = sorted((leg.get("contribution", 0.0) for leg in why["legs"].values()), reverse=True)
        expected = parts[0] + MAX_MIN_BONUS * sum(parts[1:]) / (len(parts) - 1)
        assert note["score"] == pytest.approx(expected, abs=1e-5)
        assert f"= {note['score']:.4f}" in why["rule"]
    first = answer["results"][0]["explain"]["legs"]
    assert set(first) == {"bm25", "meaning", "first_chunk"}
    best = max(n["explain"]["legs"]["bm25"]["score"] for n in answer["results"]
               if n["explain"]["legs"]["bm25"]["found"])
    leader = next(n for n in answer["results"] if n["explain"]["legs"]["bm25"].get("rank") == 1)
    assert leader["explain"]["legs"]["bm25"]["score"] == best  # rank 1 in BM25 is the note BM25 scored highest


def test_a_note_removed_by_a_filter_is_explained_as_such(engine):
    systemd = doc_id(engine, "Reference/systemd services.md")
    answer = engine.search(SearchRequest("process running after logout", mode="vault", project="demo",
                                         filters={"folder": "Projects"}, explain_document=systemd))
    report = answer["explain_document"]
    assert systemd not in [n["document_id"] for n in answer["results"]]
    assert report["found"] is False and report["returned"] is False
    assert report["removed_by"] == ["filters.folder = \"Projects\" leaves it out; the note is in 'Reference'"]
    assert "Removed by the filters" in report["verdict"]


def test_the_tag_filter_of_hybrid_search_is_named_too(engine):
    tmux = doc_id(engine, "Reference/tmux cheatsheet.md")
    report = engine.search(SearchRequest("tmux", project="demo", tags_all=["project"],
                                         explain_document=tmux))["explain_document"]
    assert report["removed_by"] == "tags" and "lacks #project" in report["verdict"]
    assert "#reference" in report["verdict"]


def test_a_note_past_the_limit_gets_its_place(engine):
    full = engine.search(SearchRequest("process running after logout", mode="vault", project="demo",
                                       limit=5))["results"]
    second = full[1]["document_id"]
    report = engine.search(SearchRequest("process running after logout", mode="vault", project="demo", limit=1,
                                         explain_document=second))["explain_document"]
    assert report["found"] and report["rank"] == 2 and report["returned"] is False
    assert "past the limit of 1" in report["verdict"]
    chunk = engine.search(SearchRequest("how do I keep a process running after logout", project="demo",
                                        limit=10))["results"][1]
    report = engine.search(SearchRequest("how do I keep a process running after logout", project="demo", limit=1,
                                         explain_document=chunk["document_id"]))["explain_document"]
    assert report["rank"] == 2 and not report["returned"] and "past the limit of 1" in report["verdict"]
    assert report["score"] == pytest.approx(chunk["similarity"], abs=1e-4)


def test_a_note_under_the_threshold_gives_its_similarity(engine):
    sourdough = doc_id(engine, "Projects/Sourdough.md")
    report = engine.search(SearchRequest("tmux", project="demo", explain_document=sourdough))["explain_document"]
    semantic = report["legs"]["semantic"]
    assert not report["found"] and not semantic["found"]
    assert semantic["similarity"] < 0.3
    assert f"{semantic['similarity']:.4f} is under the threshold 0.3" in semantic["why"]
    assert "'tmux' is missing" in report["legs"]["keyword"]["why"]
    vault = engine.search(SearchRequest("tmux", mode="vault", project="demo",
                                        explain_document=sourdough))["explain_document"]
    assert "none of its chunks holds any of the words ('tmux')" == vault["legs"]["bm25"]["why"]
    assert vault["legs"]["meaning"]["similarity"] < 0.3


def test_an_unknown_document_and_a_search_of_every_project_say_what_to_do(engine):
    report = engine.search(SearchRequest("tmux", project="demo", explain_document="nope"))["explain_document"]
    assert "no document 'nope'" in report["verdict"] and "document_id" in report["verdict"]
    with pytest.raises(InvalidQuery, match="one project"):
        engine.search(SearchRequest("tmux", scope="all", explain_document="nope"))
    merged = engine.search(SearchRequest("tmux", scope="all", explain=True))["results"]
    assert [r["explain"]["rank"] for r in merged] == list(range(1, len(merged) + 1))


def test_the_api_carries_the_engines_explanation_and_refuses_a_bad_flag(engine):
    app = create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765, "EXTENSION_ID": "a" * 32})
    client = app_client(app)
    body = client.get("/api/search?q=tmux&project=demo&explain=true", base_url=BASE).get_json()
    assert body["results"][0]["explain"] == engine.search(SearchRequest("tmux", project="demo",
                                                                        explain=True))["results"][0]["explain"]
    tmux = doc_id(engine, "Reference/tmux cheatsheet.md")
    report = client.get(f"/api/search?q=tmux&project=demo&tags_all=project&explain_document={tmux}",
                        base_url=BASE).get_json()["explain_document"]
    assert report["removed_by"] == "tags"
    vault = client.post("/api/vault_search", base_url=BASE, json={
        "query": "process running after logout", "project": "demo", "explain": True, "explain_document": tmux,
        "filters": {"folder": "Projects"}}).get_json()
    assert "filters.folder" in vault["explain_document"]["verdict"]
    bad = client.get("/api/search?q=tmux&explain=maybe", base_url=BASE)
    assert bad.status_code == 400 and "explain must be true or false, not 'maybe'" in bad.get_json()["detail"]
    bad = client.post("/api/vault_search", base_url=BASE, json={"query": "tmux", "explain": "yes"})
    assert bad.status_code == 400 and "'explain' must be true or false" in bad.get_json()["detail"]
    everywhere = client.get("/api/search?q=tmux&scope=all&explain_document=x", base_url=BASE)
    assert everywhere.status_code == 400 and "one project" in everywhere.get_json()["detail"]


def test_the_command_line_prints_why(vault, data_home):
    def skmemory(*args):
        result = subprocess.run([sys.executable, "-m", "webapp.cli", *args], capture_output=True, text=True,
                                env=dict(os.environ), timeout=600)
        assert result.returncode == 0, result.stderr
        return result.stdout

    skmemory("add", str(vault), "--name", "notes")
    skmemory("index", "notes")
    out = skmemory("search", "tmux", "--explain", "--limit", "3")
    first = out.splitlines()[:3]
    assert first[0].startswith("[hybrid ") and "tmux cheatsheet" in first[0]
    assert first[2].startswith("    why: keyword #1 ") and "semantic #1 similarity 0." in first[2]
    assert "1 + (note score" in first[2] and "words: tmux" in first[2]
    answer = json.loads(skmemory("search", "tmux", "--json", "--limit", "1"))
    sourdough = next(r for r in json.loads(skmemory("search", "sourdough", "--json"))["results"]
                     if r["path"] == "Projects/Sourdough.md")["document_id"]
    out = skmemory("search", "tmux", "--explain-document", sourdough)
    assert "Sourdough: No leg found it" in out and "is under the threshold 0.3" in out
    assert answer["results"][0]["title"] == "tmux cheatsheet"
