"""Model copies are derived files: each is checked before use against what was recorded when it was made, set aside
and made again (once) when it is not that, and a copy that cannot be made is remembered with its reason until the
cause changes, instead of being tried again by every command.

The copies are the exported ONNX file of a model, its int8 copies (ONNX Runtime's, OpenVINO's .xml and .bin) and
the multilingual model's folder, all in the per-user model cache that every data home shares. Each folder of copies
holds `made.json`: for each file its size and SHA-256 (2 GB/s: a quarter of a second for the biggest, once per
process). A copy made before records were kept is recorded the first time it is used.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

logger = logging.getLogger(__name__)

RECORD = "made.json"
FAILURES = "failed.json"  # in the cache root: the copies that could not be made, with why and under what
ROOM_NEEDED = 1 << 30  # a copy is not tried with less free space than this in the cache (the biggest is ~0.5 GB)
_checked: dict[tuple, str] = {}  # (path, size, mtime_ns) -> its SHA-256, hashed once per process
_lock = threading.RLock()
_making: dict = {}  # the copy being made now in this process: what, since when (one at a time, under _lock)


def making() -> str | None:
    """The copy this process is making now, in words, with how long so far ("the static int8 copy of model for
    OpenVINO (about a minute): 40 s so far"); None when none is being made."""
    made = dict(_making)
    if not made:
        return None
    return f"{made['what']}: {time.monotonic() - made['started']:.0f} s so far"


class CopyNotMade(Exception):
    """A model copy could not be made here; the sentence says why and what would change it."""


def sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _checked:
        with path.open("rb") as f:  # through one small buffer: no block of the file stays in the heap
            _checked[key] = hashlib.file_digest(f, "sha256").hexdigest()
    return _checked[key]


def _records(folder: Path) -> dict:
    try:
        records = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return records if isinstance(records, dict) else {}


def record(paths: list[Path]) -> None:
    """Say what these files are as made (size and hash), beside them; a cache that cannot be written keeps no record."""
    folder = paths[0].parent
    records = _records(folder)
    for path in paths:
        records[path.name] = {"size": path.stat().st_size, "sha256": sha256(path)}
    try:
        _write_json(folder / RECORD, records)
    except OSError as exc:
        logger.info("Could not record the model copies in %s (%s)", folder, exc)


def damage(paths: list[Path]) -> str | None:
    """Why these copies are not what was made (a file missing, cut short or changed), or None when they are as
    recorded; files made before records were kept are recorded now, as they are."""
    records = _records(paths[0].parent)
    unrecorded = []
    for path in paths:
        if not path.is_file():
            return f"{path.name} is missing"
        wanted = records.get(path.name)
        if not isinstance(wanted, dict):
            unrecorded.append(path)
            continue
        size = path.stat().st_size
        if size != wanted.get("size"):
            return f"{path.name} is {size:,} bytes where {wanted.get('size'):,} were written"
        if sha256(path) != wanted.get("sha256"):
            return f"{path.name} is not the file that was written (its SHA-256 differs)"
    if unrecorded:
        record(unrecorded)
    return None


def set_aside(paths: list[Path], why: str) -> None:
    """Move damaged copies out of the way (`<name>.damaged`, the last one kept) so that they are made again."""
    for path in paths:
        if path.exists():
            aside = path.with_name(path.name + ".damaged")
            try:
                if aside.is_dir():
                    shutil.rmtree(aside)
                os.replace(path, aside)
            except OSError:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    logger.warning("The model copy %s was damaged (%s); it was set aside and will be made again.", paths[0], why)


def ensure(paths: list[Path], build: Callable[[], None], what: str, source: Path) -> None:
    """Have the copies `paths` as made, by `build` (which writes them) when any is missing or damaged: once, with a
    failure remembered until its cause changes. Raises CopyNotMade with the sentence to show."""
    with _lock:
        if all(p.exists() for p in paths):
            why = damage(paths)
            if why is None:
                return
            set_aside(paths, why)
        cache = paths[0].parent
        cause = _cause(cache, source)
        known = remembered(paths[0], cause)
        if known:
            raise CopyNotMade(known)
        problem = _no_room(cache)
        try:
            if problem:
                raise CopyNotMade(problem)
            started = time.monotonic()
            logger.info("Preparing the model for this computer: making %s (once): %s", what, paths[0])
            _making.update(what=what, started=started)
            try:
                build()
            finally:
                _making.clear()
            record([p for p in paths if p.is_file()])
            logger.info("Made %s in %.0f s", what, time.monotonic() - started)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, CopyNotMade) else f"{what} could not be made ({type(exc).__name__}: " \
                                                                   f"{exc})"
            remember(paths[0], reason, cause)
            raise CopyNotMade(reason) from exc
    forget(paths[0])


def _no_room(cache: Path) -> str | None:
    """Why nothing can be written into the cache now (read-only, or short of space), or None."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"the model cache {cache} cannot be created ({exc.strerror}); set SKMEMORY_MODEL_CACHE to a folder " \
               "you can write"
    if not os.access(cache, os.W_OK):
        return f"the model cache {cache} is read-only; make it writable or set SKMEMORY_MODEL_CACHE to a folder " \
               "you can write"
    free = shutil.disk_usage(cache).free
    if free < ROOM_NEEDED:
        return f"the model cache's disk has {free / 2**20:,.0f} MB free, under the {ROOM_NEEDED / 2**30:.0f} GB a " \
               "copy needs; free some space"
    return None


def _cause(cache: Path, source: Path) -> str:
    """What a failure to make a copy may depend on: whether the cache can take it, and the source it is made from."""
    try:
        stat = source.stat()
        made_from = f"{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        made_from = "missing"
    return f"{_no_room(cache) is None}:{made_from}"


# --- failures remembered (in the cache root, else beside the system's temporary files) --------------------------

def _failure_files(copy: Path) -> list[Path]:
    return [copy.parent.parent / FAILURES, Path(tempfile.gettempdir()) / f"skmemory-{os.getuid()}-{FAILURES}"]


def _failures(path: Path) -> dict:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def remembered(copy: Path, cause: str) -> str | None:
    """Why this copy could not be made, while the cause recorded with it is still the cause."""
    known = _known(copy)
    return known.get("reason") if known and known.get("cause") == cause else None


def failure(copy: Path) -> str | None:
    """Why this copy cannot be made, as far as is known and still true of the cache (`skmemory status` says it
    without trying, and without reading the model the copy is made from)."""
    known = _known(copy)
    if not known:  # nothing failed: nothing to ask of the cache (asking makes its folder)
        return None
    room = str(_no_room(copy.parent) is None)
    return known.get("reason") if str(known.get("cause", "")).split(":", 1)[0] == room else None


def _known(copy: Path) -> dict | None:
    for path in _failure_files(copy):
        known = _failures(path).get(str(copy))
        if isinstance(known, dict):
            return known
    return None


def remember(copy: Path, reason: str, cause: str) -> None:
    logger.warning("%s; not tried again until that changes", reason)
    for path in _failure_files(copy):
        try:
            failures = _failures(path)
            failures[str(copy)] = {"reason": reason, "cause": cause, "at": time.time()}
            _write_json(path, failures)
            return
        except OSError:
            continue


def forget(copy: Path) -> None:
    for path in _failure_files(copy):
        failures = _failures(path)
        if str(copy) in failures:
            del failures[str(copy)]
            try:
                _write_json(path, failures)
            except OSError:
                pass


def _write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)
