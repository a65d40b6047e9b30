"""Graded questions on real vaults: hit@5 and MRR@10 of each search mode with the real model, beside a textbook
BM25 over whole notes computed in the same run.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_vault_questions.py tests/bench/questions/*.json

Each file names its corpus (a folder of ../shared/corpora, or --corpora DIR) and holds `questions` (phrased as a
person asks, in other words than the note uses) and `exact` (a term the note holds verbatim: an id, a name, a
number), each with the note(s) that answer it. The vault is indexed and embedded in a temporary data home; then
for every mode the documents are ranked by their best chunk and a question is a hit@5 when one of its notes is
among the first five (hit@1: first). A third set is made from the vault itself: every markdown note's own
title as the query (titles no other note shares; at most 200), the known-item lookup a person does most. Modes: `bm25
(notes)` (the baseline: k1 1.2, b 0.75 over each file's whole text, no
vectors), `semantic` (exact cosine, no threshold, so that the chunks themselves are judged), `semantic 0.5` (the
product's direct threshold), `hybrid`, `keyword` (spec 000's substring mode), `vault_search` (its default fusion),
and vault_search with each other rule (`rrf`: reciprocal rank fusion, k 60; `max_min`: the best normalised leg plus
0.3 of the others; `weighted`: a weighted sum) with or without a leg of each note's first chunk (`+first`, a note-
level vector). Figures are printed per set and pooled over every file.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.search.chunk_reads import hit_rows  # noqa: E402
from indexer.store.database import LONG_NOTE_TAIL_FROM  # noqa: E402
from indexer.search.query import Query  # noqa: E402
from indexer.contract.request import SearchRequest  # noqa: E402
from indexer.search.across import meaning_index  # noqa: E402
from indexer.search.semantic import semantic_search  # noqa: E402
from indexer.search.vault import DEFAULT_FUSION, DEFAULT_NOTE_LEG, FUSIONS, vault_search  # noqa: E402
from mixed_vault import make_mixed  # noqa: E402  (beside this file)

MIXED = "mixed-vault"  # a corpus made of three others (tests/bench/mixed_vault.py)
POOL = 100  # chunks asked of a chunk-level mode, enough for ten distinct documents
CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
SUFFIXES = {".md", ".txt", ".canvas", ".base"}
WORD = re.compile(r"\w+")


def documents(paths) -> list[str]:
    """Paths in order of first appearance (a document's rank is its best chunk's)."""
    out: list[str] = []
    for path in paths:
        if path not in out:
            out.append(path)
    return out


class TextbookBM25:
    """Okapi BM25 over whole files (k1 1.2, b 0.75, lowercase word tokens): the baseline a search should beat."""

    def __init__(self, root: Path, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.paths, self.terms = [], []
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES):
            self.paths.append(path.relative_to(root).as_posix())
            self.terms.append(Counter(WORD.findall(path.read_text(errors="replace").lower())))
        self.lengths = [sum(t.values()) for t in self.terms]
        self.average = statistics.fmean(self.lengths) if self.lengths else 0.0
        df = Counter(word for t in self.terms for word in t)
        n = len(self.terms)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def rank(self, query: str) -> list[str]:
        words = WORD.findall(query.lower())
        scores = []
        for i, (terms, length) in enumerate(zip(self.terms, self.lengths)):
            score = 0.0
            for w in words:
                tf = terms.get(w, 0)
                if tf:
                    norm = 1 - self.b + self.b * length / self.average
                    score += self.idf[w] * tf * (self.k1 + 1) / (tf + self.k1 * norm)
            if score:
                scores.append((-score, self.paths[i]))
        return [path for _, path in sorted(scores)]


def score(rank, items) -> tuple[list[bool], list[float], list, list[bool]]:
    hits, reciprocal, misses, firsts = [], [], [], []
    for item in items:
        ranked = rank(item["q"])
        relevant = set(item["relevant"])
        first = next((i for i, p in enumerate(ranked[:10]) if p in relevant), None)
        hits.append(first is not None and first < 5)
        firsts.append(first == 0)
        reciprocal.append(1.0 / (first + 1) if first is not None else 0.0)
        if not hits[-1]:
            misses.append((item["q"], ranked[:3]))
    return hits, reciprocal, misses, firsts


def title_items(index, limit: int = 200) -> list[dict]:
    """Known-item questions: each note's own title as the query, for titles no other note shares."""
    rows = index.sql("SELECT rel_path, title FROM documents ORDER BY rel_path")
    count = Counter(r[1].strip().lower() for r in rows)
    return [{"q": r[1], "relevant": [r[0]]} for r in rows
            if r[0].endswith(".md") and count[r[1].strip().lower()] == 1 and r[1].strip()][:limit]


