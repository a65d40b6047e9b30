"""An open project: the writer of one index, keeping SQLite and ChromaDB consistent with the files on disk."""
from __future__ import annotations

import json
import logging
import secrets
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..ingest.chunking import CHUNKER_VERSION, TokenCounter
from ..config import Settings
from ..model.embeddings import Embedder, embedder_named
from ..text.language import SAMPLE as LANGUAGE_SAMPLE, Languages, kept as kept_languages, languages, model_for
from ..text.segment import interrupted
from ..errors import DiskFull, EmbeddingsUnavailable, IndexDamaged, SKMemoryError, is_damage, is_full
from ..ingest.extract import EXTRACTORS
from .lock import WriterLock
from ..ingest.parallel import Task, parse_workers, prepare_in_pool, prepare_one
from ..ingest.pipeline import EmbedBudget, Prepared, SyncReport, path_exists, store_prepared
from ..registry import ProjectInfo
from .database import Store
from .across import AcrossWriter, load as load_across, progress as across_progress
from .vectors import VectorStore, probe_apart
from ..ingest.walk import Containment, IgnoreRules, iter_documents, printable, refusal

# A sync of this many files or more may leave the substring index to catch up after it (Project.sync): below that,
# writing it with each chunk costs less than a second.
DEFER_SUBSTRINGS_FILES = 500
SUBSTRING_BATCH = 2000  # chunks added to the substring index per commit while it catches up (about a second)
# How often a progress display re-counts the chunks still to embed (a scan of every chunk: 0.2-0.3 s on britannica-10k,
# after each of its 669 groups of 128 before); between counts it adds what was embedded.
PROGRESS_RECOUNT_SECONDS = 10.0

logger = logging.getLogger(__name__)
HNSW_SAMPLE = 16  # passages asked for their own nearest neighbour at each open in HNSW mode (a damaged file answers
# wrong ones without an error)
CHROMA_HOLDS = "switching_from"  # index_meta, during a model switch: the model whose vectors Chroma may still hold
# index_meta, from a switch to another model until every passage has its new vector: the model whose vectors answer
# meaning search meanwhile (JSON: its name, its fingerprint; search/switching.py)
PREVIOUS_META = "previous_model"
SETTLE_PASSES = 2  # walks after a whole sync, for what changed while it read (sync)

Progress = Callable[[int, int], None]
# Called after vectors change: (chunk ids upserted, their vectors, chunk ids deleted).
VectorListener = Callable[[list[str], np.ndarray | None, list[str]], None]


@dataclass
class ReconcileReport:
    """What start-up repair found between SQLite and ChromaDB."""

    orphan_vectors: int = 0
    missing_vectors: int = 0  # embedded in SQLite, not in Chroma: restored from SQLite's copies, else embedded again
    recovered: int = 0
    restored: int = 0


