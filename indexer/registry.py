"""The data home's registry of projects: a unique name and a root folder each, and where each index lives."""
from __future__ import annotations

import json
import logging
import re
import shutil
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidProjectRoot, ProjectExists, ProjectNotFound, SKMemoryError, is_damage

NAME_RE = re.compile(r"^[\w][\w .\-]{0,63}$")
SETTLED = 1.0  # seconds a registry file must be older than for its rows to be kept (a change in the same clock tick
# as a read would leave the file's time as it was)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # SQLite's NOCASE
# In each project's index folder: the project's registry row, from which a damaged registry is rebuilt.
PROJECT_FILE = "project.json"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProjectInfo:
    """A registered project: its name, the folder it indexes and the folder its index lives in."""

    id: str
    name: str
    root: Path
    index_dir: Path
    builtin: bool = False

    def is_users(self, data_home: Path) -> bool:
        """Whether it holds the user's own notes: not the built-in User Docs, nor the demo (the one project kept
        inside the data folder)."""
        return not self.builtin and not Path(self.root).resolve().is_relative_to(Path(data_home).resolve())

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "root": str(self.root), "index_dir": str(self.index_dir),
                "builtin": self.builtin}


class Registry:
    """Projects known to one data home, kept in `registry.sqlite` there. Its rows are read once and kept until the
    file changes (every search asks which projects there are: a warm search opens no registry connection)."""

    def __init__(self, home: Path):
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self._db = home / "registry.sqlite"
        self._recorded: set[str] = set()  # projects whose PROJECT_FILE this process has seen or written
        self._kept: tuple[tuple, list[ProjectInfo]] | None = None  # (the file's stamp, its projects)
        self._guarded(self._create)

    @staticmethod
    def _create(conn: sqlite3.Connection) -> None:
        conn.execute(
            """CREATE TABLE IF NOT EXISTS projects (
                id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, root TEXT NOT NULL UNIQUE,
                builtin INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL DEFAULT (datetime('now')))"""
        )
        problems = [r[0] for r in conn.execute("PRAGMA quick_check(1)") if r[0] != "ok"]  # a few pages: instant
        if problems:
            raise sqlite3.DatabaseError(f"database disk image is malformed ({problems[0].splitlines()[-1]})")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._db, timeout=10)
        conn.row_factory = sqlite3.Row
        return conn

    def _guarded(self, work):
        """Run work(conn) in one transaction; a damaged registry file is rebuilt from the projects' own records
        (PROJECT_FILE in each index folder) and the work run again."""
        try:
            with self._connect() as conn:
                return work(conn)
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            self._rebuild(str(exc))
            with self._connect() as conn:
                return work(conn)

    def _rebuild(self, reason: str) -> None:
        kept = self._db.with_name(f"registry.sqlite.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        for old in self.home.glob("registry.sqlite.damaged-*"):  # the newest damaged copy is enough
            old.unlink(missing_ok=True)
        self._db.rename(kept)
        self._kept = None
        for suffix in ("-wal", "-shm", "-journal"):
            self._db.with_name(self._db.name + suffix).unlink(missing_ok=True)
        records, lost = [], []
        for folder in sorted((self.home / "projects").glob("*")):
            try:
                records.append(json.loads((folder / PROJECT_FILE).read_text()))
            except (OSError, ValueError):
                if folder.is_dir():
                    lost.append(folder.name)
        with self._connect() as conn:
            self._create(conn)
            for r in records:
                conn.execute("INSERT OR IGNORE INTO projects (id, name, root, builtin, created_at) VALUES (?, ?, ?, ?, "
                             "coalesce(?, datetime('now')))",
                             (r["id"], r["name"], r["root"], int(r.get("builtin", 0)), r.get("created_at")))
        logger.warning("The list of projects (%s) was damaged (%s); it was set aside at %s and rebuilt with %d "
                       "project(s) from their index folders%s.", self._db, reason, kept, len(records),
                       f"; {len(lost)} index folder(s) had no record (add their folders again with `skmemory add`)"
                       if lost else "")

    def _info(self, row: sqlite3.Row) -> ProjectInfo:
        return ProjectInfo(row["id"], row["name"], Path(row["root"]), self.home / "projects" / row["id"],
                           bool(row["builtin"]))

    def _record(self, row: sqlite3.Row) -> None:
        """Keep the project's row in its index folder too (rewritten on add and rename, written if missing)."""
        folder = self.home / "projects" / row["id"]
        record = {k: row[k] for k in ("id", "name", "root", "builtin", "created_at")}
        try:
            path = folder / PROJECT_FILE
            if not path.exists() or json.loads(path.read_text()) != record:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(record) + "\n")
        except (OSError, ValueError):
            pass  # a read-only data home: the registry itself is still the record

    def record_moved(self, project_id: str) -> None:
        """A project's index folder (with its PROJECT_FILE) was moved away: the next list() writes the record again."""
        self._recorded.discard(project_id)

    def _stamp(self) -> tuple | None:
        try:
            stat = self._db.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino

    def list(self) -> list[ProjectInfo]:
        """Return every project, by name (as last read, while the file is unchanged); each project's record in its
        index folder is written once per process when missing."""
        infos = self._projects()
        for info in infos:
            if info.id not in self._recorded:
                if not (info.index_dir / PROJECT_FILE).exists():
                    self._guarded(lambda conn: self._record(conn.execute(
                        "SELECT * FROM projects WHERE id = ?", (info.id,)).fetchone()))
                self._recorded.add(info.id)
        return infos

    def _projects(self) -> list[ProjectInfo]:
        stamp = self._stamp()
        if self._kept is not None and stamp is not None and self._kept[0] == stamp:
            return list(self._kept[1])
        rows = self._guarded(lambda conn: conn.execute(
            "SELECT * FROM projects ORDER BY builtin, name COLLATE NOCASE").fetchall())
        infos = [self._info(r) for r in rows]
        settled = stamp is not None and time.time() - stamp[0] / 1e9 > SETTLED and stamp == self._stamp()
        self._kept = (stamp, infos) if settled else None
        return list(infos)

    def forget(self) -> None:
        """Read the file again at the next question (this process changed it)."""
        self._kept = None

    def get(self, name: str) -> ProjectInfo:
        """Return the project called name (any case, as SQLite's NOCASE) or raise ProjectNotFound listing the known
        names."""
        wanted = str(name).translate(_ASCII_LOWER)
        found = next((i for i in self._projects() if i.name.translate(_ASCII_LOWER) == wanted), None)
        if found is None:
            known = ", ".join(p.name for p in self.list()) or "none yet; add one with `skmemory add PATH`"
            raise ProjectNotFound(f"No project named '{name}'. Known projects: {known}.")
        return found

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
            self._record(conn.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone())
        self.forget()
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
            self._record(conn.execute("SELECT * FROM projects WHERE id = ?", (info.id,)).fetchone())
        self.forget()
        return self.get(new)

    def remove(self, name: str) -> ProjectInfo:
        """Forget a project and delete its index folder; the user's own files are never touched."""
        info = self.get(name)
        with self._connect() as conn:
            conn.execute("DELETE FROM projects WHERE id = ?", (info.id,))
        self.forget()
        # The index folder is ours alone (under the home), never the project's root.
        if info.index_dir.is_dir() and self.home in info.index_dir.parents:
            shutil.rmtree(info.index_dir, ignore_errors=True)
        return info


def _check_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise SKMemoryError(
            f"'{name}' is not a usable project name: use 1-64 letters, digits, spaces, dots, dashes or underscores."
        )
