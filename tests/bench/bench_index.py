"""Index a folder as `skmemory index` does and print the shape of its chunks and how long each stage takes.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_index.py ../shared/corpora/logseq-docs
    .venv/bin/python tests/bench/bench_index.py ../shared/corpora/tldr-en --max-chunks 3000
    .venv/bin/python tests/bench/bench_index.py ../shared/corpora/kepano-obsidian --backends torch,onnx

Prints documents, chunks, chunks per document, words per chunk (p10/p50/p90) and the share of chunks of five words
or fewer; seconds until every file is keyword-searchable (titles, words and BM25 whole; matches inside words by the
substring index where it has caught up, by a scan after it), until the substring index is whole, until every
document has a vector (note-first embedding makes that early) and until every chunk has one; and the pipeline's
chunks/s beside the raw model's on the same chunk texts, measured in the same run, for each backend asked for. With
--max-chunks the pipeline stops after that many chunks and the times to "every document" and "fully embedded" are
projected from its rate.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.home import Home  # noqa: E402


def chunk_shape(store) -> dict:
    """Documents, chunks the model embeds and words per chunk of an index (keyword-only chunks of notes without a
    body are counted apart)."""
    has_flag = any(r[1] == "keyword_only" for r in store.query("PRAGMA table_info(chunks)"))
    rows = store.query("SELECT content FROM chunks" + (" WHERE NOT keyword_only" if has_flag else ""))
    keyword_only = store.query("SELECT count(*) FROM chunks WHERE keyword_only")[0][0] if has_flag else 0
    words = sorted(len(r[0].split()) for r in rows)
    documents = store.query("SELECT count(*) FROM documents")[0][0]
    deciles = statistics.quantiles(words, n=10) if len(words) > 1 else [0] * 9
    return {
        "documents": documents,
        "chunks": len(words),
        "per_document": len(words) / max(1, documents),
        "p10": deciles[0], "p50": statistics.median(words) if words else 0, "p90": deciles[8],
        "tiny_share": sum(w <= 5 for w in words) / max(1, len(words)),
        "keyword_only": keyword_only,
    }


def documents_with_vectors(store, with_chunks: int | None = None) -> tuple[int, int]:
    """(documents with at least one embedded chunk, documents with at least one chunk to embed): the first read by
    the embed state's index, so that it costs in proportion to what is embedded yet; the second, a scan of every
    chunk, only when not given."""
    has_flag = any(r[1] == "keyword_only" for r in store.query("PRAGMA table_info(chunks)"))
    text = " AND NOT keyword_only" if has_flag else ""
    found = store.query(f"SELECT count(DISTINCT document_id) FROM chunks WHERE embed_state = 'embedded'{text}")[0][0]
    if with_chunks is None:
        with_chunks = store.query(f"SELECT count(DISTINCT document_id) FROM chunks WHERE 1{text}")[0][0]
    return found, with_chunks


def raw_rate(embedder, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    embedder.embed(texts, batch_size=batch)
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="folder to index, e.g. ../shared/corpora/logseq-docs")
    parser.add_argument("--max-chunks", type=int, default=0,
                        help="embed at most this many chunks through the pipeline (0: all of them)")
    parser.add_argument("--raw-chunks", type=int, default=600, help="chunks for the raw model's rate (default 600)")
    parser.add_argument("--backends", default="torch,onnx-int8",
                        help="comma-separated raw-model backends to time on the same chunks: torch, onnx, "
                        "onnx-int8, openvino-int8 (the pipeline embeds with SKMEMORY_EMBED_BACKEND's)")
    parser.add_argument("--shape-only", action="store_true", help="print the chunk shape and stop (no model)")
    args = parser.parse_args()
    if not args.path.is_dir():
        parser.error(f"{args.path} is not a folder")

    with tempfile.TemporaryDirectory(prefix="skm-bench-") as tmp:
        home = Home(Settings.from_env(tmp))
        home.add_project(args.path, "bench")
        home.counter  # load the tokenizer before timing
        with home.open_project("bench", role="bench") as project:
            started = time.perf_counter()
            report = project.sync(defer_substrings=True)  # as the server syncs: the substring index after
            sync_seconds = time.perf_counter() - started
            project.catch_up_substrings()
            substring_seconds = time.perf_counter() - started
            shape = chunk_shape(project.store)
            print(f"{args.path.name}: {shape['documents']} documents ({report.failed} failed), "
                  f"{shape['chunks']} chunks, "
                  f"{shape['per_document']:.2f} per document"
                  + (f" (+ {shape['keyword_only']} keyword-only, of notes without a body)" if shape["keyword_only"]
                     else ""))
            print(f"words per chunk: p10 {shape['p10']:.0f}, p50 {shape['p50']:.0f}, p90 {shape['p90']:.0f}; "
                  f"chunks of 5 words or fewer: {shape['tiny_share']:.1%}")
            print(f"keyword-searchable: {sync_seconds:.1f} s ({shape['documents'] / sync_seconds:.0f} files/s); "
                  f"substring index whole: {substring_seconds:.1f} s")
            if args.shape_only:
                return

            home.embedder.load()
            print(f"bulk embedding: {home.embedder.backend} on {home.embedder.device} (SKMEMORY_EMBED_BACKEND); "
                  f"queries: {home.embedder.query_backend}")
            batch = project.settings.embed_batch_size
            sample = [r["embed_text"] for r in project.store.pending_chunks(args.raw_chunks)]
            rates = {}
            for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
                embedder = home.embedder if backend == home.embedder.backend else _other_embedder(backend, home)
                embedder.embed(sample[:batch], batch_size=batch)  # warm up
                rates[backend] = raw_rate(embedder, sample, batch)
                print(f"raw model, {backend}: {len(sample)} chunks, {rates[backend]:.1f} chunks/s")

            limit = args.max_chunks or shape["chunks"]
            with_chunks = documents_with_vectors(project.store)[1]  # embedding adds no document
            started = time.perf_counter()
            done = 0
            every_document = None
            while done < limit:
                n = project.embed_pending(max_batches=1)
                if not n:
                    break
                done += n
                if every_document is None:  # until it holds: a scan of every chunk after each group was 8.7 % of
                    found, _ = documents_with_vectors(project.store, with_chunks)  # britannica's embedding, profiled
                    if found >= with_chunks:
                        every_document = time.perf_counter() - started
            seconds = time.perf_counter() - started
            rate = done / seconds if seconds else 0.0
            print(f"pipeline ({home.embedder.backend}): {done} chunks in {seconds:.1f} s = {rate:.1f} chunks/s"
                  + "".join(f", {rate / raw:.2f}x the raw {name}" for name, raw in rates.items()))
            with_vectors, with_chunks = documents_with_vectors(project.store)
            if done >= shape["chunks"]:
                print(f"fully embedded: {seconds:.1f} s")
            else:
                print(f"fully embedded: ~{shape['chunks'] / rate:.0f} s projected at that rate")
            if every_document is not None:
                print(f"every document with text has a vector ({with_chunks}): {every_document:.1f} s")
            else:
                print(f"documents with a vector after {done} chunks: {with_vectors} of {with_chunks}")


def _other_embedder(backend: str, home: Home):
    """The model in another backend than the pipeline's (torch, onnx, onnx-int8 or openvino-int8), for the raw
    comparison."""
    from indexer.model.embeddings import Embedder

    embedder = Embedder(home.settings.model_path, cache_dir=home.settings.model_cache_dir, backend=backend,
                        query_backend="torch")
    if not embedder.load():
        raise SystemExit(f"{backend}: {embedder.now.reason}")
    return embedder


if __name__ == "__main__":
    main()
