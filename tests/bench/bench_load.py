"""Load on a real `skmemory serve`: many concurrent mixed searches while another vault embeds.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_load.py
    .venv/bin/python tests/bench/bench_load.py --search ../shared/corpora/logseq-docs \\
        --embed ../shared/corpora/tldr-en --clients 50 --seconds 60

It indexes --search fully (model included) in a fresh data home, starts `skmemory serve`, and measures in one run:
1. the baseline: one client's searches, one at a time, on the idle server;
2. the embedder alone: --embed is added through the API and its chunks/s measured with no searches;
3. the load: --clients threads send mixed searches (hybrid, keyword, semantic and tag through GET /api/search,
   vault_search through POST) for --seconds while --embed keeps embedding, and the embedder's chunks/s again.
It prints errors, p50/p95/p99 under load beside the baseline, and the embedder's rate under load beside idle.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO.parent / "shared" / "corpora"
SKMEMORY = [sys.executable, "-m", "webapp.cli"]
HEADERS = {"X-SKMemory-Client": "bench_load", "Content-Type": "application/json"}


def request(port: int, path: str, body: dict | None = None, timeout: float = 120) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=HEADERS,
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as response:
        return json.load(response)


def project_state(port: int, name: str) -> dict:
    status = request(port, "/api/status")
    return next((p for p in status["projects"] if p.get("project") == name), {})


def queries_from(port: int) -> list[tuple[str, dict | None]]:
    """Mixed searches built from the search project's own titles and tags."""
    docs = request(port, "/api/documents?project=search&limit=1000")["documents"]
    tags = [t["tag"] for t in request(port, "/api/tags?project=search&limit=50")["tags"]] or ["x"]
    words = [d["title"] for d in docs if d["title"]]
    rng = random.Random(7)
    out: list[tuple[str, dict | None]] = []
    for i in range(400):
        title = rng.choice(words)
        mode = ("hybrid", "keyword", "semantic", "tag", "vault")[i % 5]
        if mode == "vault":
            out.append(("/api/vault_search", {"query": title, "project": "search", "limit": 10}))
        elif mode == "tag":
            params = {"mode": "tag", "tags_all": rng.choice(tags), "project": "search"}
            out.append((f"/api/search?{urllib.parse.urlencode(params)}", None))
        else:
            params = {"q": title, "mode": mode, "project": "search", "limit": 10}
            out.append((f"/api/search?{urllib.parse.urlencode(params)}", None))
    return out


def percentiles(values: list[float]) -> tuple[float, float, float]:
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))] * 1000  # noqa: E731
    return pick(0.5), pick(0.95), pick(0.99)


