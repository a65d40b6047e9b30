"""VectorStore against the real ChromaDB: the embedded client on disk, and a real `chroma run` server."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from indexer.errors import SKMemoryError
from indexer.store.vectors import VectorStore
from support import free_port


def random_vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def chunk_ids(n: int, prefix: str = "chunk") -> list[str]:
    return [f"{prefix}-{i}" for i in range(n)]


@pytest.fixture(params=["embedded", "server"])
def open_store(request, tmp_path):
    """Open a VectorStore on either backend; every store opened is closed after the test."""
    url = request.getfixturevalue("chroma_server") if request.param == "server" else None
    collection = f"test-{request.node.name.split('[')[0].replace('_', '-')}"[:60]
    opened: list[VectorStore] = []

    def opener(name: str = collection) -> VectorStore:
        store = VectorStore.open(tmp_path / "chroma", name, url=url)
        opened.append(store)
        return store

    yield opener
    for store in opened:
        if store._client is not None and url is not None:
            store.drop()  # the server outlives the test; leave it clean
        store.close()


def assert_same_vectors(actual: np.ndarray, expected: np.ndarray) -> None:
    # In cosine space Chroma keeps vectors normalised and scales them back on read: equal to ~1 ulp.
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


def as_dict(ids: list[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
    return dict(zip(ids, vectors))


def test_round_trip(open_store):
    store = open_store()
    ids, vectors = chunk_ids(60), random_vectors(60)
    metadatas = [{"document_id": i % 7} if i % 3 else {} for i in range(60)]
    store.upsert(ids, vectors, metadatas)

    assert store.count() == 60
    assert store.ids() == set(ids)
    assert store.dimension == 16

    found, got = store.get(["chunk-5", "nope", "chunk-2"])
    assert sorted(found) == ["chunk-2", "chunk-5"]
    assert got.dtype == np.float32 and got.shape == (2, 16)
    by_id = as_dict(found, got)
    assert_same_vectors(by_id["chunk-5"], vectors[5])
    assert_same_vectors(by_id["chunk-2"], vectors[2])

    store.upsert(["chunk-5"], random_vectors(1, seed=9), [{"document_id": 1}])
    _, replaced = store.get(["chunk-5"])
    assert_same_vectors(replaced[0], random_vectors(1, seed=9)[0])
    assert store.count() == 60

    store.delete(["chunk-0", "chunk-1", "never-stored"])
    assert store.count() == 58
    assert store.ids() == set(ids) - {"chunk-0", "chunk-1"}

    loaded_ids, loaded = store.load_all(page_size=25)
    assert sorted(loaded_ids) == sorted(store.ids())
    assert loaded.dtype == np.float32 and loaded.flags.c_contiguous and loaded.shape == (58, 16)


def test_upsert_batches_past_the_client_batch_size(open_store):
    store = open_store()
    n = store._max_batch + 100
    store.upsert(chunk_ids(n), random_vectors(n, dim=4), [{}] * n)
    assert store.count() == n
    store.delete(chunk_ids(n))
    assert store.count() == 0


def test_load_all_pages_on_both_backends(open_store):
    store = open_store()
    vectors = random_vectors(230, dim=8, seed=3)
    store.upsert(chunk_ids(230), vectors, [{}] * 230)
    ids, loaded = store.load_all(page_size=100)
    assert len(ids) == len(set(ids)) == 230
    by_id = as_dict(ids, loaded)
    for i, vector in enumerate(vectors):
        assert_same_vectors(by_id[f"chunk-{i}"], vector)


def test_ids_survive_close_and_reopen(tmp_path):
    folder = tmp_path / "chroma"
    vectors = random_vectors(40)
    store = VectorStore.open(folder, "chunks")
    store.upsert(chunk_ids(40), vectors, [{"n": i} for i in range(40)])
    store.close()

    reopened = VectorStore.open(folder, "chunks")
    try:
        assert reopened.ids() == set(chunk_ids(40))
        assert reopened.dimension == 16
        ids, loaded = reopened.load_all()
        assert_same_vectors(loaded, np.stack([vectors[int(i.split("-")[1])] for i in ids]))
    finally:
        reopened.close()

    # Another process sees the same rows: they are on disk, not in this process's cache.
    script = (
        "import sys; from indexer.store.vectors import VectorStore; "
        "s = VectorStore.open(sys.argv[1], 'chunks'); print(s.count()); s.close()"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(folder)],
        capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent,
    )
    assert out.stdout.strip() == "40"


def test_close_releases_the_folder(tmp_path):
    import shutil

    folder = tmp_path / "chroma"
    store = VectorStore.open(folder, "chunks")
    store.upsert(chunk_ids(10), random_vectors(10), [{}] * 10)
    store.close()
    store.close()  # twice is fine
    shutil.rmtree(folder)

    again = VectorStore.open(folder, "chunks")
    try:
        assert again.count() == 0
        again.upsert(["a"], random_vectors(1), [{}])
        assert again.ids() == {"a"}
    finally:
        again.close()


def test_closed_store_refuses_work(tmp_path):
    store = VectorStore.open(tmp_path / "chroma", "chunks")
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.count()


def test_two_stores_on_one_folder_close_independently(tmp_path):
    first = VectorStore.open(tmp_path / "chroma", "chunks")
    second = VectorStore.open(tmp_path / "chroma" / ".." / "chroma", "other")
    first.upsert(["a"], random_vectors(1), [{}])
    second.close()
    assert first.count() == 1
    first.close()


def test_load_all_pages_and_returns_float32(tmp_path):
    vectors = random_vectors(25, dim=8, seed=1)
    with VectorStore.open(tmp_path / "chroma", "chunks") as store:
        store.upsert(chunk_ids(25), vectors, [{}] * 25)
        ids, loaded = store.load_all(page_size=7)
    assert len(ids) == len(set(ids)) == 25
    assert loaded.dtype == np.float32 and loaded.flags.c_contiguous and loaded.shape == (25, 8)
    for row, id_ in enumerate(ids):
        assert_same_vectors(loaded[row], vectors[int(id_.split("-")[1])])


def test_reads_past_sqlites_variable_limit(tmp_path):
    # A `get` binding more than 32,766 SQLite variables fails inside Chroma; every read must page.
    n = 40_000
    vectors = random_vectors(n, dim=4, seed=2)
    ids = chunk_ids(n)
    with VectorStore.open(tmp_path / "chroma", "chunks") as store:
        store.upsert(ids, vectors, [{"n": i} for i in range(n)])
        assert store.ids() == set(ids)
        loaded_ids, loaded = store.load_all()
        found, got = store.get(ids)
    assert len(loaded_ids) == len(set(loaded_ids)) == n
    order = np.array([int(i.split("-")[1]) for i in loaded_ids])
    assert_same_vectors(loaded, vectors[order])
    assert len(found) == n and got.shape == (n, 4)


def test_empty_collection(tmp_path):
    with VectorStore.open(tmp_path / "chroma", "chunks") as store:
        assert store.count() == 0
        assert store.ids() == set()
        assert store.dimension is None
        ids, vectors = store.load_all()
        assert ids == [] and vectors.shape == (0, 0) and vectors.dtype == np.float32
        assert store.get(["x"])[0] == []
        assert store.get([])[0] == []
        assert store.query(random_vectors(1)[0], 5) == []
        store.delete([])
        store.delete(["x"])
        store.upsert([], np.empty((0, 16), np.float32), [])


def test_bad_input_is_refused(tmp_path):
    with VectorStore.open(tmp_path / "chroma", "chunks") as store:
        with pytest.raises(ValueError, match="one vector and one metadata dict per id"):
            store.upsert(chunk_ids(3), random_vectors(2), [{}] * 3)
        with pytest.raises(ValueError, match="one vector and one metadata dict per id"):
            store.upsert(chunk_ids(2), random_vectors(2), [{}])
        with pytest.raises(ValueError, match="2-D"):
            store.upsert(["a"], random_vectors(1)[0], [{}])
        with pytest.raises(ValueError, match="same id twice"):
            store.upsert(["a", "a"], random_vectors(2), [{}, {}])
        store.upsert(["a"], random_vectors(1, dim=16), [{}])
        with pytest.raises(ValueError, match="16-dimensional"):
            store.upsert(["b"], random_vectors(1, dim=8), [{}])
    with pytest.raises(ValueError, match="cannot name a Chroma collection"):
        VectorStore.open(tmp_path / "chroma", "x")


def test_cosine_space(tmp_path):
    vectors = random_vectors(30, dim=16, seed=4)
    with VectorStore.open(tmp_path / "chroma", "chunks") as store:
        store.upsert(chunk_ids(30), vectors, [{}] * 30)
        best_id, similarity = store.query(vectors[7], 3)[0]
        assert best_id == "chunk-7"
        assert similarity == pytest.approx(1.0, abs=1e-5)
        # Cosine ignores length: a scaled copy is still a perfect match (it would not be under L2).
        assert store.query(vectors[7] * 10, 1)[0] == ("chunk-7", pytest.approx(1.0, abs=1e-5))
        hits = store.query(vectors[0], 100)
        assert len(hits) == 30
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_existing_collection_in_another_space_is_refused(tmp_path):
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str((tmp_path / "chroma").resolve()), settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )
    client.create_collection("chunks", configuration={"hnsw": {"space": "l2"}}, embedding_function=None)
    client.close()
    with pytest.raises(SKMemoryError, match="l2 distance, not cosine"):
        VectorStore.open(tmp_path / "chroma", "chunks")


def test_drop_then_reopen_is_empty(open_store):
    store = open_store()
    store.upsert(chunk_ids(5), random_vectors(5), [{}] * 5)
    store.drop()
    reopened = open_store()
    assert reopened.count() == 0
    assert reopened.ids() == set()


def test_unreachable_server(tmp_path):
    port = free_port()  # bound and released: nothing listens there
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(SKMemoryError) as caught:
        VectorStore.open(tmp_path / "chroma", "chunks", url=url)
    message = str(caught.value)
    assert message.startswith(f"Cannot reach the Chroma server at {url}: ")
    assert f"start it with `chroma run --host 127.0.0.1 --port {port}` or unset SKMEMORY_CHROMA_URL." in message


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://127.0.0.1:8000", "http://127.0.0.1:99999", "http://:8000"])
def test_bad_server_url(tmp_path, url):
    with pytest.raises(ValueError, match="is not a Chroma server address"):
        VectorStore.open(tmp_path / "chroma", "chunks", url=url)
