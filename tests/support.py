"""Helpers the slow tests share: a real `skmemory serve` that has finished embedding, and headless Chromium."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from indexer.model.embeddings import READY

SKMEMORY = [sys.executable, "-m", "webapp.cli"]
REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
DEMO_NOTES = REPO / "indexer" / "content" / "demo" / "notes"
GARDEN = REPO / "indexer" / "content" / "demo" / "maps" / "Garden.mmdata"  # the demo's mind map

CHROMIUM = Path("/usr/lib/chromium/chromium")
CHROMIUM_REASON = f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)"
PLAYWRIGHT_REASON = "needs the playwright Python package"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
# htmx logs a request it cancels for a newer one (hx-sync replace while typing) as an error; that is intended.
BENIGN = {"htmx:sendAbort", "htmx:afterRequest"}
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_REASON)


def needs(*what: str):
    """Declare what a fixture needs ("model", "server", "browser", "corpus"): every test that uses it, directly or
    through another fixture, is marked so (conftest.py), and `make test-fast` leaves it out. A fixture that loads a
    real model without saying so fails its tests in the fast lane, with this sentence's advice."""
    unknown = set(what) - {"model", "server", "browser", "corpus"}
    assert not unknown, f"needs() knows model, server, browser and corpus, not {sorted(unknown)}"

    def mark(fn):
        fn.needs = frozenset(what)
        return fn
    return mark


def corpus(name: str) -> Path:
    """Return a shared corpus folder, or skip the test with the reason when it is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"needs ../shared/corpora/{name}, which this checkout does not have")
    return path


@contextmanager
def indexed(home, folder: Path, name: str = "notes"):
    """An Engine on `folder`, registered in `home` as project `name`, indexed and embedded; closed afterwards."""
    from indexer.engine import Engine

    home.add_project(folder, name)
    engine = Engine(home)
    try:
        engine.embed_pending(name)
        yield engine
    finally:
        engine.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=30) as response:
        return json.load(response)


def wait_across(port: int, timeout: float = 300) -> None:
    """Wait until every project's vectors across languages are made (store/across.py): the server makes them in the
    background after the notes' own, with the multilingual model, and a test that times what a person does after
    the start (a mind map's save, which waits for its new passages' own vectors) must not time that work too."""
    deadline = time.monotonic() + timeout
    while not all((p.get("across") or {}).get("ready", True) for p in status(port)["projects"]):
        assert time.monotonic() < deadline, f"the vectors across languages were not made within {timeout:.0f} s"
        time.sleep(0.5)


@dataclass
class Server:
    port: int
    env: dict
    proc: subprocess.Popen
    home: Path
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _ready(state: dict, projects: set[str], wait_embedded: bool) -> bool:
    listed = {p["project"]: p for p in state["projects"]}
    return ((not wait_embedded or state["embeddings"] == "ready") and bool(listed) and projects <= set(listed)
            and not state.get("indexing")  # every project's first sync done (a few chunks in is not ready)
            and all(p.get("chunks") and (not p.get("pending") or state["embeddings"] == "unavailable")
                    for p in listed.values()))  # without a model, passages stay pending: keyword search is ready


@contextmanager
def running_server(root: Path, vault: Path | None, *, home: Path | None = None, env: dict | None = None,
                   projects: set[str] = frozenset({"notes"}), timeout: float = 180,
                   wait_embedded: bool | None = None, serve_args: tuple[str, ...] = ()) -> Iterator[Server]:
    """Add VAULT as project "notes" (none when VAULT is None), run `skmemory serve SERVE_ARGS` on a free port,
    and yield once it has indexed.

    The data home is HOME (default ROOT/home); the server logs to ROOT/serve.log. It is ready when every
    listed project has chunks and nothing pending, the PROJECTS are among them, and (unless WAIT_EMBEDDED is
    false; by default it is false only when ENV's SKMEMORY_MODEL names a missing folder) the model is loaded.
    On exit the server gets SIGTERM and is waited for (killed after 30 s).
    """
    home = home or root / "home"
    env = {**os.environ, **(env or {}), "SKMEMORY_HOME": str(home), "SKMEMORY_PORT": str(free_port())}
    env.pop("SKMEMORY_CHROMA_URL", None)
    if wait_embedded is None:
        wait_embedded = not ("SKMEMORY_MODEL" in env and not Path(env["SKMEMORY_MODEL"]).exists())
    if vault is not None:
        added = subprocess.run(SKMEMORY + ["add", str(vault), "--name", "notes"], env=env, capture_output=True,
                               text=True, timeout=300)
        assert added.returncode == 0, added.stderr
    log_path = root / "serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(SKMEMORY + ["serve", *serve_args], env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(int(env["SKMEMORY_PORT"]), env, proc, home, log_path)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if _ready(status(server.port), set(projects), wait_embedded):
                    break
            except (OSError, KeyError, IndexError):
                pass
            assert proc.poll() is None, (f"skmemory serve exited with code {proc.returncode}:\n"
                                         f"{log_path.read_text(errors='replace')}")
            assert time.monotonic() < deadline, "the server never finished indexing"
            time.sleep(0.3)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


SHOTS = REPO / "test-output" / "screenshots"
README_SHOTS = REPO / "docs" / "screenshots"


def shot(page, name: str, readme: str | None = None) -> None:
    """Save a screenshot to test-output/screenshots/NAME.png; with SKMEMORY_SCREENSHOTS=1 also as the README's
    docs/screenshots/README.png, so the pictures there show what the tests saw."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    if readme and os.environ.get("SKMEMORY_SCREENSHOTS"):
        README_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHOTS / f"{name}.png", README_SHOTS / f"{readme}.png")


