"""Each model's similarity on one scale: the spec's floors (0.3 for hybrid, 0.5 for semantic) and the percentages a
person reads were set on all-MiniLM-L6-v2's cosines, and mean the same whichever model embedded a project.

multilingual-e5-small's cosines crowd between 0.7 and 0.95 (an unrelated passage scores 0.75), so its raw cosine
against 0.3 would let everything through. A model other than the English one carries a monotone piecewise-linear map
from its cosine onto MiniLM's, fitted by matching quantiles of the two models' cosines over the same (question,
passage) pairs of real English notes (tests/bench/bench_similarity_scale.py prints the knots and how often the two
put a pair on the same side of each floor). Monotone, so no ranking changes; the vector search maps a floor back onto
the model's own cosines (raw) before it compares, and every similarity it returns onto the shared scale (shown).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SimilarityScale:
    """A monotone map from a model's cosine (raw) onto the shared scale (shown), through matching knots."""

    raw_knots: tuple[float, ...] = (-1.0, 1.0)
    shown_knots: tuple[float, ...] = (-1.0, 1.0)

    @property
    def identity(self) -> bool:
        return self.raw_knots == self.shown_knots

    def shown(self, raw):
        """The shared-scale similarity of raw cosines (a float or an array)."""
        if self.identity:
            return raw
        out = np.interp(raw, self.raw_knots, self.shown_knots)
        return float(out) if np.ndim(raw) == 0 else out.astype(np.float32)

    def raw(self, shown: float) -> float:
        """The model's cosine that maps onto this shared-scale similarity (a floor, before the comparison)."""
        if self.identity:
            return shown
        return float(np.interp(shown, self.shown_knots, self.raw_knots))


IDENTITY = SimilarityScale()


class ScaledVectors:
    """A project's vector search (the exact cache or HNSW) answering on the shared scale: a floor asked for is mapped
    onto the model's own cosines before the comparison, and every similarity returned back onto the shared scale.
    Everything else (vectors, loading, versions) is the search's own."""

    def __init__(self, inner, scale_of):
        self.inner = self._inner = inner  # the search itself (VectorCache or HnswVectors)
        self._scale_of = scale_of  # () -> SimilarityScale: the project's model now

    def search(self, query, min_similarity: float, limit: int | None = None, chunk_ids=None, **options):
        scale = self._scale_of()
        hits = self._inner.search(query, scale.raw(min_similarity), limit, chunk_ids=chunk_ids, **options)
        if scale.identity:
            return hits
        shown = scale.shown(np.array([s for _, s in hits], dtype=np.float32)) if hits else []
        return [(cid, float(s)) for (cid, _), s in zip(hits, shown)]

    def similarities(self, query, chunk_ids):
        ids, sims = self._inner.similarities(query, chunk_ids)
        return ids, self._scale_of().shown(sims) if len(ids) else sims

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)

    def __contains__(self, chunk_id) -> bool:
        return chunk_id in self._inner


class Baseline:
    """Where a space's vectors lie: their mean and covariance, from a sample of them (SAMPLE), so that a question's
    similarities to all of them have a mean (q . mean) and a spread (sqrt(q' cov q)) without a scan."""

    SAMPLE = 20_000
    PRIOR = 100  # a space's own spread counts as this many passages' worth against the model's typical one
    FITTED = 400  # the passages of each space the scales were fitted on (tests/bench/bench_across.py)

    def __init__(self, vectors: np.ndarray):
        vectors = np.asarray(vectors, dtype=np.float64)
        self.count = len(vectors)
        self.mean = vectors.mean(axis=0) if len(vectors) else None
        self.covariance = np.cov(vectors.T, bias=True) if len(vectors) > 1 else None

    def of(self, query: np.ndarray, typical: float) -> tuple[float, float]:
        """(mean, spread) of this question's similarities to the space's vectors. The spread leans on the model's
        typical one as a project of few notes cannot tell its own (the best of ten passages is at most three
        deviations above their mean, so that ten notes alone would let nothing pass 0.5): with PRIOR passages the two
        weigh alike, with thousands the space's own rules. The mean is the space's own, whatever its size."""
        if self.mean is None:
            return 0.0, typical
        q = np.asarray(query, dtype=np.float64).reshape(-1)
        own = max(float(q @ self.covariance @ q), 0.0) if self.covariance is not None else typical ** 2
        weight = self.count / (self.count + self.PRIOR)
        spread = max(float(np.sqrt(weight * own + (1 - weight) * typical ** 2)), 1e-6)
        return float(q @ self.mean) + self.noise * spread, spread

    @property
    def noise(self) -> float:
        """How much higher the best of this many unrelated passages stands than the best of FITTED (in deviations:
        the largest of n draws lies near sqrt(2 ln n)): a passage must stand out from the noise of its project as it
        would among the passages the scale was fitted on, so that a question that means nothing (`qzxv plorbt`)
        finds nothing in a big project either."""
        if self.count <= self.FITTED:
            return 0.0
        return float(np.sqrt(2 * np.log(self.count)) - np.sqrt(2 * np.log(self.FITTED)))


@dataclass(frozen=True)
class QuestionScale:
    """A question's own scale: how many deviations a similarity stands above the question's mean similarity to the
    space's vectors (a z-score), mapped onto the shared scale by `scale`'s knots. A floor is then one height above
    what the question meets anyway, however the model places the question's language (issue 59: across languages,
    multilingual-e5-small gives every pair of one question a like offset, so an absolute floor kept 6 % of the right
    answers where MiniLM keeps 88 %)."""

    scale: SimilarityScale
    mean: float
    spread: float

    identity = False

    def shown(self, raw):
        z = (np.asarray(raw, dtype=np.float64) - self.mean) / self.spread
        return self.scale.shown(float(z) if np.ndim(raw) == 0 else z)

    def raw(self, shown: float) -> float:
        return self.scale.raw(shown) * self.spread + self.mean


class QuestionScaledVectors(ScaledVectors):
    """A vector search whose similarities are each question's own (QuestionScale): the floor asked for becomes a raw
    cosine for this question, and every similarity returned is put on the shared scale through it."""

    def __init__(self, inner, scale: SimilarityScale, typical: float, baseline_of):
        super().__init__(inner, lambda: scale)
        self._z = scale
        self._typical = typical  # the model's typical spread of a question's similarities in this space
        self._baseline_of = baseline_of  # () -> Baseline of the vectors searched

    def question_scale(self, query) -> QuestionScale:
        return QuestionScale(self._z, *self._baseline_of().of(query, self._typical))

    def search(self, query, min_similarity: float, limit: int | None = None, chunk_ids=None, **options):
        scale = self.question_scale(query)
        hits = self._inner.search(query, scale.raw(min_similarity), limit, chunk_ids=chunk_ids, **options)
        if not hits:
            return hits
        shown = scale.shown(np.array([s for _, s in hits], dtype=np.float64))
        return [(cid, float(s)) for (cid, _), s in zip(hits, shown)]

    def similarities(self, query, chunk_ids):
        ids, sims = self._inner.similarities(query, chunk_ids)
        return ids, (np.asarray(self.question_scale(query).shown(sims), dtype=np.float32) if len(ids) else sims)
