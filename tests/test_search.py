"""Every search mode of spec 000 on the demo vault with the real model, exact vectors and real stores."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from indexer.config import Settings
from indexer.model.embeddings import Embedder
from indexer.engine import Engine
from indexer.errors import EmbeddingsUnavailable, InvalidQuery
from indexer.home import Home
from indexer.search.keyword import keyword_search
from indexer.search.query import Query
from indexer.search.semantic import recency_score, semantic_search
from support import WordEmbedder, highlighted, indexed
from indexer import SearchRequest


@pytest.fixture
def engine(demo_engine):
    return demo_engine


def paths(response):
    return [r["path"] for r in response["results"]]


def test_keyword_is_case_insensitive_substring_with_title_first(engine):
    response = engine.search(SearchRequest("SOURDOUGH", mode="keyword"))
    assert paths(response)[0] == "Projects/Sourdough.md"  # title match first
    assert "Welcome.md" in paths(response)  # mentions sourdough in its text
    assert all(r["similarity"] == 1.0 and r["search_type"] == "keyword" for r in response["results"])
    assert paths(engine.search(SearchRequest("ourdoug",
                                             mode="keyword")))[0] == "Projects/Sourdough.md"  # substring, mid-word
    # Every word must occur; a quoted phrase must occur as written.
    assert paths(engine.search(SearchRequest("compost topsoil", mode="keyword"))) == ["Projects/Garden plan.md"]
    assert paths(engine.search(SearchRequest('"drip line"', mode="keyword"))) == ["Projects/Garden plan.md"]
    assert engine.search(SearchRequest('"line drip"', mode="keyword"))["results"] == []
    # Paths match too, and a two-letter query still works (by scanning).
    assert set(paths(engine.search(SearchRequest("Journal/", mode="keyword")))) == {"Journal/2026-06-01.md"}
    assert "Projects/Sourdough.md" in paths(engine.search(SearchRequest("°c", mode="keyword")))


def test_keyword_highlights_are_offsets_into_a_plain_snippet(engine, vault):
    (vault / "html.md").write_text("# Markup\n\nThe <script>alert(1)</script> tag and the word otter.\n")
    engine.reindex("notes")
    result = engine.search(SearchRequest("otter", mode="keyword"))["results"][0]
    assert highlighted(result) == ["otter"]
    # The engine returns the text a person reads, not markup (no HTML tag, no heading hash, nothing of a script,
    # which a reading view never shows): the page escapes it (test_ui), the CLI bolds it.
    assert result["snippet"] == "Markup The tag and the word otter."


def test_semantic_finds_meaning_above_threshold(engine):
    response = engine.search(SearchRequest("baking a loaf of bread at home", mode="semantic"))
    assert paths(response)[0] == "Projects/Sourdough.md"
    sims = [r["similarity"] for r in response["results"]]
    assert all(0.5 <= s <= 1.0 for s in sims) and sims == sorted(sims, reverse=True)
    assert all(r["search_type"] == "semantic" for r in response["results"])
    # Nothing in the vault is about quantum chromodynamics: below 0.5, nothing is returned.
    assert engine.search(SearchRequest("quark gluon plasma lattice QCD", mode="semantic"))["results"] == []


def test_semantic_is_exact_against_every_vector(engine):
    index = engine.index("notes")
    ids, vectors = engine.writer("notes").load_vectors()
    q = index.embed_query("watering the vegetable beds")
    sims = vectors @ q
    expected = [ids[i] for i in np.argsort(-sims) if sims[i] >= 0.3][:5]
    got = [cid for cid, _, _ in semantic_search(index, Query.parse("watering the vegetable beds"), 5, 0.3).ranked]
    assert got == expected


def test_hybrid_marks_both_and_boosts_them(engine):
    response = engine.search(SearchRequest("garden", mode="hybrid"))
    first = response["results"][0]
    assert first["path"] == "Projects/Garden plan.md"
    assert first["search_type"] == "hybrid" and first["similarity"] >= 1.0
    types = {r["search_type"] for r in response["results"]}
    assert types <= {"hybrid", "keyword", "semantic"}
    for r in response["results"]:
        if r["search_type"] == "keyword":
            assert r["similarity"] == 1.0
        if r["search_type"] == "semantic":
            assert 0.3 <= r["similarity"] < 1.0
    scores = [r["similarity"] for r in response["results"]]
    assert scores == sorted(scores, reverse=True)
    assert response["semantic_available"] is True
    assert len(engine.search(SearchRequest("garden", mode="hybrid", limit=2))["results"]) == 2


def test_hybrid_finds_by_meaning_what_keywords_miss(engine):
    response = engine.search(SearchRequest("keep a program alive after I disconnect", mode="hybrid"))
    assert engine.search(SearchRequest("keep a program alive after I disconnect", mode="keyword"))["results"] == []
    assert paths(response)[0] == "Reference/tmux cheatsheet.md"
    assert response["results"][0]["search_type"] == "hybrid"  # close in meaning, and it holds "program"


def test_a_day_named_by_the_query_comes_before_days_sharing_some_of_its_words(home, tmp_path):
    """Measured on logseq-docs: a journal day's own title ("Sep 14th, 2020", an empty page) came after other days
    that share "Sep" and "2020" once partial matches could be 'found by both'. The note ranking puts the named
    note first, above every note that holds only some of the words."""
    vault = tmp_path / "journals"
    vault.mkdir()
    (vault / "Sep 14th, 2020.md").write_text("-\n")
    for day in ("Sep 23rd, 2020", "Sep 2nd, 2020", "Oct 14th, 2021"):
        (vault / f"{day}.md").write_text(f"- Notes of {day}: tested the sync, wrote about plans for the autumn.\n")
    with indexed(home, vault, "journals") as engine:
        asked = engine.search(SearchRequest("Sep 14th, 2020", project="journals", explain=True))
        assert paths(asked)[0] == "Sep 14th, 2020.md"
        assert not asked["results"][0]["explain"]["legs"]["keyword"].get("partial")
        assert all(r["explain"]["legs"]["keyword"].get("partial") for r in asked["results"][1:])
        # The stopwords are not required; no chunk holds "before", "autumn" and "testing" together.
        question = engine.search(SearchRequest("what did I test on the sync before the autumn testing",
                                               project="journals", explain=True))
        assert question["results"][0]["search_type"] == "hybrid"
        assert question["results"][0]["explain"]["legs"]["keyword"]["partial"]


def test_recency_prefers_the_fresher_of_equals(engine, vault):
    old = vault / "Projects/Compost log.md"
    week_ago = time.time() - 7 * 86400
    os.utime(old, (week_ago, week_ago))
    engine.reindex("notes")
    response = engine.search(SearchRequest("compost heap", mode="recency"))
    assert response["results"] and all(r["search_type"] == "recency" for r in response["results"])
    assert recency_score(0.8, 0) > recency_score(0.8, 30) > recency_score(0.8, 365)
    assert recency_score(0.8, 30) == pytest.approx(0.8 * 0.8 + 0.2 * 0.5)


def test_tag_search_and_or_hierarchical(engine):
    both = engine.search(SearchRequest("", mode="tag", tags_all=["project/garden", "outdoors"]))
    assert sorted(paths(both)) == ["Projects/Compost log.md", "Projects/Garden plan.md"]
    hier = engine.search(SearchRequest("", mode="tag", tags_all=["project"]))
    assert sorted(paths(hier)) == ["Projects/Compost log.md", "Projects/Garden plan.md"]
    either = engine.search(SearchRequest("", mode="tag", tags_any=["bread", "terminal"]))
    assert sorted(paths(either)) == ["Projects/Sourdough.md", "Reference/tmux cheatsheet.md"]
    combined = engine.search(SearchRequest("", mode="tag", tags_all=["reference"], tags_any=["terminal", "sk-memory"]))
    assert sorted(paths(combined)) == ["Reference/Search tips.md", "Reference/tmux cheatsheet.md"]
    r = both["results"][0]
    assert r["search_type"] == "tag" and r["similarity"] == 1.0
    assert r["title"] and r["file_type"] == "md" and r["tags"] and r["created"] and r["snippet"]
    # Tags also filter the other modes.
    assert paths(engine.search(SearchRequest("green", mode="keyword",
                                             tags_all=["outdoors"]))) == ["Projects/Compost log.md"]


def test_bad_requests_say_what_to_change(engine):
    with pytest.raises(InvalidQuery, match="use one of"):
        engine.search(SearchRequest("x", mode="fuzzy"))
    with pytest.raises(InvalidQuery, match="from 1 to 100"):
        engine.search(SearchRequest("x", limit=1000))
    with pytest.raises(InvalidQuery, match="shorten"):
        engine.search(SearchRequest("x" * 5000))
    with pytest.raises(InvalidQuery, match="needs at least one tag"):
        engine.search(SearchRequest("", mode="tag"))
    assert engine.search(SearchRequest('"unbalanced AND (', mode="keyword"))["results"] == []


def test_without_model_hybrid_falls_back_and_semantic_refuses(data_home, vault):
    home = Home(Settings.from_env(), embedder=Embedder(data_home / "missing-model"))
    home.add_project(vault, "notes")
    engine = Engine(home)
    try:
        engine.reindex("notes")  # searching never indexes: a search reads what was indexed
        response = engine.search(SearchRequest("sourdough", mode="hybrid"))
        assert response["semantic_available"] is False
        assert paths(response)[0] == "Projects/Sourdough.md"
        assert {r["search_type"] for r in response["results"]} == {"keyword"}
        with pytest.raises(EmbeddingsUnavailable, match="unavailable"):
            engine.search(SearchRequest("sourdough", mode="semantic"))
    finally:
        engine.close()


def test_cross_project_merges_and_falls_back_per_project(home, vault, tmp_path, real_embedder):
    other = tmp_path / "other"
    other.mkdir()
    (other / "Bread notes.md").write_text("# Bread notes\n\nRye bread needs a longer proof than wheat bread.\n")
    home.add_project(vault, "notes")
    home.add_project(other, "kitchen")
    engine = Engine(home)
    try:
        for name in ("notes", "kitchen"):
            engine.embed_pending(name)
        response = engine.search(SearchRequest("bread", scope="all"))
        projects = {r["project"] for r in response["results"]}
        assert projects == {"notes", "kitchen"}
        scores = [r["similarity"] for r in response["results"]]
        assert scores == sorted(scores, reverse=True)
        assert response["semantic_available"] is True
    finally:
        engine.close()


def test_cache_follows_edits_without_reloading(engine, vault):
    index = engine.index("notes")
    engine.search(SearchRequest("bread", mode="semantic"))
    loads = index.cache.load_seconds
    (vault / "Herons.md").write_text("# Herons\n\nA grey heron stands motionless in the shallows, hunting fish.\n")
    engine.reindex("notes")
    engine.embed_pending("notes")
    assert paths(engine.search(SearchRequest("a heron hunting fish", mode="semantic")))[0] == "Herons.md"
    (vault / "Herons.md").unlink()
    engine.reindex("notes")
    assert "Herons.md" not in paths(engine.search(SearchRequest("a heron hunting fish", mode="semantic")))
    assert index.cache.load_seconds == loads  # updated in place, never reloaded


def test_the_word_embedder_for_ranking_tests_is_deterministic_and_word_based():
    words = WordEmbedder()
    a, b, c = words.embed(["tomatoes in the garden", "Garden tomatoes", "sourdough starter"])
    assert np.allclose(words.embed_query("garden tomatoes"), b)  # same words, same vector, every run
    assert float(a @ b) > 0.5 > float(a @ c)  # shared words bring texts together; others stay apart


def test_tags_match_any_segment_prefix_first_then_most_used(engine):
    def tags(text):
        return [t["tag"] for t in engine.tags("notes", text)["tags"]]

    assert tags("gar") == ["project/garden"]  # a later segment starts with it
    assert tags("mux") == ["terminal/tmux"]  # inside a segment
    assert tags("ou") == ["outdoors", "journal"]  # starting with it comes first
    assert tags("re")[0] == "reference" and {"bread", "start-here"} <= set(tags("re"))
    assert tags("#TERMINAL/")[0] == "terminal"  # '#', case and a trailing '/' aside
    assert tags("zzzz") == []


def test_group_by_document_keeps_the_best_passage_and_counts_the_rest(engine, vault):
    long_note = "\n\n".join(f"## Bed {i}\nThe garden bed number {i} grows " + "beans and peas " * 60
                            for i in range(6))
    (vault / "Beds.md").write_text("# Garden beds\n\n" + long_note)
    engine.writer("notes").sync()
    engine.embed_pending("notes")
    chunks = engine.search(SearchRequest("garden bed", mode="keyword", limit=50))["results"]
    assert sum(r["path"] == "Beds.md" for r in chunks) > 1
    grouped = engine.search(SearchRequest("garden bed", mode="keyword", limit=50, group=True))
    assert grouped["grouped"] == "document"
    docs = [r["document_id"] for r in grouped["results"]]
    assert len(docs) == len(set(docs)) == len({r["document_id"] for r in chunks})
    beds = next(r for r in grouped["results"] if r["path"] == "Beds.md")
    in_chunks = [r["chunk_id"] for r in chunks if r["path"] == "Beds.md"]
    assert beds["chunk_id"] == in_chunks[0]  # the best passage leads
    assert [p["chunk_id"] for p in beds["more_passages"]] == in_chunks[1:] and beds["passages"] == len(in_chunks)
    assert "content" not in beds["more_passages"][0] and beds["more_passages"][0]["snippet"]
    assert len(engine.search(SearchRequest("garden bed", mode="keyword", limit=1, group=True))["results"]) == 1


def test_semantic_with_nothing_at_the_threshold_offers_weaker_matches_apart(engine):
    question = "how do I keep a server running after logout"
    answer = engine.search(SearchRequest(question, mode="semantic"))
    assert answer["results"] == [] and answer["threshold"] == 0.5
    weaker = answer["weaker_matches"]
    assert [w["path"] for w in weaker[:2]] == ["Reference/tmux cheatsheet.md", "Reference/systemd services.md"]
    assert all(0.25 <= w["similarity"] < 0.5 for w in weaker)
    assert "weaker_matches" not in engine.search(SearchRequest("baking bread with a starter",
                                                               mode="semantic"))  # found: none
    assert "weaker_matches" not in engine.search(SearchRequest(question,
                                                               mode="hybrid"))  # hybrid keeps 0.3 and up itself
    everywhere = engine.search(SearchRequest(question, mode="semantic", scope="all"))
    assert everywhere["results"] == []
    assert everywhere["weaker_matches"][0]["path"] == weaker[0]["path"]
    tagged = engine.search(SearchRequest(question, mode="semantic",
                                         tags_all=["project"]))  # the tag filter holds for them too
    assert all("project" in " ".join(w["tags"]) for w in tagged.get("weaker_matches", []))


def test_the_next_start_maps_the_vector_files_and_a_change_made_without_them_rebuilds_them(home, vault):
    home.add_project(vault, "notes")
    engine = Engine(home)
    try:
        engine.embed_pending("notes")
        first = engine.search(SearchRequest("bread", mode="semantic"))["results"]
        assert engine.index("notes").cache.loaded_from == "rebuilt"  # the first start writes the files
    finally:
        engine.close()
    engine = Engine(home)
    try:
        engine.writer("notes")  # the next start: the writer, as `skmemory serve` opens it
        again = engine.search(SearchRequest("bread", mode="semantic"))["results"]
        assert engine.index("notes").cache.loaded_from == "files"  # the next one maps them
        assert [(r["chunk_id"], round(r["similarity"], 5)) for r in again] == \
               [(r["chunk_id"], round(r["similarity"], 5)) for r in first]
    finally:
        engine.close()
    # `skmemory index` with no server running: a writer without the cache changes which chunks have vectors.
    (vault / "Herons.md").write_text("# Herons\n\nA grey heron stands motionless in the shallows, hunting fish.\n")
    with home.open_project("notes") as project:
        project.sync()
        project.embed_pending()
    engine = Engine(home)
    try:
        engine.writer("notes")
        assert paths(engine.search(SearchRequest("a heron hunting fish", mode="semantic")))[0] == "Herons.md"
        assert engine.index("notes").cache.loaded_from == "rebuilt"
    finally:
        engine.close()


@pytest.mark.parametrize("dense", [2000, 3], ids=["sorted", "walked newest first"])
def test_keyword_ranks_like_its_definition_while_reading_only_what_the_limit_needs(tmp_path, data_home, dense,
                                                                                   monkeypatch):
    """Spec 000's order, checked against a plain Python reading of every note: title matches first (the note named
    what was typed, then the note whose name holds it whole, then more terms in the title first), then chunks
    holding more terms in their text, then newer notes. The engine asks titles and paths first and then only as
    many content matches as the limit needs; every limit must agree with this."""
    import random

    from indexer.search import chunk_reads

    monkeypatch.setattr(chunk_reads, "DENSE", dense)  # how many matches make a word common enough to walk for
    rng = random.Random(4)
    folder = tmp_path / "words"
    words = ["amber", "basil", "cedar", "delta", "ember", "fjord"]
    for n in range(60):
        sub = folder / ("cedar-box" if n % 7 == 0 else "misc")
        sub.mkdir(parents=True, exist_ok=True)
        title = " ".join(rng.sample(words, rng.randint(0, 2))) + f" note {n}"
        body = "\n\n".join(f"## Part {p}\n\n" + " ".join(rng.choices(words + ["filler"] * 6, k=12)) for p in range(3))
        path = sub / f"{title.strip()}.md"
        path.write_text(f"# {title.strip()}\n\n{body}\n", encoding="utf-8")
        os.utime(path, (1_700_000_000 + n * 60, 1_700_000_000 + n * 60))
    with indexed(Home(Settings.from_env(), embedder=WordEmbedder()), folder, "words") as engine:
        index = engine.index("words")
        rows = index.sql("""SELECT c.chunk_id, c.document_id, c.ordinal, c.content, d.title, d.rel_path, d.modified
                            FROM chunks c JOIN documents d USING (document_id)""")
        for query in ["amber", "basil cedar", "ember fjord delta", "cedar", "note 3", "zzz", "am", "words amber"]:
            terms = query.split()
            for limit in (1, 5, 20, 500):
                for allowed in (None, {r["document_id"] for r in rows[::3]}):
                    def matches(r):  # a note's path is its full path: a term in the folder's own path matches all
                        path = str(index.root / r["rel_path"]).lower()
                        return all(t in r["content"].lower() or t in r["title"].lower() or t in path
                                   for t in terms) and (allowed is None or r["document_id"] in allowed)

                    def named(r):  # the query is the note's title or file name (2), stands whole in or starts one (1)
                        names = [" " + " ".join(re.findall(r"\w+", n.lower())) + " "
                                 for n in (r["title"], Path(r["rel_path"]).stem)]
                        asked = " ".join(re.findall(r"\w+", query.lower()))
                        if not all(t in r["title"].lower() or t in str(index.root / r["rel_path"]).lower()
                                   for t in terms):
                            return 0
                        return 2 if any(n.strip() == asked for n in names) else int(
                            any(f" {asked} " in n or n.startswith(f" {asked}") for n in names))

                    expected = sorted((r for r in rows if matches(r)), key=lambda r: (
                        -named(r), len(r["title"]) if named(r) else 0, -sum(t in r["title"].lower() for t in terms),
                        -sum(t in r["content"].lower() for t in terms),
                        -r["modified"], r["document_id"], r["ordinal"]))[:limit]
                    got = keyword_search(index, Query.parse(query), limit, allowed)
                    assert [cid for cid, _, _ in got] == [r["chunk_id"] for r in expected], (query, limit)


class LoadsDuringTheSearch(WordEmbedder):
    """A model still loading when a search first asks, and ready by the next time anything asks (issue 40 row 10:
    the search that lands as the model finishes loading; the ranking asked first and answered by keyword, and the
    answer, asking after it, said meaning had searched too)."""

    loading_answers = 1

    def ready_for_queries(self) -> bool:
        self.loading_answers -= 1
        return self.loading_answers < 0


def test_a_search_the_model_finishes_loading_during_says_it_answered_by_keyword(make_engine):
    """What the answer says is what the search knew when it began: meaning was not there, with the reason the
    window reads to search again (never "hybrid" with no notice over a keyword-only ranking); the next is by
    meaning."""
    engine = make_engine(embedder="words")
    index = engine.index("notes")
    index.embedder = LoadsDuringTheSearch()
    from indexer import SearchRequest

    first = engine.search(SearchRequest("how do I keep a process running after logout", "hybrid"))
    assert first["semantic_available"] is False and "still loading" in first["semantic_reason"]
    again = engine.search(SearchRequest("how do I keep a process running after logout", "hybrid"))
    assert again["semantic_available"] is True and "semantic_reason" not in again


def test_fifty_searches_at_once_map_the_index_a_few_times_not_fifty(make_engine):
    """Issue 40 row 28: each request thread opened a read connection of its own, which maps the index file; under
    50 clients the server's RSS reached 6-7 GB, the same pages mapped again and again. The threads now share a few."""
    import threading

    from indexer import SearchRequest
    from indexer.search.index import READERS

    engine = make_engine(embedder="words")
    database = str(engine.index("notes").database)
    searched = threading.Barrier(51, timeout=60)

    def search() -> None:  # searches, then stays alive holding what it opened until every thread has searched
        engine.search(SearchRequest("garden watering", "hybrid"))
        searched.wait()
        searched.wait()

    threads = [threading.Thread(target=search) for _ in range(50)]
    for thread in threads:
        thread.start()
    searched.wait()
    # Each connection holds the file open (and maps it, once it reads it through the map): count the open files.
    mapped = sum(1 for fd in os.listdir("/proc/self/fd") if _link(f"/proc/self/fd/{fd}") == database)
    searched.wait()
    for thread in threads:
        thread.join(30)
    assert 1 <= mapped <= READERS + 1, f"the index is open {mapped} times with 50 searching threads (and the writer)"


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:  # closed meanwhile
        return ""
