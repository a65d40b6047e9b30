"""The built-in demo project: a handful of notes and a mind map, copied into the data home so the app has something
to search and edit."""
from __future__ import annotations

import shutil
from pathlib import Path

from ...errors import ProjectNotFound

DEMO_NAME = "Demo"
NOTES = Path(__file__).resolve().parent / "notes"
MAPS = Path(__file__).resolve().parent / "maps"  # copied into the notes' Maps/ folder, so /mindmap has one


def ensure_demo_project(home) -> str:
    """Register the demo notes as project 'Demo' (a writable copy under the data home); return its name."""
    try:
        return home.project(DEMO_NAME).name
    except ProjectNotFound:
        pass
    target = home.settings.home / "demo-notes"
    if not target.exists():
        shutil.copytree(NOTES, target)
        shutil.copytree(MAPS, target / "Maps")
    return home.add_project(target, DEMO_NAME, inside_home=True).name
