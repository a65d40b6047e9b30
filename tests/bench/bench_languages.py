"""How long a Chinese vault takes to be searchable by meaning beside an English one of about as many passages, and
how fast it answers: issue 53's speed figures, measured in one run.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_languages.py
    .venv/bin/python tests/bench/bench_languages.py --language ja --pages 400

Indexes tldr-i18n/<language> (every page, or the first --pages) in a fresh data home as `skmemory index` does
(the language told, the multilingual model chosen), then as many pages of tldr-en (the English model), and prints
for each: passages, seconds until every file is keyword-searchable, seconds until every passage has its vector, and
passages per second; then the ratio of the two. The model copies are made before the clock starts (once per user,
as a first `make run` does), so the figures are the vault's own. Then each project answers its graded questions
(tests/bench/questions/tldr-<language>.json, and tldr-en.json) in hybrid, each question five times: p50 and p95 per
search, the query embedded each time; and the Russian and Spanish questions about the English pages (issue 59), after
the vectors that let them be read across languages are made (timed too, beside the English model's own embedding).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.contract.request import SearchRequest  # noqa: E402

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
QUESTIONS = Path(__file__).resolve().parent / "questions"


def copy_pages(source: Path, target: Path, count: int | None) -> int:
    pages = sorted(p for p in source.rglob("*.md") if p.name != "LICENSE.md")[:count]
    for page in pages:
        dest = target / page.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, dest)
    return len(pages)


def index(engine: Engine, name: str) -> dict:
    started = time.perf_counter()
    engine.reindex(name)
    keyword = time.perf_counter() - started
    project = engine.writer(name)
    project.decide_language()
    project.embedder.load()  # the model's load is not the vault's: both models load in about a second
    started_embedding = time.perf_counter()
    engine.embed_pending(name)
    meaning = keyword + time.perf_counter() - started_embedding
    counts = project.store.counts()
    figures = {"passages": counts["chunks"], "keyword_s": keyword, "meaning_s": meaning,
               "model": project.embedder.name, "rate": counts["chunks"] / (meaning - keyword)}
    if hasattr(project, "embed_across"):  # issue 59: the vectors a question in another language searches, after
        started = time.perf_counter()
        project.embed_across()
        figures["across_s"] = time.perf_counter() - started
    return figures


def latency(engine: Engine, name: str, questions: list[str], rounds: int = 5) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        for q in questions:
            started = time.perf_counter()
            engine.search(SearchRequest(q, mode="hybrid", project=name, limit=10))
            times.append(1000 * (time.perf_counter() - started))
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--language", default="zh")
    parser.add_argument("--pages", type=int)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = Home(Settings.from_env(base / "home"))
        for model in ("english", "multilingual"):  # the copies, made once per user before any vault is timed
            home.embedder_for(model).load()
        pages = copy_pages(args.corpora / "tldr-i18n" / args.language, base / args.language, args.pages)
        copy_pages(args.corpora / "tldr-en", base / "en", pages)
        home.add_project(base / args.language, args.language)
        home.add_project(base / "en", "en")
        engine = Engine(home)
        try:
            figures = {name: index(engine, name) for name in (args.language, "en")}
            for name, f in figures.items():
                print(f"{name}: {pages} pages, {f['passages']} passages, {f['model']}: keyword-searchable in "
                      f"{f['keyword_s']:.1f} s, searchable by meaning in {f['meaning_s']:.1f} s "
                      f"({f['rate']:.0f} passages/s embedded)")
            for name, f in figures.items():
                if "across_s" in f:
                    print(f"{name}: then readable in other languages in {f['across_s']:.1f} s more "
                          f"({f['across_s'] / (f['meaning_s'] - f['keyword_s']):.2f}x its own embedding)")
            other, english = figures[args.language], figures["en"]
            per_passage = (other["meaning_s"] / other["passages"]) / (english["meaning_s"] / english["passages"])
            print(f"ratio {args.language} / en: {other['meaning_s'] / english['meaning_s']:.2f}x the time, "
                  f"{per_passage:.2f}x per passage (issue 53 asks at most 3x)")
            for name, file in ((args.language, f"tldr-{args.language}.json"), ("en", "tldr-en.json"),
                               ("en", "cross/tldr-en-asked-in-russian.json"),
                               ("en", "cross/tldr-en-asked-in-spanish.json")):
                spec = json.loads((QUESTIONS / file).read_text(encoding="utf-8"))
                p50, p95 = latency(engine, name, [q["q"] for q in spec["questions"]])
                print(f"{name}, {file}: hybrid p50 {p50:.0f} ms, p95 {p95:.0f} ms over {len(spec['questions'])} "
                      "questions x 5")
        finally:
            engine.close()


if __name__ == "__main__":
    main()
