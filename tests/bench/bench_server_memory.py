"""What a running server holds for a Chinese project beside an English one of the same size: `skmemory serve` on the
tldr pages in Chinese (tldr-i18n/zh, embedded by multilingual-e5-small) and on the same pages in English (tldr-en,
all-MiniLM-L6-v2), each alone in its own data folder, indexed and embedded, then asked the same questions by meaning
and by hybrid search; its resident memory (VmRSS) and peak (VmHWM) once idle, and the English one's as the baseline:
a user's English project (which also holds the multilingual model, for questions in other languages) and the same
pages alone (a folder inside the data folder, as the demo: the English model only).

    PYTHONPATH=. .venv/bin/python tests/bench/bench_server_memory.py [--pages 1535] [--keep DIR] [--questions 60]

The pages are copied to a temporary folder (or DIR, kept and reused: the indexing is then not done again). Also
measures `skmemory search` (semantic, one question) on each, as a CLI user sees it: its peak memory.
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


def serve(folder: Path, home: Path, asked: list[str]) -> dict:
    env = {**os.environ, "SKMEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    if not (home / "registry.sqlite").exists():
        # A folder inside the data folder is registered as the demo is (`skmemory add` refuses one)
        code = ("import sys; from indexer.config import Settings; from indexer.home import Home\n"
                "Home(Settings.from_env(sys.argv[1])).registry.add(sys.argv[2], 'notes')")
        subprocess.run([sys.executable, "-c", code, str(home), str(folder)], env=env, check=True,
                       capture_output=True, cwd=ROOT)
    port = free_port()
    env["SKMEMORY_PORT"] = str(port)
    log = open(home / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "webapp.cli", "serve"], env=env, stdout=log,
                            stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        started = time.monotonic()
        while True:
            try:
                state = status(port)
                notes = next((p for p in state["projects"] if p["project"] == "notes"), None)
                if (state["embeddings"] == "ready" and notes and notes.get("chunks") and not notes.get("pending")
                        and not state.get("indexing")):
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
        time.sleep(3)
        return {"ready_s": ready, "passages": notes["chunks"], "model": notes.get("model"), **memory(proc.pid)}
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
            results[run] = serve(folders[run], base / f"home-{run}", asked)
            results[run]["cli_peak_mb"] = cli_search(base / f"home-{run}", asked[0])
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    en, alone, zh = results["en"], results["en-alone"], results["zh"]
    print(f"{'':30}{'tldr-en':>9}{'en alone':>10}{'tldr-zh':>9}{'zh/en':>7}{'zh/alone':>10}")
    print(f"{'passages':30}{en['passages']:>9}{alone['passages']:>10}{zh['passages']:>9}")
    for key, label in (("VmRSS", "server resident, MB"), ("VmHWM", "server peak, MB"),
                       ("cli_peak_mb", "CLI semantic search peak, MB")):
        print(f"{label:30}{en[key]:>9.0f}{alone[key]:>10.0f}{zh[key]:>9.0f}{zh[key] / en[key]:>6.2f}x"
              f"{zh[key] / alone[key]:>9.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
