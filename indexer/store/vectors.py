"""Chunk vectors in ChromaDB: the one module that talks to Chroma, embedded or over HTTP."""
from __future__ import annotations

import gc
import logging
import json
import os
import re
import signal
import subprocess
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import numpy as np

from ..errors import SKMemoryError

log = logging.getLogger(__name__)

# Rows per `get` when loading vectors. Every float crosses into Python as a float object before numpy
# sees it; 5,000-10,000 rows a page was fastest at 384 dimensions (one big `get` was slowest).
LOAD_PAGE_SIZE = 10_000
# Rows or ids per request for reads. Chroma's SQLite layer fails a `get` that binds more than
# 32,766 variables (metadatas above that many rows, or that many ids), so stay well below.
READ_PAGE_SIZE = 20_000
DEFAULT_SERVER_PORT = 8000
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$")


class VectorStore:
    """A project's chunk vectors in ChromaDB: embedded PersistentClient, or a Chroma server when a URL is configured."""

    def __init__(self, client: Any, collection: Any, location: str):
        self._client = client
        self._collection = collection
        self._max_batch = client.get_max_batch_size()
        self._dimension: int | None = None
        self.location = location

    @classmethod
    def open(cls, chroma_dir: Path, collection: str, url: str | None = None) -> "VectorStore":
        """Open (creating if needed) a cosine collection in `chroma_dir`, or on the server at `url`."""
        if not _COLLECTION_NAME.match(collection):
            raise ValueError(
                f"{collection!r} cannot name a Chroma collection: use 3 to 512 letters, digits, '.', '_' "
                "or '-', starting and ending with a letter or digit."
            )
        # Telemetry would try the network; the Settings flag covers our clients, the variable any other.
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        import chromadb  # heavy (about a second); only when a store is opened
        from chromadb.config import Settings

        if url is None:
            # The shared-system cache is keyed on the path string, so one folder must give one key.
            path = str(Path(chroma_dir).expanduser().resolve())
            client = chromadb.PersistentClient(
                path=path, settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
            location = path
        else:
            host, port, ssl = _parse_server_url(url)
            try:
                client = chromadb.HttpClient(
                    host=host, port=port, ssl=ssl, settings=Settings(anonymized_telemetry=False)
                )
                client.heartbeat()
            except Exception as exc:  # chromadb wraps a refused connection in a bare ValueError
                raise SKMemoryError(
                    f"Cannot reach the Chroma server at {url}: {_reason(exc)}; start it with "
                    f"`chroma run --host 127.0.0.1 --port {port}` or unset SKMEMORY_CHROMA_URL."
                ) from exc
            location = url
        try:
            # embedding_function=None: Chroma's default would download a model the first time it ran.
            chroma_collection = client.get_or_create_collection(
                collection, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
            )
            space = _space(chroma_collection)
            if space != "cosine":
                # get_or_create keeps an existing collection's space, whatever we ask for.
                raise SKMemoryError(
                    f"The Chroma collection {collection!r} at {location} measures {space} distance, not "
                    "cosine; remove the project's index and build it again."
                )
        except BaseException:
            client.close()
            raise
        return cls(client, chroma_collection, location)

    @property
    def name(self) -> str:
        return self._chroma.name

    @property
    def dimension(self) -> int | None:
        """Length of every vector here; None while the collection is empty and nothing was upserted."""
        if self._dimension is None:
            page = self._chroma.get(limit=1, include=["embeddings"])
            if page["ids"]:
                self._dimension = len(page["embeddings"][0])
        return self._dimension

    def upsert(self, ids: list[str], embeddings: np.ndarray, metadatas: list[dict]) -> None:
        """Insert or replace these ids with their vectors and metadata, in batches the client accepts."""
        vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError(f"upsert needs a 2-D array of vectors (rows, dimension), not shape {vectors.shape}.")
        if not len(ids) == len(vectors) == len(metadatas):
            raise ValueError(
                f"upsert needs one vector and one metadata dict per id: got {len(ids)} ids, "
                f"{len(vectors)} vectors and {len(metadatas)} metadata dicts."
            )
        if not ids:
            return
        if len(set(ids)) != len(ids):
            raise ValueError("upsert got the same id twice; give each chunk one id.")
        known = self.dimension
        if known is not None and vectors.shape[1] != known:
            raise ValueError(
                f"This collection holds {known}-dimensional vectors, not {vectors.shape[1]}-dimensional ones."
            )
        # Chroma refuses an empty metadata dict; None means "no metadata".
        metas = [m or None for m in metadatas]
        for start in range(0, len(ids), self._max_batch):
            end = start + self._max_batch
            batch_metas = metas[start:end]
            self._chroma.upsert(
                ids=list(ids[start:end]),
                embeddings=vectors[start:end],
                metadatas=batch_metas if any(m is not None for m in batch_metas) else None,
            )
        self._dimension = int(vectors.shape[1])

    def delete(self, ids: list[str]) -> None:
        """Remove these ids; ids that are not stored are ignored."""
        ids = list(ids)
        for start in range(0, len(ids), self._max_batch):
            self._chroma.delete(ids=ids[start : start + self._max_batch])

    def ids(self) -> set[str]:
        """Return every stored id."""
        found: set[str] = set()
        for page in self._pages(include=[], page_size=READ_PAGE_SIZE):
            found.update(page["ids"])
        return found

    def count(self) -> int:
        """Return how many vectors are stored."""
        return self._chroma.count()

    def load_all(self, page_size: int = LOAD_PAGE_SIZE) -> tuple[list[str], np.ndarray]:
        """Return every id and its vector as one C-contiguous float32 (n, dimension) array."""
        expected = self.count()
        dim = self.dimension
        if expected == 0 or dim is None:
            return [], np.empty((0, dim or 0), dtype=np.float32)
        out = np.empty((expected, dim), dtype=np.float32)
        ids: list[str] = []
        # Each page arrives as page_size lists of Python floats; pausing the collector spares it
        # from sweeping the whole heap again and again while they are made and freed.
        with _gc_paused():
            for page in self._pages(include=["embeddings"], page_size=page_size):
                start, got = len(ids), len(page["ids"])
                if start + got > len(out):  # rows were added while we read
                    out = np.concatenate([out, np.empty((start + got - len(out), dim), np.float32)])
                out[start : start + got] = page["embeddings"]
                ids.extend(page["ids"])
        return ids, np.ascontiguousarray(out[: len(ids)])

    def get(self, ids: list[str]) -> tuple[list[str], np.ndarray]:
        """Return the stored ones among these ids (in the order Chroma finds them) and their vectors."""
        ids = list(ids)
        found: list[str] = []
        parts: list[np.ndarray] = []
        for start in range(0, len(ids), READ_PAGE_SIZE):
            page = self._chroma.get(ids=ids[start : start + READ_PAGE_SIZE], include=["embeddings"])
            if page["ids"]:
                found.extend(page["ids"])
                parts.append(np.asarray(page["embeddings"], dtype=np.float32))
        if not parts:
            return [], np.empty((0, self.dimension or 0), dtype=np.float32)
        return found, np.ascontiguousarray(np.concatenate(parts))

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Return Chroma's own approximate nearest k as (id, cosine similarity), best first."""
        if k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        result = self._chroma.query(query_embeddings=query, n_results=k, include=["distances"])
        return [(id_, 1.0 - float(d)) for id_, d in zip(result["ids"][0], result["distances"][0])]

    def drop(self) -> None:
        """Delete the collection and close the store (the project is being removed)."""
        from chromadb.errors import NotFoundError

        try:
            self._client.delete_collection(self._chroma.name)
        except NotFoundError:
            pass
        self.close()

    def close(self) -> None:
        """Release the client, so the folder can be deleted or opened again; closing twice is fine."""
        if self._client is not None:
            # chromadb 1.5 counts PersistentClients per path and stops the shared system (SQLite
            # connections, HNSW files) when the last one closes.
            self._client.close()
        self._client = None
        self._collection = None

    def __enter__(self) -> "VectorStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def _chroma(self) -> Any:
        if self._collection is None:
            raise RuntimeError("This VectorStore is closed; open it again.")
        return self._collection

    def _pages(self, include: list[str], page_size: int) -> Iterator[dict]:
        offset = 0
        while True:
            page = self._chroma.get(include=include, limit=page_size, offset=offset)
            if page["ids"]:
                yield page
            if len(page["ids"]) < page_size:
                return
            offset += len(page["ids"])


def _parse_server_url(url: str) -> tuple[str, int, bool]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(
            f"{url!r} is not a Chroma server address; write it like http://127.0.0.1:8000 "
            "(http or https, a host, an optional port, no path)."
        )
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else DEFAULT_SERVER_PORT), ssl


