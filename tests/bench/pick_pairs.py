"""Pick pages that exist in two languages, with fixed seeds, to write questions asked in one language and answered
by the page in the other (tests/bench/questions/cross/) before any search is run.

Run by hand:

    .venv/bin/python tests/bench/pick_pairs.py            # issue 53's sets
    .venv/bin/python tests/bench/pick_pairs.py --issue 59 # issue 59's: ru and es asked of tldr-en, en of zh, mixed

For each of zh, ja, ru, de (seeds 5310-5313) it samples pages of tldr-i18n/<lang> whose path tldr-en also has, leaving
out aliases (a page that only names another command) and pages under 250 characters; alternately it prints the
English description (write an English question, answered by the page in <lang>) and the page's own description
(write a question in <lang>, answered by the English page).
"""
from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
ALIAS = re.compile(r"alias|别名|エイリアス|псевдоним", re.I)
COUNTS = (("zh", 16), ("ja", 12), ("ru", 12), ("de", 8))
# Issue 59's sets: (file, the pages' corpus, the language asked in, seed, count). The English pages asked in Russian
# or Spanish need no page in that language; the mixed vault's pages come from tests/bench/mixed_vault.py.
ISSUE_59 = (("tldr-en-asked-in-russian", "tldr-en", "ru", 5901, 40),
            ("tldr-en-asked-in-spanish", "tldr-en", "es", 5902, 40),
            ("tldr-zh-asked-in-english-2", "tldr-i18n/zh", "en", 5903, 40))
MIXED_COUNT = 45


def description(page: Path) -> str:
    return next((line[2:] for line in page.read_text(errors="replace").splitlines() if line.startswith("> ")), "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--issue", type=int, choices=(53, 59), default=53)
    args = parser.parse_args()
    if args.issue == 59:
        return issue_59(args.corpora)
    english = args.corpora / "tldr-en"
    for seed, (lang, count) in enumerate(COUNTS, start=5310):
        root = args.corpora / "tldr-i18n" / lang
        pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")
                       if (english / p.relative_to(root)).exists())
        pages = [p for p in pages if not ALIAS.search(description(root / p)) and len((root / p).read_text()) > 250]
        print(f"##### {lang} (seed {seed})")
        for i, rel in enumerate(random.Random(seed).sample(pages, count)):
            asked, page = ("en", english / rel) if i % 2 == 0 else (lang, root / rel)
            print(f"ask in {asked}: {rel} | {description(page)}")


def issue_59(corpora: Path) -> None:
    """Print the pages of issue 59's sets: each with its description and its first two examples, to ask about."""
    for name, corpus, asked, seed, count in ISSUE_59:
        root = corpora / corpus
        pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if p.name != "LICENSE.md")
        pages = [p for p in pages if not ALIAS.search(description(root / p)) and len((root / p).read_text()) > 250]
        print(f"##### {name}: ask in {asked} (seed {seed})")
        for rel in random.Random(seed).sample(pages, count):
            print(f"{rel} | {description(root / rel)} | {examples(root / rel)}")
    from mixed_vault import picks, source  # beside this file

    chosen = picks(corpora)
    print("##### mixed-vault: ask in another language than the page's (seed 5905)")
    for i, rel in enumerate(random.Random(5905).sample(sorted(chosen), MIXED_COUNT)):
        lang = chosen[rel]
        others = [other for other in ("en", "zh", "ru") if other != lang]
        print(f"ask in {others[i % 2]}: {rel} ({lang}) | {description(source(corpora, lang) / rel)}")


def examples(page: Path) -> str:
    return " / ".join(line[2:].rstrip(":") for line in page.read_text(errors="replace").splitlines()
                      if line.startswith("- "))[:160]


if __name__ == "__main__":
    main()
