"""Every search mode's JSON answers for a few hundred real queries, written to a file, and two such files compared:
the check that a change of structure changed no result.

Run by hand (not part of the test suite), once with the old code and once with the new, on the same index:

    .venv/bin/python tests/bench/compare_answers.py build --home /tmp/skm-compare      # index the corpora once
    .venv/bin/python tests/bench/compare_answers.py dump --home /tmp/skm-compare --out new.json
    (cd /tmp/old-checkout && ../main/.venv/bin/python tests/bench/compare_answers.py dump --home /tmp/skm-compare \
        --out old.json)
    .venv/bin/python tests/bench/compare_answers.py diff old.json new.json

The projects are kepano-obsidian, logseq-docs and a sample of SciFact (the first --scifact abstracts, each a note),
from ../shared/corpora (or --corpora DIR). The queries of each project: the graded questions of tests/bench/questions,
note titles, single words and two-word phrases drawn from the notes, and (SciFact) the test claims. Each query is
asked in every spec-000 mode (hybrid, semantic, recency, keyword), grouped by document, with explain, across all
projects, of vault_search (with explain), of agent context and of memory search; tag search for each project's
most used tags; explain_document for one document per query. Recency scores move with the clock, so recency is
compared by order alone.

The dump reads the index through a read-only engine, so the old and new code read the very same files.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer import ContextRequest, MemoryRequest, SearchRequest  # noqa: E402

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
QUESTIONS = Path(__file__).resolve().parent / "questions"
WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
SEARCH_MODES = ("hybrid", "semantic", "recency", "keyword")
LIMIT = 20


def build(home_dir: Path, corpora: Path, scifact: int) -> None:
    """Register the three projects and index and embed them with the real model."""
    home_dir.mkdir(parents=True, exist_ok=True)
    notes = home_dir / "scifact-notes"
    notes.mkdir(exist_ok=True)
    with (corpora / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= scifact:
                break
            doc = json.loads(line)
            (notes / f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
    home = Home(Settings.from_env(home_dir / "data"))
    for name, folder in (("kepano", corpora / "kepano-obsidian"), ("logseq", corpora / "logseq-docs"),
                         ("scifact", notes)):
        if name not in {p.name for p in home.projects()}:
            home.add_project(str(folder), name)
    engine = Engine(home)
    try:
        for name in ("kepano", "logseq", "scifact"):
            started = time.perf_counter()
            project = engine.writer(name)
            done = project.embed_pending()
            print(f"{name}: {project.store.counts()} ({done} embedded, {time.perf_counter() - started:.0f} s)")
    finally:
        engine.close()


def queries_for(engine: Engine, project: str, corpora: Path, rng: random.Random) -> list[str]:
    """About 120 queries drawn from the project's own notes and questions."""
    out: list[str] = []
    graded = {"kepano": "kepano-obsidian.json", "logseq": "logseq-docs.json"}.get(project)
    if graded:
        data = json.loads((QUESTIONS / graded).read_text())
        out += [q["q"] for q in data.get("questions", [])][:40]
        out += [q["q"] for q in data.get("exact", [])][:15]
    if project == "scifact":
        with (corpora / "scifact" / "queries.test.jsonl").open(encoding="utf-8") as f:
            out += [json.loads(line)["text"] for line in f][:50]
    docs = engine.documents(project, limit=1000)["documents"]
    rng.shuffle(docs)
    out += [d["title"] for d in docs[:25]]
    words: list[str] = []
    for d in docs[:40]:
        text = engine.document(d["document_id"], project)["content"]
        found = WORD.findall(text)
        if found:
            words.append(rng.choice(found).lower())
            if len(found) > 3:
                i = rng.randrange(len(found) - 1)
                words.append(f"{found[i]} {found[i + 1]}".lower())
    out += words[:45]
    out += ["the", "and", "how to", '"exact phrase" test', "kan ban", "a", "notes"]
    return list(dict.fromkeys(q for q in out if q.strip()))


def _search(engine: Engine, **kw) -> dict:
    try:
        return engine.search(SearchRequest(kw.pop("query"), **kw))
    except Exception as exc:  # a refusal is an answer too
        return {"error": type(exc).__name__, "detail": str(exc)}


def _call(fn, *args, **kw) -> dict:
    try:
        return fn(*args, **kw)
    except Exception as exc:
        return {"error": type(exc).__name__, "detail": str(exc)}


def _clock_free(answer: dict) -> dict:
    """A recency answer without its scores (they move with the clock)."""
    for r in answer.get("results", []):
        r.pop("similarity", None)
        r.pop("score", None)
        r.pop("cosine", None)
        if "explain" in r:
            r.pop("explain")
    return answer


