"""The embedding pipeline against sentence-transformers' torch on the same passages, start-up included, on an idle
machine and beside a background load this bench starts itself, in one run.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_throughput.py ../shared/corpora/tldr-en --notes 1000
    .venv/bin/python tests/bench/bench_throughput.py ../shared/corpora/britannica-10k --notes 150 --load 2

A sample of the folder's notes is indexed keyword-only once (kept in --home). Each round then runs, each in a fresh
process and on a fresh copy of that index: the pipeline (`Project.embed_pending` as the server's embedder runs it:
its thread at low priority, the bulk backend SKMEMORY_EMBED_BACKEND picks, SQLite and Chroma writes included) and
torch (SentenceTransformer.encode of the same passages, batch 32, at the same priority). Each time counts from the
process's start, so loading the model is included. The background load is --load busy processes at the lowest
priority (nice 19), as a browser, an editor or a sync client leave a machine. Prints seconds and chunks/s of each,
and the pipeline's rate over torch's, idle and loaded, per round and as medians.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

PIPELINE = """
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, {repo!r})
from indexer.background import _lower_priority
from indexer.config import Settings
from indexer.home import Home
_lower_priority()
home = Home(Settings.from_env({home!r}))
with home.open_project("sample", role="bench") as project:
    done = project.embed_pending()
    print(json.dumps({{"chunks": done, "seconds": time.perf_counter() - started, "backend": home.embedder.backend,
                      "threads": home.embedder.workers}}))
"""

TORCH = """
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, {repo!r})
from indexer.background import _lower_priority
_lower_priority()
from indexer.config import default_model_path
from sentence_transformers import SentenceTransformer
texts = json.load(open({texts!r}))
model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
print(json.dumps({{"chunks": len(texts), "seconds": time.perf_counter() - started}}))
"""


def prepare(corpus: Path, notes: int, home: Path, seed: int) -> tuple[Path, list[str]]:
    """A keyword-only index of `notes` random notes of the corpus (kept in home), and the passages to embed."""
    from indexer.config import Settings
    from indexer.home import Home

    sample = home / "notes"
    if not sample.exists():
        files = sorted(p for p in corpus.rglob("*.md") if p.is_file())
        random.Random(seed).shuffle(files)
        for n, path in enumerate(files[:notes]):
            target = sample / f"{n:05d} {path.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    data = home / "data"
    settings = Settings.from_env(data)
    h = Home(settings)
    if not any(p.name == "sample" for p in h.registry.list()):
        h.add_project(sample, "sample")
    with h.open_project("sample", role="bench") as project:
        project.sync()
        texts = [r[0] for r in project.store.query(
            "SELECT embed_text FROM chunks WHERE NOT keyword_only AND embed_state = 'pending' ORDER BY rowid")]
    return data, texts


def run(script: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="a folder of notes, e.g. ../shared/corpora/tldr-en")
    parser.add_argument("--notes", type=int, default=1000, help="notes in the sample (default 1000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every measurement (default 2)")
    parser.add_argument("--load", type=int, default=2, help="busy processes at nice 19 for the loaded runs (default 2)")
    parser.add_argument("--home", type=Path, help="keep the sample and its index here (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        parser.error(f"{args.corpus} is not a folder")

    keep = args.home or Path(tempfile.mkdtemp(prefix="skm-throughput-"))
    keep.mkdir(parents=True, exist_ok=True)
    data, texts = prepare(args.corpus, args.notes, keep, args.seed)
    texts_file = keep / "texts.json"
    texts_file.write_text(json.dumps(texts))
    print(f"{args.corpus.name}: {args.notes} notes, {len(texts)} passages to embed, "
          f"{len(os.sched_getaffinity(0))} cores; background load: {args.load} busy processes at nice 19")

    results: dict[str, list[float]] = {}
    for round_ in range(1, args.rounds + 1):
        for loaded in (False, True):
            load = [subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", "while True: pass"])
                    for _ in range(args.load if loaded else 0)]
            try:
                with tempfile.TemporaryDirectory(prefix="skm-throughput-run-") as tmp:
                    copy = Path(tmp) / "data"
                    shutil.copytree(data, copy)
                    env = {**os.environ, "SKMEMORY_HOME": str(copy)}
                    ours = run(PIPELINE.format(repo=str(REPO), home=str(copy)), env)
                torch = run(TORCH.format(repo=str(REPO), texts=str(texts_file)), dict(os.environ))
            finally:
                for proc in load:
                    proc.kill()
                    proc.wait()
            label = "loaded" if loaded else "idle"
            rate, torch_rate = ours["chunks"] / ours["seconds"], torch["chunks"] / torch["seconds"]
            results.setdefault(label, []).append(rate / torch_rate)
            print(f"round {round_}, {label:6s}: pipeline ({ours['backend']}, {ours['threads']} threads) "
                  f"{ours['chunks']} chunks in {ours['seconds']:.1f} s = {rate:.1f}/s; torch {torch['seconds']:.1f} s "
                  f"= {torch_rate:.1f}/s; {rate / torch_rate:.2f}x torch")
    for label, ratios in results.items():
        print(f"median, {label}: pipeline {statistics.median(ratios):.2f}x torch's chunks/s, start-up included")
    if not args.home:
        shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s)")
