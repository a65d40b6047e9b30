"""Graded questions on a real vault: hit@5 and MRR@10 of each search mode, with the real model.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_vault_questions.py ../shared/corpora/logseq-docs \
        --questions tests/bench/questions/logseq-docs.json

Each question names the note(s) that answer it (paths relative to the vault). The vault is indexed and embedded
in a temporary data home; then for every mode the documents are ranked by their best chunk and a question is a
hit@5 when one of its notes is among the first five. Modes: `semantic` (exact cosine, no threshold, so that the
chunks themselves are judged), `semantic 0.5` (the product's direct threshold), `hybrid` and `vault_search`.
Also prints chunks and embedding time, so that a change of the index's units is judged on cost and quality at once.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.search.semantic import semantic_search  # noqa: E402

POOL = 100  # chunks asked of a chunk-level mode, enough for ten distinct documents


def documents(paths) -> list[str]:
    """Paths in order of first appearance (a document's rank is its best chunk's)."""
    out: list[str] = []
    for path in paths:
        if path not in out:
            out.append(path)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="the vault, e.g. ../shared/corpora/logseq-docs")
    parser.add_argument("--questions", type=Path, required=True, help="JSON: {questions: [{q, relevant: [paths]}]}")
    parser.add_argument("--show-misses", action="store_true", help="print each question a mode misses at 5")
    args = parser.parse_args()
    if not args.path.is_dir():
        parser.error(f"{args.path} is not a folder")
    questions = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]

    with tempfile.TemporaryDirectory(prefix="skm-bench-questions-") as tmp:
        home = Home(Settings.from_env(tmp))
        home.add_project(args.path, "vault")
        engine = Engine(home)
        try:
            started = time.perf_counter()
            index = engine.index("vault")
            project = engine.writer("vault")
            synced = time.perf_counter() - started
            home.embedder.load()
            started = time.perf_counter()
            project.embed_pending()
            embedded = time.perf_counter() - started
            counts = project.store.counts()
            print(f"{args.path.name}: {counts['documents']} documents, {counts['chunks']} chunks embedded in "
                  f"{embedded:.0f} s (keyword-searchable in {synced:.1f} s); {len(questions)} questions")

            def paths(results):
                return documents(r["relative_path"] for r in results)

            modes = {
                "semantic": lambda q: paths(r for r in _rows(index, semantic_search(index, q, POOL, -1.0))),
                "semantic 0.5": lambda q: paths(engine.search(q, mode="semantic", project="vault", limit=POOL)["results"]),
                "hybrid": lambda q: paths(engine.search(q, mode="hybrid", project="vault", limit=POOL)["results"]),
                "vault_search": lambda q: documents(r["path"] for r in engine.vault_search(q, limit=20, project="vault")["results"]),
            }
            print(f"  {'mode':14s} {'hit@5':>6s} {'MRR@10':>7s}")
            for name, rank in modes.items():
                hits, reciprocal, misses = [], [], []
                for item in questions:
                    ranked = rank(item["q"])
                    relevant = set(item["relevant"])
                    first = next((i for i, p in enumerate(ranked[:10]) if p in relevant), None)
                    hits.append(first is not None and first < 5)
                    reciprocal.append(1.0 / (first + 1) if first is not None else 0.0)
                    if not hits[-1]:
                        misses.append((item["q"], ranked[:3]))
                print(f"  {name:14s} {statistics.fmean(hits):6.3f} {statistics.fmean(reciprocal):7.3f}")
                if args.show_misses:
                    for q, top in misses:
                        print(f"      miss: {q!r} -> {top}")
        finally:
            engine.close()


def _rows(index, scored):
    """(chunk_id, similarity, type) triples as rows with relative_path, without building full results."""
    ids = [cid for cid, _, _ in scored]
    path_of = {}
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        for r in index.sql(f"SELECT c.chunk_id, d.rel_path FROM chunks c JOIN documents d USING (document_id) "
                           f"WHERE c.chunk_id IN ({','.join('?' * len(part))})", part):
            path_of[r[0]] = r[1]
    return [{"relative_path": path_of[cid]} for cid in ids if cid in path_of]


if __name__ == "__main__":
    main()
