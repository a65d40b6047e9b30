"""A project's SQLite index: documents, chunks with their embedding state, tags, links and per-file errors."""
from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections import deque
from contextlib import contextmanager

from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from ..text.boilerplate import paragraph_keys
from ..ingest.rows import ChunkRow, StoredDocument
from ..text.segment import index_words
from .migrations import PROPERTY_TEXT, SUBSTRINGS_LIVE, migrate

SQLITE_NAME = "index.sqlite"
# When a document was read, to the millisecond: a file whose ctime is later changed after it (project.py).
NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')"

logger = logging.getLogger(__name__)


LONG_NOTE_TAIL_FROM = 8  # a note's passages from this one on are its deep tail: embedded after every note's top
# Chunks by id that wait to be embedded: found through the primary key, not the state's index (the unary + keeps the
# planner off it), which would scan every pending chunk (0.09 s a call on britannica-10k).
_PENDING_BY_ID = "chunk_id IN ({ids}) AND +embed_state = 'pending'"
PENDING_AHEAD = 8  # groups of chunks to embed whose order pending_chunks reads in one scan
GROUP_COMMIT_SECONDS = 1.0  # while a sync saves many documents, they are committed together about this often
IDS_PER_QUERY = 500  # SQLite's default limit on bound parameters is 999; stay well under it
# A reader maps the file into memory (up to this much; SQLite caps it near 2 GB) instead of reading it page by page
# into a 2 MB cache of its own: a search looks up thousands of chunks by rowid scattered over the file (the notes of
# a leg's best 4,000 chunks: 36 ms through the cache, 10 ms mapped, on britannica-10k's 85,657 passages), and the
# server's request threads each open a connection whose own cache starts empty, while the mapping shares the
# system's. The writer keeps SQLite's default.
READER_MMAP_BYTES = 1 << 31


