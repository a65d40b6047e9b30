"""How long Ctrl+C takes to stop `skmemory serve` and `skmemory index` while they work, and what they say.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_stop.py ../shared/corpora/tldr-en --after 30 90

For each command and each --after (seconds after start: parsing early, embedding later), a fresh data home gets
the folder as project "c", the command starts, SIGINT is sent, and the seconds until the process has exited are
printed with its exit code and its last lines. The goal is about a second whatever the command is doing.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKMEMORY = [sys.executable, "-m", "webapp.cli"]


def one(folder: Path, command: list[str], after: float) -> tuple[float, object, str]:
    home = Path(tempfile.mkdtemp(prefix="skm-bench-stop-"))
    env = {**os.environ, "SKMEMORY_HOME": str(home), "SKMEMORY_PORT": "8797"}
    try:
        subprocess.run(SKMEMORY + ["add", str(folder), "--name", "c"], env=env, check=True, capture_output=True)
        proc = subprocess.Popen(SKMEMORY + command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        time.sleep(after)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)
            code: object = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            code = "still running after 120 s"
        lines = [line.strip() for line in err.replace("\r", "\n").splitlines() if line.strip()]
        return time.monotonic() - started, code, " | ".join(lines[-2:])
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--after", type=float, nargs="+", default=[30.0, 90.0])
    args = parser.parse_args()
    for command in (["serve"], ["index", "c"]):
        for after in args.after:
            seconds, code, said = one(args.folder, command, after)
            print(f"skmemory {' '.join(command):<8} SIGINT after {after:>4.0f} s: stopped in {seconds:4.1f} s "
                  f"(exit {code}); said: {said}", flush=True)


if __name__ == "__main__":
    main()