# Note-first embedding's stages: the passages of every note below this ordinal are embedded (store.pending_chunks).
STAGES = {"keyword": 0, "first": 1, "top": LONG_NOTE_TAIL_FROM}


def run_set(path: Path, corpora: Path, show_misses: bool, pooled: dict, keep: Path | None = None,
            only: set[str] | None = None, embed_minutes: float | None = None, stage: str = "full") -> None:
    spec = json.loads(path.read_text(encoding="utf-8"))
    vault = corpora / spec["corpus"]
    if spec["corpus"] == MIXED:  # made from the corpora (mixed_vault.py), beside the index
        vault = corpora / "tldr-en"
    if not vault.is_dir():
        print(f"{path.name}: skipped, {vault} is not a folder")
        return
    questions = spec.get("questions", [])
    # Questions without a half were written, and tuned on, before the split: they count as the tuning half.
    sets = {"paraphrased": questions,
            "paraphrased, tuning half": [q for q in questions if q.get("half", "tune") == "tune"],
            "paraphrased, held-out half": [q for q in questions if q.get("half") == "held-out"],
            "exact terms": spec.get("exact", []), "typos": spec.get("typos", [])}
    with contextlib.ExitStack() as stack:
        if keep is None:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skm-bench-questions-")))
        else:  # kept between runs: a second run only searches
            tmp = keep / spec["corpus"].replace("/", "-")
        if spec["corpus"] == MIXED:  # its notes beside the data folder, never inside it
            vault, tmp = tmp / "notes", tmp / "home"
            if not vault.is_dir():
                make_mixed(vault, corpora)
        home = Home(Settings.from_env(tmp))
        if "vault" not in {p.name for p in home.projects()}:
            home.add_project(vault, "vault")
        engine = Engine(home)
        try:
            started = time.perf_counter()
            project = engine.writer("vault")  # opens and syncs the project
            index = engine.index("vault")
            synced = time.perf_counter() - started
            home.embedder.load()
            started = time.perf_counter()
            stop = threading.Event()
            if embed_minutes is not None:  # a heavy vault: every note's first passages, then as far as time allows
                threading.Timer(embed_minutes * 60, stop.set).start()
            if stage in STAGES:  # part-way through note-first embedding, which embeds these first
                while stage != "keyword" and project.store.query(
                        "SELECT count(*) FROM chunks WHERE embed_state = 'pending' AND NOT keyword_only "
                        "AND ordinal < ?", (STAGES[stage],))[0][0] and project.embed_pending(stop, max_batches=1):
                    pass
            else:
                project.embed_pending(stop)
                project.embed_across(stop)  # what a question in another language searches, made after
            stop.set()
            embedded = time.perf_counter() - started
            counts = project.store.counts()
            print(f"{spec['corpus']}: {counts['documents']} documents, {counts['chunks']} chunks "
                  f"({counts['pending']} left pending) embedded in {embedded:.0f} s "
                  f"(keyword-searchable in {synced:.1f} s); "
                  + ", ".join(f"{len(v)} {k}" for k, v in sets.items()))
            bm25 = TextbookBM25(vault)

            def paths(results):
                return documents(r["relative_path"] for r in results)

            modes = {
                "bm25 (notes)": bm25.rank,
                "semantic": lambda q: paths(r for r in _rows(index, _semantic(index, Query.parse(q)))),
                "semantic 0.5": lambda q: paths(engine.search(SearchRequest(q, mode="semantic", project="vault",
                                                                            limit=POOL))["results"]),
                "hybrid": lambda q: paths(engine.search(SearchRequest(q, mode="hybrid", project="vault",
                                                                      limit=POOL))["results"]),
                "keyword": lambda q: paths(engine.search(SearchRequest(q, mode="keyword", project="vault",
                                                                       limit=POOL))["results"]),
                "vault_search": lambda q: documents(r["path"] for r in engine.search(SearchRequest(
                    q, mode="vault", limit=20, project="vault"))["results"]),
            }
            for fusion in FUSIONS:  # the fusion rules and note scorings vault_search can use, side by side
                for note_leg in (False, True):
                    if (fusion, note_leg) != (DEFAULT_FUSION, DEFAULT_NOTE_LEG):
                        modes[f"vs {fusion}{'+first' if note_leg else ''}"] = (
                            lambda q, f=fusion, n=note_leg: [r["path"] for r in vault_search(
                                index, SearchRequest(q, "vault", limit=20), fusion=f, note_leg=n)["results"]])
            sets["titles"] = title_items(index)  # known items: a note looked up by its own title
            if only:
                modes = {name: rank for name, rank in modes.items() if name in only}
            for kind, items in sets.items():
                if not items:
                    continue
                print(f"  {kind} ({len(items)}):  {'mode':14s} {'hit@5':>6s} {'MRR@10':>7s} {'hit@1':>6s}")
                for name, rank in modes.items():
                    hits, reciprocal, misses, firsts = score(rank, items)
                    pooled.setdefault((kind, name), ([], [], []))
                    pooled[(kind, name)][0].extend(hits)
                    pooled[(kind, name)][1].extend(reciprocal)
                    pooled[(kind, name)][2].extend(firsts)
                    print(f"  {'':{len(kind) + 3}s}{name:14s} {statistics.fmean(hits):6.3f} "
                          f"{statistics.fmean(reciprocal):7.3f} {statistics.fmean(firsts):6.3f}")
                    if show_misses:
                        for q, top in misses:
                            print(f"      miss: {q!r} -> {top}")
        finally:
            engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, nargs="+",
                        help="JSON files: {corpus, questions: [{q, relevant: [paths]}], exact: [...]}")
    parser.add_argument("--corpora", type=Path, default=CORPORA, help=f"where the corpora are (default {CORPORA})")
    parser.add_argument("--show-misses", action="store_true", help="print each question a mode misses at 5")
    parser.add_argument("--home", type=Path, help="keep each vault's index here and reuse it next time")
    parser.add_argument("--modes", help="only these modes, comma-separated (e.g. hybrid,vault_search)")
    parser.add_argument("--stage", choices=["keyword", *STAGES, "full"], default="full",
                        help="embed only this far, as note-first embedding gets there: nothing (keyword), every "
                             "note's first passage (first), the top of every note (top), or every passage (full); "
                             "use a fresh --home for each")
    parser.add_argument("--embed-minutes", type=float,
                        help="stop embedding after this long (britannica-10k: its first passages take ~11 minutes)")
    args = parser.parse_args()
    report(args.questions, args.corpora, args.show_misses, args.home,
           set(args.modes.split(",")) if args.modes else None, args.embed_minutes, args.stage)


