"""A vault in three languages made from tldr pages, the same on every machine: 400 English pages, 200 Chinese and
200 Russian, no command twice (a page's file name appears in one language only), at their tldr paths.

It is the mixed vault of issue 59's graded questions (tests/bench/questions/cross/mixed-vault.json): a bilingual
person's notes, where a question in one language is answered by a note in another. The benches make it in a
temporary folder (`make_mixed`); by hand:

    .venv/bin/python tests/bench/mixed_vault.py /tmp/mixed
"""
from __future__ import annotations

import argparse
import random
import re
import shutil
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
SEED = 5904
COUNTS = (("ru", 200), ("zh", 200), ("en", 400))  # the other languages first: their pages are fewer
ALIAS = re.compile(r"alias|别名|псевдоним", re.I)


def source(corpora: Path, lang: str) -> Path:
    return corpora / "tldr-en" if lang == "en" else corpora / "tldr-i18n" / lang


def description(page: Path) -> str:
    return next((line[2:] for line in page.read_text(errors="replace").splitlines() if line.startswith("> ")), "")


def picks(corpora: Path = CORPORA, seed: int = SEED) -> dict[str, str]:
    """rel path -> language of every page of the mixed vault."""
    rng = random.Random(seed)
    chosen: dict[str, str] = {}
    names: set[str] = set()
    for lang, count in COUNTS:
        root = source(corpora, lang)
        pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if p.name != "LICENSE.md")
        pages = [p for p in pages if len((root / p).read_text(errors="replace")) > 250
                 and not ALIAS.search(description(root / p))]
        rng.shuffle(pages)
        taken = 0
        for rel in pages:
            name = Path(rel).name
            if name in names:
                continue
            names.add(name)
            chosen[rel] = lang
            taken += 1
            if taken == count:
                break
    return chosen


def make_mixed(target: Path, corpora: Path = CORPORA, seed: int = SEED) -> dict[str, str]:
    """Copy the mixed vault's pages into `target`; return rel path -> language."""
    chosen = picks(corpora, seed)
    for rel, lang in chosen.items():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source(corpora, lang) / rel, dest)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", type=Path)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    args = parser.parse_args()
    chosen = make_mixed(args.target, args.corpora)
    print(f"{len(chosen)} pages in {args.target}")


if __name__ == "__main__":
    main()
