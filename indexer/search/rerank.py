"""The optional cross-encoder reranker (SKMEMORY_RERANKER, a local folder) and the position-aware blend.

Blend for the candidate at fused rank r (1-based) with cross-encoder probability s in (0, 1):

    score = w(r) * (1 / r) + (1 - w(r)) * s,   w(r) = 0.75 for r <= 3, 0.60 for r <= 10, else 0.40

The retrieval part 1/r falls fast, so the reranker can reorder the middle and the tail freely while the
first places, where both legs agreed most, keep most of their weight. Candidates past the reranked head keep
their order with score w(r) / r, which is below every reranked score.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path

from ..model.embeddings import go_offline, pick_device

logger = logging.getLogger(__name__)

RERANK_CANDIDATES = 30
MAX_PASSAGE_CHARS = 2000


def retrieval_weight(rank: int) -> float:
    """How much of the blended score the fused retrieval rank keeps at this 1-based position."""
    return 0.75 if rank <= 3 else 0.60 if rank <= 10 else 0.40


def blend(rerank_scores: list[float | None]) -> list[float]:
    """Blend each position's reranker probability (None: not reranked) with its retrieval rank."""
    out = []
    for position, s in enumerate(rerank_scores, start=1):
        w = retrieval_weight(position)
        out.append(w / position + ((1.0 - w) * s if s is not None else 0.0))
    return out


class Reranker:
    """A sentence-transformers CrossEncoder from a local folder, loaded on first use; never reaches the network."""

    def __init__(self, path: str | Path | None, device: str | None = None):
        self.path = Path(path).expanduser() if path else None
        self.device = device
        self._model = None
        self._error: str | None = None if self.path else "no reranker is configured (SKMEMORY_RERANKER)"
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """Load the model if not yet tried; say whether reranking can run."""
        with self._lock:
            if self._model is None and self._error is None:
                self._load()
            return self._model is not None

    @property
    def error(self) -> str | None:
        return self._error

    def _load(self) -> None:
        go_offline()
        if not self.path.is_dir():
            self._error = (f"the reranker folder {self.path} does not exist; set SKMEMORY_RERANKER to a local "
                           "cross-encoder folder")
            logger.warning("Reranker unavailable: %s", self._error)
            return
        try:
            from sentence_transformers import CrossEncoder
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # a progress bar for loading weights is noise on stderr
            self._model = CrossEncoder(str(self.path), device=pick_device(self.device), local_files_only=True)
            logger.info("Loaded reranker %s", self.path)
        except Exception as exc:  # a broken reranker costs the rerank, never the search
            self._error = f"the reranker could not load ({type(exc).__name__}: {exc})"
            logger.warning("Reranker unavailable: %s", self._error)

    def scores(self, query: str, passages: list[str]) -> list[float]:
        """Return the probability that each passage answers the query (sigmoid of the cross-encoder logit)."""
        if not passages or not self.available:
            return []
        import torch

        pairs = [(query, p[:MAX_PASSAGE_CHARS]) for p in passages]
        with self._lock:  # one forward pass at a time: the model is shared by every request thread
            values = self._model.predict(pairs, activation_fn=torch.nn.Sigmoid(), show_progress_bar=False,
                                         convert_to_numpy=True)
        return [float(v) for v in values.reshape(len(pairs), -1)[:, 0]]