def report(questions: list[Path], corpora: Path, show_misses: bool = False, keep: Path | None = None,
           only: set[str] | None = None, embed_minutes: float | None = None, stage: str = "full") -> None:
    """Score every question file and, for more than one, the pooled figures."""
    pooled: dict = {}
    for path in questions:
        run_set(path, corpora, show_misses, pooled, keep, only, embed_minutes, stage)
    if len(questions) > 1:
        print("all sets pooled:")
        for (kind, name), (hits, reciprocal, firsts) in pooled.items():
            print(f"  {kind:12s} {name:14s} hit@5 {statistics.fmean(hits):6.3f}  "
                  f"MRR@10 {statistics.fmean(reciprocal):7.3f}  hit@1 {statistics.fmean(firsts):6.3f}  "
                  f"({len(hits)} questions)")


def _semantic(index, query):
    """Every chunk by meaning, no floor, in the space the question is searched in (its own, or across languages)."""
    return semantic_search(meaning_index(index, query), query, POOL, -2.0).ranked


def _rows(index, scored):
    """(chunk_id, similarity, type) triples as rows with relative_path, without building full results."""
    rows = hit_rows(index, [cid for cid, _, _ in scored])
    return [{"relative_path": rows[cid]["rel_path"]} for cid, _, _ in scored if cid in rows]


if __name__ == "__main__":
    main()
