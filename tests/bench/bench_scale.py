"""Whether the int8 embedder puts (query, chunk) pairs on the same side of the spec's floors as fp32, raw and after
the calibration that maps its cosine onto the fp32 model's scale.

Run by hand (not part of the test suite), on data homes an earlier bench indexed (bench_vault_questions.py --home):

    .venv/bin/python tests/bench/bench_scale.py --home /tmp/bq --chunks 1500

Queries: every graded question of tests/bench/questions and every note title of the sampled projects; chunks: a
seeded sample of the passages each project embeds. Each is embedded by ONNX fp32 (torch's vectors) and by the
int8 copy (--backend: ONNX Runtime's dynamic one or OpenVINO's static one), and the pairing the engine uses (fp32
queries against int8 passages). Printed per floor (0.3 hybrid, 0.5 semantic): the share of all pairs on the same
side, and of the pairs near it (fp32 within 0.05 of the floor, the ones that can flip), raw and calibrated. The
calibration is the one the engine fits and stores (indexer/model/scale.py), fitted here on the even chunks and
judged on the odd. Last, how much of fp32's ranking the engine's pairing keeps: of each query's top 10 passages, the
share that stays in the top 10, and how often the first passage is the same (no relevance labels: every query counts,
so it moves less by chance than hit@5 on 70 graded questions).
"""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.model.onnx_encoder import OnnxEncoder  # noqa: E402
from indexer.model.openvino_encoder import OpenVinoEncoder  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "questions"
STEP = 0.025  # the knots' spacing in the backend's cosine
MIN_PAIRS = 40  # a bin with fewer pairs gives no knot of its own
FLOORS = (0.3, 0.5)


@dataclass(frozen=True)
class Scale:
    """A monotone piecewise-linear map from a backend's cosine to the fp32 model's: knots (backend, fp32)."""

    raw: tuple[float, ...]
    fp32: tuple[float, ...]

    @classmethod
    def fit(cls, raw: np.ndarray, reference: np.ndarray) -> "Scale":
        """The mean fp32 cosine of each bin of backend cosine, made monotone, with (-1, -1) and (1, 1) at the ends."""
        raw, reference = np.asarray(raw, dtype=np.float64), np.asarray(reference, dtype=np.float64)
        xs, ys = [-1.0], [-1.0]
        which = np.digitize(raw, np.arange(-1.0, 1.0 + STEP, STEP))
        for b in np.unique(which):
            members = which == b
            if members.sum() >= MIN_PAIRS:
                xs.append(float(raw[members].mean()))
                ys.append(float(reference[members].mean()))
        ys = np.maximum.accumulate(np.clip(ys + [1.0], -1.0, 1.0)).tolist()
        return cls(tuple(xs + [1.0]), tuple(ys))

    def apply(self, raw):
        return np.interp(raw, self.raw, self.fp32)

    def describe(self) -> str:
        return f"{len(self.raw)} knots (" + ", ".join(f"{x:.2f}->{self.apply(x):.3f}" for x in (0.3, 0.5, 0.7)) + ")"


def texts(home: Path, chunks: int, seed: int) -> tuple[list[str], list[str]]:
    """A seeded sample of the embedded passages of every project under home, and every note title."""
    passages, titles = [], []
    for db in sorted(home.glob("*/projects/*/index.sqlite")) + sorted(home.glob("*/data/projects/*/index.sqlite")):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        passages += [r[0] for r in con.execute("SELECT embed_text FROM chunks WHERE embed_text != ''")]
        titles += [r[0] for r in con.execute("SELECT title FROM documents WHERE title != ''")]
        con.close()
    rng = random.Random(seed)
    rng.shuffle(passages)
    rng.shuffle(titles)
    return passages[:chunks], titles[:300]


def agreement(reference: np.ndarray, other: np.ndarray, floor: float) -> tuple[float, float, int]:
    same = (reference >= floor) == (other >= floor)
    near = np.abs(reference - floor) <= 0.05
    return float(same.mean()), float(same[near].mean()) if near.any() else 1.0, int(near.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="a folder of data homes with indexed projects")
    parser.add_argument("--chunks", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--backend", default="onnx-int8", choices=("onnx-int8", "openvino-int8"),
                        help="which int8 copy embeds the passages (default onnx-int8)")
    args = parser.parse_args()
    passages, titles = texts(args.home, args.chunks, args.seed)
    questions = [q["q"] for f in sorted(QUESTIONS.glob("*.json"))
                 for q in json.loads(f.read_text(encoding="utf-8"))["questions"]]
    queries = questions + titles
    settings = Settings.from_env()
    fp32 = OnnxEncoder.for_model(settings.model_path, settings.model_cache_dir, threads=None)
    if args.backend == "openvino-int8":
        int8 = OpenVinoEncoder.for_model(settings.model_path, settings.model_cache_dir, workers=settings.embed_workers)
    else:
        int8 = OnnxEncoder.for_model(settings.model_path, settings.model_cache_dir, threads=None, quantized=True)
    print(f"{len(queries)} queries ({len(questions)} questions, {len(titles)} titles) x {len(passages)} passages",
          flush=True)
    fp32_queries, int8_passages = fp32.embed(queries), int8.embed(passages)
    ref = fp32_queries @ fp32.embed(passages).T
    raw = int8.embed(queries) @ int8_passages.T
    mixed = fp32_queries @ int8_passages.T  # what the engine does: queries by fp32, passages by int8
    fit, judge = slice(0, None, 2), slice(1, None, 2)
    scale = Scale.fit(raw[:, fit].ravel(), ref[:, fit].ravel())
    mapped = scale.apply(raw[:, judge])
    print(f"calibration: {scale.describe()}")
    print(f"mean |int8 - fp32|: raw {np.abs(raw[:, judge] - ref[:, judge]).mean():.4f}, "
          f"calibrated {np.abs(mapped - ref[:, judge]).mean():.4f}")
    for floor in FLOORS:
        before, before_near, near = agreement(ref[:, judge], raw[:, judge], floor)
        after, after_near, _ = agreement(ref[:, judge], mapped, floor)
        print(f"floor {floor}: same side, all pairs raw {before:.4%} calibrated {after:.4%}; "
              f"the {near} pairs within 0.05 of it raw {before_near:.2%} calibrated {after_near:.2%}")
    moved = np.abs(mixed[:, judge] - ref[:, judge])
    print(f"fp32 queries x int8 passages (the engine's pairing): mean |mixed - fp32| {moved.mean():.4f}, "
          f"max {moved.max():.4f}")
    for floor in FLOORS:
        same, same_near, near = agreement(ref[:, judge], mixed[:, judge], floor)
        print(f"floor {floor}: same side, all pairs {same:.4%}; the {near} pairs within 0.05 of it {same_near:.2%}")
    overlap, first = same_ranking(ref, mixed)
    print(f"the same ranking as fp32 (no labels needed): of each query's top 10 passages {overlap:.1%} the same, "
          f"the same first passage for {first:.1%} of the queries")


def same_ranking(reference: np.ndarray, other: np.ndarray, k: int = 10) -> tuple[float, float]:
    """How closely another embedder ranks the passages as fp32 does, over every query: the mean share of fp32's top k
    in its top k, and the share of queries with the same first passage."""
    top_ref = np.argsort(-reference, axis=1)[:, :k]
    top_other = np.argsort(-other, axis=1)[:, :k]
    overlap = np.mean([len(set(a) & set(b)) / k for a, b in zip(top_ref, top_other)])
    return float(overlap), float(np.mean(top_ref[:, 0] == top_other[:, 0]))


if __name__ == "__main__":
    main()
