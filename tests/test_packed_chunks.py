"""Chunks a real vault deserves, end to end on a vault shaped like real ones (tests/fixtures/real-shape-vault):
comment blocks, badge links, heading-only sections, template placeholders and a long note. Real model, real SQLite
and ChromaDB, real files."""
from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from indexer.ingest.chunking import CHUNKER_VERSION
from indexer.engine import Engine
from support import highlighted
from indexer import SearchRequest

FIXTURES = Path(__file__).parent / "fixtures"
SHAPES = FIXTURES / "real-shape-vault"


@pytest.fixture
def shapes(tmp_path: Path) -> Path:
    target = tmp_path / "shapes"
    shutil.copytree(SHAPES, target)
    return target


@pytest.fixture
def project(home, shapes):
    home.add_project(shapes, "Shapes")
    with home.open_project("Shapes") as project:
        yield project


@pytest.fixture
def engine(make_engine, shapes):
    """An engine over the vault, indexed and fully embedded."""
    return make_engine(shapes, project="Shapes")


def chunks_of(project, rel_path: str) -> list:
    return project.store.query(
        "SELECT c.* FROM chunks c JOIN documents d USING (document_id) WHERE d.rel_path = ? ORDER BY c.ordinal",
        (rel_path,))


def test_sections_are_packed_and_bodiless_sections_make_no_chunk(project):
    project.sync()
    counts = {p: len(chunks_of(project, p)) for p in
              ("Garden.md", "Plugins/Dataview.md", "Reading list.md", "Sourdough handbook.md", "Templates/Daily.md")}
    # The chunker before packing made 2, 6, 1, 10 and 4 (tests/fixtures/index-v1): one per heading, headings alone too.
    assert counts == {"Garden.md": 1, "Plugins/Dataview.md": 1, "Reading list.md": 1,
                      "Sourdough handbook.md": 4, "Templates/Daily.md": 1}
    words = [len(r["content"].split()) for r in project.store.query(
        "SELECT c.content FROM chunks c JOIN documents d USING (document_id) WHERE d.rel_path != 'Templates/Daily.md'")]
    assert min(words) > 5
    # The template has no words of its own: one chunk, which the model reads as the template's name.
    [template] = chunks_of(project, "Templates/Daily.md")
    assert not template["keyword_only"] and template["embed_text"] == "Daily\ntags: template"
    assert project.store.document_by_path("Templates/Daily.md")["title"] == "Daily"
    project.embed_pending()
    assert project.vectors.ids() == project.store.embedded_ids() and template["chunk_id"] in project.vectors.ids()


def test_a_note_without_a_body_is_found_by_its_name_in_every_mode(engine):
    found = engine.search(SearchRequest("daily", mode="keyword", project="Shapes"))["results"]
    assert [r["path"] for r in found] == ["Templates/Daily.md", "Garden.md"]  # title first, then text
    for mode in ("semantic", "hybrid"):  # the model reads what the template is: its name
        hits = engine.search(SearchRequest("Daily", mode=mode, project="Shapes"))["results"]
        assert hits[0]["path"] == "Templates/Daily.md", mode


def test_comments_are_not_indexed_and_urls_are_not_embedded(project):
    project.sync()
    rows = project.store.query("SELECT content, embed_text FROM chunks")
    content = "\n".join(r["content"] for r in rows)
    embedded = "\n".join(r["embed_text"] for r in rows)
    for hidden in ("Badges", "ask Sam", "TODO: move the watering", "%%", "<!--"):
        assert hidden not in content and hidden not in embedded, hidden
    for noise in ("https://", "shields.io", "573E7A", "{{", "](", "help wanted"):
        assert noise not in embedded, noise
    # The link text is what the model reads; the URL stays in the content for a keyword search.
    assert "official documentation" in embedded and "Seeing Like a State" in embedded
    assert "forum.obsidian.md/t/dataview-plugin-snippet-showcase" in content


def test_a_url_is_found_by_keyword_search_and_comments_are_not(engine):
    found = engine.search(SearchRequest("forum.obsidian.md", mode="keyword", project="Shapes"))["results"]
    assert [r["path"] for r in found] == ["Plugins/Dataview.md"]
    assert engine.search(SearchRequest("drip lines", mode="keyword", project="Shapes"))["results"] == []


