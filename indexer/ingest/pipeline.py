"""Files -> documents -> chunks in the store: reading, parsing, chunking and diffing one file at a time."""
from __future__ import annotations

import errno
import hashlib
import logging
import os
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .chunking import MAX_TOKENS, TokenCounter, chunk_document
from ..errors import ExtractionError
from .extract import parse_file
from .files import TooLarge, UnsafeFile, read_inside
from .parsed import ParsedDocument
from .rows import ChunkRow, DocumentRow

logger = logging.getLogger(__name__)


@dataclass
class FileRead:
    """A file's bytes with the stat taken around the read."""

    data: bytes
    mtime_ns: int
    size: int
    birth: float | None
    ctime: float

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class SyncReport:
    """What one pass over a set of paths changed."""

    added: int = 0
    updated: int = 0
    moved: int = 0
    deleted: int = 0
    unchanged: int = 0
    failed: int = 0
    vanished: int = 0  # new files gone before they could be read (a sync tool's temp file)
    chunks_added: int = 0
    removed_chunk_ids: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.moved or self.deleted or self.failed or self.removed_chunk_ids)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["removed_chunks"] = len(d.pop("removed_chunk_ids"))
        return d


class Gone(Exception):
    """The file disappeared before or while it was read."""


def read_file(root: Path, rel_path: str, max_bytes: int) -> FileRead:
    """Read a project's file whole, retrying if it changes during the read; ExtractionError when it cannot be read."""
    for _ in range(3):
        try:
            data, before, after = read_inside(root, root / rel_path, max_bytes)
        except FileNotFoundError as exc:
            raise Gone(rel_path) from exc
        except IsADirectoryError:
            raise Gone(rel_path) from None
        except UnsafeFile as exc:
            raise ExtractionError(f"Not read: {exc}.") from None
        except TooLarge as exc:
            raise ExtractionError(  # MB as the limit is set: 20 MB is 20 * 1024 * 1024 bytes
                f"File is {exc.size / 2**20:.1f} MB, over the {max_bytes / 2**20:.0f} MB limit "
                "(SKMEMORY_MAX_FILE_BYTES); it is skipped."
            ) from None
        except PermissionError:
            raise ExtractionError("Permission denied: SK Memory cannot read this file; check its "
                                  "permissions.") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ExtractionError("Symlink loop: this link points back at itself.") from None
            raise ExtractionError(f"Cannot read this file: {exc.strerror or exc}.") from None
        if (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size) and len(data) == after.st_size:
            return FileRead(data, after.st_mtime_ns, after.st_size, getattr(after, "st_birthtime", None),
                            after.st_ctime)
    raise ExtractionError("The file kept changing while it was read; it will be read again on its next change.")


def build_chunks(document_id: str, parsed: ParsedDocument, counter: TokenCounter,
                 embed_budget: EmbedBudget | None = None) -> list[ChunkRow]:
    """Cut a parsed document into chunks whose ids depend only on the document and the embedded text."""
    seen: Counter[str] = Counter()
    rows = []
    exact = None
    if embed_budget is not None:
        # Twice the tokens the budget's chunks can hold: enough to cut them; the keyword-only rest is cut roughly.
        exact = 2 * embed_budget.of(parsed.file_type) * MAX_TOKENS
    for draft in chunk_document(parsed, counter, exact_tokens=exact):
        content_hash = hashlib.sha1(draft.embed_text.encode("utf-8")).hexdigest()
        occurrence = seen[content_hash]
        seen[content_hash] += 1
        chunk_id = hashlib.sha1(f"{document_id}\0{content_hash}\0{occurrence}".encode()).hexdigest()[:24]
        rows.append(ChunkRow(chunk_id, draft.ordinal, draft.heading_path, draft.content, draft.embed_text,
                             draft.start_line, draft.end_line, content_hash, draft.ref, draft.sections,
                             draft.keyword_only))
    return rows


def created_date(parsed: ParsedDocument, read: FileRead) -> str:
    """The document's creation date: frontmatter created/date, else the file's birth time, else its ctime."""
    if parsed.created:
        return parsed.created
    stamp = read.birth if read.birth else read.ctime
    return datetime.fromtimestamp(stamp).isoformat(timespec="seconds")


