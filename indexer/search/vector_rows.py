"""Where the vector cache keeps its rows: int8 codes, their parameters, chunk ids and the float32 originals.

Both hold, per row, the codes and three float32 columns (scale, the coding's loss r and the coded length b; see
compact.py). MemoryRows holds everything in memory (a read-only view of a project, or a cache with no folder).
FileRows keeps the rows in files in the index folder: codes and columns memory-mapped (what the scan reads), ids in a
fixed-width file, the float32 originals in a file read a few rows at a time for rescoring, so that only the codes
(a quarter of the floats) stay resident. Opening valid files is mapping them; the files are valid when state.json
names the index's current vector generation (see migration m009), which it does only after a clean close, and each
file's live bytes still have the checksum that close recorded (a file shuffled, scribbled or cut short outside SK
Memory is rebuilt from SQLite's copies rather than searched).
"""
from __future__ import annotations

import errno
import json
import logging
import os
import zlib
from pathlib import Path

import numpy as np

from .compact import quantize

logger = logging.getLogger(__name__)

FORMAT = 2  # 2: state.json holds each file's checksum
ID_WIDTH = 40  # bytes per id in ids.bin; chunk ids are 24 hex characters
ID_BLOCK = 100_000
WRITE_BLOCK = 65_536
COLUMNS = ("scale", "loss", "length")  # each a float32 array (file <name>.f32) of one number per row
FILES = ("codes.u8", "ids.bin", "full.f32") + tuple(f"{c}.f32" for c in COLUMNS)
SUM_BLOCK = 1 << 24  # bytes read at a time while checking a file


def _widths(dim: int) -> dict[str, int]:
    """Bytes per row in each file."""
    return {"codes.u8": dim, "ids.bin": ID_WIDTH, "full.f32": dim * 4, **{f"{c}.f32": 4 for c in COLUMNS}}


def _checksums(folder: Path, rows: int, dim: int, ids: list[str] | None = None) -> dict[str, int]:
    """CRC-32 of each file's live bytes (rows × width); ids.bin's from the ids in memory when given, so that a file
    changed behind a running writer is not vouched for at its close. About 0.1 s for 85,657 rows of 384."""
    sums = {}
    for name, width in _widths(dim).items():
        crc = 0
        if name == "ids.bin" and ids is not None:
            for start in range(0, rows, ID_BLOCK):
                crc = zlib.crc32(b"".join(_id_bytes(c) for c in ids[start:start + ID_BLOCK]), crc)
        else:
            left = rows * width
            with open(folder / name, "rb") as f:
                while left > 0:
                    block = f.read(min(SUM_BLOCK, left))
                    if not block:
                        break
                    crc = zlib.crc32(block, crc)
                    left -= len(block)
        sums[name] = crc
    return sums


class _Rows:
    """What both kinds of rows do alike: ids in a list, row by row."""

    ids: list[str]

    def full(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def put(self, row: int, chunk_id: str, vector: np.ndarray, code: np.ndarray, param) -> None:
        raise NotImplementedError

    def move(self, src: int, dst: int) -> None:
        """Copy row src over row dst (a removal moves the last row into the hole)."""
        self.put(dst, self.ids[src], self.full(np.array([src]))[0], self.codes[src],
                 (self.scale[src], self.loss[src], self.length[src]))

    def truncate(self, n: int) -> None:
        del self.ids[n:]

    def _set_id(self, row: int, chunk_id: str) -> None:
        if row == len(self.ids):
            self.ids.append(chunk_id)
        else:
            self.ids[row] = chunk_id


class MemoryRows(_Rows):
    """Rows in memory: codes and parameters beside the float32 matrix they came from."""

    persistent = False

    def __init__(self, ids: list[str], vectors: np.ndarray):
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.dim = vectors.shape[1] if vectors.ndim == 2 else 0
        self.ids = list(ids)
        self._full = vectors.reshape(len(self.ids), self.dim)
        self.codes, params = quantize(self._full)
        self.scale, self.loss, self.length = (np.ascontiguousarray(params[:, i]) for i in range(3))

    @property
    def capacity(self) -> int:
        return len(self.codes)

    def full(self, rows: np.ndarray) -> np.ndarray:
        return self._full[rows]

    def put(self, row: int, chunk_id: str, vector: np.ndarray, code: np.ndarray, param: np.ndarray) -> None:
        self._full[row], self.codes[row] = vector, code
        self.scale[row], self.loss[row], self.length[row] = param
        self._set_id(row, chunk_id)

    def reserve(self, need: int) -> None:
        if need <= self.capacity:
            return
        capacity = max(need, int(self.capacity * 1.5) + 64)
        self._full = _grown(self._full, capacity, len(self.ids))
        self.codes = _grown(self.codes, capacity, len(self.ids))
        self.scale, self.loss, self.length = (_grown(a, capacity, len(self.ids))
                                              for a in (self.scale, self.loss, self.length))

    def close(self, generation: str | None) -> None:
        pass


def _grown(array: np.ndarray, capacity: int, live: int) -> np.ndarray:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:live] = array[:live]
    return grown


