"""Shared fixtures: every test gets its own data home; real-model fixtures are shared per session."""
from __future__ import annotations

import faulthandler
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import traceback
import urllib.request
from pathlib import Path

import pytest

from indexer.config import Settings, default_model_path
from indexer.model.embeddings import Embedder
from indexer.home import Home
from support import DEMO_NOTES, WordEmbedder, chromium, free_port

CHROMA_EXE = Path(sys.executable).parent / "chroma"
# No test takes near this (the slowest, the wheel's fresh install, about 3 min): one that does is stuck, and a stuck
# run must not wait out CI's whole budget with nothing said. SKMEMORY_TEST_LIMIT changes it (seconds; 0: none).
TEST_LIMIT = float(os.environ.get("SKMEMORY_TEST_LIMIT", "900"))
_BASETEMP: Path | None = None  # the run's temporary folder, where the servers the tests start write their logs


# What a test needs, read from its own source and its fixtures' (so a new test is marked without anyone
# remembering to): `make test-fast` runs the tests that need none of them.
NEEDS = {
    "model": re.compile(r"real_embedder|(?<!Word)Embedder\(|running_server\(|index_and_embed|demo_engine|"
                        r"^(?!.*embedder=\"(words|none)\").*(?<!def )make_(module_)?engine\(", re.MULTILINE),
    "server": re.compile(r"running_server\(|stdio_client|mcp_session\(|\bSKMEMORY\b|subprocess\.(run|Popen)\(|"
                         r"chroma_server|\bPopen\(|\bskmemory\(|\brun\(\"|_modules_after\("),
    "browser": re.compile(r"\bchromium\(|browser_page\(|\bbrowser\b\)|def browser\b"),
    "corpus": re.compile(r"\bcorpus\(|CORPORA\b|_corpus_files\("),
}


def pytest_collection_modifyitems(config, items) -> None:
    """Mark each test with what it needs (model, server, browser, corpus); `slow` is any of the first three."""
    sources: dict = {}
    for item in items:
        text = _source(getattr(item, "function", None), sources)
        for defs in getattr(item, "_fixtureinfo", None).name2fixturedefs.values() if hasattr(item, "_fixtureinfo") \
                else ():
            text += "".join(_source(d.func, sources) for d in defs)
        needs = {need for need, pattern in NEEDS.items() if pattern.search(text)}
        for defs in item._fixtureinfo.name2fixturedefs.values() if hasattr(item, "_fixtureinfo") else ():
            needs.update(*(getattr(d.func, "needs", ()) for d in defs))  # declared with support.needs()
        for need in sorted(needs):
            item.add_marker(need)
        if needs & {"model", "server", "browser"}:
            item.add_marker("slow")


def _source(fn, cache: dict) -> str:
    if fn is None:
        return ""
    if fn not in cache:
        try:
            cache[fn] = inspect.getsource(fn)
        except (OSError, TypeError):
            cache[fn] = ""
    return cache[fn]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A watchdog over each test's setup, call and teardown (module fixtures start in the first one's setup): past
    TEST_LIMIT it prints where every thread of the run waits, the processes it started and the servers' logs, then
    ends the run."""
    timer = threading.Timer(TEST_LIMIT, _stuck, args=(item,)) if TEST_LIMIT > 0 else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer:
            timer.cancel()


def _stuck(item: pytest.Item) -> None:
    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture:  # what follows goes to the run's own output, not to the test's captured output
        capture.suspend_global_capture(in_=False)
    err = sys.__stderr__

    def say(text: str) -> None:
        print(text, file=err, flush=True)

    say(f"\n\n=== {item.nodeid} still running after {TEST_LIMIT:.0f} s: stopping the run. Every thread: ===")
    faulthandler.dump_traceback(file=err, all_threads=True)
    say("=== The processes ===")
    subprocess.run(["ps", "-N", "--ppid", "2", "-ww", "--forest", "-o", "pid,ppid,stat,etime,time,rss,args"],
                   stdout=err, stderr=subprocess.STDOUT, check=False)
    logs = [*_BASETEMP.glob("*/*.log"), *_BASETEMP.glob("*/*/*.log")] if _BASETEMP else []
    for log in sorted(logs, key=lambda p: p.stat().st_mtime)[-2:]:
        say(f"=== {log} (its end) ===")
        say("\n".join(log.read_text(errors="replace").splitlines()[-15:]))
    # Last, where only a tail of the output is kept: the test's own frames, where it waits.
    frame = sys._current_frames().get(threading.main_thread().ident)
    frames = [f for f in traceback.extract_stack(frame) if not any(part in f.filename for part in ("/_pytest/",
                                                                                                  "/pluggy/"))]
    ours = [f for f in frames if f.filename.startswith(str(Path(__file__).parent))]
    say(f"=== {item.nodeid} waits in: ===\n" + "".join(traceback.format_list(ours[-6:]))
        + "  ... which waits in:\n" + "".join(traceback.format_list(frames[-6:])))
    os._exit(3)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory) -> Path:
    """One cache of exported models for the run (the ONNX query encoder), shared by every data home and server."""
    global _BASETEMP
    _BASETEMP = tmp_path_factory.getbasetemp()
    path = tmp_path_factory.mktemp("model-cache")
    os.environ["SKMEMORY_MODEL_CACHE"] = str(path)
    return path


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point SKMEMORY_HOME at a fresh folder so no test touches a real data home."""
    home = tmp_path / "skmemory-home"
    monkeypatch.setenv("SKMEMORY_HOME", str(home))
    monkeypatch.delenv("SKMEMORY_CHROMA_URL", raising=False)
    monkeypatch.delenv("SKMEMORY_MODEL", raising=False)
    return home


