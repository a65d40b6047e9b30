"""Map files on disk and the active map: finding, reading and atomically saving `.mmdata` files.

The active map is the one that mindmap_search_nodes and mindmap_get_context work on. It is remembered in the
data home (active_mindmap.json) so that a restarted server keeps it.
"""
from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from ..errors import DocumentNotFound, InvalidQuery, MapConflict, MapFormatError
from ..search import note_reads
from ..search.index import ProjectIndex
from ..text.files import TooLarge, UnsafeFile, read_inside
from ..ingest.walk import inside
from ..ingest.extract.mindmap import FILE_TYPE
from ..ingest.extract.mindmap_format import SUFFIX, MindMap, from_json, loads

logger = logging.getLogger(__name__)

ACTIVE_FILE = "active_mindmap.json"


@dataclass
class MapRef:
    """Where a map lives: its project, its path in the project and its document id once it is indexed."""

    project: str
    rel_path: str
    document_id: str | None = None


MAX_NAME_BYTES = 255  # one file or folder name, as most file systems allow
MAX_PATH_CHARS = 1000
MAX_MAP_BYTES = 20 * 1024 * 1024  # as the indexer's default file limit: a map past it is not read whole


def check_map_path(path: str) -> str:
    """Return a map's path relative to its project root in POSIX form, refusing anything outside the root."""
    raw = (path or "").strip().replace("\\", "/")
    rel = PurePosixPath(raw)
    if "\0" in raw or any(ord(c) < 32 for c in raw):
        raise InvalidQuery("A map's path cannot hold control characters (such as NUL); give a plain file name, "
                           f"such as 'Maps/Garden{SUFFIX}'.")
    if len(raw) > MAX_PATH_CHARS or any(len(part.encode("utf-8", "replace")) > MAX_NAME_BYTES for part in rel.parts):
        raise InvalidQuery(f"That map path is too long: each folder or file name may have at most {MAX_NAME_BYTES} "
                           f"bytes, and the whole path {MAX_PATH_CHARS} characters; choose a shorter name.")
    if not raw or rel.is_absolute() or ".." in rel.parts:
        raise InvalidQuery(f"Give the map's path inside the project, such as 'Maps/Garden{SUFFIX}', not {path!r}.")
    if rel.suffix.lower() != SUFFIX:
        raise InvalidQuery(f"A mind map file ends in '{SUFFIX}'; '{rel}' does not.")
    return rel.as_posix()


def document_row(index: ProjectIndex, document_id: str):
    """Return the indexed row of a map document, or raise DocumentNotFound."""
    row = note_reads.document(index, document_id)
    if row is None:
        raise DocumentNotFound(f"No document with id '{document_id}' in project '{index.name}'.")
    if row["file_type"] != FILE_TYPE:
        raise InvalidQuery(f"'{row['rel_path']}' is a {row['file_type']} document, not a mind map "
                           f"(a {SUFFIX} file).")
    return row


def resolve(index: ProjectIndex, document_id: str | None = None, path: str | None = None) -> MapRef:
    """Find a map by document id (which follows renames) or by path; an unindexed path is allowed."""
    if document_id:
        return MapRef(index.name, document_row(index, document_id)["rel_path"], document_id)
    if not path:
        raise InvalidQuery("Name the map with 'document_id' or 'path'.")
    rel = check_map_path(path)
    return MapRef(index.name, rel, note_reads.document_at(index, rel))


def refresh(index: ProjectIndex, ref: MapRef) -> MapRef:
    """Bring a remembered map's path and id up to date with the index (the file may have moved)."""
    if ref.document_id:
        path = note_reads.path_of(index, ref.document_id)
        if path is not None:
            return MapRef(ref.project, path, ref.document_id)
    return MapRef(ref.project, ref.rel_path, note_reads.document_at(index, ref.rel_path))


def map_file(root: Path, rel_path: str) -> Path:
    """The map's file, refused when a link in its path leads out of the project's folder."""
    path = root / rel_path
    if not inside(root, path):
        raise InvalidQuery(f"'{rel_path}' leads out of the project's folder through a link; SK Memory reads and "
                           "writes maps only inside it. Choose a path without that link.")
    return path


