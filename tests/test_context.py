"""Agent context on the demo notes with the real model: the best chunks packed into a budget, with provenance."""
from __future__ import annotations

import pytest

from indexer.config import Settings
from indexer.model.embeddings import Embedder
from indexer.engine import Engine
from indexer.errors import InvalidQuery
from indexer.home import Home
from indexer import ContextRequest

QUESTION = "how long should the bread bake"


BAKING_LOG = """# Baking log

## Baguettes
Baguettes bake for 25 minutes at 240 °C, with steam for the first ten minutes.

## Focaccia
Focaccia bakes for about 20 minutes at 220 °C until the top is golden.

## When bread goes wrong
A pale crust means the bread came out too early: bake it five to ten minutes longer next time.
A dense crumb means the dough was under-proofed, so let it rise longer before it goes in the oven.
A burnt bottom means the oven rack was too low; bake one shelf higher and put a tray underneath.
Bread that is gummy inside was cut while still hot; let every loaf cool for an hour before slicing it.
"""


@pytest.fixture
def engine(make_engine, vault):
    (vault / "Projects/Baking log.md").write_text(BAKING_LOG, encoding="utf-8")
    return make_engine(vault)


def test_context_packs_the_best_chunks_with_provenance_that_points_at_real_lines(engine, vault):
    context = engine.context(ContextRequest(QUESTION, project="notes", token_budget=300))
    items = context["items"]
    assert context["semantic_available"] is True and context["query"] == QUESTION
    # Both notes that say how long bread bakes lead (the recipe, and the log's baking times).
    assert {i["path"] for i in items[:2]} == {"Projects/Sourdough.md", "Projects/Baking log.md"}
    recipe = next(i for i in items if i["path"] == "Projects/Sourdough.md")
    assert recipe["title"] == "Sourdough"  # its file name; its first heading stays a heading
    assert 0 < context["tokens_used"] == sum(i["tokens"] for i in items) <= 300
    counter = engine.index("notes").counter
    for item in items:
        assert item["project"] == "notes" and item["search_type"] in ("semantic", "hybrid", "keyword")
        assert item["tokens"] == counter.count(item["content"]) - 2
        assert item["absolute_path"] == str(vault / item["path"])
        if item["path"].endswith(".md"):
            start, end = item["lines"]
            lines = (vault / item["path"]).read_text(encoding="utf-8").split("\n")
            assert "\n".join(lines[start - 1:end]) == item["content"]
    scores = [i["score"] for i in items]
    assert scores == sorted(scores, reverse=True)
    sourdough = (vault / "Projects/Sourdough.md").read_text().split("\n")
    assert sourdough[recipe["lines"][0] - 1] == "# Sourdough bread"
    assert recipe["heading_path"] == ["Sourdough bread"]


def test_a_chunk_that_does_not_fit_is_skipped_for_a_smaller_one_never_cut(engine, vault):
    (vault / "Projects/Oven.md").write_text("# Oven\n\nThe oven runs ten degrees hot; bake bread a little cooler.\n")
    engine.reindex("notes")
    engine.embed_pending("notes")
    everything = engine.context(ContextRequest(QUESTION, project="notes", token_budget=100_000))["items"]
    assert len(everything) >= 3 and min(i["tokens"] for i in everything[1:]) < everything[0]["tokens"]
    budget = everything[0]["tokens"] - 1  # the best chunk no longer fits
    expected, used = [], 0
    for item in everything:
        if used + item["tokens"] <= budget:
            expected.append(item)
            used += item["tokens"]
    small = engine.context(ContextRequest(QUESTION, project="notes", token_budget=budget))
    assert small["truncated"] is True and small["tokens_used"] == used <= budget
    assert [i["chunk_id"] for i in small["items"]] == [i["chunk_id"] for i in expected]
    assert small["items"] and everything[0]["chunk_id"] not in {i["chunk_id"] for i in small["items"]}
    assert engine.context(ContextRequest(QUESTION, project="notes", token_budget=100_000))["truncated"] is False


def test_context_across_projects_tags_each_chunk_with_its_project(engine, home, tmp_path):
    other = tmp_path / "kitchen"
    other.mkdir()
    (other / "Rye.md").write_text("# Rye bread\n\nRye bread bakes for fifty minutes at 230 °C.\n", encoding="utf-8")
    home.add_project(other, "kitchen")
    engine.embed_pending("kitchen")
    context = engine.context(ContextRequest(QUESTION, token_budget=2000, scope="all"))
    projects = {(i["project"], i["path"]) for i in context["items"]}
    assert {("kitchen", "Rye.md"), ("notes", "Projects/Sourdough.md")} <= projects
    rye = next(i for i in context["items"] if i["project"] == "kitchen")
    assert rye["absolute_path"] == str(other / "Rye.md") and rye["lines"] == [1, 3]


def test_context_falls_back_to_keyword_search_without_the_model(data_home, vault):
    home = Home(Settings.from_env(), embedder=Embedder(data_home / "missing-model"))
    home.add_project(vault, "notes")
    engine = Engine(home)
    try:
        engine.reindex("notes")
        context = engine.context(ContextRequest("sourdough", project="notes", token_budget=500))
    finally:
        engine.close()
    assert context["semantic_available"] is False
    assert context["items"] and {i["search_type"] for i in context["items"]} == {"keyword"}
    for item in context["items"]:
        assert "sourdough" in (item["content"] + item["title"] + item["path"]).lower()


def test_context_refuses_requests_it_cannot_answer(engine):
    for kwargs, message in (({"query": "  "}, "query is empty"),
                            ({"query": "bread", "token_budget": 0}, "token_budget must be a whole number"),
                            ({"query": "bread", "token_budget": "lots"}, "token_budget must be a whole number"),
                            ({"query": "bread", "scope": "galaxy"}, "Unknown scope")):
        with pytest.raises(InvalidQuery, match=message):
            engine.context(ContextRequest(project="notes", **kwargs))