def embedded_now(port: int) -> int:
    return project_state(port, "embed").get("embedded", 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--search", type=Path, default=CORPORA / "logseq-docs")
    parser.add_argument("--embed", type=Path, default=CORPORA / "tldr-en")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle-seconds", type=float, default=20, help="how long the embedder is timed alone")
    parser.add_argument("--idle-searches", type=int, default=300,
                        help="how many searches one client sends to the idle server, for the baseline (at most 400)")
    args = parser.parse_args()
    for folder in (args.search, args.embed):
        if not folder.is_dir():
            sys.exit(f"{folder} is not a folder (the defaults need ../shared/corpora beside the checkout)")

    home = Path(tempfile.mkdtemp(prefix="skm-bench-load-"))
    port = int(os.environ.get("BENCH_PORT") or 8790)
    env = {**os.environ, "SKMEMORY_HOME": str(home), "SKMEMORY_PORT": str(port)}
    subprocess.run(SKMEMORY + ["add", str(args.search), "--name", "search"], env=env, check=True, capture_output=True)
    print(f"indexing {args.search} ...", flush=True)
    subprocess.run(SKMEMORY + ["index", "search"], env=env, check=True, capture_output=True)
    server = subprocess.Popen(SKMEMORY + ["serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                ready = request(port, "/api/status")["embeddings"] == "ready"
                if ready and project_state(port, "search").get("chunks"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit("the server did not become ready")
            time.sleep(0.5)
        queries = queries_from(port)
        window_queries = [(urllib.parse.parse_qs(p.split("?", 1)[1])["q"][0], None) for p, _ in queries
                          if "mode=hybrid" in p]

        idle = []
        for path, body in queries[:args.idle_searches]:
            started = time.perf_counter()
            request(port, path, body)
            idle.append(time.perf_counter() - started)

        request(port, "/api/projects", {"path": str(args.embed.resolve()), "name": "embed"})
        while not embedded_now(port):
            time.sleep(0.5)
        first, started = embedded_now(port), time.monotonic()
        time.sleep(args.idle_seconds)
        idle_rate = (embedded_now(port) - first) / (time.monotonic() - started)

        latencies: list[float] = []
        by_kind: dict[str, list[float]] = {}
        errors: list[str] = []
        lock = threading.Lock()
        stop = time.monotonic() + args.seconds

        def client(seed: int) -> None:
            rng = random.Random(seed)
            while time.monotonic() < stop:
                path, body = rng.choice(queries)
                began = time.perf_counter()
                try:
                    request(port, path, body)
                    with lock:
                        latencies.append(time.perf_counter() - began)
                        by_kind.setdefault(kind_of(path), []).append(latencies[-1])
                except (urllib.error.URLError, OSError, ValueError) as exc:
                    with lock:
                        errors.append(f"{path.split('?')[0]}: {exc}")

        person: list[float] = []

        def window() -> None:  # a person typing in the search window meanwhile: one search at a time, as htmx sends
            rng = random.Random(99)
            titles = [q for q, _ in window_queries]
            while time.monotonic() < stop:
                began = time.perf_counter()
                try:
                    params = urllib.parse.urlencode({"q": rng.choice(titles), "project": "search"})
                    req = urllib.request.Request(f"http://127.0.0.1:{port}/search?{params}",
                                                 headers={"HX-Request": "true"})
                    with urllib.request.urlopen(req, timeout=120) as response:
                        response.read()
                    person.append(time.perf_counter() - began)
                except (urllib.error.URLError, OSError) as exc:
                    with lock:
                        errors.append(f"/search: {exc}")
                time.sleep(0.2)

        peak = {"rss": 0, "pss": 0}

        def sample() -> None:  # the server's resident memory as ps and the OOM killer count it, and its share
            while time.monotonic() < stop:
                peak["rss"] = max(peak["rss"], memory_kb(server.pid, "status", "VmRSS:"))
                peak["pss"] = max(peak["pss"], memory_kb(server.pid, "smaps_rollup", "Pss:"))
                time.sleep(0.5)

        first, started = embedded_now(port), time.monotonic()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        threads.append(threading.Thread(target=sample))
        threads.append(threading.Thread(target=window))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        load_rate = (embedded_now(port) - first) / (time.monotonic() - started)
        pending = project_state(port, "embed").get("pending")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)

    i50, i95, i99 = percentiles(idle)
    l50, l95, l99 = percentiles(latencies) if latencies else (float("nan"),) * 3
    print(f"\nsearches under load: {len(latencies)} answered, {len(errors)} errors, {args.clients} clients, "
          f"{args.seconds:.0f} s, the embed vault still embedding ({pending} chunks pending at the end)")
    for error in sorted(set(errors))[:10]:
        print(f"  error: {error}")
    print(f"{'':24}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}")
    print(f"{'one client, idle':24}{i50:10.0f}{i95:10.0f}{i99:10.0f}")
    print(f"{f'{args.clients} clients, embedding':24}{l50:10.0f}{l95:10.0f}{l99:10.0f}")
    print(f"{'ratio':24}{l50 / i50:10.1f}{l95 / i95:10.1f}{l99 / i99:10.1f}")
    for kind, values in sorted(by_kind.items()):
        k50, k95, k99 = percentiles(values)
        print(f"{f'  {kind} ({len(values)})':24}{k50:10.0f}{k95:10.0f}{k99:10.0f}")
    if person:
        w50, w95, w99 = percentiles(person)
        print(f"{f'the window meanwhile ({len(person)})':24}{w50:10.0f}{w95:10.0f}{w99:10.0f}  (a person's searches, "
              "one at a time)")
    print(f"embedder: {idle_rate:.1f} chunks/s alone, {load_rate:.1f} chunks/s under load "
          f"({load_rate / idle_rate:.2f}x)" if idle_rate else "embedder: no progress measured alone")
    print(f"throughput: one client {len(idle) / sum(idle):.1f} searches/s idle, {args.clients} clients "
          f"{len(latencies) / args.seconds:.1f} searches/s under load; server memory at most "
          f"{peak['rss'] / 2**20:.2f} GB RSS ({peak['pss'] / 2**20:.2f} GB PSS); data home {home}")


def kind_of(path: str) -> str:
    """The search a request makes: vault, or /api/search's mode."""
    if not path.startswith("/api/search?"):
        return path.rsplit("/", 1)[-1]
    return urllib.parse.parse_qs(path.split("?", 1)[1]).get("mode", ["hybrid"])[0]


def memory_kb(pid: int, name: str, field: str) -> int:
    """A memory figure of /proc/PID/NAME in kB (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    main()
