"""Fusion rules side by side in seconds: each question's legs are read once, then every rule ranks the notes.

Run by hand (not part of the test suite), on data homes the other benches indexed and embedded:

    .venv/bin/python tests/bench/bench_fusion.py tests/bench/questions/{kepano-obsidian,logseq-docs,tldr-en}.json \\
        --home /tmp/bq8 --scifact /tmp/skm-scifact/data

(`bench_vault_questions.py ... --home /tmp/bq8` and `bench_quality.py ../shared/corpora/scifact --home
/tmp/skm-scifact` make those homes.) For every question it runs the engine's note ranking whole (vault.rank_notes)
and keeps its legs and its fused scores (the default rule), and every note's best and first passage by meaning
(exact cosine over every vector, so a rule may also look under the 0.3 floor). Each other rule ranks the notes from
those legs, the name bonus added as rank_notes adds it. Printed: hit@5 / MRR@10 / nDCG@10 of the tuning half,
pooled and per corpus, and SciFact's test queries. The held-out half is printed only with --held-out: choose a
rule on the tuning half and SciFact, then look at the held-out half once.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import PROJECT as SCIFACT_PROJECT, read_jsonl, read_qrels  # noqa: E402
from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.search import chunk_reads, vault  # noqa: E402
from indexer.search.grammar import TITLE_BONUS  # noqa: E402
from indexer.search.query import Query  # noqa: E402

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"


@dataclass
class Legs:
    """What the engine's note ranking read for one question (vault.rank_notes, whole), and every note's similarities."""

    relevant: set[str]
    half: str
    bm25: list[tuple]  # (note, rowid, score), best first: every word, then some of them under those
    meaning: list[tuple]  # (note, chunk, similarity) at the 0.3 floor, best first
    first_chunk: list[tuple]  # the same of each note's first passage
    default: dict[str, float]  # the engine's own fused score, name bonus included
    best: dict[str, float] = field(default_factory=dict)  # the note's best passage by meaning, every note
    first: dict[str, float] = field(default_factory=dict)  # its first passage
    named: dict[str, int] = field(default_factory=dict)


def read_legs(home_dir: Path, project: str, items: list[dict]) -> list[Legs]:
    home = Home(Settings.from_env(home_dir))
    engine = Engine(home)
    try:
        engine.writer(project)  # opens (and migrates) the index, as the other benches do
        index = engine.index(project)
        home.embedder.load()
        paths = dict(index.sql("SELECT document_id, rel_path FROM documents"))
        owner = None
        out = []
        for item in items:
            query = Query.parse(item["q"])
            ranking = vault.rank_notes(index, query, vault.LEG_CHUNKS, whole=True)
            leg = {name: [(paths[hit[0]], *hit[1:]) for hit in ranking.legs.get(name, []) if hit[0] in paths]
                   for name in ("bm25", "meaning", "first_chunk")}
            legs = Legs(set(item["relevant"]), item.get("half", "tune"), leg["bm25"], leg["meaning"],
                        leg["first_chunk"], {paths[c.document_id]: c.score for c in ranking.fused},
                        named={paths[d]: n for d, n in (query.named_documents(index) if query.terms else {}).items()})
            hits = index.cache.search(query.vector(index), -1.0, None)
            if owner is None:
                owner = chunk_reads.owners(index, [cid for cid, _ in hits])
            for cid, similarity in hits:  # best first
                doc, ordinal = owner.get(cid, (None, None))
                if doc in paths:
                    legs.best.setdefault(paths[doc], similarity)
                    if ordinal == 0:
                        legs.first[paths[doc]] = similarity
            out.append(legs)
    finally:
        engine.close()
    return out


def product_legs(q: Legs, under_floor: float | None = None) -> tuple[list, list, list]:
    """The legs as rank_notes handed them to vault.fuse; with under_floor, the meaning legs also hold the notes BM25
    found down to that similarity."""
    if under_floor is None:
        return q.bm25, q.meaning, q.first_chunk
    worded = {hit[0] for hit in q.bm25}

    def leg(kept: list[tuple], sims: dict[str, float]) -> list:
        have = {hit[0] for hit in kept}
        more = [(d, d, s) for d, s in sims.items() if d in worded and d not in have and s >= under_floor]
        return sorted(kept + more, key=lambda hit: -hit[2])

    return q.bm25, leg(q.meaning, q.best), leg(q.first_chunk, q.first)


def fused(q: Legs, how: str = vault.DEFAULT_FUSION, under_floor: float | None = None) -> dict[str, float]:
    bm25, meaning, first = product_legs(q, under_floor)
    return {c.document_id: c.score + TITLE_BONUS[q.named.get(c.document_id, 0)]
            for c in vault.fuse(bm25, meaning, how=how, notes=first)}


def with_bonus(bonus: float) -> Callable[[Legs], dict[str, float]]:
    def rank(q: Legs) -> dict[str, float]:
        kept, vault.MAX_MIN_BONUS = vault.MAX_MIN_BONUS, bonus
        try:
            return fused(q)
        finally:
            vault.MAX_MIN_BONUS = kept
    return rank


def convex(alpha: float) -> Callable[[Legs], dict[str, float]]:
    """alpha x the mean of the meaning legs + (1 - alpha) x BM25, each leg over its best as fuse divides it."""
    def rank(q: Legs) -> dict[str, float]:
        bm25, meaning, first = product_legs(q)
        top_b = max((s for _, _, s in bm25), default=0.0) or 1.0
        top_m = max(max((s for _, _, s in meaning), default=0.0), vault.MEANING_FLOOR)
        b = {d: s / top_b for d, _, s in bm25}
        m = {d: s / top_m for d, _, s in meaning}
        f = {d: s / top_m for d, _, s in first}
        return {d: alpha * (m.get(d, 0) + f.get(d, 0)) / 2 + (1 - alpha) * b.get(d, 0)
                + TITLE_BONUS[q.named.get(d, 0)] for d in set(b) | set(m) | set(f)}
    return rank


RULES: dict[str, Callable[[Legs], dict[str, float]]] = {
    "semantic (exact, no floor)": lambda q: dict(q.best),
    "max_min (the default)": lambda q: dict(q.default),
    "max_min, bonus 0.5": with_bonus(0.5),
    "max_min, bonus 0.7": with_bonus(0.7),
    "max_min, meaning under the floor for BM25's notes": lambda q: fused(q, under_floor=0.0),
    "rrf": lambda q: fused(q, how="rrf"),
    "weighted": lambda q: fused(q, how="weighted"),
    **{f"convex, meaning {a}": convex(a) for a in (0.5, 0.6, 0.7, 0.8, 0.9)},
}


def measure(questions: list[Legs], rank) -> tuple[float, float, float]:
    hits, reciprocal, gains = [], [], []
    for q in questions:
        scores = rank(q)
        ranked = sorted(scores, key=lambda d: (-scores[d], d))[:10]
        first = next((i for i, d in enumerate(ranked) if d in q.relevant), None)
        hits.append(first is not None and first < 5)
        reciprocal.append(1 / (first + 1) if first is not None else 0.0)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(q.relevant), 10)))
        gains.append(sum(1 / math.log2(i + 2) for i, d in enumerate(ranked) if d in q.relevant) / ideal)
    return statistics.fmean(hits), statistics.fmean(reciprocal), statistics.fmean(gains)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, nargs="+", help="question files of tests/bench/questions")
    parser.add_argument("--home", type=Path, required=True, help="where bench_vault_questions.py kept each vault")
    parser.add_argument("--scifact", type=Path, help="bench_quality.py's data home (its `data` folder)")
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--held-out", action="store_true", help="print the held-out half too (look once, at the end)")
    args = parser.parse_args()
    sets: dict[str, list[Legs]] = {}
    for path in args.questions:
        spec = json.loads(path.read_text(encoding="utf-8"))
        legs = read_legs(args.home / spec["corpus"], "vault", spec["questions"])
        sets.setdefault("tuning half", []).extend(q for q in legs if q.half == "tune")
        if args.held_out:
            sets.setdefault("held-out half", []).extend(q for q in legs if q.half == "held-out")
        sets[f"tuning, {spec['corpus'][:10]}"] = [q for q in legs if q.half == "tune"]
    if args.scifact:
        base = args.corpora / "scifact"
        text = {q["_id"]: q["text"] for q in read_jsonl(base / "queries.jsonl")}
        items = [{"q": text[qid], "relevant": [f"{doc}.md" for doc in docs]}
                 for qid, docs in read_qrels(base / "qrels" / "test.tsv").items()]
        sets["SciFact"] = read_legs(args.scifact, SCIFACT_PROJECT, items)
    print(f"{'rule (hit@5 / MRR@10 / nDCG@10)':52s}" + "".join(f"{f'{k} ({len(v)})':>24s}" for k, v in sets.items()))
    for name, rank in RULES.items():
        print(f"{name:52s}" + "".join("{:>24s}".format("%.3f %.3f %.3f" % measure(v, rank)) for v in sets.values()))


if __name__ == "__main__":
    main()