class Project:
    """A project opened for writing: holds its lock, its SQLite store and its vector collection."""

    def __init__(self, info: ProjectInfo, settings: Settings, embedders: Callable[[str], Embedder],
                 counter: TokenCounter, role: str = "skmemory"):
        self.info = info
        self.settings = settings
        self._embedders = embedders  # the shared embedder of a model ('english', 'multilingual'): Home.embedder_for
        self.counter = counter
        self.lock = WriterLock(info.index_dir, info.name, role).acquire()
        try:
            self.store = Store(info.index_dir)
            self.embedder = embedders(chosen_model(self.store, settings))
            # Tell the notes' language again before the next embedding (after a whole sync, when it may have moved).
            self._language_due = self.store.meta(LANGUAGES_META) is None
            self._vectors: VectorStore | None = None
            self._vectors_opening = threading.Lock()
            if settings.chroma_url:  # a Chroma server is reached (or refused, in a sentence) when the project opens
                self._vectors = self._open_vectors()
        except Exception:
            self.lock.release()
            raise
        self.root = info.root
        self.repair: str | None = None  # set by Home when this index replaces a damaged one: what happened, in words
        self._checked = False  # whether SQLite has checked this file since it was opened (the first full sync does)
        self._vectors_failed = False  # a write to Chroma failed for want of space: its client is opened afresh
        self.rules = IgnoreRules(self.root, frozenset(EXTRACTORS), settings.home)
        # Serialises "vectors in Chroma" with "chunk rows in SQLite" so that neither side gets ahead.
        self._vector_lock = threading.Lock()
        self.vector_listeners: list[VectorListener] = []
        # Each passage's language and, for a project of the English model, its vector by the multilingual one: how a
        # question in another language finds it (store/across.py), made once its own vector is stored.
        self.across = AcrossWriter(self.store, lambda: self.embedder, lambda: self._embedders("multilingual"),
                                   self._vector_lock)
        self.closing: list[Callable[[], None]] = []  # run before the store closes (the vector cache flushes its files)
        try:
            # Whether the last writer closed this project (every vector change finished on both sides): then the
            # start-up repair has nothing to look for, and Chroma is not touched (at a million chunks, touching an
            # embedded collection loads about 2 GB). Cleared until this writer closes in turn.
            self._clean_start = self.store.meta("closed_cleanly") == "1"
            self.store.set_meta("closed_cleanly", "0")
            self.rechunk_needed = self._check_fingerprint()
        except Exception:
            self.close()
            raise
        self._opened = True

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def vectors(self) -> VectorStore:
        """The project's Chroma collection, opened when first needed: importing chromadb takes about a second, and
        a project that was closed cleanly needs it only once vectors change (search reads the vector cache), so a
        server answers its first search without waiting for it."""
        if self._vectors is None:
            with self._vectors_opening:
                if self._vectors is None:
                    self._vectors = self._open_vectors()
        return self._vectors

    def _open_vectors(self) -> VectorStore:
        return VectorStore.open(self.info.index_dir / "chroma", f"skm_{self.info.id}", self.settings.chroma_url)

    def close(self) -> None:
        """Release the store, the vector client and the lock."""
        try:
            for hook in self.closing:
                hook()
            self.closing.clear()
            if getattr(self, "_opened", False):
                with self._vector_lock:  # after any vector change in flight
                    self.store.set_meta("closed_cleanly", "1")
            self.store.close()
            with self._vectors_opening:  # after an open in progress (_open_vectors_aside)
                if self._vectors is not None:
                    self._vectors.close()
        finally:
            self.lock.release()

    def __enter__(self) -> "Project":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- keeping the index current ----------------------------------------------------------------------

    def _check_fingerprint(self, embedder: Embedder | None = None) -> bool:
        """Compare how the index was built with this code; drop vectors of another model. Say if re-chunking is due.

        A new chunker version re-chunks every document on the next full sync; chunks whose embedded text is
        unchanged keep their vectors (chunk ids and vector reuse both go by that text's hash). A new model or
        backend queues every chunk for embedding again: vectors of two models are never mixed in one project.
        `embedder`: the model the project moves to, made its own only once the switch is written (a search that
        found no switch yet still reads the old vectors with the old model).
        """
        model = (embedder or self.embedder).fingerprint
        stored_model = self.store.meta("embedding_model")
        # The switch this project is in, as search reads it in this process (search/switching.py): set once written
        # to SQLite and before the model changes, so that a search never pairs one model's vectors with the other.
        self.switch_meta = self.store.meta(PREVIOUS_META)
        self.embedded_before_by = None  # the model and backend of vectors this open threw away, if any
        if stored_model is not None and stored_model != model and not self.store.query(
                "SELECT 1 FROM chunks WHERE embed_state = 'embedded' AND NOT keyword_only LIMIT 1"):
            stored_model = None  # nothing was embedded by the other model: nothing to throw away, nothing to say
        # A switch is one transaction in SQLite (every chunk pending, the new model recorded, and which model's
        # vectors Chroma still holds), then Chroma is emptied, then the mark goes: a process killed anywhere in
        # between leaves the mark, and the next open empties Chroma before anything else reads it. Without it,
        # reconcile took the old model's vectors left in Chroma for upserts SQLite had not heard of, and kept them.
        unfinished = self.store.meta(CHROMA_HOLDS)
        if stored_model is not None and stored_model != model:
            self.embedded_before_by = stored_model
            same_model = _model_name(stored_model) == _model_name(model)  # only the backend changed
            # Another model: its vectors are kept whole, and answer meaning search with its own query encoder until
            # every passage has its new vector (search/switching.py). A switch begun before keeps the vectors it
            # kept: they are the whole set, where the model switched away from has only some passages done.
            keep_previous = not same_model and self.store.meta(PREVIOUS_META) is None
            logger.warning("Project %s was embedded with %s, not %s: embedding it again%s", self.name, stored_model,
                           model, "; its vectors answer meaning search meanwhile" if same_model or keep_previous
                           else "")
            meta = {"embedding_model": model, CHROMA_HOLDS: unfinished or stored_model}
            if keep_previous:
                meta[PREVIOUS_META] = json.dumps({"name": _model_name(stored_model), "fingerprint": stored_model,
                                                  "at": round(time.time(), 3)})
            self.store.forget_vectors(keep_meanwhile=same_model, keep_previous=keep_previous, meta=meta)
            self.switch_meta = self.store.meta(PREVIOUS_META)
            unfinished = unfinished or stored_model
        elif unfinished is not None:
            logger.warning("Project %s was being switched from %s to %s when it stopped; finishing the switch",
                           self.name, unfinished, model)
        if unfinished is not None:
            with self._vector_lock:
                self.vectors.delete(sorted(self.vectors.ids()))
            self.store.drop_meta(CHROMA_HOLDS)
        if stored_model != model:
            self.store.set_meta("embedding_model", model)
        self._end_switch_if_done()  # a process stopped between the last passage and the end of its switch
        stored_chunker = self.store.meta("chunker_version")
        if stored_chunker == str(CHUNKER_VERSION):
            return False
        if not self.store.query("SELECT 1 FROM documents LIMIT 1"):  # a new index: nothing to re-chunk
            self.store.set_meta("chunker_version", str(CHUNKER_VERSION))
            return False
        logger.info("Project %s was chunked by chunker version %s; re-chunking it with version %s",
                    self.name, stored_chunker or 1, CHUNKER_VERSION)
        return True

    def previous_embedder(self) -> Embedder | None:
        """During a switch, the model whose vectors answer meaning search meanwhile (search/switching.py), when this
        SK Memory still has it."""
        previous = previous_model(self.store)
        if previous is None:
            return None
        return embedder_named(self._embedders, previous["name"])

    def _end_switch_if_done(self) -> None:
        """Once every passage has its new model's vector, the previous model's vectors go (search/switching.py)."""
        if self.store.meta(PREVIOUS_META) is not None and not self.store.has_pending():
            with self._vector_lock:  # the vector cache keeps no vector of the old model (a passage that failed)
                left = [r[0] for r in self.store.query(
                    "SELECT chunk_id FROM chunks WHERE embed_state != 'embedded' AND NOT keyword_only")]
                self.store.end_switch(PREVIOUS_META)
                self.switch_meta = None
                for listener in self.vector_listeners:
                    listener([], None, left)
            logger.info("Project %s: every passage is embedded by %s; meaning search reads its vectors now",
                        self.name, self.embedder.name)

    def reconcile(self) -> ReconcileReport:
        """Repair the two stores after a crash: drop orphan vectors, put back vectors Chroma lost from SQLite's
        copies (re-queue the chunks without a sound copy).

        With SKMEMORY_VECTOR_SEARCH=hnsw, meaning search asks Chroma itself, so Chroma is checked at every open, a
        clean one too: a deleted or emptied collection would otherwise answer every search with nothing."""
        report = ReconcileReport()
        with self._vector_lock:
            hnsw = self.settings.vector_search == "hnsw"
            damage = self._hnsw_damage() if hnsw else None
            if damage:  # dropped (a local folder set aside, never opened here), and made again from SQLite's copies
                logger.warning("Chroma's index of %s cannot be searched (%s); rebuilding it", self.name, damage)
                self._drop_collection(open_it=bool(self.settings.chroma_url))
            if (self._clean_start and not hnsw) or self._stores_agree():
                return report
            in_chroma = self.vectors.ids()
            all_chunks = self.store.all_chunk_ids()
            embedded = self.store.embedded_ids()
            orphans = sorted(in_chroma - all_chunks)
            if orphans:
                self.vectors.delete(orphans)
            missing = sorted(embedded - in_chroma)
            report.restored = self._restore_vectors(missing)  # the rest wait to be embedded again
            # Upserted but killed before SQLite heard of it: the id encodes the text, so the vector is right.
            pending = {r[0] for r in self.store.query("SELECT chunk_id FROM chunks WHERE embed_state = 'pending'")}
            recovered = sorted(pending & in_chroma)
            for start in range(0, len(recovered), 5000):
                ids, vectors = self.vectors.get(recovered[start:start + 5000])
                self.store.set_embedded(ids, vectors)
        report.orphan_vectors, report.missing_vectors, report.recovered = len(orphans), len(missing), len(recovered)
        if orphans or missing or recovered:
            logger.info("Reconciled %s: %s", self.name, report)
        if hnsw and missing and (self._clean_start or damage):  # Chroma lost them after a clean close: say so
            again = len(missing) - report.restored
            what = f"was damaged ({damage})" if damage else f"had lost {len(missing):,} of {len(embedded):,} vectors"
            self.repair = (f"The vector index of project '{self.name}' ({self.vectors.location}) {what}; "
                           f"{report.restored:,} vectors were restored from the index's own copies"
                           + (f", and {again:,} are embedded again." if again else "."))
            logger.warning("%s", self.repair)
        return report

    def _drop_collection(self, open_it: bool = True) -> None:
        """Delete the Chroma collection (a local folder set aside instead when it must not be opened, or Chroma
        cannot delete it); the next use makes it again, empty."""
        try:
            if not open_it:
                raise RuntimeError("a damaged local index is set aside, not opened")
            self.vectors.drop()
        except Exception:
            if self._vectors is not None:
                self._vectors.close()
            if self.settings.chroma_url:
                raise
            folder = self.info.index_dir / "chroma"
            aside = folder.with_name(f"chroma.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
            folder.rename(aside)
            logger.warning("The damaged Chroma index of %s was set aside at %s", self.name, aside)
        self._vectors = None

    def _hnsw_damage(self) -> str | None:
        """What Chroma says when a sample of passages asks for their nearest neighbour (None when most find
        themselves): a damaged HNSW file fails every search of the project ("Error loading hnsw index") until the
        index is made again, and a truncated or zeroed one answers the wrong passages."""
        # From a random point of the chunk ids (hashes, so any run of them is a random draw), along their index:
        # ORDER BY random() read every vector of the project at every open.
        start = secrets.token_hex(12)
        wanted = "+embed_state = 'embedded' AND vector IS NOT NULL AND NOT keyword_only"  # along the ids' index
        rows = self.store.query(f"SELECT chunk_id, vector FROM chunks WHERE chunk_id >= ? AND {wanted} "
                                "ORDER BY chunk_id LIMIT ?", (start, HNSW_SAMPLE))
        rows += self.store.query(f"SELECT chunk_id, vector FROM chunks WHERE chunk_id < ? AND {wanted} "
                                 "ORDER BY chunk_id LIMIT ?", (start, HNSW_SAMPLE - len(rows)))
        if not rows:
            return None
        sample = [(r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows]
        folder = self.info.index_dir / "chroma"
        if not self.settings.chroma_url:  # read in a process of its own: a damaged HNSW file can crash Chroma
            if self._vectors is None and not folder.exists():
                return None
            return probe_apart(folder, f"skm_{self.info.id}", sample)
        try:
            if self.vectors.count():
                self.vectors.query(sample[0][1], 1)
        except Exception as exc:  # chromadb's errors name no common class beyond this
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        return None

    def _restore_vectors(self, chunk_ids: list[str]) -> int:
        """Put these chunks' vectors back into Chroma from SQLite's float32 copies; a chunk whose copy is missing
        or unsound (Store.load_vectors' checks) waits to be embedded again. Return how many were put back."""
        self.store.set_embed_state(chunk_ids, "pending")
        if not chunk_ids:
            return 0
        ids, matrix, _ = self.store.load_vectors(chunk_ids)
        for start in range(0, len(ids), 5000):
            part = ids[start:start + 5000]
            rows = self.store.query(f"SELECT chunk_id, document_id FROM chunks WHERE chunk_id IN "
                                    f"({','.join('?' * len(part))})", part)
            document = {r[0]: r[1] for r in rows}
            self.vectors.upsert(part, matrix[start:start + 5000], [{"document_id": document[c]} for c in part])
            self.store.set_embedded(part, matrix[start:start + 5000])
        return len(ids)

    def _stores_agree(self) -> bool:
        """Whether the two stores hold the same chunks, told from counts and the pending chunks alone: reading every
        id back from Chroma cost 134 s and 2 GB of memory at a million chunks, for nothing on a clean start."""
        pending = [r[0] for r in self.store.query("SELECT chunk_id FROM chunks WHERE embed_state = 'pending'")]
        if pending and self.vectors.get(pending)[0]:
            return False  # upserted to Chroma, killed before SQLite heard: the full repair recovers them
        embedded = self.store.query("SELECT count(*) FROM chunks WHERE embed_state = 'embedded' AND NOT keyword_only")
        return self.vectors.count() == embedded[0][0]

    def sync(self, rel_paths: Iterable[str] | None = None, progress: Progress | None = None,
             stop: threading.Event | None = None, defer_substrings: bool = False) -> SyncReport:
        """Bring the index in line with the disk for these paths (files or folders), or the whole root if None.

        With `stop` set, it ends after the file in hand: what was indexed is kept, and nothing is deleted on the
        strength of a walk it did not finish (the next sync goes on from there). With `defer_substrings`, a sync of
        DEFER_SUBSTRINGS_FILES files or more leaves the substring index to catch_up_substrings (the caller's to
        run): titles, words and BM25 are whole when it returns. Otherwise the substring index is whole too.

        A whole sync ends as the folder is at its end, not at its start: what changed while it read other files (a
        file saved again, deleted, or replaced by a folder) is read by a second walk, which costs a stat per
        unchanged file (~0.1 s per 10,000), and a third if that one found more."""
        report = self._sync_pass(rel_paths, progress, stop, defer_substrings)
        for _ in range(SETTLE_PASSES if rel_paths is None else 0):
            if stop is not None and stop.is_set():
                break
            again = self._sync_pass(None, None, stop, defer_substrings)
            if not again.changed and not again.vanished:
                break
            for name in ("added", "updated", "moved", "deleted", "failed", "vanished", "chunks_added"):
                setattr(report, name, getattr(report, name) + getattr(again, name))
            report.removed_chunk_ids += again.removed_chunk_ids
            logger.info("Project %s changed while it was read: %s", self.name, again.to_dict())
        return report

    def _sync_pass(self, rel_paths: Iterable[str] | None, progress: Progress | None, stop: threading.Event | None,
                   defer_substrings: bool) -> SyncReport:
        if not self.root.is_dir():
            raise SKMemoryError(f"The folder of project '{self.name}' ({self.root}) is missing; reconnect the drive or "
                                f"remove the project.")
        if rel_paths is None and not self._checked:
            self.check_integrity()
        skipped: dict[str, str] = {}  # folders not walked (links, unlistable), listed in status like refused files
        on_disk, stored = self._scope(rel_paths, skipped)
        rechunk = self.rechunk_needed and rel_paths is None
        report = SyncReport()
        containment = Containment(self.root)
        refused = {rel: why for rel in on_disk if (why := refusal(containment, rel))}
        for folder, why in skipped.items():
            self.store.record_file_error(folder, f"Not indexed: {why}.")
        for rel, why in refused.items():  # listed in status with the reason; never read
            report.removed_chunk_ids += self.store.record_file_error(printable(rel), f"Not indexed: {why}.")
            report.failed += 1
        on_disk -= refused.keys()
        vanished = {p: stored[p] for p in stored if p not in on_disk and p not in refused}
        by_hash: dict[str, str] = {}
        for rel, (doc_id, _mtime, _size, content_hash, _read) in vanished.items():
            by_hash.setdefault(content_hash, rel)
        total = len(on_disk)
        work: list[tuple[str, tuple | None]] = []
        for rel in sorted(on_disk):
            known = stored.get(rel)
            if known is not None and not rechunk and self._unchanged_on_disk(rel, known):
                report.unchanged += 1
            else:
                work.append((rel, known))
        if progress and (report.unchanged or work):  # status shows the sync from its start, a 20 MB note too
            progress(report.unchanged, total)
        tasks = [Task(self.root, rel, self.settings.max_file_bytes, known[3] if known and not rechunk else None,
                      self._embed_budget) for rel, known in work]
        if defer_substrings and len(tasks) >= DEFER_SUBSTRINGS_FILES:
            self.store.defer_substrings()
        workers = parse_workers(len(tasks))
        prepared_files = (prepare_in_pool(tasks, self.counter, self._model_dir, workers) if workers
                          else (prepare_one(task, self.counter, self._model_dir, stop) for task in tasks))
        try:
            with self.store.grouped_commits():
                stopped = self._store_files(work, prepared_files, vanished, by_hash, report, rechunk, stop, progress,
                                            total)
        except sqlite3.Error as exc:  # the group's commit
            if is_full(exc):
                raise DiskFull(self.space_sentence()) from None
            raise
        if stopped or (stop is not None and stop.is_set()):  # the walk may not be whole: delete nothing on it
            self._drop_vectors(report.removed_chunk_ids)
            return report
        gone = [stored_doc[0] for stored_doc in vanished.values()]
        if gone:
            report.removed_chunk_ids += self.store.delete_documents(gone)
            report.deleted += len(gone)
        still_refused = {printable(rel) for rel in refused} | skipped.keys()
        stale_errors = [p for p in self.store.file_error_paths()
                        if p not in on_disk and p not in still_refused and self._in_scope(p, rel_paths)]
        self.store.clear_file_errors(stale_errors)
        self._drop_vectors(report.removed_chunk_ids)
        if rechunk:
            self.store.set_meta("chunker_version", str(CHUNKER_VERSION))
            self.rechunk_needed = False
        # Told again after a whole sync, and after the watcher's syncs that add or remove passages: a project into
        # which Chinese notes are copied while `serve` runs moves to the multilingual model then, not at a restart.
        if rel_paths is None or report.chunks_added or report.removed_chunk_ids:
            self._language_due = self._language_due or language_moved(self.store, self.settings)
        if not defer_substrings:
            self.catch_up_substrings(stop=stop)
        return report

    def _store_files(self, work, prepared_files, vanished, by_hash, report: SyncReport, rechunk: bool,
                     stop: threading.Event | None, progress: Progress | None, total: int) -> bool:
        """Store each prepared file in turn; True if `stop` ended it early. One file's failure is recorded on it;
        a full disk (DiskFull) or a damaged index stops them all."""
        try:
            for done, ((rel, known), prepared) in enumerate(zip(work, prepared_files), start=report.unchanged + 1):
                if prepared is None or (stop is not None and stop.is_set()):  # None: stopped while it was parsed
                    return True
                self.check_space()
                try:
                    self._store_file(prepared, known, vanished, by_hash, report, force=rechunk)
                except Exception as exc:
                    if is_full(exc):
                        raise DiskFull(self.space_sentence()) from None
                    if is_damage(exc):
                        raise
                    if interrupted(exc):  # Ctrl+C landed inside SQLite's call of skm_words
                        raise KeyboardInterrupt from None
                    logger.exception("Indexing %s failed", rel)
                    report.removed_chunk_ids += self.store.record_file_error(
                        rel, "Indexing failed unexpectedly; see the log.")
                    report.failed += 1
                if progress:
                    progress(done, total)
        finally:
            close = getattr(prepared_files, "close", None)
            if close:
                close()  # stops the pool's workers when the loop ended early
        return False

    def _reopen_vectors(self) -> None:
        with self._vector_lock:
            try:
                if self._vectors is not None:
                    self._vectors.close()
            except Exception:
                logger.debug("Closing Chroma after a failed write failed", exc_info=True)
            self._vectors = self._open_vectors()
            self._vectors_failed = False

    def check_space(self) -> None:
        """Raise DiskFull while the data folder's disk has less free than the floor (SKMEMORY_DISK_FLOOR_MB):
        nothing is written then, so no write (Chroma's least of all) meets a full disk."""
        floor = self.settings.disk_floor_mb << 20
        try:
            free = shutil.disk_usage(self.info.index_dir).free
        except OSError:
            return
        if free < floor:
            raise DiskFull(self.space_sentence(free))

    def space_sentence(self, free: int | None = None) -> str:
        if free is None:
            try:
                free = shutil.disk_usage(self.info.index_dir).free
            except OSError:
                free = 0
        return (f"The disk that holds SK Memory's data folder ({self.settings.home}) is full ({free >> 20} MB free): "
                f"indexing and embedding wait until {self.settings.disk_room_mb} MB are free "
                "(SKMEMORY_DISK_FLOOR_MB), then go on by themselves. Search goes on meanwhile.")

    def check_integrity(self) -> None:
        """Raise IndexDamaged if SQLite finds the index file damaged: every page of every table and index read once
        (`PRAGMA quick_check`: 0.8 s for britannica-10k's 619 MB, once per open, before the first full sync)."""
        try:
            with self.store.lock:
                rows = self.store.conn.execute("PRAGMA quick_check(5)").fetchall()
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise IndexDamaged(f"SQLite says: {exc}") from exc
            raise
        problems = [line.strip() for row in rows for line in str(row[0]).splitlines()
                    if line.strip() not in ("ok", "") and not line.startswith("***")]
        if problems:
            raise IndexDamaged("SQLite's check found " + "; ".join(problems[:2]) + ("; …" if len(problems) > 2 else ""))
        self._checked = True

    def catch_up_substrings(self, stop: threading.Event | None = None, batches: int | None = None) -> int:
        """Add the chunks a deferred sync left out to the substring index, a batch per commit, until it is whole
        (or `batches` are done, or `stop` is set); return how many are still left."""
        left = self.store.substring_backlog()
        done = 0
        while left and not (stop is not None and stop.is_set()) and (batches is None or done < batches):
            self.check_space()
            left = self.store.catch_up_substrings(SUBSTRING_BATCH)
            done += 1
        return left

    @property
    def _embed_budget(self) -> EmbedBudget:
        return EmbedBudget(self.settings.machine_embed_chunks, self.settings.long_embed_chunks)

    @property
    def _model_dir(self) -> Path | None:
        return Path(self.settings.model_path) if self.settings.model_path else None

    def _unchanged_on_disk(self, rel: str, known) -> bool:
        """Whether a stored file is surely as it was read: same mtime and size, and its inode unchanged since (a
        rewrite that keeps both, as `rsync -a`, `cp -p` or a FAT clock's two seconds do, still moves the ctime)."""
        _doc_id, mtime_ns, size, _hash, read_at = known
        try:
            st = (self.root / rel).stat()
        except OSError:
            return False
        return st.st_mtime_ns == mtime_ns and st.st_size == size and st.st_ctime < read_at

    def _store_file(self, prepared: Prepared, known, vanished: dict, by_hash: dict, report: SyncReport,
                    force: bool = False) -> None:
        doc_id = None
        if known is None and prepared.read is not None and prepared.read.content_hash in by_hash:
            # A new path holding what vanished from another: the same document, moved (it keeps its id).
            old_rel = by_hash.pop(prepared.read.content_hash)
            doc_id = vanished.pop(old_rel)[0]
            self.store.move_document(doc_id, prepared.rel_path)
            report.moved += 1
        outcome, removed, added = store_prepared(
            self.store, self.root, prepared, self.store.document_by_path(prepared.rel_path), self.counter,
            self.settings.max_file_bytes, document_id=doc_id,
            force=force or doc_id is not None, embed_budget=self._embed_budget,
        )
        report.removed_chunk_ids += removed
        report.chunks_added += added
        if doc_id is None:
            setattr(report, outcome, getattr(report, outcome) + 1)

    def _scope(self, rel_paths: Iterable[str] | None, skipped: dict[str, str]) -> tuple[set[str], dict]:
        if rel_paths is None:
            return set(iter_documents(self.root, self.rules, skipped=skipped)), self.store.file_states()
        on_disk: set[str] = set()
        stored: dict = {}
        for rel in sorted(set(rel_paths)):
            path = self.root / rel
            if path.is_dir() and not path.is_symlink():
                if not self.rules.ignores_dir(rel):
                    on_disk.update(iter_documents(self.root, self.rules, under=rel, skipped=skipped))
            elif path_exists(path) and not self.rules.ignores_file(rel):
                on_disk.add(rel)
            stored.update(self.store.file_states(under=rel))
        return on_disk, stored

    @staticmethod
    def _in_scope(rel: str, rel_paths: Iterable[str] | None) -> bool:
        if rel_paths is None:
            return True
        return any(rel == p or rel.startswith(p + "/") for p in rel_paths)

    def _drop_vectors(self, chunk_ids: list[str]) -> None:
        if not chunk_ids:
            return
        with self._vector_lock:  # the listeners (the vector cache) hear of it in the same order as Chroma
            self.vectors.delete(chunk_ids)
            for listener in self.vector_listeners:
                listener([], None, chunk_ids)
        self.across.removed(chunk_ids)

    # --- embeddings ---------------------------------------------------------------------------------------

    def decide_language(self) -> bool:
        """Tell what the notes are written in from a sample of passages and embed them with the model that calls for
        (SKMEMORY_EMBED_MODEL overrides it); kept in the index, where status and the window read it. A new model
        re-embeds every passage, as a new backend does. Runs where the embedding runs, between two batches, so no
        batch is embedded by one model and kept under the other. Returns whether the model changed."""
        chunks = self.store.query("SELECT count(*) FROM chunks WHERE NOT keyword_only")[0][0]
        rows = self.store.query("SELECT content FROM chunks WHERE NOT keyword_only ORDER BY chunk_id LIMIT ?",
                                [LANGUAGE_SAMPLE])
        if not rows:
            return False
        found = languages(r[0] for r in rows)
        model, why = model_for(found, self.settings.embed_model)
        embedder = self._embedders(model)
        self.store.set_meta(LANGUAGES_META, json.dumps({**found.to_dict(), "model": model, "model_name": embedder.name,
                                                        "why": why, "chunks": chunks,
                                                        "setting": self.settings.embed_model}))
        self._language_due = False
        if embedder is self.embedder:
            return False
        logger.info("Project %s: %s; embedding it with %s", self.name, why, embedder.name)
        self._check_fingerprint(embedder)  # the switch written first, then the model swapped (search/switching.py)
        self.embedder = embedder
        return True

    def store_language_why(self) -> str:
        """Why this project is embedded by its model, as last told ('the notes are not mostly English: ...')."""
        return _kept_languages(self.store).get("why") or "no passage told its language yet"

    @property
    def embed_group_size(self) -> int:
        # Chunks fetched per round: several model batches, so the model can sort them by length and pad less.
        return self.settings.embed_batch_size * 4

    def embed_pending(self, stop: threading.Event | None = None, progress: Progress | None = None,
                      max_batches: int | None = None) -> int:
        """Embed waiting chunks in groups, newest documents first, until none are left; return how many."""
        if self._language_due:
            self.check_space()
            try:
                self.decide_language()
            except sqlite3.Error as exc:  # told again before the next batch
                if is_full(exc):
                    raise DiskFull(self.space_sentence()) from None
                raise
        if not self.store.has_pending():  # nothing to embed: the model is not loaded for it (the server asks often)
            self._end_switch_if_done()
            return 0
        self._open_vectors_aside()
        if not self.embedder.load():
            raise EmbeddingsUnavailable(f"Embeddings are unavailable: {self.embedder.now.reason}")
        total = self.store.counts()["pending"] if progress else 0  # a scan of every chunk: only when shown
        counted = time.monotonic()
        done = batches = 0
        while not (stop and stop.is_set()) and (max_batches is None or batches < max_batches):
            rows = self.store.pending_chunks(self.embed_group_size)
            if not rows:
                break
            self.check_space()
            if self._vectors_failed:
                self._reopen_vectors()
            try:
                done += self._embed_batch(rows, stop)
            except Exception as exc:
                if is_full(exc):
                    # Chroma met the full disk: its native side can hang at its next write unless opened afresh.
                    self._vectors_failed = True
                    raise DiskFull(self.space_sentence()) from None
                raise
            batches += 1
            if progress:
                if time.monotonic() - counted >= PROGRESS_RECOUNT_SECONDS:  # notes saved meanwhile add chunks
                    total, counted = max(total, done + self.store.counts()["pending"]), time.monotonic()
                progress(done, max(total, done))
        self._end_switch_if_done()
        return done

    def _open_vectors_aside(self) -> None:
        """Open Chroma on a thread of its own while the model loads, when chunks wait for it: importing chromadb was
        0.6 s of the first group of a small vault's `skmemory index`, on one core while the model's load left the
        other free. A failure there is left to the first store, which opens Chroma again and says why."""
        if self._vectors is not None or not self.embedder.now.loading or not self.store.has_pending():
            return

        def open_quietly() -> None:
            try:
                self.vectors
            except Exception:
                pass

        threading.Thread(target=open_quietly, name="skmemory-open-vectors", daemon=True).start()

    def _embed_batch(self, rows, stop: threading.Event | None = None) -> int:
        # A chunk whose text was embedded before carries that vector already: no model needed.
        reused = [r for r in rows if r["vector"] is not None]
        fresh = [r for r in rows if r["vector"] is None]
        done = 0
        if reused:
            done += self._store_vectors(reused, np.stack([np.frombuffer(r["vector"], dtype=np.float32)
                                                          for r in reused]))
        if fresh:
            done += self._embed_fresh(fresh, stop)
        return done

    def _embed_fresh(self, rows, stop: threading.Event | None = None) -> int:
        """Embed rows one model batch at a time, shortest first (batches of like length pad least, as
        sentence-transformers sorts them too), and stop between batches when asked: a stop waits for one batch,
        not for the whole group. What was embedded is stored; the rest stays pending."""
        size = self.settings.embed_batch_size
        rows = sorted(rows, key=lambda r: len(r["embed_text"]))
        embedded, parts, done = [], [], 0
        for start in range(0, len(rows), size):
            if stop is not None and stop.is_set():
                break
            batch = rows[start:start + size]
            try:
                parts.append(self.embedder.embed([r["embed_text"] for r in batch], batch_size=size))
                embedded += batch
            except EmbeddingsUnavailable:
                raise
            except Exception as exc:
                if len(rows) == 1:
                    logger.warning("Embedding chunk %s failed: %s", batch[0]["chunk_id"], exc)
                    self.store.set_embed_state([batch[0]["chunk_id"]], "failed", f"{type(exc).__name__}: {exc}")
                    continue
                done += sum(self._embed_fresh([r]) for r in batch)  # find the one that fails
        if embedded:
            done += self._store_vectors(embedded, np.concatenate(parts))
        return done

    def _store_vectors(self, rows, vectors: np.ndarray) -> int:
        ids = [r["chunk_id"] for r in rows]
        metas = [{"document_id": r["document_id"]} for r in rows]
        with self._vector_lock:
            # A chunk deleted while the model ran (its file was edited) must not come back as an orphan vector.
            alive = {r[0] for r in self.store.iter_chunks_ids_pending(ids)}
            keep = [i for i, cid in enumerate(ids) if cid in alive]
            if keep:
                kept_ids = [ids[i] for i in keep]
                kept_vectors = vectors[keep]
                self.vectors.upsert(kept_ids, kept_vectors, [metas[i] for i in keep])
                self.store.set_embedded(kept_ids, kept_vectors)
                # Under the lock: told after the lock, the cache could hear of this add after a delete of the same
                # chunks that came between, and bring them back (hybrid then met a passage with no note: a 500).
                for listener in self.vector_listeners:
                    listener(kept_ids, kept_vectors, [])
        return len(keep)

    def embed_across(self, stop: threading.Event | None = None, progress: Progress | None = None,
                     max_batches: int | None = None) -> int:
        """Make each embedded passage's row across languages (its language, and for a project of the English model
        its multilingual vector: store/across.py); return how many were made. Only once nothing waits for its own
        vector: a note is searchable by its own model first. None for the demo and the User Docs (makes_across)."""
        if not makes_across(self.info, self.settings) or self.store.has_pending():
            return 0
        self.check_space()
        try:
            return self.across.embed(stop, max_batches, progress)
        except sqlite3.Error as exc:
            if is_full(exc):
                raise DiskFull(self.space_sentence()) from None
            raise

    def load_across(self) -> tuple[list[str], list[str | None], np.ndarray]:
        """Every passage's vector across languages, with its language (search/across.py centres a mixed project's)."""
        return load_across(self.store)

    def across_progress(self) -> tuple[int, int] | None:
        """(passages with their vector across languages, passages with their own vector); None for a project that
        gets none (makes_across)."""
        return across_progress(self.store) if makes_across(self.info, self.settings) else None

    def query_vectors(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Chroma's approximate nearest k chunks, for SKMEMORY_VECTOR_SEARCH=hnsw (see search/hnsw.py)."""
        return self.vectors.query(vector, k)

    @property
    def vector_folder(self) -> Path:
        """Where the vector cache keeps its files (search/vector_rows.py)."""
        return self.info.index_dir / "vectors"

    def vector_generation(self) -> str | None:
        """Moves with every change to which chunks have vectors (migration m009)."""
        return self.store.meta("vector_generation")

    def load_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every embedded chunk's vector: SQLite's float32 copies, and Chroma for any chunk without one."""
        ids, matrix, missing = self.store.load_vectors()
        if missing:
            found, extra = self.vectors.get(missing)
            if len(found):
                ids = ids + found
                matrix = np.concatenate([matrix, extra]) if len(matrix) else extra
            lost = sorted(set(missing) - set(found))
            if lost:  # neither store has a sound vector: embedded again, not left out of meaning search silently
                logger.warning("%d passages of %s have no sound vector; embedding them again", len(lost), self.name)
                self.store.embed_again(lost)
        return ids, np.ascontiguousarray(matrix, dtype=np.float32)

    def save_graph_positions(self, changed: list[tuple[str, float, float, str]], gone: list[str],
                             afresh: bool) -> None:
        """Keep where the Forge Graph drew each document, so the next layout starts from there."""
        self.store.save_graph_positions(changed, gone, afresh)

    # --- reporting ----------------------------------------------------------------------------------------

    def status(self) -> dict:
        """Counts, embedding state and per-file errors of this project."""
        status = project_status(self.info, self.store, self.embedder, makes_across(self.info, self.settings))
        if self.across.error and "across" in status and not status["across"]["ready"]:
            status["across"]["sentence"] = (f"questions in other languages: searched as the notes are, since the "
                                            f"multilingual model is unavailable ({self.across.error})")
        if self.repair:
            status["repair"] = self.repair
        # The notes' language is to be told again before the next embedding (`skmemory index` waits for it: the
        # model it calls for may be another, and then every passage is embedded again)
        status["language_due"] = self._language_due
        return status


LANGUAGES_META = "languages"  # index_meta: what the notes are written in, and the model that follows (JSON)
LANGUAGE_MOVED = 0.25  # the notes' language is told again once the passages grew or shrank by this share


def chosen_model(store: Store, settings: Settings) -> str:
    """The model that embeds a project: SKMEMORY_EMBED_MODEL, else the one its notes' language called for when last
    told, else English (a new project, until its first passages are read)."""
    if settings.embed_model != "auto":
        return settings.embed_model
    kept = _kept_languages(store)
    return kept.get("model", "english") if kept.get("setting", "auto") == "auto" else "english"


def language_moved(store: Store, settings: Settings) -> bool:
    """Whether the notes' language is due to be told again: never told, told under another setting, or the passages
    grew or shrank by more than LANGUAGE_MOVED since."""
    kept = _kept_languages(store)
    if not kept or kept.get("setting") != settings.embed_model:
        return True
    then = int(kept.get("chunks") or 0)
    now = store.query("SELECT count(*) FROM chunks WHERE NOT keyword_only")[0][0]
    return abs(now - then) > LANGUAGE_MOVED * max(then, 1)


def _kept_languages(store: Store) -> dict:
    return kept_languages(store.meta(LANGUAGES_META))


def kept_setting(store: Store) -> str | None:
    """The SKMEMORY_EMBED_MODEL under which the notes' language was last told."""
    return _kept_languages(store).get("setting")


def language_status(store: Store) -> dict:
    """What status says of a project's language: {'language': 'Chinese (99 % of 400 passages), ...', ...}."""
    kept = _kept_languages(store)
    if not kept:
        return {}
    found = Languages.from_dict(kept)
    described = {"language": found.describe(), "language_code": found.main, "model_why": kept.get("why"),
                 "model_key": kept.get("model", "english")}
    if kept.get("model_name"):
        described["model"] = kept["model_name"]
    return described


def makes_across(info: ProjectInfo, settings: Settings) -> bool:
    """Whether a project gets vectors across languages: not the built-in User Docs, nor the demo (kept inside the
    data folder). The first start stays as light as it was: making the multilingual model's copies (about a minute,
    ~1 GB in the user's model cache, once) right after the demo is embedded slowed it and held up a stop for minutes."""
    return info.is_users(settings.home)


def project_status(info: ProjectInfo, store: Store, embedder: Embedder | None, across: bool = True) -> dict:
    """Describe a project's index in the shape the CLI and the API print."""
    counts = store.counts()
    status = {"project": info.name, "root": str(info.root), **counts, "errors": store.errors()}
    try:
        status["substring_backlog"] = store.substring_backlog()  # chunks the substring index catches up on
    except sqlite3.OperationalError:  # an index of an older version, read before the server migrated it
        status["substring_backlog"] = 0
    calibration = store.meta("hnsw_calibration")
    if calibration:
        status["hnsw"] = json.loads(calibration)
    try:
        status.update(language_status(store))
    except sqlite3.OperationalError:  # an index of an older version, read before the server migrated it
        pass
    if embedder is not None and (switch := switch_status(store, embedder, counts)):
        status["model_switch"] = switch
    if embedder is not None:
        status["embeddings"] = embedder.now.word
        status["embeddings_unavailable_reason"] = embedder.now.reason
        status["embeddings_preparing"] = embedder.now.preparing
        status["model"] = embedder.name
        try:
            if across:  # the demo and the User Docs get no vectors across languages (makes_across)
                status["across"] = across_status(store, embedder)
        except sqlite3.OperationalError:  # an index of an older version, read before the server migrated it
            pass
    return status


def switch_status(store: Store, embedder: Embedder, counts: dict) -> dict | None:
    """A project moving to another model: from which, how far, and what meaning search reads meanwhile."""
    previous = previous_model(store)
    if previous is None:
        return None
    total = counts["embedded"] + counts["pending"]
    return {"from": previous["name"], "to": embedder.name, "done": counts["embedded"], "total": total,
            "sentence": f"moving from {previous['name']} to {embedder.name}: {counts['embedded']:,} of {total:,} "
                        f"passages embedded again; meanwhile meaning search reads {previous['name']}'s vectors"}


def previous_model(store: Store) -> dict | None:
    """The model whose vectors answer meaning search during a switch ({'name', 'fingerprint'}); None otherwise."""
    try:
        kept = json.loads(store.meta(PREVIOUS_META) or "null")
    except ValueError:
        return None
    return kept if isinstance(kept, dict) and kept.get("name") else None


def across_status(store: Store, embedder: Embedder) -> dict:
    """How far the vectors that let a question in another language find these notes are (store/across.py)."""
    made, total = across_progress(store)
    own = getattr(embedder, "model", "english") == "multilingual"
    model = embedder.name if own else "multilingual-e5-small"
    if own:  # its own vectors read every language; only a mixed project's passages' languages are made
        sentence = f"questions in other languages: ready ({model} reads them)"
    elif made >= total:
        sentence = f"questions in other languages: ready ({model})"
    else:
        sentence = (f"questions in other languages: {made:,} of {total:,} passages made ({model}, after the notes' "
                    "own vectors)")
    return {"made": made, "total": total, "ready": own or made >= total, "model": model, "sentence": sentence}


def _model_name(fingerprint: str) -> str:
    """The model an embedder fingerprint names ('all-MiniLM-L6-v2 (sentence-transformers, openvino int8 ...)')."""
    return fingerprint.split(" (", 1)[0]
