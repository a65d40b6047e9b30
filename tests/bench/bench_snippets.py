"""How much markup a person reads in the snippets and titles of the first ten results, on real vaults.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_snippets.py tests/bench/questions/*.json --home /tmp/skm-snippets

Each file names its corpus (a folder of ../shared/corpora, or --corpora DIR) and holds graded question sets; every
question of every set, and every note's own title, is asked in hybrid search and in vault_search, and each of the
first ten results' snippet and title is checked for markup a reader never sees in Obsidian's reading view: a URL,
an HTML tag, a `[[wikilink`, a heading hash, a backtick. The share of snippets holding each kind is printed per
vault and pooled. Uses only the engine's public API, so it measures an older commit the same way.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer import SearchRequest  # noqa: E402

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
MARKUP = {
    "URL": re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://|\bwww\."),
    "HTML tag": re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>"),
    "[[": re.compile(r"\[\["),
    # Where a line would begin: a "#" inside code ("27^(1/3) # cube root") is what a reader reads.
    "heading hash": re.compile(r"^(?:…)?\s*#{1,6}\s|\n\s*#{1,6}\s"),
    "backtick": re.compile(r"`"),
    # What Logseq never shows: its bookkeeping properties and the markers around an admonition.
    "Logseq hidden": re.compile(r"\b(?:id|collapsed|created[-_]at|updated[-_]at)::|#\+(?:BEGIN|END)_", re.I),
}


def kinds(text: str) -> set[str]:
    """The kinds of markup a piece of text holds."""
    return {name for name, pattern in MARKUP.items() if pattern.search(text or "")}


def run(spec_path: Path, corpora: Path, keep: Path | None, totals: dict) -> None:
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    vault = corpora / spec["corpus"]
    queries = [q["q"] for key in ("questions", "exact", "typos") for q in spec.get(key, [])]
    with contextlib.ExitStack() as stack:
        folder = keep / spec["corpus"] if keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        home = Home(Settings.from_env(folder))
        if "vault" not in {p.name for p in home.projects()}:
            home.add_project(vault, "vault")
        engine = Engine(home)
        stack.callback(engine.close)
        engine.writer("vault").embed_pending()
        queries += [d["title"] for d in engine.documents("vault", limit=1000)["documents"]][:200]
        counts: dict[str, dict[str, int]] = {}
        for q in queries:
            answers = {"hybrid": engine.search(SearchRequest(q, mode="hybrid", project="vault", limit=10))["results"],
                       "vault_search": engine.search(SearchRequest(q, mode="vault", limit=10,
                                                                   project="vault"))["results"]}
            for mode, results in answers.items():
                c = counts.setdefault(mode, {"snippets": 0, "any": 0, "titles with markup": 0,
                                             **{k: 0 for k in MARKUP}})
                for r in results:
                    found = kinds(r["snippet"])
                    c["snippets"] += 1
                    c["any"] += bool(found)
                    c["titles with markup"] += bool(kinds(r.get("document_title") or r.get("title") or ""))
                    for k in found:
                        c[k] += 1
        for mode, c in counts.items():
            print(f"{spec['corpus']:16s} {mode:12s} " + report(c))
            pooled = totals.setdefault(mode, {k: 0 for k in c})
            for k, v in c.items():
                pooled[k] += v


def report(c: dict[str, int]) -> str:
    n = max(c["snippets"], 1)
    parts = [f"{c['snippets']} snippets, with markup {100 * c['any'] / n:.1f} %"]
    parts += [f"{k} {100 * c[k] / n:.1f} %" for k in MARKUP]
    parts.append(f"titles with markup {100 * c['titles with markup'] / n:.1f} %")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--home", type=Path, help="keep each vault's index here and reuse it")
    args = parser.parse_args()
    totals: dict = {}
    for path in args.questions:
        run(path, args.corpora, args.home, totals)
    for mode, c in totals.items():
        print(f"{'pooled':16s} {mode:12s} " + report(c))


if __name__ == "__main__":
    main()
