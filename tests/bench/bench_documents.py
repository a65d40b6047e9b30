"""The Files tab and the Document Info Panel on a real folder: listing every document, and opening documents.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_documents.py ../shared/corpora/tldr-en --home /tmp/skm-bench-documents

The folder is indexed keyword-only (no model: listing and opening documents never embed) in --home, kept and
reused. Prints the median time to list every document with its tags and how many SQL statements that took, then
the median and worst time of `document()` (outline, links both ways) over a sample of documents.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.model.embeddings import Embedder  # noqa: E402

PROJECT = "corpus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a folder of notes, e.g. ../shared/corpora/tldr-en")
    parser.add_argument("--home", type=Path, required=True, help="data home to keep and reuse")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sample", type=int, default=30, help="documents to open")
    args = parser.parse_args()
    home = Home(Settings(home=args.home), embedder=Embedder(args.home / "no-model"))
    if PROJECT not in {p.name for p in home.projects()}:
        home.add_project(args.path, PROJECT)
    engine = Engine(home)
    try:
        started = time.perf_counter()
        engine.writer(PROJECT)  # opens and syncs
        index = engine.index(PROJECT)
        print(f"indexed (keyword only) in {time.perf_counter() - started:.1f} s")
        statements: list[str] = []
        index.db.set_trace_callback(statements.append)
        listing = engine.documents(PROJECT, limit=100_000)
        index.db.set_trace_callback(None)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            engine.documents(PROJECT, limit=100_000)
            times.append(time.perf_counter() - started)
        print(f"list all {listing['total']:,} documents: median {statistics.median(times) * 1000:.0f} ms over "
              f"{args.runs} runs, {len(statements):,} SQL statements")
        docs = listing["documents"]
        sample = docs[:: max(1, len(docs) // args.sample)][: args.sample]
        opened = []
        for d in sample:
            started = time.perf_counter()
            engine.document(d["document_id"], PROJECT)
            opened.append(time.perf_counter() - started)
        print(f"open a document: median {statistics.median(opened) * 1000:.1f} ms, worst {max(opened) * 1000:.1f} ms "
              f"(the first builds the link resolver) over {len(sample)} documents")
    finally:
        engine.close()


if __name__ == "__main__":
    main()
