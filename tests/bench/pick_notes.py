"""Pick notes of a corpus at random, with a fixed seed, to write graded questions from before any search is run.

Run by hand:

    .venv/bin/python tests/bench/pick_notes.py tldr-en --count 60 --seed 36

Prints each picked note's path and its opening (the first `--chars` characters of its text, frontmatter left out),
so that a question is written from what the note says, in other words than it uses. The seed and the count are
recorded in the question file (`picked_by`), so anyone can list the same notes again. Notes shorter than
`--min-chars` are skipped (there is nothing to ask about an empty daily note), and so are the notes a question file
already asks about (`--skip-used FILE`), to write more questions from notes no question has used yet.
"""
from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def candidates(vault: Path, min_chars: int) -> list[Path]:
    """Markdown notes of the vault, in a stable order, long enough to ask about."""
    notes = sorted(p for p in vault.rglob("*.md") if p.is_file() and not p.name.startswith("LICENSE"))
    return [p for p in notes if len(FRONTMATTER.sub("", p.read_text(errors="replace")).strip()) >= min_chars]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", help="a folder of the corpora, e.g. tldr-en")
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--chars", type=int, default=700)
    parser.add_argument("--min-chars", type=int, default=200)
    parser.add_argument("--skip-used", type=Path, help="a question file: leave out the notes its questions ask about")
    args = parser.parse_args()
    vault = args.corpora / args.corpus
    notes = candidates(vault, args.min_chars)
    if args.skip_used:
        spec = json.loads(args.skip_used.read_text(encoding="utf-8"))
        used = {path for item in spec.get("questions", []) for path in item["relevant"]}
        notes = [p for p in notes if p.relative_to(vault).as_posix() not in used]
    for path in random.Random(args.seed).sample(notes, min(args.count, len(notes))):
        text = FRONTMATTER.sub("", path.read_text(errors="replace")).strip()
        print(f"=== {path.relative_to(vault).as_posix()}\n{text[:args.chars]}\n")


if __name__ == "__main__":
    main()