def dump(home_dir: Path, out: Path, corpora: Path, per_project: int) -> None:
    home = Home(Settings.from_env(home_dir / "data"))
    engine = Engine(home, read_only=True)
    rng = random.Random(25)
    answers: dict[str, object] = {}
    started = time.perf_counter()
    try:
        for project in ("kepano", "logseq", "scifact"):
            queries = queries_for(engine, project, corpora, rng)[:per_project]
            tags = [t["tag"] for t in engine.tags(project, limit=5)["tags"]]
            for tag in tags:
                answers[f"{project}|tag|{tag}"] = _search(engine, query="", mode="tag", project=project,
                                                          tags_all=[tag], limit=LIMIT)
            for q in queries:
                key = f"{project}|{q}"
                for mode in SEARCH_MODES:
                    answer = _search(engine, query=q, mode=mode, project=project, limit=LIMIT)
                    answers[f"{key}|{mode}"] = _clock_free(answer) if mode == "recency" else answer
                answers[f"{key}|hybrid-explain"] = _search(engine, query=q, mode="hybrid", project=project,
                                                           limit=LIMIT, explain=True)
                answers[f"{key}|hybrid-group"] = _search(engine, query=q, mode="hybrid", project=project,
                                                         limit=10, group=True)
                answers[f"{key}|window"] = _search(engine, query=q, mode="hybrid", project=project, limit=30,
                                                   explain=True, group=True)
                if tags:
                    answers[f"{key}|hybrid-tag"] = _search(engine, query=q, mode="hybrid", project=project,
                                                           tags_any=tags[:2], limit=LIMIT)
                first = next((r["document_id"] for r in answers[f"{key}|hybrid"].get("results", [])[3:4]), None)
                if first:
                    answers[f"{key}|explain-document"] = _search(engine, query=q, mode="hybrid", project=project,
                                                                 limit=3, explain_document=first)
                answers[f"{key}|vault"] = _search(engine, query=q, mode="vault", limit=LIMIT, project=project)
                answers[f"{key}|vault-explain"] = _search(engine, query=q, mode="vault", limit=10, project=project,
                                                          explain=True, explain_document=first)
                answers[f"{key}|context"] = _call(lambda: engine.context(ContextRequest(q, project=project,
                                                                                        token_budget=800)))
                answers[f"{key}|memory"] = _call(lambda: engine.memory_search(MemoryRequest(
                    "content", " ".join(q.split()[:3]), project)))
            for q in queries[:15]:
                answers[f"all|{q}|hybrid"] = _search(engine, query=q, mode="hybrid", scope="all", limit=LIMIT)
                answers[f"all|{q}|keyword"] = _search(engine, query=q, mode="keyword", scope="all", limit=LIMIT)
    finally:
        engine.close()
    out.write_text(json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False, default=str))
    print(f"{len(answers)} answers written to {out} in {time.perf_counter() - started:.0f} s")


def _walk(a, b, path: str, out: list[str], renamed: dict[str, str] | None = None) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for old_name, new_name in (renamed or {}).items():  # a field the new code names otherwise
            if old_name in a and old_name not in b and new_name in b and new_name not in a:
                a = {**{k: v for k, v in a.items() if k != old_name}, new_name: a[old_name]}
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}.{k}: only new")
            elif k not in b:
                out.append(f"{path}.{k}: only old")
            else:
                _walk(a[k], b[k], f"{path}.{k}", out, renamed)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items old, {len(b)} new")
        for i, (x, y) in enumerate(zip(a, b)):
            _walk(x, y, f"{path}[{i}]", out, renamed)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}")


def diff(old: Path, new: Path, ignore: list[str], renamed: dict[str, str] | None = None) -> int:
    """Print where two dumps differ (fields named by --ignore left out, fields --renamed compared under their new
    name); return how many answers differ."""
    a, b = json.loads(old.read_text()), json.loads(new.read_text())
    pattern = re.compile("|".join(ignore)) if ignore else None
    differing, lines_out = 0, []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            differing += 1
            lines_out.append(f"{key}: only in {'new' if key not in a else 'old'}")
            continue
        found: list[str] = []
        _walk(a[key], b[key], "", found, renamed)
        if pattern:
            found = [f for f in found if not pattern.search(f)]
        if found:
            differing += 1
            lines_out += [f"{key}: {f}" for f in found[:5]]
    print("\n".join(lines_out[:200]))
    modes = sorted({"tag" if "|tag|" in k else k.rsplit("|", 1)[-1] for k in a})
    print(f"{len(a)} answers old, {len(b)} new, over {len(modes)} kinds ({', '.join(modes)}); "
          f"{differing} differ")
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="index and embed the corpora in a data home")
    b.add_argument("--home", type=Path, required=True)
    b.add_argument("--corpora", type=Path, default=CORPORA)
    b.add_argument("--scifact", type=int, default=1500, help="how many SciFact abstracts to index")
    d = sub.add_parser("dump", help="write every mode's answers to a file")
    d.add_argument("--home", type=Path, required=True)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--corpora", type=Path, default=CORPORA)
    d.add_argument("--queries", type=int, default=120, help="queries per project")
    c = sub.add_parser("diff", help="compare two dumps")
    c.add_argument("old", type=Path)
    c.add_argument("new", type=Path)
    c.add_argument("--ignore", action="append", default=[],
                   help="a regular expression: differences whose path matches it are not counted (repeatable)")
    c.add_argument("--renamed", action="append", default=[], metavar="OLD=NEW",
                   help="a field the new code names otherwise: compare the old one's value under the new name")
    args = parser.parse_args()
    if args.command == "build":
        build(args.home, args.corpora, args.scifact)
    elif args.command == "dump":
        dump(args.home, args.out, args.corpora, args.queries)
    else:
        renamed = dict(pair.split("=", 1) for pair in args.renamed)
        sys.exit(1 if diff(args.old, args.new, args.ignore, renamed) else 0)


if __name__ == "__main__":
    main()