class FileRows(_Rows):
    """Rows in files of one folder: codes.u8 and the columns (mapped), ids.bin, full.f32 (read a few rows at a time)."""

    persistent = True

    def __init__(self, folder: Path, dim: int, ids: list[str], capacity: int):
        self.folder = folder
        self.dim = dim
        self.ids = ids
        self._capacity = 0
        self._full = os.open(folder / "full.f32", os.O_RDWR | os.O_CREAT, 0o600)
        self._id_file = os.open(folder / "ids.bin", os.O_RDWR | os.O_CREAT, 0o600)
        self.codes = self.scale = self.loss = self.length = None
        self._map(max(capacity, 1))

    # --- opening ----------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, folder: Path, generation: str | None) -> "FileRows | None":
        """Map the files kept in folder when they are whole and current (state.json names this generation)."""
        try:
            state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
            rows, dim = int(state["rows"]), int(state["dim"])
            if state.get("format") != FORMAT or generation is None or state.get("generation") != generation:
                return None
            sizes = {name: (folder / name).stat().st_size for name in FILES}
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if (sizes["codes.u8"] < rows * dim or min(sizes[f"{c}.f32"] for c in COLUMNS) < rows * 4
                or sizes["ids.bin"] < rows * ID_WIDTH or sizes["full.f32"] < rows * dim * 4):
            logger.warning("The vector files in %s are shorter than state.json says; rebuilding them", folder)
            return None
        sums = _checksums(folder, rows, dim)
        changed = [name for name in FILES if state.get("sums", {}).get(name) != sums[name]]
        if changed:
            logger.warning("The vector files in %s are not as SK Memory left them (%s changed); rebuilding them from "
                           "the index", folder, ", ".join(changed))
            return None
        ids = _read_ids(folder / "ids.bin", rows)
        return cls(folder, dim, ids, sizes["codes.u8"] // max(dim, 1))

    @classmethod
    def create(cls, folder: Path, ids: list[str], vectors: np.ndarray) -> "FileRows":
        """Write every vector into fresh files in folder (replacing any there) and open them."""
        for cid in ids:
            _id_bytes(cid)  # refuse before writing anything
        folder.mkdir(parents=True, exist_ok=True)
        _write_state(folder, None, 0, 0)
        for name in FILES:
            (folder / name).unlink(missing_ok=True)
        vectors = np.asarray(vectors, dtype=np.float32)
        dim = vectors.shape[1] if vectors.ndim == 2 else 0
        rows = cls(folder, dim, [], len(ids) + 64)
        for start in range(0, len(ids), WRITE_BLOCK):
            block = np.ascontiguousarray(vectors[start:start + WRITE_BLOCK])
            codes, params = quantize(block)
            end = start + len(block)
            rows.codes[start:end] = codes
            rows.scale[start:end], rows.loss[start:end], rows.length[start:end] = params.T
            os.pwrite(rows._full, block.tobytes(), start * dim * 4)
            os.pwrite(rows._id_file, b"".join(_id_bytes(c) for c in ids[start:end]), start * ID_WIDTH)
        rows.ids = list(ids)
        return rows

    # --- rows -------------------------------------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        return self._capacity

    def full(self, rows: np.ndarray) -> np.ndarray:
        """The float32 originals of these rows, read from full.f32 in runs of neighbouring rows."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        if not len(rows):
            return out
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        cuts = np.flatnonzero(np.diff(ordered) != 1) + 1
        width = self.dim * 4
        got = np.empty_like(out)
        for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(ordered)]])):
            data = os.pread(self._full, int(b - a) * width, int(ordered[a]) * width)
            got[a:b] = np.frombuffer(data, dtype=np.float32).reshape(int(b - a), self.dim)
        out[order] = got
        return out

    def put(self, row: int, chunk_id: str, vector: np.ndarray, code: np.ndarray, param: np.ndarray) -> None:
        name = _id_bytes(chunk_id)
        self.codes[row] = code
        self.scale[row], self.loss[row], self.length[row] = param
        os.pwrite(self._full, np.ascontiguousarray(vector, dtype=np.float32).tobytes(), row * self.dim * 4)
        os.pwrite(self._id_file, name, row * ID_WIDTH)
        self._set_id(row, chunk_id)

    def reserve(self, need: int) -> None:
        if need > self._capacity:
            self._map(max(need, int(self._capacity * 1.5) + 1024))

    def mark_in_use(self) -> None:
        """Say in state.json that the files are being changed: a crash before close() leaves them to be rebuilt."""
        _write_state(self.folder, None, len(self.ids), self.dim)

    def close(self, generation: str | None) -> None:
        """Flush every file and record the generation they now match; the next open maps them."""
        if self.codes is None:
            return
        for mapped in self._mapped():
            mapped.flush()
        for fd in (self._full, self._id_file):
            os.fsync(fd)
        sums = _checksums(self.folder, len(self.ids), self.dim, self.ids) if generation is not None else {}
        _write_state(self.folder, generation, len(self.ids), self.dim, sums)
        self.codes = self.scale = self.loss = self.length = None
        os.close(self._full)
        os.close(self._id_file)

    def _map(self, capacity: int) -> None:
        if self.codes is not None:
            for mapped in self._mapped():
                mapped.flush()
        dim = max(self.dim, 1)
        for name, width in (("codes.u8", dim), *((f"{c}.f32", 4) for c in COLUMNS)):
            with open(self.folder / name, "ab") as f:
                if f.tell() < capacity * width:
                    _allocate(f, capacity * width)
        self.codes = np.memmap(self.folder / "codes.u8", dtype=np.uint8, mode="r+", shape=(capacity, dim))
        self.scale, self.loss, self.length = (np.memmap(self.folder / f"{c}.f32", dtype=np.float32, mode="r+",
                                                        shape=(capacity,)) for c in COLUMNS)
        self._capacity = capacity

    def _mapped(self) -> tuple[np.memmap, ...]:
        return self.codes, self.scale, self.loss, self.length


def _allocate(f, size: int) -> None:
    """Grow a file to size with its blocks taken now: a full disk is an OSError here, not a SIGBUS later, when a
    write into the mapped pages finds no block to hold it (a sparse file on a full disk)."""
    try:
        os.posix_fallocate(f.fileno(), 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
        f.truncate(size)  # a file system without fallocate


def _id_bytes(chunk_id: str) -> bytes:
    raw = chunk_id.encode("ascii", "strict") if chunk_id.isascii() else b""
    if not raw or len(raw) > ID_WIDTH or b"\0" in raw:
        raise ValueError(f"chunk id {chunk_id!r} does not fit the vector files ({ID_WIDTH} ASCII bytes)")
    return raw.ljust(ID_WIDTH, b"\0")


def _read_ids(path: Path, rows: int) -> list[str]:
    names = np.fromfile(path, dtype=f"S{ID_WIDTH}", count=rows)
    ids: list[str] = []
    for start in range(0, rows, ID_BLOCK):
        ids += names[start:start + ID_BLOCK].astype(f"U{ID_WIDTH}").tolist()
    return ids


def _write_state(folder: Path, generation: str | None, rows: int, dim: int, sums: dict | None = None) -> None:
    tmp = folder / "state.json.tmp"
    tmp.write_text(json.dumps({"format": FORMAT, "generation": generation, "rows": rows, "dim": dim,
                               "sums": sums or {}}), encoding="utf-8")
    os.replace(tmp, folder / "state.json")