def test_a_packed_chunk_records_every_section_with_its_lines(project, shapes):
    project.sync()
    lines = (shapes / "Sourdough handbook.md").read_text().split("\n")
    for row in chunks_of(project, "Sourdough handbook.md"):
        sections = json.loads(row["sections"])
        assert len(sections) >= 2  # every chunk of the long note packs several sections
        for i, section in enumerate(sections):
            end = sections[i + 1]["offset"] if i + 1 < len(sections) else len(row["content"])
            part = row["content"][section["offset"]:end].strip("\n")
            first, last = section["lines"]
            assert part == "\n".join(lines[first - 1:last]), section
        # Line N of the content is line start_line + N of the file.
        assert row["content"].split("\n") == lines[row["start_line"] - 1:row["end_line"]]


def test_results_point_at_the_section_that_matched(engine, shapes):
    lines = (shapes / "Sourdough handbook.md").read_text().split("\n")
    for mode in ("keyword", "hybrid"):
        result = engine.search(SearchRequest("banneton", mode=mode, project="Shapes"))["results"][0]
        assert result["heading_path"][-1] == "Shaping"
        first, last = result["lines"]
        assert lines[first - 1] == "## Shaping" and "banneton" in "\n".join(lines[first - 1:last])
        assert "banneton" in highlighted(result)
        assert result["chunk_lines"][0] < first  # the chunk starts earlier, in "Mixing and bulk fermentation"
    # By meaning alone: the result still points into the section about the question.
    result = engine.search(SearchRequest("my loaf came out dense and heavy, what went wrong", mode="semantic",
                                         project="Shapes"))["results"][0]
    assert result["path"] == "Sourdough handbook.md"
    assert result["heading_path"][-1] == "Troubleshooting"
    assert lines[result["lines"][0] - 1] == "## Troubleshooting"


def test_editing_one_paragraph_reembeds_at_most_two_chunks(project, shapes):
    project.sync()
    project.embed_pending()
    note = shapes / "Sourdough handbook.md"
    edits = [("Rice flour", "Rice or semolina flour"), ("forty-five minutes", "a full hour"),
             ("smelled pleasantly sour", "smelled sour"), ("Bake\ncovered for twenty minutes",
                                                           "Bake\ncovered for twenty-two minutes"),
             ("A pale\ncrust means", "A pale crust, or one that stays soft after cooling,\nmeans")]
    for old, new in edits:
        assert old in note.read_text()
        before = project.store.all_chunk_ids()
        note.write_text(note.read_text().replace(old, new))
        report = project.sync()
        assert report.updated == 1
        after = project.store.all_chunk_ids()
        assert 1 <= len(after - before) <= 2, (old, len(after - before))
        assert project.embed_pending() == len(after - before)


def test_the_first_chunk_of_every_note_is_embedded_before_any_second_chunk(project):
    project.sync()
    batches = []

    def record():
        batches.append(project.store.query("SELECT ordinal FROM chunks WHERE embed_state = 'embedded' AND NOT "
                                           "keyword_only"))

    project.settings = dataclasses.replace(project.settings, embed_batch_size=1)
    while project.embed_pending(max_batches=1):  # one chunk per round (group of 4 with batch size 1)
        record()
    documents = project.store.counts()["documents_with_text"]
    assert documents == 5  # the template too: the model reads its name
    for embedded in batches:  # no note's second chunk before every note's first: each findable by meaning first
        ordinals = [r[0] for r in embedded]
        assert ordinals.count(0) == 5 or not any(ordinals), ordinals
    counts = project.store.counts()
    assert counts["documents_embedded"] == counts["documents_with_text"] == 5 and counts["pending"] == 0


def test_status_says_how_many_notes_are_searchable_by_meaning(home, shapes):
    home.add_project(shapes, "Shapes")
    with home.open_project("Shapes") as project:
        project.sync()
        project.embed_pending(max_batches=1)
    status = home.status("Shapes")
    assert status["documents_with_text"] == 5 and status["documents"] == 5
    assert 1 <= status["documents_embedded"] <= 5


