"""Pick pages that exist in two languages, with fixed seeds, to write questions asked in one language and answered
by the page in the other (tests/bench/questions/cross/) before any search is run.

Run by hand:

    .venv/bin/python tests/bench/pick_pairs.py

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


def description(page: Path) -> str:
    return next((line[2:] for line in page.read_text(errors="replace").splitlines() if line.startswith("> ")), "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
