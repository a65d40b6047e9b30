"""What a person waits for in the window, on a real `skmemory serve` and in real Chromium: the first search after a
start, keystroke to results while typing, and Cluster View's first open.

Run by hand (not part of the test suite), on a data home that already holds an indexed, embedded project:

    .venv/bin/skmemory --home /tmp/bh-tldr add ../shared/corpora/tldr-en --name tldr
    .venv/bin/skmemory --home /tmp/bh-tldr index tldr
    .venv/bin/python tests/bench/bench_window.py --home /tmp/bh-tldr --project tldr

- first search after start: the server is started, and the moment it answers /api/health a hybrid search is sent;
  its time, and whether meaning answered (semantic_available) or keyword answered alone while the model loads.
- keystroke to results: real queries typed into the search box at --key-ms between keys; from the last key to the
  moment the results for the whole query are in the page (p50 / p95 over the queries and --rounds), and how often
  the results changed while typing; with --busy N beside N busy processes (a machine in use).
- Cluster View first open: /cluster opened once the server has warmed (the model and the graph), navigation start
  to the graph's first frame (the page's own timing), then a second open.

Each figure prints beside a baseline measured in the same run: the search API's own time for the same queries
(the floor a keystroke cannot beat), so a noisy machine reads as a ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/lib/chromium/chromium"
QUERIES = ["extract a tar archive", "list open network ports", "find files larger than", "git undo last commit",
           "resize an image", "show disk usage", "kill a process by name", "compress a folder to zip",
           "download a file with curl", "change file permissions"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 60) -> dict:
    request = urllib.request.Request(url, headers={"X-SKMemory-Client": "bench"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def start(home: str, port: int) -> tuple[subprocess.Popen, float, float]:
    """Start the server; return it, seconds until /api/health answered, and the monotonic time it did."""
    env = {**os.environ, "SKMEMORY_HOME": home}
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "webapp.cli", "serve", "--port", str(port)], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            get(f"http://127.0.0.1:{port}/api/health", timeout=1)
            answered = time.monotonic()
            return proc, answered - began, answered
        except OSError:
            if proc.poll() is not None:
                sys.exit("skmemory serve exited; run it by hand to see why")
            time.sleep(0.02)


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


def search_url(port: int, project: str, query: str, mode: str = "hybrid") -> str:
    args = urllib.parse.urlencode({"q": query, "mode": mode, "project": project})
    return f"http://127.0.0.1:{port}/api/search?{args}"


def warmed(port: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while get(f"http://127.0.0.1:{port}/api/status").get("embeddings") != "ready":
        if time.monotonic() > deadline:
            sys.exit("the model never loaded")
        time.sleep(0.2)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--key-ms", type=int, default=110, help="time between keys while typing")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--graph-wait", type=float, default=60, help="seconds to let the server warm the graph")
    parser.add_argument("--settle", type=float, default=0, help="seconds to wait after the model loads, before typing")
    parser.add_argument("--busy", type=int, default=0,
                        help="busy processes (nice 10) to run beside the server while typing: a machine in use")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port = free_port()
    proc, up, answered = start(args.home, port)
    try:
        sent = time.monotonic()
        first = get(search_url(port, args.project, "how do I extract a tar archive"))
        took = 1000 * (time.monotonic() - sent)
        how = "by meaning" if first["semantic_available"] else "keyword alone: " + first.get("semantic_reason", "")
        print(f"server answered /api/health {up:.2f} s after start; first hybrid search {took:.0f} ms ({how})")
        warmed(port)
        print(f"model ready {time.monotonic() - answered:.1f} s after the server answered")
        time.sleep(args.settle)
        busy = [subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while True: pass"])
                for _ in range(args.busy)]

        api_ms = []
        for _ in range(args.rounds):
            for q in QUERIES:
                t = time.perf_counter()
                get(search_url(port, args.project, q))
                api_ms.append(1000 * (time.perf_counter() - t))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"http://127.0.0.1:{port}/search?project={urllib.parse.quote(args.project)}")
            page.evaluate("""() => { window.__swaps = 0; document.body.addEventListener('htmx:afterSwap',
                e => { if (e.detail.target.id === 'results') window.__swaps++; }); }""")
            keystroke, updates = [], []
            for _ in range(args.rounds):
                for q in QUERIES:
                    page.fill("#q", "")
                    page.wait_for_timeout(300)
                    page.evaluate("() => { window.__swaps = 0; }")
                    page.locator("#q").press_sequentially(q[:-1], delay=args.key_ms)
                    page.wait_for_timeout(args.key_ms)
                    page.evaluate("() => { window.__lastKey = performance.now(); }")
                    page.locator("#q").press(q[-1])
                    # The window puts a search in the address once its results are in (hx-push-url).
                    page.wait_for_function("q => new URL(location).searchParams.get('q') === q", arg=q,
                                           timeout=30000)
                    keystroke.append(page.evaluate("() => performance.now() - window.__lastKey"))
                    updates.append(page.evaluate("() => window.__swaps"))
            print(f"hybrid API (the floor)  p50 {statistics.median(api_ms):6.0f} ms  p95 {pct(api_ms, .95):6.0f} ms")
            print(f"keystroke to results    p50 {statistics.median(keystroke):6.0f} ms  p95 "
                  f"{pct(keystroke, .95):6.0f} ms  ({len(keystroke)} queries typed at {args.key_ms} ms a key; "
                  f"results updated {statistics.mean(updates):.1f} times a query while typing, "
                  f"{args.busy} busy processes beside)")
            for proc_ in busy:
                proc_.kill()

            time.sleep(max(0.0, args.graph_wait - (time.monotonic() - answered)))
            for label in ("first open", "second open"):
                page.goto(f"http://127.0.0.1:{port}/cluster?project={urllib.parse.quote(args.project)}")
                page.wait_for_function(
                    "() => window.skmCluster && (window.skmCluster.ready || window.skmCluster.error)", timeout=120000)
                timings = page.evaluate("() => window.skmCluster.timings")
                print(f"Cluster View {label}: graph fetched {timings.get('fetch_ms')} ms, first frame "
                      f"{timings.get('first_render_ms')} ms after navigation")
            browser.close()
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
