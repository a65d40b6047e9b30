"""What a spec-000 search found in one project, leg by leg: the records the legs return, the ranking merged from
them, and nothing else. Explain and explain_document read these after the ranking is done; nothing is written
into them while it ranks.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class KeywordLeg:
    """The keyword leg's chunks in its own order (titles first), as far as it was read."""

    chunks: list[str]
    terms: list[str]

    def ranks(self) -> dict[str, int]:
        return {cid: rank for rank, cid in enumerate(self.chunks, start=1)}


@dataclass
class MeaningLeg:
    """The semantic leg: chunks at or above the threshold, best first, as far as it was read (a prefix of the whole
    leg); the similarities of other chunks a merge asked for; or why it did not run."""

    hits: list[tuple[str, float]]
    threshold: float
    vector: np.ndarray | None = None
    similarity: dict[str, float] = field(default_factory=dict)  # chunks beyond the prefix, each at or above it
    error: str | None = None  # why the leg did not run (the model is unavailable)

    def similarity_of(self, chunk_id: str) -> float | None:
        """A chunk's similarity when the leg knows it (it reached the threshold)."""
        for cid, sim in self.hits:
            if cid == chunk_id:
                return sim
        return self.similarity.get(chunk_id)


@dataclass
class Ranking:
    """One project's answer to a spec-000 search before it becomes hits: (chunk id, score, search type) best first,
    and the records of the legs it was merged from."""

    mode: str
    ranked: list[tuple[str, float, str]]
    keyword: KeywordLeg | None = None
    meaning: MeaningLeg | None = None
    partial: dict[str, int] = field(default_factory=dict)  # hybrid: chunks holding some of the words, by BM25 rank
    boosts: dict[str, tuple[int, float, float]] = field(default_factory=dict)  # hybrid: (name, note score, share)
    recency: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # chunk: (similarity, age, freshness)
    recency_rule: tuple[float, float] = (0.0, 0.0)  # (weight of freshness, half-life in days)
    whole: bool = False  # every chunk that scores is ranked (no limit cut the legs)
    # hybrid across languages: passages in another language than the question, judged by meaning alone
    unreadable: set[str] = field(default_factory=set)

    @property
    def semantic_available(self) -> bool:
        return self.meaning is not None and self.meaning.error is None

    def cosines(self) -> dict[str, float]:
        """Every similarity in meaning this ranking knows, by chunk."""
        return dict(self.meaning.hits) | self.meaning.similarity if self.meaning else {}


@dataclass
class VaultRanking:
    """vault_search's legs as it fused them, [(document_id, chunk, raw score)] best first per leg, and the fused
    notes: what its explain and explain_document read."""

    fusion: str
    words: list[str]
    threshold: float  # the least similarity the meaning legs keep
    legs: dict[str, list[tuple]] = field(default_factory=dict)
    strict: int = 0  # how many of the BM25 leg's notes hold every word (the rest hold some)
    fused: list = field(default_factory=list)  # the Candidates, best first, before the limit
    fused_rank: dict[str, int] = field(default_factory=dict)  # before the reranker
    rerank: dict[str, float] = field(default_factory=dict)  # document: cross-encoder probability
    vector: np.ndarray | None = None
    semantic_error: str | None = None
    scan: dict = field(default_factory=dict)  # the meaning legs' scan: hits [(chunk, similarity)], owners
