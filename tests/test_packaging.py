"""The shipped package: every import declared, and a wheel that serves a working app from any folder."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
from importlib import metadata
from pathlib import Path

import pytest

from support import REPO, free_port, status

pytestmark = pytest.mark.slow
OWN = {"indexer", "webapp"}
# Set by .ci/run: install the wheel's dependencies from the registries into the fresh venv (about two minutes),
# instead of lending it this venv's packages.
FULL_INSTALL = os.environ.get("SKMEMORY_WHEEL_TEST") == "full"


def declared() -> set[str]:
    """The distributions pyproject.toml lists as dependencies, normalised."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {normalise(re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0]) for req in project["dependencies"]}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> dict[str, str]:
    """Every top-level module the engine and the web layer import by name, with one file that does."""
    found: dict[str, str] = {}
    for path in sorted([*(REPO / "indexer").rglob("*.py"), *(REPO / "webapp").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def test_every_package_the_code_imports_is_declared():
    providers = metadata.packages_distributions()
    missing = []
    for module, where in imported_modules().items():
        if module in OWN or module in sys.stdlib_module_names or module == "__future__":
            continue
        dists = {normalise(d) for d in providers.get(module, [])}
        if not dists:
            missing.append(f"{module} (imported in {where}) is not installed at all")
        elif not dists & declared():
            missing.append(f"{module} (imported in {where}) comes from {sorted(dists)}, not in pyproject.toml")
    assert not missing, "\n".join(missing)


# --- the wheel, installed outside the checkout -------------------------------------------------------------------

def sources(target: Path) -> Path:
    """A copy of the files git tracks or would (a clean clone, plus new files), so the build leaves the checkout
    alone."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("needs a git checkout to know which files a clean clone has")
    for rel in filter(None, listed.stdout.decode().split("\0")):
        if (REPO / rel).is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, target / rel)
    return target


def fresh_venv(root: Path) -> Path:
    """A new virtual environment outside the checkout; unless FULL_INSTALL, it borrows this venv's packages."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    if not FULL_INSTALL:
        site = next((venv / "lib").glob("python3*/site-packages"))
        # A plain path line: the packages become importable, this venv's editable install (a .pth hook) does not.
        (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.read()


def test_the_wheel_serves_the_app_from_any_folder(tmp_path):
    src = sources(tmp_path / "src")
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                            str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "deprecated" not in built.stderr.lower(), built.stderr  # no setuptools deprecation warnings
    wheel = next((tmp_path / "dist").glob("sk_memory-*.whl"))

    venv = fresh_venv(tmp_path)
    install = [str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(REPO / "constraints.txt"), str(wheel)]
    if not FULL_INSTALL:
        install[3:3] = ["--no-deps", "--no-index"]
    installed = subprocess.run(install, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]

    elsewhere = tmp_path / "elsewhere"  # not the checkout: nothing can be found through the repository layout
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SKMEMORY_PORT")}
    env["SKMEMORY_HOME"] = str(tmp_path / "home")
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import webapp; print(webapp.__file__)"],
                           capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr

    extension = subprocess.run([str(venv / "bin" / "skmemory"), "extension-path"], capture_output=True, text=True,
                               cwd=elsewhere, env=env, timeout=60)
    folder = Path(extension.stdout.strip())
    assert extension.returncode == 0 and folder.is_relative_to(venv), extension.stdout + extension.stderr
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3 and (folder / manifest["background"]["service_worker"]).is_file()
    assert not (folder / "test").exists()  # the extension's JS unit tests stay in the repository

    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(venv / "bin" / "skmemory"), "serve", "--demo", "--port", str(port)],
                                cwd=elsewhere, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")
            try:
                state = status(port)
                demo = next((p for p in state["projects"] if p["project"] == "Demo"), {})
                if state["embeddings"] == "ready" and demo.get("chunks") and not demo.get("pending"):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the installed server never finished indexing the demo"
            time.sleep(0.5)

        assets = set()
        for page in ("/", "/cluster", "/mindmap"):
            code, body = get(base + page)
            assert code == 200, page
            assets |= set(re.findall(r'(?:src|href)="(/static/[^"?#]+)', body.decode()))
        assert {"/static/css/app.css", "/static/htmx-2.0.4.min.js", "/static/js/app.js", "/static/js/cluster.js",
                "/static/sigma-3.0.3.min.js", "/static/js/mindmap.js"} <= assets, assets
        for asset in sorted(assets):
            code, body = get(base + asset)
            assert code == 200 and body, asset

        code, body = get(base + "/api/search?q=keep+a+program+alive+after+I+disconnect&mode=hybrid&project=Demo")
        results = json.loads(body)["results"]
        # Found by meaning (hybrid: close in meaning, and it holds "program"), not by the words alone.
        assert results[0]["title"] == "tmux cheatsheet" and results[0]["search_type"] == "hybrid"
        assert results[0]["cosine"] >= 0.3
    finally:
        proc.terminate()
        proc.wait(30)
