"""Shared fixtures: every test gets its own data home; real-model fixtures are shared per session."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.config import Settings
from indexer.embeddings import Embedder
from indexer.home import Home

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
DEMO_NOTES = REPO / "indexer" / "demo" / "notes"


def corpus(name: str) -> Path:
    """Return a shared corpus folder, or skip the test with the reason when it is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"needs ../shared/corpora/{name}, which this checkout does not have")
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
