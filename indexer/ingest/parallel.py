"""Reading, parsing and chunking files in a pool of processes while the one writer stores them.

A big sync spends about half its time in Python that touches no database (reading, the extractors, the chunker's
token counts) and half in SQLite's inserts. The first half runs in worker processes, one per core (at most
MAX_WORKERS), which hand back `Prepared` files in the order they were asked for; the writer stores each as it
comes. At most WINDOW_PER_WORKER files per worker are in flight, so memory holds a few files, not a vault. A sync
of fewer than PARALLEL_MIN_FILES files (what the watcher sends) stays in the writer's process: starting workers
costs about a second.

Workers are started with 'spawn' (a fork of a process whose model and watcher threads hold locks can deadlock).
A worker that dies (killed, out of memory) takes only the pool down: the rest of the files are prepared in the
writer's process, as before the pool, and the sync goes on.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Iterator, NamedTuple

from .chunking import TokenCounter
from .pipeline import EmbedBudget, Prepared, prepare_file

logger = logging.getLogger(__name__)

PARALLEL_MIN_FILES = 64
APART_BYTES = 2 << 20  # a file this big is parsed in a process of its own, which a stop can end (prepare_one)
MAX_WORKERS = 4
WINDOW_PER_WORKER = 8
WORKER_NICE = 10
UNEXPECTED = "Indexing failed unexpectedly; see the log."


class Task(NamedTuple):
    """One file for a worker: where it is, what is stored of it, and the passage budget."""

    root: Path
    rel_path: str
    max_bytes: int
    known_hash: str | None
    embed_budget: EmbedBudget


def parse_workers(files: int) -> int:
    """How many worker processes a sync of this many files gets: 0 means the writer's own process.
    SKMEMORY_PARSE_WORKERS sets it (0: never a pool)."""
    configured = os.environ.get("SKMEMORY_PARSE_WORKERS", "").strip()
    if configured.isdigit():
        return int(configured) if files >= 2 else 0
    if files < PARALLEL_MIN_FILES:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, MAX_WORKERS) if cores >= 2 else 0


def prepare_serially(task: Task, counter: TokenCounter) -> Prepared:
    """Prepare one file in this process; an unexpected error becomes a failed file, logged."""
    try:
        return prepare_file(task.root, task.rel_path, counter, task.max_bytes, task.known_hash,
                            embed_budget=task.embed_budget)
    except Exception:
        logger.exception("Indexing %s failed", task.rel_path)
        return Prepared(task.rel_path, "failed", error=UNEXPECTED)


def prepare_one(task: Task, counter: TokenCounter, model_dir: Path | None, stop=None) -> Prepared | None:
    """Prepare one file here, or, when it is big (a 20 MB paragraph takes ~18 s), in a process of its own that a
    stop ends at once: None then. Small files stay here (a process costs about a second)."""
    try:
        big = (task.root / task.rel_path).stat().st_size >= APART_BYTES
    except OSError:
        big = False
    if not big or stop is None:
        return prepare_serially(task, counter)
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_prepare_apart, args=(send, task, str(model_dir) if model_dir else None),
                              name=f"skmemory-parse-{task.rel_path[:40]}", daemon=True)
    process.start()
    send.close()
    try:
        while not receive.poll(0.2):
            if stop.is_set():
                return None
            if not process.is_alive() and not receive.poll(0):
                logger.warning("Parsing %s in a process of its own failed (exit %s); parsing it here",
                               task.rel_path, process.exitcode)
                return prepare_serially(task, counter)
        return receive.recv()
    finally:
        if process.is_alive():
            process.terminate()
        process.join(5)
        receive.close()


def _prepare_apart(send, task: Task, model_dir: str | None) -> None:
    _start_worker(model_dir)
    send.send(_prepare(task))
    send.close()


def prepare_in_pool(tasks: list[Task], counter: TokenCounter, model_dir: Path | None, workers: int
                    ) -> Iterator[Prepared]:
    """Prepared files in the order of tasks, made by `workers` processes; closing the iterator stops the pool."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(str(model_dir) if model_dir else None,))
    waiting: deque[Future] = deque()
    position = 0
    try:
        while position < len(tasks) or waiting:
            while position < len(tasks) and len(waiting) < workers * WINDOW_PER_WORKER:
                waiting.append(pool.submit(_prepare, tasks[position]))
                position += 1
            future = waiting.popleft()
            try:
                yield future.result()
            except Exception as exc:  # a worker died: the rest are prepared here
                logger.warning("The parsing workers stopped (%s: %s); parsing the rest in one process",
                               type(exc).__name__, exc)
                for task in tasks[position - len(waiting) - 1:]:
                    yield prepare_serially(task, counter)
                return
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_counter: TokenCounter | None = None


def _start_worker(model_dir: str | None) -> None:
    global _counter
    # Ctrl+C reaches the whole process group: the writer stops the workers, and a worker's own KeyboardInterrupt
    # would only print its traceback (about 40 lines for a pool of four)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The writer is a sync's critical path (its SQLite inserts take twice the CPU the workers' parsing does): the
    # workers yield a core to it, and to the person's own programs. britannica-10k keyword-searchable: 70.7 -> 65.6 s.
    try:
        os.nice(WORKER_NICE)
    except OSError:
        pass
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the pool is the parallelism
    _counter = TokenCounter.for_model(Path(model_dir) if model_dir else None)


def _prepare(task: Task) -> Prepared:
    prepared = prepare_serially(task, _counter)
    if prepared.read is not None:  # the writer needs the hash and the stat, not the bytes
        prepared.read.digest = prepared.read.content_hash
        prepared.read.data = b""
    return prepared
