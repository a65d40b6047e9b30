"""What a running server holds for a Chinese project beside an English one of the same size: `skmemory serve` on the
tldr pages in Chinese (tldr-i18n/zh, embedded by multilingual-e5-small) and on the same pages in English (tldr-en,
all-MiniLM-L6-v2), each alone in its own data folder, indexed and embedded, then asked the same questions by meaning
and by hybrid search; its resident memory (VmRSS) and peak (VmHWM) once idle, and the English one's as the baseline:
a user's English project (which also holds the multilingual model, for questions in other languages) and the same
pages alone (a folder inside the data folder, as the demo: the English model only).

    PYTHONPATH=. .venv/bin/python tests/bench/bench_server_memory.py [--pages 1535] [--keep DIR] [--rest 40]

Each server is measured twice: on its first start, which indexes and embeds the pages in a fresh data folder, and
started again on that index; each time after the questions, after REST seconds at rest (past the 30 s after which
an idle server frees its bulk run buffers), and at its peak. The pages are copied to a temporary folder (or DIR,
kept for the next run; the data folders are always made afresh). Also measures `skmemory search` (semantic, one
question) on each, as a CLI user sees it: its peak memory.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "corpora"
ZH, EN = CORPORA / "tldr-i18n" / "zh", CORPORA / "tldr-en"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory(pid: int) -> dict:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            fields[line.split(":")[0]] = int(line.split()[1]) / 1024
    return fields


def vault(pages: int, base: Path) -> dict[str, Path]:
    """The first PAGES Chinese pages, and the same paths in English, copied under BASE (kept when there)."""
    names = sorted(p.relative_to(ZH) for p in ZH.rglob("*.md") if (EN / p.relative_to(ZH)).is_file())[:pages]
    folders = {"zh": base / "zh", "en": base / "en"}
    for language, source in (("zh", ZH), ("en", EN)):
        if folders[language].is_dir():
            continue
        for name in names:
            target = folders[language] / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, target)
    return folders


def status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=30) as response:
        return json.load(response)


def ask(port: int, question: str, mode: str) -> None:
    query = urllib.parse.urlencode({"q": question, "project": "notes", "mode": mode, "limit": 10})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/search?{query}", timeout=60) as response:
        response.read()


def questions(folder: Path, count: int) -> list[str]:
    """Each page's description line (its '> ' line), as a question about it."""
    found = []
    for page in sorted(folder.rglob("*.md")):
        line = next((s[2:].strip() for s in page.read_text(encoding="utf-8").splitlines() if s.startswith("> ")), "")
        if line:
            found.append(line)
        if len(found) >= count:
            break
    return found


def serve(folder: Path, home: Path, asked: list[str], rest: float) -> dict:
    """`skmemory serve` on HOME until it has embedded everything (its vectors across languages too), asked every
    question by meaning and by hybrid search, then left at rest for REST seconds: its memory then, and its peak."""
    env = {**os.environ, "SKMEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    if not (home / "registry.sqlite").exists():
        # A folder inside the data folder is registered as the demo is (`skmemory add` refuses one)
        code = ("import sys; from indexer.config import Settings; from indexer.home import Home\n"
                "Home(Settings.from_env(sys.argv[1])).registry.add(sys.argv[2], 'notes')")
        subprocess.run([sys.executable, "-c", code, str(home), str(folder)], env=env, check=True,
                       capture_output=True, cwd=ROOT)
    port = free_port()
    env["SKMEMORY_PORT"] = str(port)
    log = open(home / "serve.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "webapp.cli", "serve"], env=env, stdout=log,
                            stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        started = time.monotonic()
        while True:
            try:
                state = status(port)
                notes = next((p for p in state["projects"] if p["project"] == "notes"), None)
                if (state["embeddings"] == "ready" and notes and notes.get("chunks") and not notes.get("pending")
                        and not state.get("indexing") and (notes.get("across") or {}).get("ready", True)):
                    break
            except (OSError, KeyError, ValueError):
                pass
            if proc.poll() is not None:
                raise SystemExit(f"serve exited: {(home / 'serve.log').read_text()[-2000:]}")
            time.sleep(1)
        ready = time.monotonic() - started
        for question in asked:
            ask(port, question, "semantic")
            ask(port, question, "hybrid")
        asked_at = memory(proc.pid)
        time.sleep(rest)
        return {"ready_s": ready, "passages": notes["chunks"], "model": notes.get("model"),
                "asked_mb": asked_at["VmRSS"], **memory(proc.pid)}
    finally:
        proc.terminate()
        proc.wait(60)
        log.close()


def cli_search(home: Path, question: str) -> float:
    code = ("import resource, sys; from webapp.cli import cli\n"
            "try:\n    cli(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, "search", question, "--mode", "semantic"],
                          env={**os.environ, "SKMEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, cwd=ROOT)
    return float(done.stderr.rsplit("PEAK", 1)[-1].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1535)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--rest", type=float, default=40, help="seconds at rest before the memory is read")
    parser.add_argument("--keep", type=Path, help="copy and index here, and keep it for the next run")
    args = parser.parse_args()
    if not ZH.is_dir() or not EN.is_dir():
        raise SystemExit(f"{ZH} or {EN} is missing: this bench reads the shared corpora beside the checkout")
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-memory-"))
    results = {}
    try:
        folders = vault(args.pages, base)
        # The English pages once more inside the data folder, as the demo is kept: a project there gets no vectors
        # across languages, so its server holds the English model alone (a user's English project also holds the
        # multilingual one, which reads questions in other languages).
        plain = base / "home-en-alone" / "notes"
        if not plain.is_dir():
            shutil.copytree(folders["en"], plain)
        folders["en-alone"] = plain
        for run in ("en", "en-alone", "zh"):
            asked = questions(folders[run], args.questions)
            home = base / f"home-{run}"
            for old in home.glob("*"):  # every run indexes from nothing (the pages of en-alone stay)
                if old != folders[run]:
                    shutil.rmtree(old) if old.is_dir() else old.unlink()
            home.mkdir(parents=True, exist_ok=True)
            results[run] = {"first": serve(folders[run], home, asked, args.rest),
                            "again": serve(folders[run], home, asked, args.rest),
                            "cli_peak_mb": cli_search(home, asked[0])}
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    en, alone, zh = results["en"], results["en-alone"], results["zh"]
    print(f"{'':44}{'tldr-en':>9}{'en alone':>10}{'tldr-zh':>9}{'zh/en':>7}{'zh/alone':>10}")
    print(f"{'passages':44}{en['first']['passages']:>9}{alone['first']['passages']:>10}{zh['first']['passages']:>9}")
    rows = [(f"{said}: {label}", lambda r, s=start, k=key: r[s][k])
            for start, said in (("first", "first start"), ("again", "started again"))
            for key, label in (("asked_mb", "resident after the questions, MB"),
                               ("VmRSS", f"resident {args.rest:.0f} s later, MB"), ("VmHWM", "peak, MB"))]
    rows.append(("CLI semantic search peak, MB", lambda r: r["cli_peak_mb"]))
    for label, value in rows:
        print(f"{label:44}{value(en):>9.0f}{value(alone):>10.0f}{value(zh):>9.0f}{value(zh) / value(en):>6.2f}x"
              f"{value(zh) / value(alone):>9.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