def test_an_index_built_by_the_old_chunker_upgrades_in_place(home, shapes):
    """tests/fixtures/index-v1 was built by the chunker before packing (commit daa38da) over this same vault."""
    fixture = FIXTURES / "index-v1"
    meta = json.loads((fixture / "fixture.json").read_text())
    info = home.add_project(shapes, "Shapes")
    with sqlite3.connect(home.settings.home / "registry.sqlite") as conn:  # take the fixture's project id
        conn.execute("UPDATE projects SET id = ? WHERE id = ?", (meta["project_id"], info.id))
    info = home.project("Shapes")
    shutil.copytree(fixture, info.index_dir, ignore=shutil.ignore_patterns("fixture.json"))
    old = sqlite3.connect(info.index_dir / "index.sqlite")
    old_vectors = dict(old.execute("SELECT content_hash, vector FROM chunks WHERE embed_state = 'embedded'"))
    old.close()
    assert len(old_vectors) == 23

    with home.open_project("Shapes") as project:
        assert project.rechunk_needed
        report = project.sync()
        assert report.updated == 5 and report.failed == 0
        assert project.store.meta("chunker_version") == str(CHUNKER_VERSION)
        assert not project.rechunk_needed
        rows = project.store.query("SELECT content_hash, embed_state, vector, sections FROM chunks WHERE NOT "
                                   "keyword_only")
        assert len(rows) == 8 and all(r["sections"] for r in rows)
        # Nothing to embed for a chunk whose text the old index embedded; everything else is queued.
        new_text = [r for r in rows if r["content_hash"] not in old_vectors]
        assert new_text  # packing changed the text of these
        assert project.store.counts()["pending"] == len(new_text)
        assert project.embed_pending() == len(new_text)
        assert project.vectors.ids() == project.store.embedded_ids()  # old vectors gone from Chroma, new ones in
        assert project.store.counts()["embedded"] == 8
    # A second open finds the index current: no re-chunk, nothing pending.
    with home.open_project("Shapes") as project:
        assert not project.rechunk_needed
        assert project.sync().unchanged == 5


def test_vectors_are_reused_by_text_and_a_new_model_re_embeds_everything(home, shapes):
    home.add_project(shapes, "Shapes")
    with home.open_project("Shapes") as project:
        project.sync()
        project.embed_pending()
        # The same note copied into another folder (so its title, its file name, is the same too): its chunks' texts
        # were embedded already, so no model run is needed.
        (shapes / "Copies").mkdir()
        shutil.copy(shapes / "Garden.md", shapes / "Copies" / "Garden.md")
        project.sync()
        [row] = chunks_of(project, "Copies/Garden.md")
        assert row["embed_state"] == "pending" and row["vector"] is not None
        calls = []
        original = project.embedder.embed
        project.embedder.embed = lambda texts, **kw: calls.append(texts) or original(texts, **kw)
        try:
            assert project.embed_pending() == 1
        finally:
            project.embedder.embed = original
        assert calls == []
        assert project.store.meta("embedding_model") == project.embedder.fingerprint
        project.store.set_meta("embedding_model", "some-other-model (sentence-transformers, torch fp32)")
    with home.open_project("Shapes") as project:
        counts = project.store.counts()
        assert counts["embedded"] == 0 and counts["pending"] == counts["chunks"]
        assert project.vectors.ids() == set()
        assert project.store.query("SELECT count(*) FROM chunks WHERE vector IS NOT NULL")[0][0] == 0
        assert project.store.meta("embedding_model") == project.embedder.fingerprint


def test_a_search_while_the_vault_embeds_still_answers(home, shapes):
    home.add_project(shapes, "Shapes")
    engine = Engine(home)
    try:
        project = engine.writer("Shapes")
        project.sync()
        project.embed_pending(max_batches=1)
        stop = threading.Event()
        errors: list[BaseException] = []

        def bulk():
            try:
                for i in range(6):
                    (shapes / f"extra-{i}.md").write_text(
                        (shapes / "Sourdough handbook.md").read_text().replace("Sourdough", f"Bread {i}"))
                project.sync()
                project.embed_pending(stop=stop)
            except BaseException as exc:  # noqa: BLE001 - surfaced below
                errors.append(exc)

        worker = threading.Thread(target=bulk)
        worker.start()
        try:
            for _ in range(5):
                response = engine.search(SearchRequest("where the tomatoes get watered", mode="hybrid",
                                                       project="Shapes"))
                assert response["semantic_available"]
                assert response["results"] and response["results"][0]["path"] == "Garden.md"
        finally:
            stop.set()
            worker.join(120)
        assert not errors
    finally:
        engine.close()
