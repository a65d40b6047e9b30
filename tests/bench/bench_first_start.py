"""A new user's first start, timed as they see it: `skmemory serve --demo` on an empty model cache and a fresh data
folder, then the window asked a question at once and every second after, until meaning search is ready.

    PYTHONPATH=. .venv/bin/python tests/bench/bench_first_start.py [--question "keep a program running"] [--limit 400]

Prints, in seconds after the line "SK Memory is running at": the first answer in the window (a page with result
rows), when meaning search was ready, and for every second in between what the window's notice and /api/status said
(what is being prepared, and the estimate), so that a second in which either said nothing true shows. Needs nothing
from ../shared; run it from the tree to measure (an older tree: copy this file there).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 30) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")
    except OSError as exc:
        return 0, str(exc)


def notice(page: str) -> str:
    """The window's notice about meaning search, as text ('' when it shows none)."""
    found = re.search(r'id="loading-notice"[^>]*>(.*?)</(?:div|p|section)>', page, re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))).strip() if found else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--question", default="keep a program running after I log out")
    parser.add_argument("--limit", type=float, default=400, help="give up after this many seconds")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="first-start-"))
    env = {**os.environ, "SKMEMORY_MODEL_CACHE": str(base / "models"), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": str(ROOT)}  # this tree's code, whatever the environment's editable install points to
    port = free_port()
    started = time.monotonic()
    command = [sys.executable, "-m", "webapp.cli", "--home", str(base / "home"), "serve", "--demo", "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for line in server.stdout:
            if "SK Memory is running at" in line:
                break
        else:
            raise SystemExit("the server stopped before it said it was running")
        serving = time.monotonic()
        print(f"'running at' {serving - started:.1f} s after the command")
        page = f"{url}/search?q={urllib.parse.quote(args.question)}"
        first = ready = None
        timeline = []
        while time.monotonic() - serving < args.limit:
            tick = time.monotonic()
            code, html = get(page)
            at = time.monotonic() - serving
            rows = html.count('class="result')
            if first is None and code == 200 and rows:
                first = at
                print(f"first answer in the window: {first:.1f} s after 'running at' ({rows} rows)")
            _, status = get(f"{url}/api/status")
            try:
                state = json.loads(status)
            except ValueError:
                state = {}
            word, preparing = state.get("embeddings"), state.get("embeddings_preparing")
            said = notice(html)
            timeline.append((round(at, 1), word, preparing, said))
            print(f"{at:6.1f} s  status: {word}{' (' + preparing + ')' if preparing else ''}  window: {said[:140]}")
            if word == "ready" and not said:
                ready = at
                break
            time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
        silent = sum(1 for _, word, preparing, said in timeline if word != "ready" and not preparing and not said)
        print(json.dumps({"first_answer_s": first, "meaning_ready_s": ready, "seconds_polled": len(timeline),
                          "seconds_where_nothing_was_said": silent}))
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        import shutil

        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
