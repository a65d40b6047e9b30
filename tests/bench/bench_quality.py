"""Retrieval quality on a BEIR dataset (e.g. SciFact): nDCG@10 of every search mode beside published figures.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_quality.py ../shared/corpora/scifact --home /tmp/skm-scifact
    .venv/bin/python tests/bench/bench_quality.py ../shared/corpora/scifact --home /tmp/skm-scifact --limit-queries 50
    .venv/bin/python tests/bench/bench_quality.py --questions tests/bench/questions/*.json  # the graded vault sets

Each abstract becomes one note `<_id>.md` (`# title` then the text) in a folder of its own, which is indexed and
embedded with the real model (SciFact: about 10 minutes on 2 CPU cores). With --home the notes and the index are
kept, so a second run only searches. A document's rank is that of its best chunk (first occurrence wins); nDCG@10
uses the binary qrels, unjudged documents count as not relevant, averaged over every test query.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.errors import ProjectNotFound  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.search.grammar import WORD  # noqa: E402
from indexer.contract.request import SearchRequest  # noqa: E402
from indexer.search.vault import DEFAULT_FUSION, DEFAULT_NOTE_LEG, FUSIONS, vault_search  # noqa: E402

PROJECT = "beir"
TOP = 10
CHUNK_POOL = 100  # chunks asked of a chunk-level mode, enough to fill 10 distinct documents
PUBLISHED = [("BM25, BEIR multifield (Anserini)", 0.665), ("BM25, title+text flat (Anserini)", 0.679),
             ("all-MiniLM-L6-v2, exact (MTEB)", 0.645)]


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path: Path) -> dict[str, set[str]]:
    relevant: dict[str, set[str]] = {}
    with path.open(encoding="utf-8") as f:
        next(f)  # header: query-id corpus-id score
        for line in f:
            qid, doc, score = line.split("\t")
            if int(score) > 0:
                relevant.setdefault(qid, set()).add(doc)
    return relevant


def write_notes(corpus: list[dict], folder: Path) -> None:
    """Write each abstract as `<_id>.md`; keep a folder that already holds them all."""
    folder.mkdir(parents=True, exist_ok=True)
    if sum(1 for _ in folder.glob("*.md")) == len(corpus):
        return
    for doc in corpus:
        title = " ".join(doc.get("title", "").split()) or doc["_id"]
        (folder / f"{doc['_id']}.md").write_text(f"# {title}\n\n{doc.get('text', '').strip()}\n", encoding="utf-8")


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:TOP]) if doc in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), TOP)))
    return dcg / ideal if ideal else 0.0


def first_documents(doc_ids, limit: int = TOP) -> list[str]:
    """Documents in order of their first (best) chunk."""
    out: list[str] = []
    for doc in doc_ids:
        if doc not in out:
            out.append(doc)
            if len(out) == limit:
                break
    return out


def corpus_id(rel_path: str) -> str:
    return rel_path.rsplit("/", 1)[-1].removesuffix(".md")


def or_query(text: str) -> str:
    """The query's words as an FTS5 OR of quoted terms (nothing FTS5 could read as syntax)."""
    words = list(dict.fromkeys(w.lower() for w in WORD.findall(text)))
    return " OR ".join(f'"{w}"' for w in words)


def bm25_ranking(db: sqlite3.Connection, sql: str, query: str, doc_of_rowid: dict[int, str]) -> list[str]:
    match = or_query(query)
    if not match:
        return []
    rows = db.execute(sql, (match,)).fetchall()
    return first_documents(doc_of_rowid[r[0]] for r in rows)


