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

from ..text.boilerplate import paragraph_keys
from .chunking import MAX_TOKENS, TokenCounter, chunk_document
from ..errors import ExtractionError
from .extract import parse_file
from ..text.files import TooLarge, UnsafeFile, read_inside
from .parsed import ChunkDraft, ParsedDocument
from .rows import ChunkRow, StoredDocument

logger = logging.getLogger(__name__)


@dataclass
class FileRead:
    """A file's bytes with the stat taken around the read."""

    data: bytes
    mtime_ns: int
    size: int
    birth: float | None
    ctime: float
    digest: str = ""  # the content hash, once computed (the bytes may be dropped after that)

    @property
    def content_hash(self) -> str:
        if not self.digest:
            self.digest = hashlib.sha256(self.data).hexdigest()
        return self.digest


@dataclass
class Prepared:
    """What reading, parsing and chunking made of one file, before the store: no database is touched to make it,
    so a pool of processes can prepare files while one writer stores them.

    outcome: 'parsed' (document and chunk drafts), 'same' (content hash as stored: nothing parsed), 'gone'
    (missing when read) or 'failed' (error says why, in a sentence for the user)."""

    rel_path: str
    outcome: str
    read: FileRead | None = None
    parsed: ParsedDocument | None = None  # its sections are emptied once chunked: the drafts carry the text
    drafts: list[ChunkDraft] = field(default_factory=list)
    error: str = ""


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
    return chunk_rows(document_id, draft_chunks(parsed, counter, embed_budget))


def draft_chunks(parsed: ParsedDocument, counter: TokenCounter,
                 embed_budget: EmbedBudget | None = None) -> list[ChunkDraft]:
    """Cut a parsed document into chunk drafts (no ids yet)."""
    exact = None
    if embed_budget is not None:
        # Twice the tokens the budget's chunks can hold: enough to cut them; the keyword-only rest is cut roughly.
        exact = 2 * embed_budget.of(parsed.file_type) * MAX_TOKENS
    return list(chunk_document(parsed, counter, exact_tokens=exact))


def chunk_rows(document_id: str, drafts: list[ChunkDraft]) -> list[ChunkRow]:
    """Give each draft its id: from the document and the embedded text (and its occurrence, for repeated text)."""
    seen: Counter[str] = Counter()
    rows = []
    for draft in drafts:
        content_hash = hashlib.sha1(draft.embed_text.encode("utf-8")).hexdigest()
        occurrence = seen[content_hash]
        seen[content_hash] += 1
        chunk_id = hashlib.sha1(f"{document_id}\0{content_hash}\0{occurrence}".encode()).hexdigest()[:24]
        rows.append(ChunkRow(chunk_id, draft.ordinal, draft.heading_path, draft.content, draft.embed_text,
                             draft.start_line, draft.end_line, content_hash, draft.ref, draft.sections,
                             draft.keyword_only, draft.paragraphs))
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


def prepare_file(root: Path, rel_path: str, counter: TokenCounter, max_bytes: int, known_hash: str | None = None,
                 read: FileRead | None = None, embed_budget: EmbedBudget | None = None) -> Prepared:
    """Read, parse and chunk one file, touching no database. A file whose content hash is known_hash (as stored)
    is not parsed: nothing would change."""
    try:
        read = read or read_file(root, rel_path, max_bytes)
    except Gone:
        return Prepared(rel_path, "gone")
    except ExtractionError as exc:
        return Prepared(rel_path, "failed", error=str(exc))
    if known_hash is not None and read.content_hash == known_hash:
        return Prepared(rel_path, "same", read)
    try:
        parsed = parse_file(root / rel_path, read.data)
    except ExtractionError as exc:
        return Prepared(rel_path, "failed", read, error=str(exc))
    except Exception as exc:  # an extractor bug must not stop the indexer: record it on the file
        logger.exception("Extractor failed on %s", rel_path)
        return Prepared(rel_path, "failed", read, error=f"Could not parse this file ({type(exc).__name__}: {exc}).")
    drafts = draft_chunks(parsed, counter, embed_budget)
    for draft in drafts:  # in the parsing worker, not the writer: a big sync waits on the writer
        draft.paragraphs = paragraph_keys(draft.content)
    parsed.sections = []
    return Prepared(rel_path, "parsed", read, parsed, drafts)


def index_file(store, root: Path, rel_path: str, counter: TokenCounter, max_bytes: int,
               read: FileRead | None = None, document_id: str | None = None, force: bool = False,
               embed_budget: EmbedBudget | None = None) -> tuple[str, list[str], int]:
    """Bring one file's document up to date; return (outcome, removed chunk ids, chunks added).

    outcome is 'added', 'updated', 'unchanged', 'failed', 'deleted' or 'vanished' (new, and gone before it was
    read). `store` is the project's SQLite store
    (store/database.py's Store), which the writer hands in.
    """
    existing = store.document_by_path(rel_path)
    known = existing["content_hash"] if existing is not None and not force else None
    prepared = prepare_file(root, rel_path, counter, max_bytes, known, read, embed_budget)
    return store_prepared(store, root, prepared, existing, counter, max_bytes, document_id, force, embed_budget)


def store_prepared(store, root: Path, prepared: Prepared, existing, counter: TokenCounter, max_bytes: int,
                   document_id: str | None = None, force: bool = False, embed_budget: EmbedBudget | None = None
                   ) -> tuple[str, list[str], int]:
    """Store what prepare_file made of a file (the writer's half of index_file); same outcomes as index_file.
    `existing` is the stored row at the file's path, or None."""
    rel_path = prepared.rel_path
    if prepared.outcome == "gone":
        removed = store.delete_documents([existing["document_id"]]) if existing else []
        store.clear_file_errors([rel_path])
        return ("deleted" if existing else "vanished"), removed, 0
    if prepared.outcome == "failed":
        return "failed", store.record_file_error(rel_path, prepared.error), 0
    read = prepared.read
    if existing is not None and not force and existing["content_hash"] == read.content_hash:
        # Read again (its mtime or ctime moved) and the same: recorded as read now, so that it is not read again.
        store.touch_document(existing["document_id"], read.mtime_ns, read.mtime_ns / 1e9, read.size)
        return "unchanged", [], 0
    if prepared.outcome == "same":  # the stored row changed since it was prepared: prepare it again, here
        return index_file(store, root, rel_path, counter, max_bytes, None, document_id, force, embed_budget)

    parsed = prepared.parsed
    doc_id = (document_id or (existing["document_id"] if existing else None)
              or store.failed_document_id(rel_path) or uuid.uuid4().hex)
    chunks = chunk_rows(doc_id, prepared.drafts)
    budget_warning = apply_embed_budget(parsed, chunks, embed_budget) if embed_budget is not None else []
    doc = StoredDocument(
        document_id=doc_id, rel_path=rel_path, file_type=parsed.file_type, title=parsed.title,
        frontmatter=parsed.frontmatter, created=created_date(parsed, read), modified=read.mtime_ns / 1e9,
        size=read.size, content_hash=read.content_hash, mtime_ns=read.mtime_ns,
        warnings=parsed.warnings + budget_warning,
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
