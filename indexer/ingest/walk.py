"""Which files under a project root are documents: the ignore rules shared by the full scan and the watcher."""
from __future__ import annotations

import logging
import os
from pathlib import Path, PurePosixPath
from typing import Iterator

import pathspec

from ..text.files import within

logger = logging.getLogger(__name__)

IGNORE_FILE = ".skmemoryignore"
# Folders no one searches: version control, editor and tool state, dependency trees, build output.
IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".obsidian", ".logseq", ".trash", ".venv", "venv", "node_modules",
    "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", ".idea", ".vscode", "site-packages",
})


class IgnoreRules:
    """Decides whether a path relative to the project root is left out of the index."""

    def __init__(self, root: Path, supported: frozenset[str], data_home: Path | None = None):
        self.root = root
        self.supported = supported
        self.data_home = data_home
        # SK Memory's own data folder is never a document, even inside a project (indexing it would feed itself).
        self.own = relative(root, data_home) if data_home is not None else None
        self.spec = _load_spec(root / IGNORE_FILE)

    def reloaded(self) -> "IgnoreRules":
        """The same rules with the ignore file read again."""
        return IgnoreRules(self.root, self.supported, self.data_home)

    def ignores_dir(self, rel: str) -> bool:
        """Tell whether a folder (relative, POSIX) and everything below it is skipped."""
        parts = PurePosixPath(rel).parts
        if any(p in IGNORED_DIRS or p.startswith(".") for p in parts):
            return True
        if self.own and (rel == self.own or rel.startswith(self.own + "/")):
            return True
        return bool(self.spec and self.spec.match_file(rel + "/"))

    def ignores_file(self, rel: str) -> bool:
        """Tell whether a file (relative, POSIX) is skipped: hidden, in a skipped folder, unsupported or ignored."""
        path = PurePosixPath(rel)
        if path.name.startswith(".") or path.suffix.lower() not in self.supported:
            return True
        if len(path.parts) > 1 and self.ignores_dir(str(path.parent)):
            return True
        return bool(self.spec and self.spec.match_file(rel))


def _load_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def relative(root: Path, path: Path) -> str | None:
    """Return path relative to root in POSIX form, or None when it lies outside the root."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def inside(root: Path, path: Path) -> bool:
    """Tell whether path, with every link in it followed, is the root or lies below it."""
    return within(os.path.realpath(path), os.path.realpath(root))


class Containment:
    """Whether files under a root stay inside it with links followed; each folder's real path is looked up once."""

    def __init__(self, root: Path):
        self.root = root
        self.real_root = os.path.realpath(root)
        self._folders: dict[str, str] = {}

    def holds(self, rel: str) -> bool:
        path = os.path.join(self.root, rel)
        folder = os.path.dirname(path)
        real_folder = self._folders.get(folder)
        if real_folder is None:
            real_folder = self._folders[folder] = os.path.realpath(folder)
        real = os.path.realpath(path) if os.path.islink(path) else os.path.join(real_folder, os.path.basename(path))
        return within(real, self.real_root)


def refusal(containment: Containment, rel: str) -> str | None:
    """Why a file found under the root is never read, whatever it holds (None: it may be read)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "its file name is not valid UTF-8; rename it to index it"
    if not containment.holds(rel):
        return "it is a link to a file outside the project's folder, and links that leave the folder are not followed"
    return None


def printable(rel: str) -> str:
    """The path as text that can be stored and shown: undecodable bytes of a file name become \\xNN."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def iter_documents(root: Path, rules: IgnoreRules, under: str = "",
                   skipped: dict[str, str] | None = None) -> Iterator[str]:
    """Yield the relative paths of every indexable file below root (or below its subfolder `under`); folders that
    are links, or that cannot be listed, go into `skipped` (relative path with a trailing "/" -> why)."""
    start = root / under if under else root

    def unlistable(err: OSError) -> None:
        logger.warning("Cannot list %s: %s", err.filename, err.strerror)
        rel = relative(root, Path(err.filename)) if err.filename else None
        if skipped is not None and rel and rel != ".":
            skipped[printable(rel) + "/"] = (f"SK Memory cannot list this folder ({err.strerror}); check its "
                                             "permissions to index what it holds")

    # Symlinked folders are not followed: that is what keeps a symlink loop from walking forever.
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False, onerror=unlistable):
        rel_dir = relative(root, Path(dirpath)) or ""
        rel_dir = "" if rel_dir == "." else rel_dir
        kept = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if rules.ignores_dir(rel):
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                if skipped is not None:
                    skipped[printable(rel) + "/"] = ("it is a link to a folder, and links to folders are not followed "
                                                     "(they can lead out of the project or loop back into it); "
                                                     "add that folder as its own project to search it")
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if not rules.ignores_file(rel):
                yield rel
