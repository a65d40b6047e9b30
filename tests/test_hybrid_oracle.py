"""Hybrid search against its definition, computed by brute force over every chunk of a vault big enough to reach
each way the engine reads its legs: a keyword leg smaller than the probe, a question no chunk holds whole (partial
matches), and a word so common that the keyword side holds more chunks than any probe reads.

The definition (spec 000, hybrid.py): a chunk found by both scores 1 + (its note's score in the note ranking + the
name bonus) x its similarity over its note's best + 0.05 x its similarity, where found by the keyword side means
every word in its text, title or path, or some of the words by BM25, and found by meaning means a similarity of at
least 0.3. Chunks of the keyword side without meaning, and the best BM25 passage of each note with some of the words
that the note ranking puts above every note found by meaning alone, score 1.0 in the note ranking's order; the rest
at or above 0.3 score their similarity. The note ranking is vault_search's (tested on its own), read whole. A
deterministic word embedder stands in for the model: this checks how the ranking is composed and read at every
limit, not meaning.
"""
from __future__ import annotations

import os
import random

import pytest

from indexer.config import Settings
from indexer.home import Home
from indexer.search.query import Query
from indexer.search.vault import rank_notes
from support import WordEmbedder, indexed
from indexer import SearchRequest

WORDS = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
         "lichen", "marble", "nectar", "osprey", "pewter", "quartz", "russet"]
COMMON = "common"  # in about half of the notes: more keyword matches than any probe reads at once
NOTES = 1600
QUERIES = ["amber", "amber basil", "common", "common amber", "common quartz russet", "garnet harbor indigo",
           "zzz amber", "basil kestrel pewter nectar", "common lichen", "fjord", "marble osprey"]
LIMITS = (1, 5, 20, 100)


@pytest.fixture(scope="module")
def vault_engine(tmp_path_factory):
    rng = random.Random(25)
    folder = tmp_path_factory.mktemp("oracle") / "notes"
    folder.mkdir()
    for n in range(NOTES):
        title = " ".join(rng.sample(WORDS, rng.randint(1, 2))) + f" {n}"
        body = rng.choices(WORDS, k=rng.randint(3, 8)) + ([COMMON] if rng.random() < 0.5 else [])
        path = folder / f"{title}.md"
        path.write_text(f"# {title}\n\n{' '.join(body)}\n", encoding="utf-8")
        os.utime(path, (1_700_000_000 + n * 60, 1_700_000_000 + n * 60))
    home_dir = tmp_path_factory.mktemp("oracle-home")
    home = Home(Settings.from_env(home_dir), embedder=WordEmbedder())
    with indexed(home, folder, "oracle") as engine:
        yield engine


def definition(index, query: str) -> list[tuple[str, float, str]]:
    """Hybrid's ranking of every chunk, read from the whole index: nothing cut, nothing probed."""
    rows = index.sql("""SELECT c.rowid, c.chunk_id, c.document_id, c.ordinal, c.content, d.title, d.rel_path,
                        d.modified FROM chunks c JOIN documents d USING (document_id)""")
    terms = query.lower().split()

    def holds(r, t):
        return t in r["content"].lower() or t in r["title"].lower() or t in str(index.root / r["rel_path"]).lower()

    substring = sorted((r for r in rows if all(holds(r, t) for t in terms)), key=lambda r: (
        -sum(t in r["title"].lower() for t in terms), -sum(t in r["content"].lower() for t in terms),
        -r["modified"], r["document_id"], r["ordinal"]))
    keyword = [r["chunk_id"] for r in substring]
    every, some = " AND ".join(f'"{t}"' for t in terms), " OR ".join(f'"{t}"' for t in terms)
    keyword += [cid for cid, _ in bm25(index, every) if cid not in set(keyword)]
    words = dict(bm25(index, some))
    vector = index.embedder.embed_query(query)
    ids, sims = index.cache.similarities(vector, [r["chunk_id"] for r in rows])
    similarity = {cid: float(s) for cid, s in zip(ids, sims.tolist()) if s >= 0.3}
    doc_of = {r["chunk_id"]: r["document_id"] for r in rows}
    notes = rank_notes(index, Query.parse(query), 10_000, whole=True)
    place = {c.document_id: (i, c) for i, c in enumerate(notes.fused)}

    both = {cid for cid in similarity if cid in keyword or words.get(cid, 0.0) > 0}
    best = {}
    for cid in both:
        best[doc_of[cid]] = max(best.get(doc_of[cid], 0.0), similarity[cid])

    def boosted(cid):
        c = place[doc_of[cid]][1]
        return 1.0 + c.score * similarity[cid] / best[doc_of[cid]] + 0.05 * similarity[cid]

    ranked = sorted(((cid, boosted(cid), "hybrid") for cid in both), key=lambda s: (-s[1], s[0]))
    answered = {doc_of[cid] for cid in both}
    meaning_only = {doc_of[cid] for cid in similarity if cid not in both} - answered
    first_meaning = min((place[d][0] for d in meaning_only if d in place), default=len(place))
    alone = [cid for cid in keyword if cid not in both]
    at = {r["rowid"]: r["chunk_id"] for r in rows}
    for doc, rowid, _ in notes.legs["bm25"]:
        if doc not in answered and place[doc][0] < first_meaning and at[rowid] not in alone:
            alone.append(at[rowid])
    never = (len(place), None)
    alone.sort(key=lambda cid: (-(place.get(doc_of[cid], never)[1].score if doc_of[cid] in place else 0.0),
                                place.get(doc_of[cid], never)[0]))
    ranked += [(cid, 1.0, "keyword") for cid in alone]
    ranked += sorted(((cid, sim, "semantic") for cid, sim in similarity.items() if cid not in both),
                     key=lambda s: (-s[1], s[0]))
    return ranked


