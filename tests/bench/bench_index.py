"""Index a folder and compare the pipeline's embedding rate with the raw model rate on the same chunks.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_index.py ../shared/corpora/tldr-en [--max-chunks 3000]

Prints files/s to keyword-searchable, chunks/s embedded by the pipeline, the raw model's chunks/s on the
same chunk texts measured in the same run, and their ratio (the target is at least 0.9).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.home import Home  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="folder to index, e.g. ../shared/corpora/tldr-en")
    parser.add_argument("--max-chunks", type=int, default=3000,
                        help="embed at most this many chunks (the rest stay pending); 0 embeds all")
    args = parser.parse_args()
    if not args.path.is_dir():
        parser.error(f"{args.path} is not a folder")

    with tempfile.TemporaryDirectory(prefix="skm-bench-") as tmp:
        home = Home(Settings.from_env(tmp))
        home.add_project(args.path, "bench")
        home.embedder.load()
        home.counter  # load the tokenizer before timing
        with home.open_project("bench", role="bench") as project:
            started = time.perf_counter()
            report = project.sync()
            sync_seconds = time.perf_counter() - started
            files = report.added + report.failed
            counts = project.store.counts()
            print(f"files: {files} ({report.failed} failed), chunks: {counts['chunks']}")
            print(f"keyword-searchable: {sync_seconds:.1f} s, {files / sync_seconds:.0f} files/s")

            limit = args.max_chunks or counts["chunks"]
            batch = project.settings.embed_batch_size
            rows = project.store.pending_chunks(limit)
            texts = [r["embed_text"] for r in rows]

            started = time.perf_counter()
            home.embedder.embed(texts, batch_size=batch)
            raw_seconds = time.perf_counter() - started
            raw_rate = len(texts) / raw_seconds

            started = time.perf_counter()
            done = project.embed_pending(max_batches=max(1, -(-limit // project.embed_group_size)))
            pipe_seconds = time.perf_counter() - started
            pipe_rate = done / pipe_seconds
            print(f"raw model:  {len(texts)} chunks in {raw_seconds:.1f} s = {raw_rate:.1f} chunks/s "
                  f"(device {home.embedder.device})")
            print(f"pipeline:   {done} chunks in {pipe_seconds:.1f} s = {pipe_rate:.1f} chunks/s")
            print(f"ratio pipeline/raw: {pipe_rate / raw_rate:.2f} (target >= 0.90)")


if __name__ == "__main__":
    main()
