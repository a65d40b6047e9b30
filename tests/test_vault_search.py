"""vault_search on the real model, SQLite FTS5 and the vector cache: query syntax, filters, fusion, fields, reranking."""
from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from indexer.config import Settings
from indexer.embeddings import Embedder
from indexer.engine import Engine
from indexer.errors import InvalidQuery
from indexer.home import Home
from indexer.search.rerank import blend, retrieval_weight

NOTES = {
    "Projects/Vault Cortex.md": """---
type: project
status: active
priority: 2
archived: false
created: 2026-03-14
related_to: ["[[Ada Lovelace]]", "[[Search design]]"]
tags: [project/cortex, reference]
aliases: [cortex, vc]
---
# Vault Cortex

> [!summary] In short
> A search service for notes.
> It runs locally.

The vault-cortex indexer watches the notes folder. Deploy it with deploy/local before pushing to production. memo
""",
    "Projects/Garden.md": """---
type: project
status: paused
priority: 1
archived: true
created: 2026-06-30
tags: [project/garden, outdoors]
---
# Garden

Sow tomatoes in March. The drip line runs every morning. The vault of the greenhouse has a cortex of vines. memo
""",
    "Meetings/2026-07-02 Standup.md": """---
type: meeting
created: 2026-07-02
related_to: "[[Ada Lovelace]]"
tags: [meeting, project/cortex]
attendees: [Ada, Grace]
---
# Standup

We agreed to move the local deploy scripts to the new server. memo
""",
    "People/Ada Lovelace.md": """---
type: person
created: 2026-01-10T09:30:00
tags: [person]
---
# Ada Lovelace

Wrote the first published algorithm; a mathematician with a poet's imagination. memo
""",
    "Journal/2026-06-01.md": """# 2026-06-01

Long walk by the river. Decided to set quarterly goals: learn Spanish and become a team lead within two years. memo
""",
    "Reference/Sourdough.md": """---
title: Sourdough bread
created: not a date
tags: [recipe]
---
Feed the starter twelve hours before baking. Mix flour, water and salt. memo
""",
    "Reference/Kit.md": "# Kit\n\nA starter kit for seedlings. memo\n",
    "Boards/Roadmap.canvas": json.dumps({"nodes": [{"id": "a", "type": "text", "x": 0, "y": 0, "width": 200, "height": 80,
                                                     "text": "Roadmap: ship the vault-cortex search in July. memo"}], "edges": []}),
    "Logs/deploy.txt": "deploy/local finished in 42 seconds\nsecond run was fine memo\n",
    "Archive/Shopping.md": "# Shopping\n\n" + "Buy bread, milk, coffee, rice, soap, paper, pens, apples, onions, garlic and "
                           "cheese; also some tomatoes for the weekend. memo\n",
    **{f"Recipes/Salsa {i}.md": f"# Salsa {i}\n\nTomatoes, tomatoes and more tomatoes: chop the tomatoes. memo\n" for i in range(1, 5)},
}
DEFAULT_MTIME = datetime(2026, 8, 15, 12, 0)
MTIMES = {
    "Projects/Vault Cortex.md": datetime(2026, 6, 30, 23, 30),
    "Projects/Garden.md": datetime(2026, 7, 1, 0, 30),
    "Meetings/2026-07-02 Standup.md": datetime(2026, 7, 2, 12, 0),
    "Reference/Sourdough.md": datetime(2026, 9, 1, 8, 0),
}


def write_vault(root: Path) -> Path:
    """Write the notes with chosen modification times (server-local)."""
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        stamp = MTIMES.get(rel, DEFAULT_MTIME).timestamp()
        os.utime(path, (stamp, stamp))
    return root


def build(base: Path, embedder: Embedder, settings: Settings | None = None) -> Engine:
    """Index the vault under base in a data home of its own and embed it when the model is there."""
    home = Home(settings or Settings(home=base / "home"), embedder=embedder)
    home.add_project(write_vault(base / "vault"), "notes")
    engine = Engine(home)
    index = engine.index("notes")
    if embedder.available:
        index.project.embed_pending()
    return engine


@pytest.fixture(scope="module")
def engine(tmp_path_factory, real_embedder):
    engine = build(tmp_path_factory.mktemp("hybrid"), real_embedder)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def fts_engine(tmp_path_factory):
    base = tmp_path_factory.mktemp("fts")
    engine = build(base, Embedder(base / "missing-model"))
    yield engine
    engine.close()


def paths(response: dict) -> list[str]:
    return [r["path"] for r in response["results"]]


# --- query syntax (keyword leg alone, so that meaning cannot add notes) ----------------------------------------


def test_terms_are_anded_with_stemming_and_titles_count(fts_engine):
    assert paths(fts_engine.vault_search("sourdough starter")) == ["Reference/Sourdough.md"]
    assert set(paths(fts_engine.vault_search("starter"))) == {"Reference/Sourdough.md", "Reference/Kit.md"}
    running = fts_engine.vault_search("running")  # porter: the notes say "runs" and "run"
    assert set(paths(running)) == {"Projects/Vault Cortex.md", "Projects/Garden.md", "Logs/deploy.txt"}
    garden = next(r for r in running["results"] if r["path"] == "Projects/Garden.md")
    assert "<mark>runs</mark>" in garden["snippet"]
    # "bread" is only in the title (frontmatter title), "starter" only in the body: still one match.
    assert paths(fts_engine.vault_search("bread starter")) == ["Reference/Sourdough.md"]