def index_corpus(engine: Engine, home: Home, notes: Path):
    """Register, index and embed the notes (only what is missing); return the project's search index."""
    try:
        home.project(PROJECT)
    except ProjectNotFound:
        home.add_project(notes, PROJECT)
    started = time.perf_counter()
    project = engine.writer(PROJECT)  # opens, reconciles and syncs the project
    index = engine.index(PROJECT)
    counts = project.store.counts()
    print(f"indexed: {counts['documents']} documents, {counts['chunks']} chunks in "
          f"{time.perf_counter() - started:.1f} s; {counts['pending']} chunks wait for embeddings", flush=True)
    if counts["pending"]:
        started = time.perf_counter()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.perf_counter() - started
            if now - last[0] >= 15 or done == total:
                last[0] = now
                eta = (total - done) / (done / now) if done else 0
                print(f"  embedded {done}/{total} chunks, {done / now:.1f}/s, about {eta:.0f} s left", flush=True)

        done = project.embed_pending(progress=progress)
        print(f"embedded {done} chunks in {time.perf_counter() - started:.1f} s", flush=True)
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", help="a BEIR dataset folder, e.g. ../shared/corpora/scifact")
    parser.add_argument("--home", type=Path, help="data home to keep (notes and index) and reuse next time")
    parser.add_argument("--limit-queries", type=int, default=0, help="evaluate only the first N test queries")
    parser.add_argument("--questions", type=Path, nargs="+", default=[],
                        help="graded question files (tests/bench/questions/*.json): hit@5 and MRR@10 of every mode "
                             "beside a textbook BM25, as bench_vault_questions.py prints them")
    args = parser.parse_args()
    if args.questions:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_vault_questions import CORPORA, report

        report(args.questions, CORPORA)
    if args.path is None:
        if not args.questions:
            parser.error("give a BEIR dataset folder, --questions FILE..., or both")
        return
    for name in ("corpus.jsonl", "queries.test.jsonl", "qrels/test.tsv"):
        if not (args.path / name).is_file():
            parser.error(f"{args.path / name} is missing; give a BEIR dataset folder")

    relevant = read_qrels(args.path / "qrels" / "test.tsv")
    queries = [q for q in read_jsonl(args.path / "queries.test.jsonl") if q["_id"] in relevant]
    if args.limit_queries:
        queries = queries[: args.limit_queries]

    with contextlib.ExitStack() as stack:
        home_dir = args.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skm-quality-")))
        home_dir.mkdir(parents=True, exist_ok=True)
        notes = home_dir / "notes"  # beside the data home, not inside it
        write_notes(read_jsonl(args.path / "corpus.jsonl"), notes)
        home = Home(Settings.from_env(home_dir / "data"))
        engine = Engine(home)
        stack.callback(engine.close)
        index = index_corpus(engine, home, notes)
        evaluate(engine, index, queries, relevant)


