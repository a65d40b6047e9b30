"""The vector cache: int8 codes scanned, float32 rescoring, the answer a float32 scan of every vector gives; and the
files it keeps in the index folder, mapped on the next start when they are current and rebuilt when they are not."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from indexer.search import compact
from indexer.search.cache import VectorCache
from indexer.search.vector_rows import FILES
from support import corpus

DIM = 48


def clustered(n: int, seed: int = 0, dim: int = DIM) -> tuple[list[str], np.ndarray]:
    """Unit vectors around 40 centres, as notes gather around topics: many close scores near the top."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    m = centres[rng.integers(0, 40, n)] + 0.8 * rng.standard_normal((n, dim)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return [f"{seed:04x}{i:020x}" for i in range(n)], m


def queries(count: int, seed: int = 99, dim: int = DIM) -> np.ndarray:
    _, q = clustered(count, seed, dim)
    return q


def float32_scan(ids, matrix, q, threshold, limit=None, subset=None):
    """What a float32 scan of every vector answers, best first (equal scores by id)."""
    sims = matrix @ q
    keep = [i for i in range(len(ids)) if sims[i] >= threshold and (subset is None or ids[i] in subset)]
    hits = sorted(((ids[i], float(sims[i])) for i in keep), key=lambda h: (-h[1], h[0]))
    return hits if limit is None else hits[:limit]


def assert_same(hits, expected):
    """The same chunks in the same order, but for chunks of one score (to float32 rounding), which may trade places
    or, at the cut, stand in for each other."""
    assert len(hits) == len(expected)
    for (got, got_score), (want, want_score) in zip(hits, expected):
        assert abs(got_score - want_score) < 1e-5
    scores = dict(hits) | dict(expected)
    for cid in {h[0] for h in hits} ^ {e[0] for e in expected}:
        assert abs(scores[cid] - expected[-1][1]) < 1e-5, f"{cid} is not a tie at the cut"
    for (got, _), (want, want_score) in zip(hits, expected):
        if got != want:
            assert abs(scores[got] - want_score) < 1e-5


def test_top_k_and_thresholds_equal_a_float32_scan():
    ids, m = clustered(6000)
    cache = VectorCache(lambda: (ids, m))
    small, large = set(ids[::50]), set(ids[:5000])
    for q in queries(25):
        for limit in (1, 20, 200):
            assert_same(cache.search(q, -1.0, limit), float32_scan(ids, m, q, -1.0, limit))
        assert_same(cache.search(q, 0.3, None), float32_scan(ids, m, q, 0.3))
        assert_same(cache.search(q, 0.5, 20), float32_scan(ids, m, q, 0.5, 20))
        for subset in (small, large):
            assert_same(cache.search(q, 0.0, 20, chunk_ids=sorted(subset)), float32_scan(ids, m, q, 0.0, 20, subset))
    assert cache.vector(ids[7]).tolist() == m[7].tolist()  # the originals, not the codes
    found, vectors = cache.vectors([ids[3], "not-there", ids[9]])
    assert found == [ids[3], ids[9]] and np.array_equal(vectors, m[[3, 9]])


def test_changes_keep_the_answer_exact():
    ids, m = clustered(3000, seed=1)
    cache = VectorCache(lambda: (ids, m.copy()))  # the cache changes the matrix it is given
    cache.ensure_loaded()
    new_ids, new = clustered(500, seed=2)
    # Larger vectors than any before: the error bound must grow with them, or they would be missed.
    cache.apply(new_ids, new * 3.0, ids[:800])
    cache.apply(ids[900:1000], m[900:1000][::-1].copy(), [])  # replaced in place
    live_ids = ids[800:] + new_ids
    live = np.concatenate([m[800:900], m[900:1000][::-1], m[1000:], new * 3.0])
    assert len(cache) == len(live_ids)
    for q in queries(10, seed=3):
        assert_same(cache.search(q, -10.0, 20), float32_scan(live_ids, live, q, -10.0, 20))
        assert_same(cache.search(q, 0.4, None), float32_scan(live_ids, live, q, 0.4))