# Files machines write (logs, tables, data dumps) can hold tens of thousands of passages that say the same thing:
# all of them are keyword-searchable, but only the first few hundred are embedded, so one log cannot hold up
# every note's embeddings for an hour. Any other file is capped too, far higher: a 20 MB paragraph pasted into a
# note is 20,000 passages.
MACHINE_FILE_TYPES = frozenset({"log", "csv", "json", "xml"})


@dataclass(frozen=True)
class EmbedBudget:
    """How many passages of one file the model reads: of a machine-written file, and of any other."""

    machine: int
    long: int

    def of(self, file_type: str) -> int:
        return self.machine if file_type in MACHINE_FILE_TYPES else self.long


def apply_embed_budget(parsed: ParsedDocument, chunks: list[ChunkRow], budget: EmbedBudget) -> list[str]:
    """Keep only the first passages of a file within its budget for the model; return the warning, if any."""
    allowed = budget.of(parsed.file_type)
    embeddable = [c for c in chunks if not c.keyword_only]
    if len(embeddable) <= allowed:
        return []
    for chunk in embeddable[allowed:]:
        chunk.keyword_only = True
        chunk.embed_text = ""  # never read by the model (its id, made from this text, is already set)
    if parsed.file_type in MACHINE_FILE_TYPES:
        kind, setting = f"a {parsed.file_type} file", "SKMEMORY_MACHINE_EMBED_CHUNKS"
    else:
        kind, setting = "a very long file", "SKMEMORY_LONG_EMBED_CHUNKS"
    return [f"Only the first {allowed:,} of its {len(embeddable):,} passages are searchable by meaning ({kind}; "
            f"{setting} sets how many); every passage is searchable by keyword."]


def index_file(store, root: Path, rel_path: str, counter: TokenCounter, max_bytes: int,
               read: FileRead | None = None, document_id: str | None = None, force: bool = False,
               embed_budget: EmbedBudget | None = None) -> tuple[str, list[str], int]:
    """Bring one file's document up to date; return (outcome, removed chunk ids, chunks added).

    outcome is 'added', 'updated', 'unchanged', 'failed', 'deleted' or 'vanished' (new, and gone before it was
    read). `store` is the project's SQLite store
    (store/database.py's Store), which the writer hands in.
    """
    existing = store.document_by_path(rel_path)
    try:
        read = read or read_file(root, rel_path, max_bytes)
    except Gone:
        removed = store.delete_documents([existing["document_id"]]) if existing else []
        store.clear_file_errors([rel_path])
        return ("deleted" if existing else "vanished"), removed, 0
    except ExtractionError as exc:
        return "failed", store.record_file_error(rel_path, str(exc)), 0

    content_hash = read.content_hash
    if existing is not None and not force and existing["content_hash"] == content_hash:
        if existing["mtime_ns"] != read.mtime_ns:
            store.touch_document(existing["document_id"], read.mtime_ns, read.mtime_ns / 1e9, read.size)
        return "unchanged", [], 0

    try:
        parsed = parse_file(root / rel_path, read.data)
    except ExtractionError as exc:
        return "failed", store.record_file_error(rel_path, str(exc)), 0
    except Exception as exc:  # an extractor bug must not stop the indexer: record it on the file
        logger.exception("Extractor failed on %s", rel_path)
        return "failed", store.record_file_error(rel_path,
                                                 f"Could not parse this file ({type(exc).__name__}: {exc})."), 0

    doc_id = (document_id or (existing["document_id"] if existing else None)
              or store.failed_document_id(rel_path) or uuid.uuid4().hex)
    chunks = build_chunks(doc_id, parsed, counter, embed_budget)
    budget_warning = apply_embed_budget(parsed, chunks, embed_budget) if embed_budget is not None else []
    doc = DocumentRow(
        document_id=doc_id, rel_path=rel_path, file_type=parsed.file_type, title=parsed.title,
        frontmatter=parsed.frontmatter, created=created_date(parsed, read), modified=read.mtime_ns / 1e9,
        size=read.size, content_hash=content_hash, mtime_ns=read.mtime_ns, warnings=parsed.warnings + budget_warning,
    )
    links = [(link.target, link.kind) for link in parsed.links]
    removed, added = store.save_document(doc, chunks, parsed.tags, links)
    return ("updated" if existing else "added"), removed, added


def path_exists(path: Path) -> bool:
    """Tell whether a path exists without following a final symlink loop into an error."""
    try:
        os.stat(path)
        return True
    except OSError:
        return os.path.lexists(path)