def evaluate(engine: Engine, index, queries: list[dict], relevant: dict[str, set[str]]) -> None:
    db = sqlite3.connect(f"file:{index.database}?mode=ro", uri=True)  # the bench's own reads (its baselines)
    doc_of_rowid = {r[0]: corpus_id(r[1]) for r in db.execute(
        "SELECT c.rowid, d.rel_path FROM chunks c JOIN documents d USING (document_id)")}
    doc_of_chunk = {r[0]: corpus_id(r[1]) for r in db.execute(
        "SELECT c.chunk_id, d.rel_path FROM chunks c JOIN documents d USING (document_id)")}

    # Embed every query once; the modes below then reuse the vectors instead of running the model again.
    started = time.perf_counter()
    texts = [q["text"] for q in queries]
    vectors = dict(zip(texts, index.embedder.embed(texts)))
    print(f"embedded {len(texts)} queries in {time.perf_counter() - started:.1f} s", flush=True)
    index.embed_query = lambda text: vectors[text] if text in vectors else index.embedder.embed([text])[0]

    # The textbook baseline: BM25 over heading path and content with the porter stemmer, in a table of this bench's
    # own (the index dropped its unread porter table in m013).
    baseline = sqlite3.connect(":memory:")
    baseline.execute("CREATE VIRTUAL TABLE chunks_porter USING fts5(heading_path, content, "
                     "tokenize='porter unicode61 remove_diacritics 2')")
    baseline.executemany("INSERT INTO chunks_porter(rowid, heading_path, content) VALUES (?, ?, ?)",
                         db.execute("SELECT rowid, heading_path, content FROM chunks").fetchall())
    porter = ("SELECT rowid FROM chunks_porter WHERE chunks_porter MATCH ? "
              "ORDER BY bm25(chunks_porter), rowid LIMIT 200")
    titled = ("SELECT rowid FROM chunks_bm25 WHERE chunks_bm25 MATCH ? "
              "ORDER BY bm25(chunks_bm25, 4.0, 2.0, 1.0), rowid LIMIT 200")

    def chunk_mode(mode: str):
        def run(q: str) -> list[str]:
            found = engine.search(SearchRequest(q, mode=mode, project=PROJECT, limit=CHUNK_POOL))["results"]
            return first_documents(doc_of_chunk[r["chunk_id"]] for r in found)
        return run

    def exact_cosine(q: str) -> list[str]:
        hits = index.cache.search(vectors[q], -1.0, CHUNK_POOL)
        return first_documents(doc_of_chunk[cid] for cid, _ in hits)

    def vault(q: str) -> list[str]:
        found = engine.search(SearchRequest(q, mode="vault", limit=TOP, project=PROJECT))["results"]
        return [corpus_id(r["path"]) for r in found]

    systems = [
        ("keyword (spec-000 substring AND)", chunk_mode("keyword")),
        ("BM25 chunks_porter, OR of terms", lambda q: bm25_ranking(baseline, porter, q, doc_of_rowid)),
        ("BM25 chunks_bm25 (title 4, OR of terms)", lambda q: bm25_ranking(db, titled, q, doc_of_rowid)),
        ("semantic, exact cosine", exact_cosine),
        ("semantic (spec-000, sim >= 0.5)", chunk_mode("semantic")),
        ("hybrid (spec-000)", chunk_mode("hybrid")),
    ]
    systems.append((f"vault_search (default: {DEFAULT_FUSION}{' + first-chunk leg' if DEFAULT_NOTE_LEG else ''})",
                    vault))
    # The other fusion rules and note scorings vault_search can use, side by side.
    for fusion in FUSIONS:
        for note_leg in (False, True):
            if (fusion, note_leg) == (DEFAULT_FUSION, DEFAULT_NOTE_LEG):
                continue
            label = f"vault_search {fusion}{' + first-chunk leg' if note_leg else ''}"

            def variant(q: str, fusion=fusion, note_leg=note_leg) -> list[str]:
                found = vault_search(index, SearchRequest(q, "vault", limit=TOP), fusion=fusion,
                                     note_leg=note_leg)["results"]
                return [corpus_id(r["path"]) for r in found]

            systems.append((label, variant))

    print(f"\n{len(queries)} queries, nDCG@{TOP} (binary qrels, unjudged = not relevant)")
    print(f"{'system':44s} {'nDCG@10':>8s} {'recall@10':>9s} {'empty':>6s} {'ms/query':>9s}")
    for name, run in systems:
        scores, recalls, empty, seconds = [], [], 0, []
        for q in queries:
            started = time.perf_counter()
            ranked = run(q["text"])
            seconds.append(time.perf_counter() - started)
            rel = relevant[q["_id"]]
            scores.append(ndcg_at_10(ranked, rel))
            recalls.append(len(set(ranked[:TOP]) & rel) / len(rel))
            empty += not ranked
        print(f"{name:44s} {statistics.fmean(scores):8.3f} {statistics.fmean(recalls):9.3f} {empty:6d} "
              f"{1000 * statistics.median(seconds):9.1f}", flush=True)
    print("\npublished (SciFact test, nDCG@10):")
    for name, value in PUBLISHED:
        print(f"{name:44s} {value:8.3f}")


if __name__ == "__main__":
    main()
