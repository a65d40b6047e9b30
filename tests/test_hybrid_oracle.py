"""Hybrid search against its definition, computed by brute force over every chunk of a vault big enough to reach
each way the engine reads its legs: a keyword leg smaller than the probe (merged whole with the best chunks by
meaning), a question no chunk holds whole (partial matches), and a word so common that the semantic leg is walked
best first, deeper and deeper, until the limit is filled or the leg ends.

The definition (spec 000, hybrid.py): the keyword side holds the chunks with every word in their text, title or path
(in the keyword leg's order), then those whose BM25 columns hold every word; its chunks score 1 + similarity + the
name bonus + 0.3 x word strength when meaning found them too (at least 0.3), and 1.0 otherwise. When no chunk holds
every word, the 20 chunks BM25 ranks best for any of the words count as found by both if their similarity reaches
0.5; everything else at or above 0.3 scores its similarity. A deterministic word embedder stands in for the model:
this checks ranking logic, not meaning.
"""
from __future__ import annotations

import os
import random

import pytest

from indexer.config import Settings
from indexer.home import Home
from support import WordEmbedder, indexed

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
    strength = dict(bm25(index, some))
    vector = index.embedder.embed_query(query)
    ids, sims = index.cache.similarities(vector, [r["chunk_id"] for r in rows])
    similarity = {cid: float(s) for cid, s in zip(ids, sims.tolist()) if s >= 0.3}
    row_of = {r["chunk_id"]: r for r in rows}

    def boosted(cid, reference):
        best = max((strength.get(c, 0.0) for c in reference[:64]), default=0.0) or 1.0
        r = row_of[cid]
        title = " ".join(r["title"].lower().split())
        stem = r["rel_path"].rsplit("/", 1)[-1].removesuffix(".md").lower()
        name = 1.0 if query.lower() in (title, stem) else 0.5 if f" {query.lower()} " in f" {title} " else 0.0
        return 1.0 + similarity[cid] + name + 0.3 * min(strength.get(cid, 0.0) / best, 1.0)

    ranked = [(cid, boosted(cid, keyword), "hybrid") if cid in similarity else (cid, 1.0, "keyword")
              for cid in keyword]
    taken = {cid for cid, _, _ in ranked}
    if not keyword and similarity:
        partial = [cid for cid, _ in bm25(index, some)][:20]
        for cid in partial:
            if similarity.get(cid, 0.0) >= 0.5 and cid not in taken:
                ranked.append((cid, boosted(cid, partial), "hybrid"))
                taken.add(cid)
    ranked += sorted(((cid, sim, "semantic") for cid, sim in similarity.items() if cid not in taken),
                     key=lambda s: (-s[1], s[0]))
    ranked.sort(key=lambda s: -s[1])  # stable: keyword-only chunks keep the keyword order
    return ranked


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
            got = vault_engine.search(query, mode="hybrid", project="oracle", limit=limit)["results"]
            want = expected[:limit]
            assert [r["chunk_id"] for r in got] == [cid for cid, _, _ in want], (query, limit)
            assert [r["search_type"] for r in got] == [kind for _, _, kind in want], (query, limit)
            assert [r["similarity"] for r in got] == pytest.approx([round(score, 4) for _, score, _ in want],
                                                                  abs=2e-4), (query, limit)
            keyword_count = sum(kind != "semantic" for _, _, kind in expected)
            reached.add("walked" if keyword_count >= 4 * limit + 64 else "whole")
        if not any(kind == "keyword" for _, _, kind in expected) and any(k == "hybrid" for _, _, k in expected):
            reached.add("partial")
    assert reached >= {"walked", "whole", "partial", "named"}, reached


def test_explain_and_the_window_rank_like_the_api(vault_engine):
    """The window asks with explain and grouped by document; its order is the API's, result for result."""
    for query in QUERIES:
        for limit in (5, 30):
            plain = vault_engine.search(query, mode="hybrid", project="oracle", limit=limit)["results"]
            told = vault_engine.search(query, mode="hybrid", project="oracle", limit=limit, explain=True)["results"]
            assert [r["chunk_id"] for r in told] == [r["chunk_id"] for r in plain], (query, limit)
            assert all(r["explain"]["score"] == r["similarity"] for r in told)