@pytest.fixture(autouse=True)
def _no_real_model_unless_marked(request, monkeypatch):
    """A test not marked `model` (one of `make test-fast`'s) that loads a real model fails, naming the way to mark
    it: the fast lane stays about a minute because nothing in it loads a model unseen."""
    if request.node.get_closest_marker("model"):
        yield
        return
    loaded: list[str] = []
    load = Embedder.load

    def refuse(self) -> bool:
        folder = None if self.model == "multilingual" else (self.model_path or default_model_path())
        if folder is None or folder.is_dir():
            loaded.append(self.name)
            raise AssertionError(f"{request.node.nodeid} loads the real model {self.name} but is not marked `model`: "
                                 "decorate the fixture that loads it with @needs(\"model\") (tests/support.py)")
        return load(self)

    monkeypatch.setattr(Embedder, "load", refuse)
    yield
    assert not loaded, (f"{request.node.nodeid} loaded the real model {loaded[0]} (in a thread?) but is not marked "
                        "`model`: decorate the fixture that loads it with @needs(\"model\") (tests/support.py)")


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """The real bundled all-MiniLM-L6-v2, loaded once for the whole run."""
    embedder = Embedder()
    assert embedder.load(), embedder.now.reason
    return embedder


@pytest.fixture
def home(data_home: Path, real_embedder: Embedder) -> Home:
    """A data home using the real model."""
    return Home(Settings.from_env(), embedder=real_embedder)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A writable copy of the demo notes."""
    target = tmp_path / "vault"
    shutil.copytree(DEMO_NOTES, target)
    return target


# --- the one engine factory: every test that needs an indexed Engine asks for one of these -----------------------

EMBEDDERS = ("model", "words", "none")  # the real model, the tiny deterministic WordEmbedder, no model at all


def _engine_factory(request, base: Path):
    """A function that builds indexed Engines for the requesting test (or module) and closes them afterwards.

    make(folder=None, project="notes", embedder="model", home=None, user_docs=False, prepare=None):
    folder None copies the demo notes; `prepare(folder)` writes into the folder before it is indexed; home None
    uses a data home of its own (under SKMEMORY_HOME for a test's own engine); user_docs adds the User Docs
    project. The engine has read every file and embedded every chunk (when it has a model).
    """
    from indexer.content.docs import USER_DOCS_NAME, ensure_user_docs
    from indexer.engine import Engine

    opened: list = []

    def make(folder: Path | None = None, project: str = "notes", embedder: str = "model", home=None,
             user_docs: bool = False, prepare=None):
        if embedder not in EMBEDDERS:
            raise ValueError(f"embedder must be one of {EMBEDDERS}, not {embedder!r}")
        if folder is None:
            folder = base / f"{project}-{len(opened)}"
            shutil.copytree(DEMO_NOTES, folder)
        if prepare:
            prepare(folder)
        if home is None:
            settings = Settings.from_env() if request.scope == "function" else Settings(
                home=base / f"home-{len(opened)}")
            home = Home(settings, embedder={"model": lambda: request.getfixturevalue("real_embedder"),
                                            "words": WordEmbedder,
                                            "none": lambda: Embedder(Path(base) / "no-model")}[embedder]())
        home.add_project(folder, project)
        if user_docs:
            ensure_user_docs(home)
        engine = Engine(home)
        opened.append(engine)
        engine.reindex(project)
        for name in (project, USER_DOCS_NAME) if user_docs else (project,):
            if home.embedder.load():
                engine.embed_pending(name)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.fixture
def make_engine(request, tmp_path):
    """Engines for one test (see _engine_factory); `home` and `vault` fixtures still work beside it."""
    yield from _engine_factory(request, tmp_path / "engines")


@pytest.fixture(scope="module")
def make_module_engine(request, tmp_path_factory):
    """Engines shared by one module's tests (see _engine_factory): build once, read many times."""
    yield from _engine_factory(request, tmp_path_factory.mktemp("engines"))


@pytest.fixture
def demo_engine(make_engine, vault):
    """The demo notes (a writable copy: the `vault` fixture) as project "notes", with the real model."""
    return make_engine(vault)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real Chroma server on a free localhost port, stopped after the test run."""
    if not CHROMA_EXE.exists():
        pytest.skip(f"the chroma executable is not installed next to Python ({CHROMA_EXE})")
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    log_path = data.parent / f"{data.name}.log"
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(
            [str(CHROMA_EXE), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"chroma run gave no heartbeat within 60 s:\n{log_path.read_text(errors='replace')}")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, for one test module's pages (skips when it or Playwright is missing)."""
    with chromium() as browser:
        yield browser
