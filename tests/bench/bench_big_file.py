"""Cost of one very large file: parse and chunk a single-paragraph note of N MB, in a fresh process per size.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_big_file.py 1 4 19.9

For each size it prints seconds and peak memory (RSS) to parse and chunk the file, the chunks it makes, the
largest chunk's stored characters, and the peak memory as a multiple of the file's size. The first row is a
1 MB baseline measured in the same run: read the later rows as ratios against it. A chunker that tokenises a
paragraph in one piece grows both with the paragraph; one that streams it in windows stays near the baseline's
memory per MB and its time per MB.
"""
from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS = ("the river carried silt toward a delta where herons waited for fish and reeds bent under the wind "
         "while ferrymen argued about tolls tides seasons ledgers and the price of salt").split()


def one(size_mb: float, path: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from indexer.ingest.chunking import TokenCounter
    from indexer.ingest.extract import parse_file
    from indexer.ingest.pipeline import build_chunks

    counter = TokenCounter.for_model()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    data = path.read_bytes()
    parsed = parse_file(path, data)
    rows = build_chunks("doc", parsed, counter)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"mb": size_mb, "seconds": round(seconds, 1), "peak_rss_mb": round(peak / 1024, 0),
            "added_rss_mb": round((peak - base) / 1024, 0), "chunks": len(rows),
            "largest_chunk_chars": max(len(r.content) for r in rows)}


def write(size_mb: float, folder: Path) -> Path:
    rng = random.Random(7)
    path = folder / f"one-paragraph-{size_mb}.md"
    target = int(size_mb * 2**20)
    parts, size = ["# One paragraph\n\n"], 0
    while size < target:
        words = " ".join(rng.choice(WORDS) for _ in range(200)) + ". "
        parts.append(words)
        size += len(words)
    path.write_text("".join(parts)[:target])
    return path


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one(float(sys.argv[2]), Path(sys.argv[3]))))
        return
    sizes = [1.0] + [float(s) for s in sys.argv[1:] if float(s) != 1.0]
    with tempfile.TemporaryDirectory() as folder:
        rows = []
        for size in sizes:
            path = write(size, Path(folder))
            out = subprocess.run([sys.executable, __file__, "--one", str(size), str(path)], capture_output=True,
                                 text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]
    print(f"{'MB':>6} {'s':>7} {'s/MB vs 1 MB':>13} {'added RSS MB':>13} {'x file size':>12} {'chunks':>7} "
          f"{'largest chunk chars':>20}")
    for r in rows:
        per_mb = r["seconds"] / r["mb"] / max(base["seconds"] / base["mb"], 1e-9)
        print(f"{r['mb']:>6} {r['seconds']:>7} {per_mb:>13.2f}"
              f" {r['added_rss_mb']:>13} {r['added_rss_mb'] / r['mb']:>12.1f} {r['chunks']:>7}"
              f" {r['largest_chunk_chars']:>20}")


if __name__ == "__main__":
    main()