def test_punctuated_terms_and_quotes_are_phrases(fts_engine):
    assert set(paths(fts_engine.vault_search("vault-cortex"))) == {"Projects/Vault Cortex.md", "Boards/Roadmap.canvas"}
    assert set(paths(fts_engine.vault_search("deploy/local"))) == {"Projects/Vault Cortex.md", "Logs/deploy.txt"}
    assert paths(fts_engine.vault_search('"local deploy"')) == ["Meetings/2026-07-02 Standup.md"]
    unquoted = set(paths(fts_engine.vault_search("local deploy")))
    assert unquoted == {"Projects/Vault Cortex.md", "Logs/deploy.txt", "Meetings/2026-07-02 Standup.md"}


@pytest.mark.parametrize("query", ['"unbalanced quote', "AND OR NOT (", "*", ":", "🚀🔥", "NEAR(", "title:",
                                   ")(", '"""', "^x", "tomatoes -", "'; DROP TABLE documents; --"])
def test_malformed_syntax_never_raises(engine, fts_engine, query):
    for e in (engine, fts_engine):
        response = e.vault_search(query)
        assert isinstance(response["results"], list) and response["total"] >= len(response["results"])
    assert paths(fts_engine.vault_search('"vault-cortex indexer')) == ["Projects/Vault Cortex.md"]


# --- hybrid, fusion and result fields ---------------------------------------------------------------------------


def test_meaning_bridges_vocabulary(engine, fts_engine):
    hybrid = engine.vault_search("career aspirations")
    assert hybrid["search_mode"] == "hybrid" and hybrid["reranked"] is False
    assert paths(hybrid)[0] == "Journal/2026-06-01.md"  # says "goals" and "team lead", never the query words
    assert fts_engine.vault_search("career aspirations") == {"results": [], "total": 0, "search_mode": "fts",
                                                             "reranked": False}


def test_a_note_found_by_both_legs_outranks_one_leg(engine):
    response = engine.vault_search("tomatoes garden", limit=5)
    assert response["search_mode"] == "hybrid"
    assert paths(response)[0] == "Projects/Garden.md"
    scores = [r["score"] for r in response["results"]]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 1 / 61  # both legs: more than one leg's first place can give


def test_no_match_is_an_empty_result(engine):
    assert engine.vault_search("xqzvwk") == {"results": [], "total": 0, "search_mode": "fts", "reranked": False}
    none = engine.vault_search("tomatoes", filters={"type": "no-such-type"})
    assert none["results"] == [] and none["total"] == 0


def test_result_fields(engine):
    response = engine.vault_search("vault-cortex", limit=20)
    by_path = {r["path"]: r for r in response["results"]}
    note = by_path["Projects/Vault Cortex.md"]
    assert list(note)[:4] == ["path", "title", "snippet", "score"]
    assert note["title"] == "Vault Cortex" and note["folder"] == "Projects" and note["type"] == "project"
    assert note["kind"] == "note" and "extension" not in note
    assert note["tags"] == ["project/cortex", "reference"]
    assert note["created"] == "2026-03-14"
    assert note["modified"] == "2026-06-30T23:30:00"
    assert note["bytes"] == len(NOTES["Projects/Vault Cortex.md"].encode())
    assert note["project"] == "notes" and note["document_id"]
    assert "<mark>vault-cortex</mark>" in note["snippet"] or "<mark>vault</mark>-<mark>cortex</mark>" in note["snippet"]
    assert "leading_callout" not in note
    canvas = by_path["Boards/Roadmap.canvas"]
    assert canvas["kind"] == "file" and canvas["extension"] == ".canvas" and "created" not in canvas
    text = engine.vault_search("deploy/local")["results"]
    txt = next(r for r in text if r["path"] == "Logs/deploy.txt")
    assert txt["kind"] == "file" and txt["extension"] == ".txt" and txt["folder"] == "Logs" and txt["type"] is None
    sourdough = engine.vault_search("sourdough")["results"][0]
    assert sourdough["title"] == "Sourdough bread" and "created" not in sourdough  # "not a date" is no date


def test_snippet_length_and_leading_callout(engine):
    short = engine.vault_search("production", snippet_tokens=5)["results"][0]
    assert "<mark>production</mark>" in short["snippet"]
    assert len(short["snippet"].replace("<mark>", "").replace("</mark>", "").split()) <= 5
    long = engine.vault_search("production", snippet_tokens=40)["results"][0]
    assert len(long["snippet"].split()) > 10
    with_callout = engine.vault_search("production", include_leading_callout=True)["results"][0]
    assert with_callout["leading_callout"] == {"type": "summary", "title": "In short",
                                               "body": "A search service for notes.\nIt runs locally."}
    garden = engine.vault_search("tomatoes garden", include_leading_callout=True)["results"][0]
    assert garden["path"] == "Projects/Garden.md" and "leading_callout" not in garden


def test_limit_and_total(engine):
    response = engine.vault_search("tomatoes", limit=2)
    assert len(response["results"]) == 2 and response["total"] >= 7  # 4 salsas, garden, shopping, + meaning
    for bad in ({"limit": 0}, {"limit": 101}, {"snippet_tokens": 0}, {"limit": "5"}):
        with pytest.raises(InvalidQuery, match="must be a whole number"):
            engine.vault_search("tomatoes", **bad)
    with pytest.raises(InvalidQuery, match="empty"):
        engine.vault_search("   ")


def test_without_the_model_search_is_keyword_only(fts_engine):
    response = fts_engine.vault_search("tomatoes")
    assert response["search_mode"] == "fts" and response["reranked"] is False
    assert set(paths(response)) == {"Projects/Garden.md", "Archive/Shopping.md"} | {f"Recipes/Salsa {i}.md" for i in range(1, 5)}