def definition_full(index, query: str) -> bool:
    """Whether any chunk holds every word of the query (BM25)."""
    return bool(bm25(index, " AND ".join(f'"{t}"' for t in query.lower().split())))


def bm25(index, match: str) -> list[tuple[str, float]]:
    """(chunk id, BM25 score, higher is better) of every chunk matching an FTS5 expression, best first."""
    return [(r[0], r[1]) for r in index.sql("""SELECT c.chunk_id, -bm25(chunks_bm25, 4.0, 2.0, 1.0, 1.0) AS s
                                               FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid
                                               WHERE chunks_bm25 MATCH ? ORDER BY -s, f.rowid""", [match])]


def test_hybrid_equals_its_definition_at_every_limit(vault_engine):
    index = vault_engine.index("oracle")
    assert index.sql("SELECT count(*) FROM chunks")[0][0] >= NOTES
    reached = set()
    titles = [r[0] for r in index.sql("SELECT title FROM documents ORDER BY rel_path LIMIT 4")]
    for query in QUERIES + titles:
        expected = definition(index, query)
        if query in titles:  # a note's own title: that note first, with the name bonus
            assert expected[0][1] >= 2.3 and index.sql("SELECT title FROM chunks JOIN documents USING (document_id) "
                                                       "WHERE chunk_id = ?", [expected[0][0]])[0][0] == query
            reached.add("named")
        for limit in LIMITS:
            got = vault_engine.search(SearchRequest(query, mode="hybrid", project="oracle", limit=limit))["results"]
            want = expected[:limit]
            assert [r["chunk_id"] for r in got] == [cid for cid, _, _ in want], (query, limit)
            assert [r["search_type"] for r in got] == [kind for _, _, kind in want], (query, limit)
            assert [r["similarity"] for r in got] == pytest.approx([round(score, 4) for _, score, _ in want],
                                                                  abs=2e-4), (query, limit)
            keyword_count = sum(kind != "semantic" for _, _, kind in expected)
            reached.add("walked" if keyword_count >= 4 * limit + 64 else "whole")
        if len(query.split()) > 1 and any(k == "hybrid" for _, _, k in expected) and not definition_full(index, query):
            reached.add("partial")
    assert reached >= {"walked", "whole", "partial", "named"}, reached


def test_explain_and_the_window_rank_like_the_api(vault_engine):
    """The window asks with explain and grouped by document; its order is the API's, result for result."""
    for query in QUERIES:
        for limit in (5, 30):
            plain = vault_engine.search(SearchRequest(query, mode="hybrid", project="oracle", limit=limit))["results"]
            told = vault_engine.search(SearchRequest(query, mode="hybrid", project="oracle", limit=limit,
                                                     explain=True))["results"]
            assert [r["chunk_id"] for r in told] == [r["chunk_id"] for r in plain], (query, limit)
            assert all(r["explain"]["score"] == r["similarity"] for r in told)
