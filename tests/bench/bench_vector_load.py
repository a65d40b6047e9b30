"""Time loading every vector out of ChromaDB: one naive `get` against VectorStore.load_all.

Run by hand (pytest does not collect it):

    python tests/bench/bench_vector_load.py                 # 100,000 random 384-d vectors in a temp folder
    python tests/bench/bench_vector_load.py -n 20000 --keep /tmp/vector-bench   # reuse the folder next time
    python tests/bench/bench_vector_load.py --ballast 3000000   # a heap the size of the app's (torch loaded)
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import indexer.store.vectors as vectors_module  # noqa: E402
from indexer.store.vectors import VectorStore  # noqa: E402


def timed(label: str, repeats: int, load) -> float:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        ids, matrix = load()
        seconds.append(time.perf_counter() - start)
        del ids, matrix
    best, median = min(seconds), statistics.median(seconds)
    print(f"{label:48s} best {best:6.2f} s   median {median:6.2f} s")
    return median


def naive(store: VectorStore):
    page = store._chroma.get(include=["embeddings"])
    return page["ids"], page["embeddings"].astype(np.float32)  # arrives as float64


def build(store: VectorStore, n: int, dim: int) -> None:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    step = 10_000
    for first in range(0, n, step):
        count = min(step, n - first)
        store.upsert(
            [f"chunk-{i}" for i in range(first, first + count)],
            rng.standard_normal((count, dim), dtype=np.float32),
            [{"document_id": i // 10} for i in range(first, first + count)],
        )
    print(f"upserted {n:,} x {dim} in {time.perf_counter() - start:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=100_000, help="vectors (default 100,000)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="store folder to keep and reuse instead of a temp one")
    parser.add_argument("--ballast", type=int, default=0, help="extra live Python objects, like a loaded app")
    args = parser.parse_args()

    ballast = [[i] for i in range(args.ballast)]  # noqa: F841 - kept alive on purpose
    with contextlib.ExitStack() as stack:
        folder = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        store = stack.enter_context(VectorStore.open(folder, "bench"))
        if store.count() != args.n:
            store.delete(list(store.ids()))
            build(store, args.n, args.dim)
        # Warm the segment readers for every contestant. (Not with tiny pages: each `get` walks past
        # its offset, so paging is quadratic in the page count.)
        store.load_all()

        print(f"{args.n:,} vectors x {args.dim}, {args.repeats} runs each, ballast {args.ballast:,} objects")
        slow = timed('naive collection.get(include=["embeddings"])', args.repeats, lambda: naive(store))
        for page_size in (5_000, 10_000, 20_000):
            timed(f"load_all(page_size={page_size:,})", args.repeats, lambda: store.load_all(page_size))
        real = vectors_module._gc_paused
        vectors_module._gc_paused = contextlib.nullcontext
        try:
            timed("load_all, collector not paused", args.repeats, store.load_all)
        finally:
            vectors_module._gc_paused = real
        fast = timed("load_all (default)", args.repeats, store.load_all)
        ids, matrix = store.load_all()
        assert len(ids) == args.n and matrix.dtype == np.float32 and matrix.flags.c_contiguous
        print(f"naive / load_all = {slow / fast:.2f}x   ({matrix.nbytes / 2**20:.0f} MiB float32)")


if __name__ == "__main__":
    main()
