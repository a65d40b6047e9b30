"""The data home's registry of projects: a unique name and a root folder each, and where each index lives."""
from __future__ import annotations

import re
import shutil
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidProjectRoot, ProjectExists, ProjectNotFound, SKMemoryError

NAME_RE = re.compile(r"^[\w][\w .\-]{0,63}$")


@dataclass(frozen=True)
class ProjectInfo:
    """A registered project: its name, the folder it indexes and the folder its index lives in."""

    id: str
    name: str
    root: Path
    index_dir: Path
    builtin: bool = False

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "root": str(self.root), "index_dir": str(self.index_dir),
                "builtin": self.builtin}


class Registry:
    """Projects known to one data home, kept in `registry.sqlite` there."""

    def __init__(self, home: Path):
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self._db = home / "registry.sqlite"
        with self._connect() as conn:
            conn.execute(
                """CREATE TABLE IF NOT EXISTS projects (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, root TEXT NOT NULL UNIQUE,
                    builtin INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL DEFAULT (datetime('now')))"""
            )

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._db, timeout=10)
        conn.row_factory = sqlite3.Row
        return conn

    def _info(self, row: sqlite3.Row) -> ProjectInfo:
        return ProjectInfo(row["id"], row["name"], Path(row["root"]), self.home / "projects" / row["id"],
                           bool(row["builtin"]))

    def list(self) -> list[ProjectInfo]:
        """Return every project, by name."""
        with self._connect() as conn:
            return [self._info(r) for r in conn.execute("SELECT * FROM projects ORDER BY builtin, name COLLATE NOCASE")]

    def get(self, name: str) -> ProjectInfo:
        """Return the project called name (any case) or raise ProjectNotFound listing the known names."""
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM projects WHERE name = ?", (name,)).fetchone()
        if row is None:
            known = ", ".join(p.name for p in self.list()) or "none yet; add one with `skmemory add PATH`"
            raise ProjectNotFound(f"No project named '{name}'. Known projects: {known}.")
        return self._info(row)

    def add(self, root: str | Path, name: str | None = None, builtin: bool = False) -> ProjectInfo:
        """Register a folder as a project; the name defaults to the folder's name."""
        path = Path(root).expanduser()
        if not path.exists():
            raise InvalidProjectRoot(f"The folder {path} does not exist; give the path of an existing folder.")
        if not path.is_dir():
            raise InvalidProjectRoot(f"{path} is a file, not a folder; give the folder that holds your notes.")
        path = path.resolve()
        name = (name or path.name or "project").strip()
        _check_name(name)
        with self._connect() as conn:
            clash = conn.execute("SELECT name, root FROM projects WHERE name = ? OR root = ?",
                                 (name, str(path))).fetchone()
            if clash is not None:
                if clash["root"] == str(path):
                    raise ProjectExists(f"{path} is already the project '{clash['name']}'.")
                raise ProjectExists(f"A project named '{clash['name']}' already exists; give this folder another name.")
            project_id = uuid.uuid4().hex[:12]
            conn.execute("INSERT INTO projects (id, name, root, builtin) VALUES (?, ?, ?, ?)",
                         (project_id, name, str(path), int(builtin)))
        return self.get(name)

    def rename(self, old: str, new: str) -> ProjectInfo:
        """Give a project a new unique name; its index is kept."""
        info = self.get(old)
        new = new.strip()
        _check_name(new)
        with self._connect() as conn:
            clash = conn.execute("SELECT name FROM projects WHERE name = ? AND id != ?", (new, info.id)).fetchone()
            if clash is not None:
                raise ProjectExists(f"A project named '{clash['name']}' already exists; choose another name.")
            conn.execute("UPDATE projects SET name = ? WHERE id = ?", (new, info.id))
        return self.get(new)

    def remove(self, name: str) -> ProjectInfo:
        """Forget a project and delete its index folder; the user's own files are never touched."""
        info = self.get(name)
        with self._connect() as conn:
            conn.execute("DELETE FROM projects WHERE id = ?", (info.id,))
        # The index folder is ours alone (under the home), never the project's root.
        if info.index_dir.is_dir() and self.home in info.index_dir.parents:
            shutil.rmtree(info.index_dir, ignore_errors=True)
        return info


def _check_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise SKMemoryError(
            f"'{name}' is not a usable project name: use 1-64 letters, digits, spaces, dots, dashes or underscores."
        )
