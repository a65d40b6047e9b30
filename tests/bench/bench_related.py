"""How well and how fast `related` (what in my notes relates to this text) answers, on real vaults and real pages.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_related.py --home /tmp/skm-related          # indexes what it needs once

- **Link recovery** (kepano-obsidian, logseq-docs): every note that links to 2 or more other notes of its vault, its
  links removed (target and text), asked with the rest (the note itself excluded): recall@10 of its link targets,
  beside a textbook BM25 of the same text over the same notes in the same run. The notes are split into two halves
  by a seeded shuffle; tune only on the first, and report both.
- **Web pages**: 15 SciFact abstracts (title and text, as a page) must find their own note first; 15 tldr pages'
  descriptions (the `>` lines, as a page that describes a command) must find the command's note first: hit@1. These
  30 are never tuned on; 80 other tldr pages (another seed) are, and are reported apart.
- **Speed**: pages of 5,000 and 50,000 words of real text (britannica-10k notes, joined) asked of tldr-en, warm:
  p50 / p95 ms, beside one hybrid search of a short question in the same run.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vault_questions import TextbookBM25  # noqa: E402

from indexer import RelatedTextRequest  # noqa: E402
from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer import SearchRequest  # noqa: E402

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
WIKILINK = re.compile(r"!?\[\[[^\]\n]*\]\]")
MDLINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)")
LINK_VAULTS = ("kepano-obsidian", "logseq-docs")
TUNING_SEED = 7


def engine_on(home_dir: Path, corpus: Path, name: str) -> Engine:
    """An engine with the corpus indexed and embedded as project `name` (done once per data home)."""
    home = Home(Settings.from_env(home_dir / name))
    if name not in {p.name for p in home.projects()}:
        home.add_project(corpus, name)
    engine = Engine(home)
    started = time.perf_counter()
    engine.writer(name).embed_pending()
    print(f"{name}: ready in {time.perf_counter() - started:.0f} s", flush=True)
    return engine


def linked_notes(engine: Engine, project: str) -> list[dict]:
    """Each markdown note that links to 2 or more other notes: its path, title, text without links, targets."""
    out = []
    for doc in engine.documents(project, limit=1000)["documents"]:
        if not doc["path"].endswith(".md"):
            continue
        detail = engine.document(doc["document_id"], project)
        targets = {link["path"] for link in detail["links"] if link.get("document_id")
                   and link["document_id"] != doc["document_id"]}
        if len(targets) >= 2:
            text = MDLINK.sub(" ", WIKILINK.sub(" ", detail["content"]))
            out.append({"path": doc["path"], "id": doc["document_id"], "title": doc["title"], "text": text,
                        "targets": targets})
    return out


def recall(ranked: list[str], targets: set[str], k: int = 10) -> float:
    return len(set(ranked[:k]) & targets) / len(targets)


def link_recovery(home_dir: Path, corpora: Path, seed: int) -> None:
    for name in LINK_VAULTS:
        engine = engine_on(home_dir, corpora / name, name)
        try:
            notes = linked_notes(engine, name)
            random.Random(seed).shuffle(notes)
            halves = {"tuning half": notes[: len(notes) // 2], "held-out half": notes[len(notes) // 2:]}
            bm25 = TextbookBM25(corpora / name)
            for half, items in halves.items():
                ours, base = [], []
                for note in items:
                    answer = engine.related_text(RelatedTextRequest(note["text"], title=note["title"], project=name,
                                                               limit=10, exclude=(note["id"],)))
                    ours.append(recall([r["path"] for r in answer["results"]], note["targets"]))
                    ranked = [p for p in bm25.rank(f"{note['title']}\n{note['text']}") if p != note["path"]]
                    base.append(recall(ranked, note["targets"]))
                print(f"{name} link recovery, {half} ({len(items)} notes): related recall@10 "
                      f"{statistics.fmean(ours):.3f}, textbook BM25 {statistics.fmean(base):.3f}", flush=True)
        finally:
            engine.close()


def scifact_pages(corpora: Path, count: int, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in (corpora / "scifact" / "corpus.jsonl").open(encoding="utf-8")]
    random.Random(seed).shuffle(rows)
    return [{"title": r["title"], "text": r["text"], "id": str(r["_id"])} for r in rows[:count]]


def web_pages(home_dir: Path, corpora: Path, seed: int) -> None:
    """SciFact abstracts and tldr descriptions as pages: does each find its own note first?"""
    pages = scifact_pages(corpora, 15, seed)
    notes = home_dir / "scifact-notes"
    if not notes.is_dir():  # each SciFact abstract a note, as bench_quality.py writes them
        notes.mkdir(parents=True)
        for row in (json.loads(line) for line in (corpora / "scifact" / "corpus.jsonl").open(encoding="utf-8")):
            (notes / f"{row['_id']}.md").write_text(f"# {row['title']}\n\n{row['text']}\n", encoding="utf-8")
    engine = engine_on(home_dir, notes, "scifact")
    try:
        first = [engine.related_text(RelatedTextRequest(p["text"], title=p["title"], project="scifact", limit=5))
                 ["results"][:1] for p in pages]
        hits = [bool(f) and f[0]["path"] == f"{p['id']}.md" for f, p in zip(first, pages)]
        print(f"SciFact abstracts as pages: hit@1 {sum(hits)}/{len(hits)}", flush=True)
    finally:
        engine.close()
    tldr = corpora / "tldr-en"
    files = sorted(tldr.rglob("*.md"))
    random.Random(seed).shuffle(files)
    held_out = files[:15]
    # 80 other pages (another seed) are the ones a change may be tuned on; the 15 above never are.
    tuning = [f for f in sorted(tldr.rglob("*.md")) if f not in set(held_out)]
    random.Random(TUNING_SEED).shuffle(tuning)
    engine = engine_on(home_dir, tldr, "tldr")
    try:
        for label, pages in (("tldr descriptions as pages (tuning, 80 others)", tuning[:80]),
                             ("tldr descriptions as pages", held_out)):
            hits = []
            for path in pages:
                lines = path.read_text(encoding="utf-8").splitlines()
                description = " ".join(line[1:].strip() for line in lines if line.startswith(">")
                                       and "More information" not in line)
                answer = engine.related_text(RelatedTextRequest(description, project="tldr", limit=5))
                top = answer["results"][0]["path"] if answer["results"] else None
                hits.append(top == path.relative_to(tldr).as_posix())
                if not hits[-1] and pages is held_out:
                    print(f"  miss: {path.relative_to(tldr)} -> {top}: {description[:80]}")
            print(f"{label}: hit@1 {sum(hits)}/{len(hits)}", flush=True)
    finally:
        engine.close()


def speed(home_dir: Path, corpora: Path, rounds: int) -> None:
    """Pages of 5,000 and 50,000 words of britannica text asked of tldr-en, warm, beside a short hybrid search."""
    words: list[str] = []
    for path in sorted((corpora / "britannica-10k").rglob("*.md"))[:400]:
        words += path.read_text(encoding="utf-8").split()
        if len(words) > 60_000:
            break
    engine = engine_on(home_dir, corpora / "tldr-en", "tldr")
    try:
        engine.search(SearchRequest("keep a process running after logout", project="tldr"))  # warm
        for size in (5_000, 50_000):
            times, short = [], []
            for i in range(rounds):
                page = " ".join(words[i * 97: i * 97 + size])
                started = time.perf_counter()
                engine.related_text(RelatedTextRequest(page, title="A page", project="tldr", limit=10))
                times.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                engine.search(SearchRequest("archive a folder with compression", project="tldr", limit=10))
                short.append((time.perf_counter() - started) * 1000)
            times.sort()
            short.sort()
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            print(f"{size:,}-word page on tldr-en: p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms "
                  f"(a short hybrid search beside it: p50 {statistics.median(short):.0f} ms; "
                  f"ratio {statistics.median(times) / statistics.median(short):.1f}x)", flush=True)
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="a data home for the indexes (kept between runs)")
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--only", choices=("links", "pages", "speed"))
    args = parser.parse_args()
    if not args.corpora.is_dir():
        sys.exit(f"{args.corpora} is not a folder: this bench reads ../shared/corpora")
    if args.only in (None, "links"):
        link_recovery(args.home, args.corpora, args.seed)
    if args.only in (None, "pages"):
        web_pages(args.home, args.corpora, args.seed)
    if args.only in (None, "speed"):
        speed(args.home, args.corpora, args.rounds)


if __name__ == "__main__":
    main()
