"""Shared fixtures: every test gets its own data home; real-model fixtures are shared per session."""
from __future__ import annotations

import shutil
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from indexer.config import Settings
from indexer.ingest.embeddings import Embedder
from indexer.home import Home
from support import DEMO_NOTES, chromium, free_port

CHROMA_EXE = Path(sys.executable).parent / "chroma"


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory) -> Path:
    """One cache of exported models for the run (the ONNX query encoder), shared by every data home and server."""
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


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """The real bundled all-MiniLM-L6-v2, loaded once for the whole run."""
    embedder = Embedder()
    assert embedder.available, embedder.error
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
