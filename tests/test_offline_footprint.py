"""An offline tool writes nothing outside its own folders (issue 40 row 21): ONNX Runtime wrote a device id and a
telemetry database under ~/.cache/Microsoft at its first import."""
from __future__ import annotations

import os
import subprocess
import sys

from support import DEMO_NOTES, REPO


def test_indexing_and_searching_write_only_in_sk_memorys_own_folders(tmp_path):
    home = tmp_path / "user"  # the user's home folder, as every library sees it
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_"))}
    env.update({"HOME": str(home), "SKMEMORY_HOME": str(tmp_path / "data"),
                "SKMEMORY_MODEL_CACHE": str(tmp_path / "models")})
    skmemory = [sys.executable, "-m", "webapp.cli"]
    for args in (["add", str(DEMO_NOTES), "--name", "demo"], ["index", "demo"],
                 ["search", "keeping a terminal session alive", "--project", "demo"]):
        done = subprocess.run(skmemory + args, env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert written == [], written
