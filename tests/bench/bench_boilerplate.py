"""What a note says against what every note says, on a real vault whose notes share a footer or a banner.

Run by hand (not part of the test suite), on any vault folder:

    .venv/bin/python tests/bench/bench_boilerplate.py ~/some-vault --home /tmp/skm-boiler [--titles 150]

The vault is indexed and embedded in a data home of its own. Shared text is found here independently of the engine
(so an older commit is measured the same way): a line, read with its links, URLs, HTML tags and comments left out,
that 5 % of the notes or more hold. Printed:

- snippets: of the first ten results for each of --titles note titles (seeded pick; hybrid, one row a note), the
  share of snippets that are blank or mostly shared text, and of the first results alone;
- titles: notes whose title is a shared line (a footer's heading);
- own title first: hit@1 of each picked note for its own title, hybrid, vault_search and keyword;
- link suggestions: of --titles opened notes, those whose first unlinked mention sits on a shared line, and rare
  words (the "shares rare words" of suggestions by meaning) that are URL words;
- clusters: Cluster View's names holding a word of a shared line made of links or images (a badge's alt text, a
  footer's links) that the notes' titles do not use;
- related: the notes listed for a page about a topic the vault lacks (sourdough baking).

Uses only the engine's public API, so it runs on an older commit too (copy it there).
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer import SearchRequest  # noqa: E402

SHARED_SHARE = 0.05
WORD = re.compile(r"[^\W\d_]{2,}")
MASKS = (re.compile(r"%%.*?%%|<!--.*?-->", re.S), re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)"),
         re.compile(r"<[a-zA-Z/!][^>\n]*>"), re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+"))
URL_WORDS = {"github", "githubusercontent", "blob", "refs", "heads", "https", "http", "zip", "raw", "dev", "span",
             "shields", "img", "svg", "www", "com"}
SOURDOUGH = ("Sourdough bread at home", "Feed the starter the night before. Mix flour, water and salt, stretch and "
             "fold the dough every half hour, shape it, proof it overnight in the fridge and bake it in a covered "
             "pot at 250 degrees. The crumb should be open and the crust dark.")


def seen(line: str) -> str:
    """A line as a reader sees it, for comparing: link text for links, no URLs, tags or comments, its words."""
    line = MASKS[0].sub(" ", line)
    line = MASKS[1].sub(r" \1 ", line)
    line = MASKS[3].sub(" ", MASKS[2].sub(" ", line))
    return " ".join(WORD.findall(line.lower()))


def shared_lines(vault: Path) -> tuple[set[str], set[str], int]:
    """The shared lines as read, those of them that were only links, images or HTML (a badge, a footer's links), and
    the number of notes."""
    holders: Counter = Counter()
    markup: set[str] = set()
    notes = sorted(vault.rglob("*.md"))
    for path in notes:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        read = {line: seen(line) for line in lines}
        holders.update({s for s in read.values() if len(s.split()) >= 2})
        markup.update(s for line, s in read.items() if line.lstrip().startswith(("![", "[", "<")))
    floor = max(5, SHARED_SHARE * len(notes))
    shared = {line for line, n in holders.items() if n >= floor}
    return shared, shared & markup, len(notes)


def mostly_shared(text: str, shared: set[str]) -> bool:
    """Whether a snippet is blank, or says little beyond shared lines (under 4 words, and under 40 %, of its own)."""
    words = seen(text)
    rest = words
    for line in sorted(shared, key=len, reverse=True):
        rest = rest.replace(line, " ")
    left = len(rest.split())
    return not words or left < 4 and left < 0.4 * len(words.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--home", type=Path, required=True, help="data home (reused when it exists)")
    parser.add_argument("--titles", type=int, default=150)
    parser.add_argument("--seed", type=int, default=52)
    args = parser.parse_args()
    shared, markup, note_count = shared_lines(args.vault)
    markup_words = {w for line in markup for w in line.split()}
    print(f"{note_count} notes; {len(shared)} shared lines, {len(markup)} of them badges or links: {sorted(markup)}")
    home = Home(Settings.from_env(args.home))
    if "vault" not in {p.name for p in home.projects()}:
        home.add_project(args.vault, "vault")
    engine = Engine(home)
    try:
        started = time.monotonic()
        engine.writer("vault").embed_pending()
        print(f"indexed and embedded in {time.monotonic() - started:.0f} s")
        docs = engine.documents("vault", limit=20000)["documents"]
        titles = Counter(d["title"] for d in docs)
        unique = [d for d in docs if titles[d["title"]] == 1 and d["path"].endswith(".md")]
        picked = random.Random(args.seed).sample(unique, min(args.titles, len(unique)))
        body = {d["path"] for d in docs}  # every note; those with no words of their own are told apart below

        rows = firsts = bad = bad_first = 0
        hits = Counter()
        for d in picked:
            answer = engine.search(SearchRequest(d["title"], project="vault", limit=10, group=True))["results"]
            for place, r in enumerate(answer):
                if r["path"] not in body:
                    continue
                rows += 1
                poor = mostly_shared(r["snippet"], shared)
                bad += poor
                if place == 0:
                    firsts += 1
                    bad_first += poor
            hits["hybrid"] += bool(answer) and answer[0]["path"] == d["path"]
            vault = engine.search(SearchRequest(d["title"], mode="vault", project="vault", limit=5))["results"]
            hits["vault_search"] += bool(vault) and vault[0]["path"] == d["path"]
            keyword = engine.search(SearchRequest(d["title"], mode="keyword", project="vault", limit=5,
                                                  group=True))["results"]
            hits["keyword"] += bool(keyword) and keyword[0]["path"] == d["path"]
        print(f"snippets blank or mostly shared text: {bad}/{rows} = {bad / max(rows, 1):.1%}; "
              f"first results: {bad_first}/{firsts}")
        print(f"notes titled by a shared line: {sum(seen(d['title']) in shared for d in docs)}")
        print("own title first (hit@1): " + ", ".join(f"{m} {hits[m] / len(picked):.3f}" for m in
                                                       ("hybrid", "vault_search", "keyword")))

        from_footer = url_reasons = opened = 0
        for d in picked[:40]:
            found = engine.link_suggestions(d["path"], project="vault")
            opened += 1
            mentions = found["unlinked_mentions"]
            from_footer += bool(mentions) and seen(mentions[0]["text"]) in shared
            for r in found["close_in_meaning"]:
                words = r["reason"].split("shares rare words: ")[-1] if "rare words" in r["reason"] else ""
                url_reasons += any(w.strip() in URL_WORDS for w in words.split(","))
        print(f"link suggestions: first mention on a shared line in {from_footer}/{opened} notes; "
              f"suggestions by meaning with an address's word among their rare words: {url_reasons}")

        graph = engine.graphs.graph("vault")
        names = [c["label"] for c in graph["clusters"]]
        own = Counter(w for d in docs for w in WORD.findall(d["title"].lower()))
        from_shared = [n for n in names if any(w in markup_words and own[w] < 3 for w in WORD.findall(n.lower()))]
        print(f"cluster names from shared badges or links: {len(from_shared)}/{len(names)} {from_shared[:6]}")

        from indexer.engine import RelatedTextRequest
        related = engine.related_text(RelatedTextRequest(text=SOURDOUGH[1], title=SOURDOUGH[0], project="vault"))
        print(f"related to a sourdough page: {len(related['results'])} notes "
              f"{[(r['title'], r['reason'][:60]) for r in related['results'][:3]]}")
    finally:
        engine.close()


if __name__ == "__main__":
    main()
