"""What preparing a model costs on a first start, and what its copies cost afterwards: for each model, on an empty
model cache, the seconds and peak memory of making its copies, the disk they take, and then the memory of a process
that loads them and embeds passages of a real corpus and questions about them (what a server holds). The English
model is the baseline measured in the same run: the multilingual model's figures are printed beside it as ratios.

    PYTHONPATH=. .venv/bin/python tests/bench/bench_model_copies.py [--passages 400] [--keep DIR]

Each step runs in a process of its own, so that its memory is its own. Run it from the tree whose copies you measure
(an older tree's copies: copy this file there). The passages are tldr pages (../shared/corpora): English pages for the
English model, the Chinese ones for the multilingual model.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "corpora"
CORPUS = {"english": CORPORA / "tldr-en", "multilingual": CORPORA / "tldr-i18n" / "zh"}

MAKE = """
import json, resource, sys, time
from pathlib import Path
from indexer.model.embeddings import Embedder
started = time.monotonic()
embedder = Embedder(model=sys.argv[1], cache_dir=Path(sys.argv[2]))
ok = embedder.load()
print(json.dumps({"ok": ok, "reason": embedder.now.reason, "seconds": time.monotonic() - started,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

USE = """
import json, resource, sys, time
from pathlib import Path
from indexer.model.embeddings import Embedder

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

files = sorted(Path(sys.argv[3]).rglob("*.md"))[: int(sys.argv[4])]
passages = [f.read_text(encoding="utf-8")[:1500] for f in files]
questions = [p.splitlines()[0].lstrip("# ") for p in passages[:50]]
embedder = Embedder(model=sys.argv[1], cache_dir=Path(sys.argv[2]))
before = rss_mb()
started = time.monotonic()
embedder.load()
loaded = time.monotonic() - started
embedder.embed(passages)
for question in questions:
    embedder.embed_query(question)
print(json.dumps({"load_seconds": loaded, "rss_mb": rss_mb() - before,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        raise SystemExit(f"the step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def measure(model: str, passages: int, cache: Path) -> dict:
    made = run(MAKE, model, str(cache))
    if not made["ok"]:
        raise SystemExit(f"{model}: the copies could not be made: {made['reason']}")
    used = run(USE, model, str(cache), str(CORPUS[model]), str(passages))
    return {"make_s": made["seconds"], "make_peak_mb": made["peak_mb"], "disk_mb": disk_mb(cache),
            "load_s": used["load_seconds"], "use_rss_mb": used["rss_mb"], "use_peak_mb": used["peak_mb"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=400)
    parser.add_argument("--keep", type=Path, help="make the caches here and keep them (else a temporary folder)")
    args = parser.parse_args()
    for corpus in CORPUS.values():
        if not corpus.is_dir():
            raise SystemExit(f"{corpus} is missing: this bench reads the shared corpora beside the checkout")
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-copies-"))
    results = {}
    try:
        for model in CORPUS:
            cache = base / model
            shutil.rmtree(cache, ignore_errors=True)
            results[model] = measure(model, args.passages, cache)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    english, multi = results["english"], results["multilingual"]
    print(f"{'':24}{'english':>10}{'multilingual':>14}{'ratio':>8}")
    for key, label in (("make_s", "making the copies, s"), ("make_peak_mb", "  its peak memory, MB"),
                       ("disk_mb", "copies on disk, MB"), ("load_s", "loading them, s"),
                       ("use_rss_mb", "memory in use, MB"), ("use_peak_mb", "  peak, MB")):
        print(f"{label:24}{english[key]:>10.1f}{multi[key]:>14.1f}{multi[key] / max(english[key], 1e-9):>7.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