def read_live(root: Path, rel_path: str) -> tuple[MindMap, bytes]:
    """Read the live map file; raise DocumentNotFound when it is gone, MapFormatError when it is damaged."""
    try:
        data = read_inside(root, map_file(root, rel_path), MAX_MAP_BYTES)[0]
    except FileNotFoundError:
        raise DocumentNotFound(f"The mind map file '{rel_path}' does not exist (it may have been moved or deleted); "
                               "open another map.") from None
    except UnsafeFile as exc:
        raise DocumentNotFound(f"The mind map file '{rel_path}' is not read: {exc}.") from None
    except TooLarge as exc:
        raise MapFormatError(f"The mind map file '{rel_path}' is {exc.size / 2**20:.1f} MB, over the "
                             f"{MAX_MAP_BYTES // 2**20} MB a map may hold; split it into smaller maps.") from None
    except OSError as exc:
        raise DocumentNotFound(f"The mind map file '{rel_path}' cannot be read ({exc.strerror}).") from None
    return loads(data, f"The mind map '{rel_path}'"), data


def prepare_save(root: Path, rel_path: str, value: object) -> MindMap:
    """Check a map sent for saving against the file on disk and return it with its next revision."""
    if not isinstance(value, dict):
        raise InvalidQuery("'map' must be a mind map object with 'title', 'revision' and 'nodes'.")
    try:
        mind_map = from_json(value, "The map")
    except MapFormatError as exc:
        raise InvalidQuery(str(exc)) from None
    if not mind_map.nodes:
        raise InvalidQuery("The map has no nodes; a map needs at least one root node.")
    target = map_file(root, rel_path)
    if target.exists():
        try:
            live, _ = read_live(root, rel_path)
        except MapFormatError:
            live = None  # a damaged file on disk: the save repairs it
        if "revision" not in value:
            raise MapConflict(f"'{rel_path}' already exists; open it to edit it, or choose another name.")
        if live is not None and value.get("revision") != live.revision:
            raise MapConflict(f"'{rel_path}' is at revision {live.revision} on disk, but this save was based on "
                              f"revision {value.get('revision')}; reload the map and apply your change again.")
        base = live.revision if live is not None else mind_map.revision
    else:
        base = mind_map.revision
    mind_map.revision = base + 1
    return mind_map


def write_atomically(path: Path, data: bytes) -> None:
    """Write a file so that readers (and the watcher) see either the old bytes or all of the new ones.

    The file keeps its mode and owner (a new one gets the mode the umask gives), not the temp file's 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        _keep_mode(path, Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _keep_mode(original: Path, replacement: Path) -> None:
    try:
        st = original.stat()
    except FileNotFoundError:
        os.chmod(replacement, 0o666 & ~_umask())
        return
    os.chmod(replacement, stat.S_IMODE(st.st_mode))
    if hasattr(os, "chown"):
        try:
            os.chown(replacement, st.st_uid, st.st_gid)
        except OSError:  # not ours to give away: the file keeps our ownership, as any editor's save would
            pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def list_maps(index: ProjectIndex) -> list[dict]:
    """Every map of a project the index knows, and every map file that could not be indexed (with why)."""
    maps = [{"project": index.name, "document_id": r["document_id"], "title": r["title"], "path": r["rel_path"],
             "error": None}
            for r in note_reads.documents_of_type(index, FILE_TYPE)]
    maps += [{"project": index.name, "document_id": None, "title": PurePosixPath(r[0]).stem, "path": r[0],
              "error": r[1]}
             for r in note_reads.file_errors_ending(index, SUFFIX)]
    return maps


class ActiveMap:
    """The active map of a data home, kept in memory and in `active_mindmap.json` across restarts."""

    def __init__(self, home_dir: Path):
        self.path = Path(home_dir) / ACTIVE_FILE
        self._lock = threading.Lock()
        self._ref: MapRef | None = None
        self._loaded = False

    def get(self) -> MapRef | None:
        with self._lock:
            if not self._loaded:
                self._loaded = True
                try:
                    self._ref = MapRef(**json.loads(self.path.read_text(encoding="utf-8")))
                except FileNotFoundError:
                    self._ref = None
                except (OSError, ValueError, TypeError) as exc:
                    logger.warning("Ignoring %s (%s); no map is active", self.path, exc)
                    self._ref = None
            return self._ref

    def set(self, ref: MapRef) -> None:
        """Make ref the active map, here and on disk."""
        with self._lock:
            self._ref, self._loaded = ref, True
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.path, json.dumps(asdict(ref)).encode())
