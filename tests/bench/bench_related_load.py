"""Six long texts asked about at once (POST /api/related) while a person searches by keyword: does the search wait?

Run by hand (not part of the test suite), with the code to measure as the working directory:

    .venv/bin/python tests/bench/bench_related_load.py                    # this checkout
    (cd /tmp/old && /work/main/.venv/bin/python tests/bench/bench_related_load.py)   # an older one, same machine

A real `skmemory serve` on tldr's Chinese pages (../shared/corpora/tldr-i18n/zh; --corpus another, such as tldr-en).
The texts are 1,000,000 characters of those Chinese pages with every space removed (the costliest case: one run of
characters, as a novel's page), six of them posted together, twice over; meanwhile one client asks a keyword search
every 0.2 s. Printed: one Chinese and one English text of 1,000,000 characters asked alone (seconds, and their
ratio), the keyword searches' p50/p95 alone and under the load (and their ratio), the slowest related answer, and
the server's peak resident memory (VmHWM) before the texts and after.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import CORPORA, SKMEMORY, memory_kb, percentiles, request  # noqa: E402

REPO = Path.cwd()  # the checkout whose server is measured (an older one too, run from its folder)


def peak_mb(pid: int) -> float:
    return memory_kb(pid, "status", "VmHWM:") / 1024


def keyword_times(port: int, words: list[str], until: float) -> list[float]:
    rng, times = random.Random(3), []
    while time.monotonic() < until:
        q = urllib.parse.urlencode({"q": rng.choice(words), "mode": "keyword", "project": "zh", "limit": 10})
        started = time.monotonic()
        request(port, f"/api/search?{q}")
        times.append(time.monotonic() - started)
        time.sleep(0.2)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPORA / "tldr-i18n" / "zh", help="the project searched")
    parser.add_argument("--text-from", type=Path, default=CORPORA / "tldr-i18n" / "zh",
                        help="the pages the Chinese texts are made of")
    parser.add_argument("--texts", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus} is not a folder (the default needs ../shared/corpora beside the checkout)")
    pages = sorted(args.corpus.rglob("*.md"))
    chinese = "".join("".join(p.read_text(encoding="utf-8").split()) for p in sorted(args.text_from.rglob("*.md")))
    text = (chinese * (1_000_000 // len(chinese) + 1))[:1_000_000]
    words = [p.stem for p in pages][:300]

    home = Path(tempfile.mkdtemp(prefix="skm-bench-related-"))
    port = int(os.environ.get("BENCH_PORT") or 8791)
    env = {**os.environ, "SKMEMORY_HOME": str(home), "SKMEMORY_PORT": str(port), "PYTHONPATH": str(REPO)}
    subprocess.run(SKMEMORY + ["add", str(args.corpus), "--name", "zh"], env=env, check=True, capture_output=True,
                   cwd=REPO)
    print(f"indexing {args.corpus} ({len(pages)} pages) ...", flush=True)
    subprocess.run(SKMEMORY + ["index", "zh"], env=env, check=True, capture_output=True, cwd=REPO)
    server = subprocess.Popen(SKMEMORY + ["serve"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                status = request(port, "/api/status")
                if status["embeddings"] == "ready" and all(p.get("pending") == 0 for p in status["projects"]):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit("the server did not become ready")
            time.sleep(0.5)
        alone = keyword_times(port, words, time.monotonic() + 15)
        before = peak_mb(server.pid)
        english = "".join(p.read_text(encoding="utf-8") for p in sorted((CORPORA / "tldr-en").rglob("*.md")))
        english = (english * (1_000_000 // max(len(english), 1) + 1))[:1_000_000]
        one = {}
        for name, page in (("Chinese", text), ("English", english)):  # one at a time, the server idle
            started = time.monotonic()
            request(port, "/api/related", {"text": page, "title": "page", "limit": 5}, timeout=300)
            one[name] = time.monotonic() - started
        slowest: list[float] = []

        def ask() -> None:
            started = time.monotonic()
            request(port, "/api/related", {"text": text, "title": "一页", "limit": 5}, timeout=300)
            slowest.append(time.monotonic() - started)

        loaded: list[float] = []
        for _ in range(args.rounds):
            askers = [threading.Thread(target=ask) for _ in range(args.texts)]
            for t in askers:
                t.start()
            while any(t.is_alive() for t in askers):  # one person searching by keyword meanwhile
                q = urllib.parse.urlencode({"q": random.choice(words), "mode": "keyword", "project": "zh"})
                started = time.monotonic()
                request(port, f"/api/search?{q}")
                loaded.append(time.monotonic() - started)
                time.sleep(0.2)
        a50, a95, _ = percentiles(alone)
        l50, l95, _ = percentiles(loaded)
        print(f"one 1,000,000-character text alone: Chinese {one['Chinese']:.2f} s, English {one['English']:.2f} s "
              f"({one['Chinese'] / one['English']:.1f}x)")
        print(f"keyword search alone:             p50 {a50:6.0f} ms  p95 {a95:6.0f} ms  ({len(alone)} searches)")
        print(f"keyword search beside {args.texts} related: p50 {l50:6.0f} ms  p95 {l95:6.0f} ms  ({len(loaded)} "
              f"searches; p95 {l95 / max(a95, 1):.1f}x alone)")
        print(f"slowest related answer: {max(slowest):.1f} s; server peak memory (VmHWM): {before:,.0f} MB before "
              f"the texts, {peak_mb(server.pid):,.0f} MB after")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
