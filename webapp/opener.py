"""Opening a project's file itself: in Obsidian when the project is an Obsidian vault (a link the browser hands to
Obsidian), else with the computer's default application for it, started by the server (which runs as the user)."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from indexer.errors import InvalidQuery, SKMemoryError


def project_root(doc: dict) -> Path:
    """The project folder a document's absolute path lies in (its path without its relative path)."""
    absolute, relative = Path(doc["absolute_path"]), Path(doc["path"])
    return Path(*absolute.parts[:len(absolute.parts) - len(relative.parts)])


def obsidian_url(doc: dict) -> str | None:
    """An obsidian://open link to the note when its project is an Obsidian vault (it holds .obsidian/), else None."""
    root = project_root(doc)
    if not is_obsidian_vault(root):
        return None
    return f"obsidian://open?vault={quote(root.name, safe='')}&file={quote(doc['path'], safe='')}"


def is_obsidian_vault(root) -> bool:
    """Whether a project folder is an Obsidian vault (holds .obsidian/)."""
    return (Path(root) / ".obsidian").is_dir()


def inside_project(doc: dict) -> Path:
    """The document's file, refused unless it is a regular file inside its project's folder (links resolved)."""
    root = project_root(doc).resolve()
    path = Path(doc["absolute_path"]).resolve()
    if not path.is_relative_to(root):
        raise InvalidQuery(f"'{doc['path']}' leads out of the project's folder, so it is not opened.")
    if not path.is_file():
        raise InvalidQuery(f"'{doc['path']}' is no longer a file in the project's folder.")
    return path


def open_with_system(path: Path) -> str:
    """Start the default application for a file (SKMEMORY_OPENER names another command); say what opened it."""
    custom = os.environ.get("SKMEMORY_OPENER")
    if custom:
        argv = [*shlex.split(custom), str(path)]
    elif sys.platform == "darwin":
        argv = ["open", str(path)]
    elif os.name == "nt":
        os.startfile(path)  # type: ignore[attr-defined]  # noqa: S606 (the default application, by design)
        return "the default application"
    else:
        argv = ["xdg-open", str(path)]
    try:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError as exc:
        raise SKMemoryError(f"Could not start {argv[0]} to open the file ({exc.strerror or exc}); set "
                            "SKMEMORY_OPENER to the command that opens a file on this computer.") from None
    return "the default application" if not custom else Path(argv[0]).name
