"""What a real vault shows wrong, counted (issue 61): snippets that lose what reading view shows, and Cluster View's
cluster names. Run by hand with the old code and the new on the same data, to put the figures side by side:

    .venv/bin/python tests/bench/real_vault_text.py snippets ../shared/corpora/tldr-en ../shared/corpora/tldr-i18n/zh
    .venv/bin/python tests/bench/real_vault_text.py clusters ../shared/corpora/tldr-i18n/zh --home /tmp/skm-zh \\
        --dump /tmp/zh-clusters.json
    (cd /tmp/old-checkout && PYTHONPATH=. ../main/.venv/bin/python tests/bench/real_vault_text.py names \\
        /tmp/zh-clusters.json)

`snippets`: every page's text as a snippet reads it (`display_text`): how many read "More information: ." (an
autolink dropped) and how many lost a `{{[-l|--lines]}}` option inside a code span.
`clusters`: indexes and embeds the folder with the real model (kept under --home, reused), builds its Forge Graph,
prints the cluster names and writes what they are named from (each document's cluster, title, tags and first
lines) to --dump; `names` names those same clusters with the code it runs under, so two versions name the very same
clusters.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def snippets(folders: list[Path]) -> None:
    from indexer.text.readable import display_text

    for folder in folders:
        pages = dropped = lost = 0
        for path in sorted(folder.rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            shown = display_text(text)
            pages += 1
            dropped += "More information: ." in shown or "更多信息：。" in shown.replace(" ", "")
            lost += "{{[" in text and "{{[" not in shown
        print(f"{folder}: {pages:,} pages; {dropped:,} read 'More information: .'; {lost:,} lost a "
              "{{[-x|--long]}} option")


def clusters(folder: Path, home_dir: Path, name: str, dump: Path) -> None:
    import indexer.graph.build as build
    from indexer.config import Settings
    from indexer.engine import Engine
    from indexer.home import Home

    home = Home(Settings.from_env(home_dir))
    if name not in {p.name for p in home.projects()}:
        home.add_project(folder, name)
    engine = Engine(home)
    engine.reindex(name)
    engine.embed_pending(name)
    seen: dict = {"inputs": []}
    describe, terms_of = build.cl.describe, build.cl.terms_of

    def spy_describe(labels, documents):
        seen["labels"] = list(labels)
        return describe(labels, documents)

    def spy_terms(title, tags, head):
        seen["inputs"].append((title, tags, head))
        return terms_of(title, tags, head)

    build.cl.describe, build.cl.terms_of = spy_describe, spy_terms
    try:
        graph = engine.graphs.graph(name)
    finally:
        build.cl.describe, build.cl.terms_of = describe, terms_of
        engine.close()
    dump.write_text(json.dumps({"labels": seen["labels"], "inputs": seen["inputs"]}, ensure_ascii=False))
    print(f"{len(graph['clusters'])} clusters; what they are named from: {dump}")
    names(dump)


def names(dump: Path) -> None:
    from indexer.graph import clusters as cl

    data = json.loads(dump.read_text())
    for label in cl.describe(data["labels"], [cl.terms_of(t, g, h) for t, g, h in data["inputs"]]):
        print(f"  {label}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("snippets")
    s.add_argument("folders", type=Path, nargs="+")
    c = sub.add_parser("clusters")
    c.add_argument("folder", type=Path)
    c.add_argument("--home", type=Path, required=True)
    c.add_argument("--name", default="vault")
    c.add_argument("--dump", type=Path, required=True)
    n = sub.add_parser("names")
    n.add_argument("dump", type=Path)
    args = parser.parse_args()
    if args.command == "snippets":
        snippets(args.folders)
    elif args.command == "clusters":
        clusters(args.folder, args.home, args.name, args.dump)
    else:
        names(args.dump)


if __name__ == "__main__":
    main()