def sync_playwright_api():
    """playwright.sync_api, or skip (at module level: the whole module) when it is not installed."""
    return pytest.importorskip("playwright.sync_api", reason=PLAYWRIGHT_REASON)


@contextmanager
def chromium(args: list[str] = ARGS):
    """Debian's Chromium, headless, driven by Playwright; skips when either is missing."""
    if not CHROMIUM.exists():
        pytest.skip(CHROMIUM_REASON)
    sync_api = sync_playwright_api()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        try:
            yield browser
        finally:
            browser.close()


# Chromium has stopped answering in CI twice, both times in Cluster View's first test (WebGL drawn by SwiftShader),
# and Playwright's calls without a timeout of their own (evaluate, mouse moves, new pages) then waited on it until
# the run's watchdog ended the whole run. No browser test holds a page near this long; one that does is stuck.
BROWSER_STALL_S = float(os.environ.get("SKMEMORY_BROWSER_STALL", "240"))


class ChromiumStalled(AssertionError):
    """Chromium stopped answering a page; the guard killed it so the waiting call could return."""


def _proc_stat(pid: int) -> tuple[int, str, float] | None:
    """(parent pid, state, CPU seconds) of a process, from /proc; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (name) ": state, ppid, ..., utime, stime at 11, 12
    return int(fields[1]), fields[0], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chromium_processes() -> list[tuple[int, str]]:
    """This run's Chromium processes (under Playwright's driver, itself under this process), each with a line saying
    what it is (--type=renderer, gpu-process, ...) and what it was doing: its state and CPU seconds."""
    stats = {int(entry.name): stat for entry in Path("/proc").iterdir() if entry.name.isdigit()
             if (stat := _proc_stat(int(entry.name)))}
    ours, found = {os.getpid()}, True
    while found:
        found = False
        for pid, (parent, _, _) in stats.items():
            if parent in ours and pid not in ours:
                ours.add(pid)
                found = True
    described = []
    for pid in sorted(ours):
        try:
            if Path(f"/proc/{pid}/exe").resolve() != CHROMIUM:
                continue
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        kind = match[1] if (match := re.search(r"--type=([\w-]+)", args)) else "browser"
        _, state, cpu = stats[pid]
        described.append((pid, f"{kind} {pid}: state {state}, {cpu:.1f} s CPU"))
    return described


@contextmanager
def stall_guard(seconds: float = BROWSER_STALL_S) -> Iterator[list[str]]:
    """Past SECONDS, kill this run's Chromium so a Playwright call waiting on it raises; the list yielded then holds
    what its processes were doing when it was killed."""
    seen: list[str] = []

    def kill() -> None:
        processes = chromium_processes()
        seen.append("; ".join(line for _, line in processes) or "no Chromium process left")
        for pid, _ in processes:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    timer = threading.Timer(seconds, kill)
    timer.daemon = True
    timer.start()
    try:
        yield seen
    finally:
        timer.cancel()


@contextmanager
def browser_page(browser, base_url: str, benign: set[str] = BENIGN):
    """A fresh 1280x800 page on BASE_URL whose script and console errors collect in page.console_errors.

    On exit the context closes and no error may be left (a test removes the ones it expects). A page held past
    BROWSER_STALL_S ends in ChromiumStalled, saying what Chromium's processes were doing, instead of waiting forever.
    """
    with stall_guard() as stalled:
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base_url)
            page = context.new_page()
            errors: list[str] = []
            page.console_errors = errors
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console",
                    lambda msg: errors.append(msg.text) if msg.type == "error" and msg.text not in benign else None)
            yield page
            context.close()
        except Exception as exc:
            if stalled:
                raise ChromiumStalled(f"Chromium stopped answering for {BROWSER_STALL_S:.0f} s and was killed; its "
                                      f"processes were: {stalled[0]}") from exc
            raise
    assert not errors, errors  # no script errors, no CSP violations, no missing files


def relaunched(browser):
    """BROWSER if it still answers, else a fresh Chromium launched by the same Playwright (kept for the rest of the
    module's tests; Playwright closes it when the module's browser fixture ends)."""
    while not browser.is_connected() and id(browser) in _RELAUNCHED:
        browser = _RELAUNCHED[id(browser)]
    if browser.is_connected():
        return browser
    fresh = browser.browser_type.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
    _RELAUNCHED[id(browser)] = fresh
    return fresh


_RELAUNCHED: dict[int, object] = {}


def with_memory_note_and_map(name: str, text: str):
    """A `prepare` for the engine factories: one memory note (NAME, TEXT) and the demo's mind map at
    Maps/Garden.mmdata beside the demo notes, so that every route and MCP tool has something to answer."""
    def prepare(folder: Path) -> None:
        (folder / name).write_text(text, encoding="utf-8")
        (folder / "Maps").mkdir(exist_ok=True)
        (folder / "Maps" / "Garden.mmdata").write_bytes(GARDEN.read_bytes())
    return prepare


def app_client(app):
    """A Flask test client that names itself as a program does (X-SKMemory-Client), since it sends no Origin."""
    client = app.test_client()
    client.environ_base["HTTP_X_SKMEMORY_CLIENT"] = "tests"
    return client


def highlighted(result: dict) -> list[str]:
    """The words a result's snippet highlights (its `highlights` offsets), lowercase."""
    return [result["snippet"][start:end].lower() for start, end in result.get("highlights", [])]


class WordEmbedder:
    """A tiny deterministic embedder for unit tests of ranking logic: a text's vector is the normalised sum of one
    fixed random vector per lowercase word, so texts that share words are near and others are not.

    It has the Embedder's interface and loads in no time; tests that claim search by meaning works use the real
    model (the `real_embedder` fixture), never this.
    """

    name = "word-hash-64"
    fingerprint = "word-hash-64 (tests)"
    now = READY
    device = "cpu"
    query_backend = "numpy"
    dimension = 64

    def load(self) -> bool:
        return True

    def ready_for_queries(self) -> bool:
        return True

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def _word(word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(WordEmbedder.dimension).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i] += self._word(word)
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else self._word("")  # a text without words still gets a unit vector
        return out

    def embed_queries(self, texts: list[str]):
        return self.embed(texts)

    def embed_query(self, text: str):
        return self.embed([text])[0]


@asynccontextmanager
async def mcp_session(env: dict, errlog: Path):
    """Launch `skmemory mcp` the way an AI client does (the SDK's stdio client) and initialize a session with it."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "webapp.cli", "mcp"], env=env, cwd=str(REPO))
    with open(errlog, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session