def test_numpy_scan_gives_the_same_integers_as_onnx_runtime():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 256, (3000, 384), dtype=np.uint8)
    q8 = rng.integers(-127, 128, 384, dtype=np.int8)
    expected = (codes.astype(np.int64) - 128) @ q8.astype(np.int64)
    onnx = compact.Scanner()
    assert np.array_equal(onnx.dots(codes, q8), expected) and onnx.backend == "onnxruntime"
    plain = compact.Scanner()
    plain.backend = "unavailable"
    assert np.array_equal(plain.dots(codes, q8), expected)


def test_files_are_mapped_at_the_next_start_after_a_clean_close(tmp_path):
    ids, m = clustered(4000, seed=6)
    folder = tmp_path / "vectors"
    cache = VectorCache(lambda: (ids, m), folder, lambda: "g1")
    assert len(cache) == 4000 and cache.loaded_from == "rebuilt" and cache.persistent
    added_ids, added = clustered(300, seed=7)
    cache.apply(added_ids, added, ids[:100])
    cache.close()  # the writer closes: the files now match the generation the database says at close

    def no_loading():
        raise AssertionError("current files are mapped, not loaded again")

    reopened = VectorCache(no_loading, folder, lambda: "g1")
    assert len(reopened) == 4200 and reopened.loaded_from == "files"
    live_ids, live = ids[100:] + added_ids, np.concatenate([m[100:], added])
    fresh = VectorCache(lambda: (live_ids, live))
    for q in queries(8, seed=8):
        assert_same(reopened.search(q, 0.2, 20), fresh.search(q, 0.2, 20))
    assert json.loads((folder / "state.json").read_text())["generation"] is None  # open: changing
    reopened.close()


def shuffle_ids(folder: Path, rows: int) -> None:
    names = np.fromfile(folder / "ids.bin", dtype="S40", count=rows)
    np.random.default_rng(3).shuffle(names)
    with open(folder / "ids.bin", "r+b") as f:
        f.write(names.tobytes())


def scribble(path: Path, start: int, length: int) -> None:
    with open(path, "r+b") as f:
        f.seek(start)
        f.write(np.random.default_rng(4).integers(0, 256, length, dtype=np.uint8).tobytes())


@pytest.mark.parametrize("damage", ["generation", "crash", "truncated", "garbled state", "missing file",
                                    "shuffled ids", "scribbled codes", "scribbled originals", "scribbled scales",
                                    "ids shuffled behind a running writer"])
def test_stale_or_broken_files_are_rebuilt_from_the_store(tmp_path, damage):
    ids, m = clustered(2000, seed=9)
    folder = tmp_path / "vectors"
    first = VectorCache(lambda: (ids, m), folder, lambda: "g1")
    first.ensure_loaded()
    if damage == "ids shuffled behind a running writer":  # its close must not vouch for what it did not write
        shuffle_ids(folder, 2000)
    if damage != "crash":
        first.close()
    if damage == "shuffled ids":  # issue 40 row 24: every id in the wrong row, sizes and state as they were
        shuffle_ids(folder, 2000)
    if damage == "scribbled codes":
        scribble(folder / "codes.u8", 4096, 8192)
    if damage == "scribbled originals":
        scribble(folder / "full.f32", 100_000, 8192)
    if damage == "scribbled scales":
        scribble(folder / "scale.f32", 400, 400)
    generation = "g2" if damage == "generation" else "g1"  # another writer changed the index meanwhile
    if damage == "truncated":
        with open(folder / "codes.u8", "r+b") as f:
            f.truncate(100)
    if damage == "garbled state":
        (folder / "state.json").write_text("{not json")
    if damage == "missing file":
        (folder / "ids.bin").unlink()
    loads = []
    again = VectorCache(lambda: loads.append(1) or (ids[:1500], m[:1500]), folder, lambda: generation)
    assert len(again) == 1500 and again.loaded_from == "rebuilt" and loads == [1]
    q = queries(1, seed=10)[0]
    assert_same(again.search(q, 0.1, 20), float32_scan(ids[:1500], m[:1500], q, 0.1, 20))
    again.close()
    if damage == "crash":
        first._rows = None  # the crashed process's handles; nothing of it is used again