def rows_in(run: Callable[[str, tuple], list], query: str, ids: Iterable, params: tuple = ()) -> list[sqlite3.Row]:
    """Run a query whose `{ids}` stands for a list of ids as many times as the ids need; the rows of all runs.

    `run(sql, params)` executes one query; `params` are bound before the ids.
    Example: rows_in(store.query, "SELECT chunk_id FROM chunks WHERE document_id IN ({ids})", document_ids)
    """
    ids = list(ids)
    rows: list[sqlite3.Row] = []
    for start in range(0, len(ids), IDS_PER_QUERY):
        part = ids[start:start + IDS_PER_QUERY]
        rows += run(query.format(ids=",".join("?" * len(part))), (*params, *part))
    return rows


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open the index database with the settings every connection needs (WAL, foreign keys, busy timeout)."""
    if readonly:
        conn = sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True, timeout=30,
                               check_same_thread=False)
        conn.execute(f"PRAGMA mmap_size={READER_MMAP_BYTES}")
    else:
        conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys=ON")
    # The BM25 table's words in every script (text/segment.py): its triggers and writes call it.
    conn.create_function("skm_words", 1, index_words, deterministic=True)
    return conn


class Store:
    """The writer's handle on a project's SQLite file; every method is one transaction, safe across threads."""

    def __init__(self, index_dir: Path, readonly: bool = False):
        self.path = index_dir / SQLITE_NAME
        if readonly:
            self.conn = connect(self.path, readonly=True)
        else:
            index_dir.mkdir(parents=True, exist_ok=True)
            self.conn = connect(self.path)
            migrate(self.conn)
        self.lock = threading.RLock()
        self._pending_ids: deque[str] = deque()  # the next chunks to embed, in pending_chunks' order
        self._pending_seen = -1  # conn.total_changes when that order was read
        self._grouped = 0
        self._committed = 0.0

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # --- reading -----------------------------------------------------------------------------------------

    def query(self, sql: str, params: Iterable = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.conn.execute(sql, tuple(params)).fetchall()

    sql = query  # the read side's name: search/chunk_reads.py asks the writer's store what it asks a reader

    def document_by_path(self, rel_path: str) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM documents WHERE rel_path = ?", (rel_path,))
        return rows[0] if rows else None

    def file_states(self, under: str = "") -> dict[str, tuple[str, int, int, str, int]]:
        """Map each stored rel_path (below `under`) to (document_id, mtime_ns, size, content_hash, when it was last
        read, in seconds since the epoch)."""
        sql = ("SELECT rel_path, document_id, mtime_ns, size, content_hash, "
               "(julianday(indexed_at) - 2440587.5) * 86400.0 FROM documents")
        params: tuple = ()
        if under:
            sql += " WHERE rel_path = ? OR substr(rel_path, 1, ?) = ?"
            params = (under, len(under) + 1, under + "/")
        return {r[0]: (r[1], r[2], r[3], r[4], r[5] or 0) for r in self.query(sql, params)}

    def chunk_ids(self, document_id: str) -> list[str]:
        return [r[0] for r in self.query("SELECT chunk_id FROM chunks WHERE document_id = ?", (document_id,))]

    def pending_chunks(self, limit: int) -> list[sqlite3.Row]:
        """Return chunks waiting for embeddings: note-first, newest documents first, the deep tail of long notes last.

        Chunks that already hold a reused vector come first (they need no model); then the first chunk of every
        pending document, so that each note becomes findable by meaning early; then the top of every note (its first
        LONG_NOTE_TAIL_FROM passages: a short note whole); then the rest of the long notes, whose hundreds of
        passages would otherwise hold up every note after them.

        That order takes a sorted scan of every pending chunk (0.13 s on britannica-10k, where a group's model work
        is ~3 s), so it is read for PENDING_AHEAD groups at once and read again after any other write to the index
        (a note saved or deleted, chunks set pending again): only this store's own set_embedded leaves it current.
        """
        with self.lock:
            for _ in range(2):
                if self.conn.total_changes != self._pending_seen or len(self._pending_ids) < limit:
                    self._pending_ids = deque(r[0] for r in self.conn.execute(
                        """SELECT c.chunk_id FROM chunks c JOIN documents d USING (document_id)
                           WHERE c.embed_state = 'pending'
                           ORDER BY c.vector IS NULL, c.ordinal > 0, c.ordinal >= ?, d.modified DESC, c.document_id,
                                    c.ordinal
                           LIMIT ?""", (LONG_NOTE_TAIL_FROM, limit * PENDING_AHEAD)))
                    self._pending_seen = self.conn.total_changes
                take = [self._pending_ids.popleft() for _ in range(min(limit, len(self._pending_ids)))]
                found = {r["chunk_id"]: r for r in rows_in(
                    self.query, "SELECT chunk_id, document_id, embed_text, vector FROM chunks "
                                f"WHERE {_PENDING_BY_ID}", take)}
                rows = [found[i] for i in take if i in found]
                if rows or not take:
                    return rows
                self._pending_seen = -1  # every chunk taken has gone meanwhile: read the order again
            return rows

    def has_pending(self) -> bool:
        """Whether any chunk waits for an embedding (by the embed state's index: no scan)."""
        return bool(self.query("SELECT 1 FROM chunks WHERE embed_state = 'pending' LIMIT 1"))

    def embedded_ids(self) -> set[str]:
        """Chunks that have a vector (keyword-only chunks have none)."""
        return {r[0]
                for r in self.query("SELECT chunk_id FROM chunks WHERE embed_state = 'embedded' AND NOT keyword_only")}

    def all_chunk_ids(self) -> set[str]:
        return {r[0] for r in self.query("SELECT chunk_id FROM chunks")}

    def counts(self) -> dict:
        """Documents and the chunks the model embeds, by embed state, and how many notes are findable by meaning."""
        row = self.query(
            """SELECT (SELECT count(*) FROM documents) AS documents, count(*) AS chunks,
                      sum(embed_state = 'embedded') AS embedded, sum(embed_state = 'pending') AS pending,
                      sum(embed_state = 'failed') AS failed,
                      sum(embed_state = 'pending' AND ordinal >= ?) AS long_note_pending,
                      count(DISTINCT document_id) AS documents_with_text,
                      count(DISTINCT CASE WHEN embed_state = 'embedded' THEN document_id END) AS documents_embedded
               FROM chunks WHERE NOT keyword_only""", (LONG_NOTE_TAIL_FROM,)
        )[0]
        return {k: int(row[k] or 0) for k in row.keys()}

    def save_graph_positions(self, changed: list[tuple[str, float, float, str]], gone: list[str],
                             afresh: bool) -> None:
        """Keep the Forge Graph's node positions: those that changed, without the documents gone. The graph was
        drawn from a read of the index, so a document a sync deleted since then is skipped, not a foreign-key error."""
        with self.lock, self.conn:
            if afresh:
                self.conn.execute("DELETE FROM graph_positions")
            self.conn.executemany("DELETE FROM graph_positions WHERE document_id = ?", [(d,) for d in gone])
            self.conn.executemany(
                "INSERT INTO graph_positions (document_id, x, y, placed) SELECT document_id, ?, ?, ? FROM documents "
                "WHERE document_id = ? ON CONFLICT(document_id) "
                "DO UPDATE SET x = excluded.x, y = excluded.y, placed = excluded.placed",
                [(x, y, placed, d) for d, x, y, placed in changed])

    # --- the substring index, which a big sync leaves to catch up (migration m015) ------------------------------

    def substring_backlog(self) -> int:
        """How many chunks the substring (trigram) index does not hold yet; 0 when it is whole."""
        upto = self.query("SELECT upto FROM trigram_state WHERE id = 1")[0][0]
        if upto == SUBSTRINGS_LIVE:
            return 0
        return self.query("SELECT count(*) FROM chunks WHERE rowid > ?", (upto,))[0][0]

    def defer_substrings(self) -> None:
        """Leave chunks written from now on out of the substring index and the word list of typo correction until
        catch_up_substrings adds them: a big sync writes each chunk into the keyword indexes it needs first, and the
        trigram index (60 % of the writes) and the word list after, in batches."""
        with self.lock, self.conn:
            self.conn.execute(f"UPDATE trigram_state SET upto = (SELECT coalesce(max(rowid), 0) FROM chunks) "
                              f"WHERE id = 1 AND upto = {SUBSTRINGS_LIVE}")

    def catch_up_substrings(self, batch: int = 2000) -> int:
        """Add up to `batch` chunks the substring index and the word list lack, in one commit; return how many are
        still left. When none are left both follow every write again."""
        with self.lock, self.conn:
            upto = self.conn.execute("SELECT upto FROM trigram_state WHERE id = 1").fetchone()[0]
            if upto == SUBSTRINGS_LIVE:
                return 0
            last = self.conn.execute("SELECT coalesce(max(rowid), 0) FROM chunks").fetchone()[0]
            until = self.conn.execute("SELECT max(rowid) FROM (SELECT rowid FROM chunks WHERE rowid > ? "
                                      "ORDER BY rowid LIMIT ?)", (upto, batch)).fetchone()[0] or upto
            self.conn.execute("INSERT INTO chunks_trigram(rowid, content) SELECT rowid, content FROM chunks "
                              "WHERE rowid > ? AND rowid <= ?", (upto, until))
            self.conn.execute("INSERT INTO words(rowid, text) SELECT rowid * 2, content FROM chunks "
                              "WHERE rowid > ? AND rowid <= ?", (upto, until))
            whole = until >= last
            self.conn.execute("UPDATE trigram_state SET upto = ? WHERE id = 1", (SUBSTRINGS_LIVE if whole else until,))
        return 0 if whole else self.substring_backlog()

    # --- how the index was built ----------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM index_meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.lock, self.conn:
            self._put_meta(key, value)

    def _put_meta(self, key: str, value: str) -> None:
        """Write one index_meta value inside the caller's transaction."""
        self.conn.execute("INSERT INTO index_meta (key, value) VALUES (?, ?) "
                          "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def drop_meta(self, key: str) -> None:
        with self.lock, self.conn:
            self.conn.execute("DELETE FROM index_meta WHERE key = ?", (key,))

    def forget_vectors(self, keep_meanwhile: bool = False, keep_previous: bool = False,
                       meta: dict[str, str] | None = None) -> list[str]:
        """Queue every chunk for embedding again and drop the stored vectors (the model or its backend changed);
        return the ids. keep_meanwhile (the same model, another backend): each old vector answers meaning search
        until its chunk's new one is stored (stale_vectors, migration m019). keep_previous (another model): the old
        vectors are kept whole until the switch is done (previous_vectors, migration m021; end_switch). `meta` is
        written in the same transaction (the model switched to, and whose vectors Chroma still holds)."""
        with self.lock, self.conn:
            for key, value in (meta or {}).items():
                self._put_meta(key, value)
            ids = [r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE NOT keyword_only AND "
                                                   "(embed_state != 'pending' OR vector IS NOT NULL)")]
            self.conn.execute("DELETE FROM stale_vectors")
            if keep_meanwhile:
                self.conn.execute("INSERT INTO stale_vectors (chunk_id, vector) SELECT chunk_id, vector FROM chunks "
                                  "WHERE embed_state = 'embedded' AND vector IS NOT NULL AND NOT keyword_only")
            if keep_previous:
                self.conn.execute("DELETE FROM previous_vectors")
                self.conn.execute("INSERT INTO previous_vectors (chunk_id, vector) SELECT chunk_id, vector FROM "
                                  "chunks WHERE embed_state = 'embedded' AND vector IS NOT NULL AND NOT keyword_only")
            self.conn.execute("UPDATE chunks SET embed_state = 'pending', embed_error = NULL, vector = NULL "
                              "WHERE NOT keyword_only")
        return ids

    def end_switch(self, key: str) -> None:
        """A model switch is done (every passage has its new vector): the previous model's vectors and the meta that
        names it go together."""
        with self.lock, self.conn:
            self.conn.execute("DELETE FROM previous_vectors")
            self.conn.execute("DELETE FROM index_meta WHERE key = ?", (key,))

    def stale_vectors(self) -> int:
        """How many old vectors still answer for chunks being embedded again (forget_vectors' keep_meanwhile)."""
        return self.query("SELECT count(*) FROM stale_vectors")[0][0]

    def errors(self) -> list[dict]:
        """Return every file that could not be indexed, and every indexed file with warnings."""
        failed = [
            {"path": r["rel_path"], "error": r["error"], "indexed": False}
            for r in self.query("SELECT rel_path, error FROM file_errors ORDER BY rel_path")
        ]
        warned = [
            {"path": r["rel_path"], "error": "; ".join(json.loads(r["warnings"])), "indexed": True}
            for r in self.query("SELECT rel_path, warnings FROM documents WHERE warnings != '[]' ORDER BY rel_path")
        ]
        chunk_failures = [
            {"path": r["rel_path"], "error": f"{r['n']} chunk(s) could not be embedded: {r['embed_error']}",
             "indexed": True}
            for r in self.query(
                """SELECT d.rel_path, count(*) AS n, max(c.embed_error) AS embed_error FROM chunks c
                   JOIN documents d USING (document_id) WHERE c.embed_state = 'failed' GROUP BY d.rel_path"""
            )
        ]
        return failed + warned + chunk_failures

    # --- writing -----------------------------------------------------------------------------------------

    @contextmanager
    def grouped_commits(self) -> Iterator[None]:
        """Commit the documents saved inside this block together, about once a second, instead of one by one.

        A commit per document cost a tenth of a big sync (FTS5 writes its pending segments at each commit). Each
        document is still saved whole or not at all (a savepoint); another writer's commit on this connection
        commits the documents saved so far, and the block's end commits the rest."""
        with self.lock:
            self._grouped += 1
            self._committed = time.monotonic()
        try:
            yield
        finally:
            with self.lock:
                self._grouped -= 1
                if not self._grouped and self.conn.in_transaction:
                    try:
                        self.conn.commit()
                    except sqlite3.Error:  # a full disk: what was not committed is read again by the next sync
                        self.conn.rollback()
                        raise

    @contextmanager
    def _saving(self) -> Iterator[sqlite3.Connection]:
        """One document's writes: a transaction of its own, or a savepoint inside grouped_commits."""
        with self.lock:
            if not self._grouped:
                with self.conn:
                    yield self.conn
                return
            c = self.conn
            if not c.in_transaction:
                c.execute("BEGIN")
            c.execute("SAVEPOINT save_document")
            try:
                yield c
            except BaseException:
                if c.in_transaction:  # a full disk or an I/O error ends the whole transaction: nothing to roll back
                    c.execute("ROLLBACK TO save_document")
                    c.execute("RELEASE save_document")
                raise
            c.execute("RELEASE save_document")
            if time.monotonic() - self._committed >= GROUP_COMMIT_SECONDS:
                c.commit()
                self._committed = time.monotonic()

    def save_document(self, doc: StoredDocument, chunks: list[ChunkRow], tags: list[str], links: list[tuple[str, str]]
                      ) -> tuple[list[str], int]:
        """Insert or replace a document and diff its chunks: return (chunk ids removed, count of chunks added).

        Chunks whose id is unchanged keep their embedding; only new ids are queued as pending.
        """
        with self._saving() as c:
            c.execute("DELETE FROM file_errors WHERE rel_path = ?", (doc.rel_path,))
            c.execute(
                """INSERT INTO documents (document_id, rel_path, file_type, title, frontmatter, frontmatter_type,
                       created, modified, size, content_hash, mtime_ns, warnings, indexed_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, """ + NOW + """)
                   ON CONFLICT(document_id) DO UPDATE SET rel_path=excluded.rel_path, file_type=excluded.file_type,
                       title=excluded.title, frontmatter=excluded.frontmatter,
                       frontmatter_type=excluded.frontmatter_type,
                       created=excluded.created, modified=excluded.modified, size=excluded.size,
                       content_hash=excluded.content_hash, mtime_ns=excluded.mtime_ns, warnings=excluded.warnings,
                       indexed_at=excluded.indexed_at""",
                (
                    doc.document_id, doc.rel_path, doc.file_type, doc.title, json.dumps(doc.frontmatter, default=str),
                    _frontmatter_type(doc.frontmatter), doc.created, doc.modified, doc.size, doc.content_hash,
                    doc.mtime_ns, json.dumps(doc.warnings),
                ),
            )
            existing = {r[0]: (r[1], r[2]) for r in c.execute(
                "SELECT chunk_id, content, heading_path FROM chunks WHERE document_id = ?", (doc.document_id,))}
            wanted = {ch.chunk_id for ch in chunks}
            removed = sorted(set(existing) - wanted)
            # Text embedded before (in a chunk that goes now, or in another document) keeps its vector.
            reusable = _vectors_by_hash(c, [ch.content_hash for ch in chunks
                                            if ch.chunk_id not in existing and not ch.keyword_only])
            c.executemany("DELETE FROM chunks WHERE chunk_id = ?", [(i,) for i in removed])
            new = []
            for ch in chunks:
                if ch.chunk_id in existing:
                    c.execute(
                        "UPDATE chunks SET ordinal = ?, start_line = ?, end_line = ?, ref = ?, sections = ? "
                        "WHERE chunk_id = ?",
                        (ch.ordinal, ch.start_line, ch.end_line, _ref_json(ch.ref), _sections_json(ch.sections),
                         ch.chunk_id),
                    )
                    if existing[ch.chunk_id] != (ch.content, json.dumps(ch.heading_path)):
                        # Same text for the model (so the vector stays), other text for keyword search: a changed URL.
                        c.execute("UPDATE chunks SET content = ?, heading_path = ? WHERE chunk_id = ?",
                                  (ch.content, json.dumps(ch.heading_path), ch.chunk_id))
                else:
                    new.append((ch.chunk_id, doc.document_id, ch.ordinal, json.dumps(ch.heading_path), ch.content,
                                ch.embed_text, ch.start_line, ch.end_line, ch.content_hash, _ref_json(ch.ref),
                                _sections_json(ch.sections), None if ch.keyword_only else reusable.get(ch.content_hash),
                                int(ch.keyword_only), "embedded" if ch.keyword_only else "pending"))
            c.executemany("""INSERT INTO chunks (chunk_id, document_id, ordinal, heading_path, content, embed_text,
                                 start_line, end_line, content_hash, ref, sections, vector, keyword_only, embed_state)
                             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", new)
            added = len(new)
            # Which notes hold each paragraph: text many notes share is boilerplate (text/boilerplate.py).
            if existing:
                c.execute("DELETE FROM paragraphs WHERE document_id = ?", (doc.document_id,))
            c.executemany("INSERT OR IGNORE INTO paragraphs (hash, document_id) VALUES (?, ?)",
                          {(key, doc.document_id) for ch in chunks
                           for key, _ in (paragraph_keys(ch.content) if ch.paragraphs is None else ch.paragraphs)})
            # The note's properties are BM25 words of its first chunk only (migration m008); a new document's rows
            # have none yet (rewriting an FTS5 row costs a delete and an insert).
            if existing:
                c.execute("UPDATE chunks_bm25 SET properties = NULL WHERE rowid IN "
                          "(SELECT rowid FROM chunks WHERE document_id = ?)", (doc.document_id,))
            if doc.frontmatter:
                c.execute(f"UPDATE chunks_bm25 SET properties = skm_words({PROPERTY_TEXT}) WHERE rowid = "
                          "(SELECT rowid FROM chunks WHERE document_id = ? ORDER BY ordinal LIMIT 1)",
                          (json.dumps(doc.frontmatter, default=str), doc.document_id))
            c.execute("DELETE FROM tags WHERE document_id = ?", (doc.document_id,))
            c.executemany("INSERT OR IGNORE INTO tags (document_id, tag) VALUES (?, ?)", [(doc.document_id, t)
                                                                                          for t in tags])
            c.execute("DELETE FROM links WHERE document_id = ?", (doc.document_id,))
            c.executemany(
                "INSERT OR IGNORE INTO links (document_id, target, kind) VALUES (?, ?, ?)",
                [(doc.document_id, target, kind) for target, kind in links],
            )
        return removed, added

    def touch_document(self, document_id: str, mtime_ns: int, modified: float, size: int) -> None:
        """Record a new mtime for a document whose content did not change (and that it was read now)."""
        with self.lock, self.conn:
            self.conn.execute(
                f"UPDATE documents SET mtime_ns = ?, modified = ?, size = ?, indexed_at = {NOW} "
                "WHERE document_id = ?",
                (mtime_ns, modified, size, document_id),
            )

    def move_document(self, document_id: str, new_rel_path: str) -> None:
        """Give a document a new path, keeping its id (a rename or move of the same content)."""
        with self.lock, self.conn:
            self.conn.execute("DELETE FROM documents WHERE rel_path = ? AND document_id != ?",
                              (new_rel_path, document_id))
            self.conn.execute("UPDATE documents SET rel_path = ? WHERE document_id = ?", (new_rel_path, document_id))

    def delete_documents(self, document_ids: list[str]) -> list[str]:
        """Delete documents with their chunks, tags and links; return the chunk ids that went with them."""
        removed: list[str] = []
        with self.lock, self.conn:
            for doc_id in document_ids:
                removed += [r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE document_id = ?",
                                                            (doc_id,))]
                self.conn.execute("DELETE FROM documents WHERE document_id = ?", (doc_id,))
        return removed

    def record_file_error(self, rel_path: str, error: str) -> list[str]:
        """Note that a file could not be indexed; any older version of it leaves the index. Return removed chunk ids."""
        row = self.document_by_path(rel_path)
        removed = self.delete_documents([row["document_id"]]) if row else []
        with self.lock, self.conn:
            self.conn.execute(
                "INSERT INTO file_errors (rel_path, error, document_id) VALUES (?, ?, ?) ON CONFLICT(rel_path) "
                "DO UPDATE SET error=excluded.error, at=datetime('now'), "
                "document_id=coalesce(excluded.document_id, file_errors.document_id)",
                (rel_path, error, row["document_id"] if row else None),
            )
        return removed

    def failed_document_id(self, rel_path: str) -> str | None:
        """The id a file had before it failed to index, so that it comes back under it."""
        rows = self.query("SELECT document_id FROM file_errors WHERE rel_path = ? AND document_id NOT IN "
                          "(SELECT document_id FROM documents)", (rel_path,))
        return rows[0][0] if rows else None

    def clear_file_errors(self, rel_paths: Iterable[str]) -> None:
        with self.lock, self.conn:
            self.conn.executemany("DELETE FROM file_errors WHERE rel_path = ?", [(p,) for p in rel_paths])

    def file_error_paths(self) -> set[str]:
        return {r[0] for r in self.query("SELECT rel_path FROM file_errors")}

    def set_embedded(self, chunk_ids: list[str], vectors) -> None:
        """Mark chunks embedded and keep a float32 copy of their vectors for fast cache loads."""
        with self.lock:
            current = self.conn.total_changes == self._pending_seen  # embedding them keeps pending_chunks' order
            with self.conn:
                self.conn.executemany(
                    "UPDATE chunks SET embed_state = 'embedded', embed_error = NULL, vector = ? WHERE chunk_id = ?",
                    [(memoryview(np.ascontiguousarray(v, dtype=np.float32)), i) for i, v in zip(chunk_ids, vectors)],
                )
            if current:
                self._pending_seen = self.conn.total_changes

    def load_vectors(self, chunk_ids: list[str] | None = None) -> tuple[list[str], np.ndarray, list[str]]:
        """Return (ids, float32 matrix) of embedded chunks with a sound stored copy, and the embedded ids without
        one; of these chunks only, when given."""
        with self.lock:
            if chunk_ids is None:  # with the old vectors that answer until their chunks' new ones come
                rows = self.conn.execute("SELECT chunk_id, vector FROM chunks "
                                         "WHERE embed_state = 'embedded' AND NOT keyword_only "
                                         "UNION ALL SELECT s.chunk_id, s.vector FROM stale_vectors s "
                                         "JOIN chunks c USING (chunk_id) WHERE c.embed_state != 'embedded'").fetchall()
            else:
                rows = []
                for start in range(0, len(chunk_ids), 5000):
                    part = chunk_ids[start:start + 5000]
                    rows += self.conn.execute(f"SELECT chunk_id, vector FROM chunks WHERE chunk_id IN "
                                              f"({','.join('?' * len(part))})", part).fetchall()
        blobs = [r[1] for r in rows if r[1] is not None]
        if not blobs:
            return [], np.zeros((0, 0), dtype=np.float32), [r[0] for r in rows]
        width = max(set(map(len, blobs)), key=[len(b) for b in blobs].count)  # the model's: nearly every row's
        whole = [r for r in rows if r[1] is not None and len(r[1]) == width and width % 4 == 0]
        matrix = np.frombuffer(b"".join(r[1] for r in whole), dtype=np.float32).reshape(len(whole), width // 4)
        with np.errstate(all="ignore"):
            norms = np.linalg.norm(matrix, axis=1)
        sound = np.isfinite(norms) & (np.abs(norms - 1.0) < 0.01)  # the model's vectors are unit length
        ids = [r[0] for r, ok in zip(whole, sound) if ok]
        missing = [r[0] for r in rows if r[1] is None]
        damaged = len(rows) - len(missing) - len(ids)
        if damaged:  # a scribbled copy is never searched: it is treated as missing (and embedded again)
            logger.warning("%d stored vectors of %s are damaged (wrong length, not finite or not unit length); "
                           "treating them as missing", damaged, self.path)
            missing += [r[0] for r in rows if r[1] is not None and len(r[1]) != width]
            missing += [r[0] for r, ok in zip(whole, sound) if not ok]
        return ids, matrix[sound].copy(), missing

    def set_embed_state(self, chunk_ids: list[str], state: str, error: str | None = None) -> None:
        with self.lock, self.conn:
            self.conn.executemany(
                "UPDATE chunks SET embed_state = ?, embed_error = ? WHERE chunk_id = ?",
                [(state, error, i) for i in chunk_ids],
            )

    def embed_again(self, chunk_ids: list[str]) -> None:
        """Queue chunks whose stored vector is damaged to be embedded afresh (the damaged copy is dropped, so that
        it is not reused for their text)."""
        with self.lock, self.conn:
            self.conn.executemany("UPDATE chunks SET embed_state = 'pending', embed_error = NULL, vector = NULL "
                                  "WHERE chunk_id = ?", [(i,) for i in chunk_ids])

    def iter_chunks_ids_pending(self, chunk_ids: list[str]) -> list[sqlite3.Row]:
        """Return the ids among chunk_ids that still exist and wait for an embedding."""
        return rows_in(self.query, f"SELECT chunk_id FROM chunks WHERE {_PENDING_BY_ID}", chunk_ids)

    def iter_chunks_by_ids(self, chunk_ids: list[str]) -> Iterator[sqlite3.Row]:
        yield from rows_in(self.query, "SELECT * FROM chunks WHERE chunk_id IN ({ids})", chunk_ids)


def _vectors_by_hash(conn: sqlite3.Connection, hashes: list[str]) -> dict[str, bytes]:
    """Stored vectors of embedded chunks whose embedded text has one of these hashes."""
    found: dict[str, bytes] = {}
    for content_hash, vector in rows_in(lambda sql, params: conn.execute(sql, params).fetchall(),
                                        """SELECT content_hash, vector FROM chunks WHERE content_hash IN ({ids})
                                           AND embed_state = 'embedded' AND vector IS NOT NULL""",
                                        dict.fromkeys(hashes)):
        found.setdefault(content_hash, vector)
    return found


def _sections_json(sections: list[dict] | None) -> str | None:
    return json.dumps(sections, ensure_ascii=False) if sections else None


def _ref_json(ref: dict | None) -> str | None:
    return json.dumps(ref, ensure_ascii=False) if ref is not None else None


def _frontmatter_type(frontmatter: dict) -> str | None:
    value = frontmatter.get("type")
    return value if isinstance(value, str) else None