def _space(chroma_collection: Any) -> str | None:
    with warnings.catch_warnings():
        # Reading the configuration of a collection made with embedding_function=None warns about a
        # "legacy embedding function config"; having no embedding function is what we want.
        warnings.filterwarnings("ignore", "legacy embedding function config", DeprecationWarning)
        return (chroma_collection.configuration.get("hnsw") or {}).get("space")


def _reason(exc: BaseException) -> str:
    # chromadb's own message ("Could not connect to a Chroma server...") hides the cause; prefer it.
    cause = exc.__cause__ or exc.__context__ or exc
    return str(cause).rstrip(".") or type(cause).__name__


@contextmanager
def _gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Asks a local Chroma folder for one neighbour in a process of its own: a damaged HNSW file can crash Chroma's native
# code (a segfault reading data_level0.bin), which must take down the probe, never the server.
# Each sample vector is asked for its nearest neighbour, which must be itself in all but one or two: a truncated or
# zeroed data_level0.bin answers one neighbour without an error, but the wrong one (issue 62).
_PROBE = """
import json, sys
import numpy as np
from indexer.store.vectors import VectorStore
store = VectorStore.open(sys.argv[1], sys.argv[2])
sample = json.loads(sys.stdin.read())
if store.count():
    found = 0
    for i, v in sample:
        hits = store.query(np.asarray(v, dtype=np.float32), 1)
        found += bool(hits) and (hits[0][0] == i or hits[0][1] > 0.9999)  # itself, or a passage of the same text
    if found < len(sample) - max(1, len(sample) // 8):  # a sound index finds nearly every one (its own distance 0)
        sys.exit(f"its HNSW index answers the wrong neighbours: {found} of {len(sample)} passages found themselves")
store.close()
"""
PROBE_TIMEOUT = 120.0


def probe_apart(chroma_dir: Path, collection: str, sample: list[tuple[str, np.ndarray]]) -> str | None:
    """Why a local Chroma folder cannot answer a search (its process crashed, failed or hung, or the passages of
    `sample`, (id, vector) pairs, do not find themselves), or None when it answers; the folder is read in a child
    process, so a crash there is only a finding here."""
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH"))
                                                      if p)}
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, str(chroma_dir), collection],
                              input=json.dumps([(i, np.asarray(v, dtype=float).tolist()) for i, v in sample]).encode(),
                              capture_output=True, env=env,
                              timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"reading it did not finish in {PROBE_TIMEOUT:.0f} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return f"Chroma crashed reading it ({signal.Signals(-done.returncode).name})"
    lines = [line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    return (lines[-1].strip() if lines else f"Chroma exited with {done.returncode} reading it")[:200]