def test_a_folder_that_cannot_hold_the_files_falls_back_to_memory(tmp_path, caplog):
    ids, m = clustered(500, seed=11)
    blocker = tmp_path / "vectors"
    blocker.write_text("a file where the folder should be")
    cache = VectorCache(lambda: (ids, m), blocker, lambda: "g1")
    q = queries(1, seed=12)[0]
    assert_same(cache.search(q, 0.0, 20), float32_scan(ids, m, q, 0.0, 20))
    assert cache.loaded_from == "memory" and "Keeping vectors in memory" in caplog.text
    cache.close()


def test_files_hold_the_rows_and_nothing_else(tmp_path):
    ids, m = clustered(1000, seed=13, dim=384)
    folder = tmp_path / "vectors"
    cache = VectorCache(lambda: (ids, m), folder, lambda: "g1")
    cache.ensure_loaded()
    cache.close()
    assert sorted(p.name for p in folder.iterdir()) == sorted([*FILES, "state.json"])
    # The codes take a quarter of the floats' bytes: what the scan reads and what stays resident.
    assert (folder / "codes.u8").stat().st_size * 4 <= (folder / "full.f32").stat().st_size + 4 * 384 * 64


def test_identical_top_20_on_a_real_vault(home, tmp_path):
    """The real model's vectors of a real vault, the graded questions as queries: the same 20 as a float32 scan."""
    from indexer.engine import Engine

    root = tmp_path / "logseq-docs"
    shutil.copytree(corpus("logseq-docs"), root)
    questions = json.loads((Path(__file__).parent / "bench/questions/logseq-docs.json").read_text(encoding="utf-8"))
    texts = [q["q"] for q in questions["questions"] + questions["exact"]]
    home.add_project(root, "logseq")
    engine = Engine(home)
    try:
        engine.embed_pending("logseq")
        index = engine.index("logseq")
        ids, matrix = engine.writer("logseq").load_vectors()
        assert len(ids) > 600 and index.cache.persistent
        for text in texts:
            q = index.embed_query(text)
            assert_same(index.cache.search(q, -1.0, 20), float32_scan(ids, matrix, q, -1.0, 20))
            assert_same(index.cache.search(q, 0.3, None), float32_scan(ids, matrix, q, 0.3))
    finally:
        engine.close()


def test_damaged_vector_copies_in_sqlite_are_never_searched(make_engine):
    """A scribbled float32 copy in SQLite (NaN, huge, not unit length, cut short) is never scanned: Chroma's copy
    takes its place, and a passage with no sound copy anywhere is embedded again."""
    import sqlite3

    from indexer.engine import Engine

    engine = make_engine(embedder="words")
    home = engine.home
    project = engine.writer("notes")
    db, folder = project.store.path, project.vector_folder
    chunk_ids = sorted(project.store.embedded_ids())[:4]
    original = dict(zip(*engine.index("notes").cache.vectors(chunk_ids)))
    project.vectors.delete(chunk_ids[:1])  # this one has no copy in Chroma either
    engine.close()
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany("UPDATE chunks SET vector = randomblob(length(vector)) WHERE chunk_id = ?",
                         [(c,) for c in chunk_ids[:3]])
        conn.execute("UPDATE chunks SET vector = x'00ff' WHERE chunk_id = ?", (chunk_ids[3],))
    conn.close()
    shutil.rmtree(folder, ignore_errors=True)  # the cache is built again from SQLite's copies

    again = Engine(home)
    try:
        writer = again.writer("notes")  # the server's case: the writer's cache, built from SQLite's copies
        index = again.index("notes")
        assert index.cache.with_vectors(chunk_ids) == set(chunk_ids[1:])
        found, vectors = index.cache.vectors(chunk_ids[1:])
        for cid, vector in zip(found, vectors):
            assert np.allclose(vector, original[cid])  # Chroma's sound copy, not the scribble
        assert writer.store.counts()["pending"] == 1  # no sound copy anywhere: queued to be embedded again
        assert again.embed_pending("notes") == 1
        assert np.allclose(index.cache.vectors(chunk_ids[:1])[1][0], original[chunk_ids[0]])
    finally:
        again.close()
