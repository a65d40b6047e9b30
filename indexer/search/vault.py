"""vault_search: notes ranked by fusing a BM25 leg (FTS5) and vector legs, filters inside each.

The BM25 leg ranks whole notes by their best chunk (its title, headings, text, and for the first chunk the note's
properties), the first vector leg by their best chunk's similarity, and the second by the similarity of each
note's first chunk (its title and opening: a note-level vector, which a long index note with hundreds of chunks
cannot win by numbers alone). Each leg's scores are divided by that leg's best (a meaning leg's by at least
MEANING_FLOOR), and a note's fused score is

    score = its best leg + 0.3 * the mean of its other legs  (0 for a leg that did not find it)

where a vector leg that cannot see the note (it has no vector) counts as the mean of the legs that can.

(fusion 'max_min'; 'rrf', sum of 1 / (60 + rank), and 'weighted' stay selectable for the benchmarks, which chose
the default on SciFact and the graded questions). Then an optional cross-encoder reorders the head (rerank.py).
Filters are turned into the set of allowed notes before any leg runs, so a filter never empties a top-k that held
other notes.
"""
from __future__ import annotations

import json
import logging
import re
import sqlite3
from dataclasses import dataclass

import numpy as np

from ..errors import EmbeddingsUnavailable
from . import chunk_reads, note_reads
from .across import asking, meaning_index, names_across
from .switching import switch_notice
from .explain import fusion_rule, vault_explain, vault_explain_document
from .filters import created_day
from .grammar import TITLE_BONUS, held_words
from ..text.readable import display_text, display_title
from ..text.segment import CJK_RUN
from ..contract.answers import counted
from .hits import iso, readable_marked, snippet
from .index import ProjectIndex
from .query import Query
from .records import VaultRanking
from .reasons import across_rows, empty_reason
from .rerank import RERANK_CANDIDATES, Reranker, blend
from .semantic import HYBRID_THRESHOLD, unavailable
from .spelling import corrected

logger = logging.getLogger(__name__)

RRF_K = 60
FUSIONS = ("rrf", "max_min", "weighted")
# Chosen on SciFact and the graded questions of tests/bench/questions (bench_quality.py, bench_vault_questions.py):
# the best normalised leg plus 0.3 of the others, with each note's first chunk as a third leg, beat RRF on both.
DEFAULT_FUSION = "max_min"
DEFAULT_NOTE_LEG = True
MAX_MIN_BONUS = 0.3
# A meaning leg's scores are divided by its best similarity, or by this when its best is lower: for a query the
# model cannot read (an ISBN, an id) a weak best match does not count as a full one and outrank the one note that
# holds the term. 0.4 kept the graded paraphrased questions where they were and put every exact term first
# (0.5 cost paraphrased hit@5 two points); SciFact 0.721 -> 0.723.
MEANING_FLOOR = 0.4
BLIND_CHECK = 30  # how far down each leg blind_legs looks for notes without vectors
# How far down each leg is read: the notes of the best chunks by BM25 and of the chunks closest in meaning (explain
# reads them whole). Reading every match of a common word cost more than the rest of the search; a note further
# down is scored by the other legs alone. Unchanged at this depth: SciFact and the graded vault questions.
LEG_CHUNKS = 4000
WEIGHTS = {2: (0.5, 0.5), 3: (0.4, 0.3, 0.3)}  # BM25, best chunk by meaning[, first chunk by meaning]
CHARS_PER_TOKEN = 7  # for snippets cut by characters (notes found only by meaning)
CALLOUT = re.compile(r"^>\s*\[!([^\]\s]+)\][+-]?[ \t]*(.*)$")
COMMON_WORDS = frozenset("the and for are but not you all any can had her was one our out has how its who why what "
                         "when with from that this have into your they them then than".split())
OPEN, CLOSE = "\x02", "\x03"  # highlight sentinels: FTS5 marks the matches, turned into offsets afterwards


@dataclass(slots=True)
class Candidate:
    """A note found by one leg or both, with its best chunk in each."""

    document_id: str
    bm25_rank: int | None = None
    bm25_rowid: int | None = None
    vector_rank: int | None = None
    vector_chunk: str | None = None
    score: float = 0.0
    parts: tuple[float, ...] = ()  # what each leg gave it, as combine used them
    blind: tuple[bool, ...] = ()  # per leg: the leg cannot see this note (no vector); () when every leg can
    name: int = 0  # how the query names the note (grammar.name_match): its bonus is added to the fused score


def bm25_leg(index: ProjectIndex, match: str, allowed: set[str] | None, chunks: int | None = LEG_CHUNKS,
             read: dict[int, int] | None = None) -> list[tuple[str, int, float]]:
    """Rank the allowed notes matching an FTS5 expression by their best chunk's BM25: (document_id, chunk rowid,
    score, higher is better), the notes of the best `chunks` chunks (None: all). SQLite ranks the chunks and
    returns only those, so a common word does not bring every chunk that holds it into Python. `read`, when given,
    receives every chunk read, rowid: rank (hybrid's word evidence, without reading the expression again)."""
    if not match:
        return []
    try:
        if allowed is None and chunks is not None:
            # The best chunks first, from the full-text index alone; their notes only for those (joining every
            # match to its note before cutting cost more than the ranking).
            best = chunk_reads.bm25_best_chunks(index, match, chunks)
            owner = chunk_reads.owners_of_rowids(index, [r[0] for r in best])
            rows = sorted(((owner[r[0]], r[0], r[1]) for r in best if r[0] in owner), key=lambda r: (r[2], r[0], r[1]))
        else:
            rows = chunk_reads.bm25_note_chunks(index, match, allowed, chunks)
    except sqlite3.OperationalError:  # parse_query only emits valid syntax; this is the last line of defence
        logger.exception("FTS5 refused %r", match)
        return []
    if read is not None:
        for rank, row in enumerate(rows, start=1):
            read.setdefault(row[1], rank)
    ranked, seen = [], set()
    for doc, rowid, score in rows:  # best first (BM25 is lower for better), so a note's first row is its best chunk
        if doc not in seen:
            seen.add(doc)
            ranked.append((doc, rowid, -score))
    return ranked


def vector_legs(index: ProjectIndex, vector: np.ndarray, allowed: set[str] | None, note_leg: bool,
                chunks: int | None = LEG_CHUNKS, scan: dict | None = None
                ) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]] | None]:
    """Rank the allowed notes by meaning, from one scan of their chunks (the `chunks` closest, None: all, with
    similarity at least 0.3): by their best chunk, and with note_leg also by their first chunk alone (a note-level
    vector: title and opening). Each leg is [(document_id, chunk_id, similarity)], best first. `scan`, when given,
    receives the scan itself: its chunk hits, best first, and each one's (document id, ordinal)."""
    chunk_ids = chunk_reads.chunk_ids_of(index, allowed) if allowed is not None else None
    hits = index.cache.search(vector, HYBRID_THRESHOLD, chunks, chunk_ids=chunk_ids)
    if not hits:
        return [], [] if note_leg else None
    if scan is not None:
        found = chunk_reads.owners_and_rowids(index, [c for c, _ in hits])
        owner = {cid: (doc, ordinal) for cid, (doc, ordinal, _) in found.items()}
        scan.update(hits=hits, owners=owner, rowids={cid: rowid for cid, (_, _, rowid) in found.items()})
    else:
        owner = chunk_reads.owners(index, [c for c, _ in hits])
    best, first, seen = [], [], set()
    for chunk_id, similarity in hits:  # best first, so a note's first hit is its best chunk
        doc, ordinal = owner.get(chunk_id, (None, None))
        if doc is None:
            continue
        if doc not in seen:
            seen.add(doc)
            best.append((doc, chunk_id, similarity))
        if ordinal == 0:
            first.append((doc, chunk_id, similarity))
    return best, first if note_leg else None


def _leg_scores(leg: list[tuple], how: str, k: int, floor: float = 0.0) -> dict[str, float]:
    """Each note's contribution from one leg: 1/(k + rank) for RRF, else its score over the leg's best score (or
    over `floor` when the best is lower: a meaning leg whose best is a weak match does not count in full)."""
    if how == "rrf":
        return {hit[0]: 1.0 / (k + rank) for rank, hit in enumerate(leg, start=1)}
    top = max(max((hit[2] for hit in leg), default=0.0), floor) or 1.0
    return {hit[0]: max(hit[2], 0.0) / top for hit in leg}


def impute(parts: list[float | None]) -> list[float]:
    """A leg that cannot see a note (None: a meaning leg, for a note without a vector) counts as the mean of
    the legs that can, so that it neither helps nor hurts the note against notes it can see."""
    seen = [p for p in parts if p is not None]
    mean = sum(seen) / len(seen) if seen else 0.0
    return [mean if p is None else p for p in parts]


def combine(parts: list[float], how: str) -> float:
    """One note's fused score from its legs' contributions (0 for a leg that did not find it)."""
    if how == "rrf":
        return sum(parts)
    if how == "max_min":  # the best leg, plus a little for agreement (basic-memory's fusion)
        best = max(parts)
        return best + MAX_MIN_BONUS * (sum(parts) - best) / max(len(parts) - 1, 1)
    return sum(w * p for w, p in zip(WEIGHTS[len(parts)], parts))  # "weighted"


def fuse(bm25: list[tuple], vector: list[tuple], k: int = RRF_K, how: str = DEFAULT_FUSION,
         notes: list[tuple] | None = None, blind: dict[int, set[str]] | None = None, words_weight: float = 1.0
         ) -> list[Candidate]:
    """Merge the legs' rankings of notes (BM25, best chunk by meaning and optionally each note's first chunk),
    best first, by `how`: reciprocal rank fusion ('rrf'), the best normalised leg plus a little of the others
    ('max_min') or a weighted sum of normalised scores ('weighted'). blind maps a leg's position (1: meaning,
    2: first chunk) to the notes it cannot see, which it then does not count against (see impute). words_weight
    scales the BM25 leg: below 1 when its words are only part of the question (its names, asked across languages:
    search/across.py), so that a note holding a name is not the best answer on that alone."""
    if how not in FUSIONS:
        raise ValueError(f"unknown fusion {how!r}; one of {', '.join(FUSIONS)}")
    legs = [bm25, vector] + ([notes] if notes is not None else [])
    scores = [_leg_scores(leg, how, k, MEANING_FLOOR if i else 0.0) for i, leg in enumerate(legs)]
    if words_weight < 1.0:
        scores[0] = {doc: value * words_weight for doc, value in scores[0].items()}
    found: dict[str, Candidate] = {}
    for rank, (doc, rowid, _) in enumerate(bm25, start=1):
        found[doc] = Candidate(doc, bm25_rank=rank, bm25_rowid=rowid)
    for leg in legs[1:]:
        for rank, (doc, chunk_id, _) in enumerate(leg, start=1):
            c = found.setdefault(doc, Candidate(doc))
            if c.vector_rank is None or rank < c.vector_rank:
                c.vector_rank, c.vector_chunk = rank, chunk_id
    unseen_by = [(blind or {}).get(i) or set() for i in range(len(scores))]
    unseen_by_any = set().union(*unseen_by)  # a few notes at most (blind_legs looks near the top only)
    for c in found.values():
        parts = [s.get(c.document_id, 0.0) for s in scores]
        if c.document_id in unseen_by_any:
            flags = tuple(c.document_id in unseen for unseen in unseen_by)
            c.blind = flags
            parts = impute([None if f else p for f, p in zip(flags, parts)])
        c.parts = tuple(parts)
        c.score = combine(c.parts, how)
    never = sum(len(leg) for leg in legs) + 1
    return sorted(found.values(), key=lambda c: (-c.score, min(c.bm25_rank or never, c.vector_rank or never),
                                                 c.bm25_rank or never, c.document_id))


def blind_legs(index: ProjectIndex, bm25: list[tuple], vector: list[tuple], notes: list[tuple] | None
               ) -> dict[int, set[str]]:
    """The notes near the top of a leg that a meaning leg cannot see: none of their chunks has a vector (no text
    for the model, or still waiting to be embedded) or, for the first-chunk leg, their first chunk has none.

    Only the first BLIND_CHECK notes of each leg are looked at: a note further down gains too little to reach the
    results, and looking costs a query per batch of notes (a common word matches thousands)."""
    by_meaning = {hit[0] for hit in vector}
    by_first = {hit[0] for hit in notes} if notes is not None else set()
    near = {hit[0] for hit in bm25[:BLIND_CHECK]} | {hit[0] for hit in vector[:BLIND_CHECK]}
    unseen = near - by_first if notes is not None else near - by_meaning
    if not unseen:
        return {}
    # The meaning legs search the cache: what it lacks, they cannot see. A note's first passage is embedded before
    # its others, so a note whose first one has a vector is seen by both legs; only the other notes' passages are
    # read (every passage of a long note: hundreds of rows, 31 ms a search on britannica-10k when all were read).
    firsts = chunk_reads.chunk_ordinals(index, unseen, ordinal=0)
    have = index.cache.with_vectors([r[1] for r in firsts])
    first_vector = {doc for doc, chunk_id, _ in firsts if chunk_id in have}
    any_vector = set(first_vector)
    if rest := unseen - first_vector:
        rows = chunk_reads.chunk_ordinals(index, rest)
        have = index.cache.with_vectors([r[1] for r in rows])
        any_vector |= {doc for doc, chunk_id, _ in rows if chunk_id in have}
    blind = {1: unseen - by_meaning - any_vector}
    if notes is not None:
        blind[2] = unseen - first_vector
    return blind


def _rerank(index: ProjectIndex, query: str, fused: list[Candidate], reranker: Reranker,
            ranking: VaultRanking) -> bool:
    """Reorder fused in place by the position-aware blend; return whether the reranker ran."""
    head = fused[:RERANK_CANDIDATES]
    texts = _best_chunk_texts(index, head)
    titles = note_reads.titles(index, [c.document_id for c in head])
    passages = [f"{titles.get(c.document_id, '')}\n{texts.get(c.document_id, '')}" for c in head]
    try:
        probabilities = reranker.scores(query, passages)
    except Exception:  # a failing reranker costs the rerank, never the search
        logger.exception("Reranking failed; keeping the fused order")
        return False
    if len(probabilities) != len(head):
        return False
    ranking.rerank = {c.document_id: p for c, p in zip(head, probabilities)}
    blended = blend(probabilities + [None] * (len(fused) - len(head)))
    for c, score in zip(fused, blended):
        c.score = score
    fused.sort(key=lambda c: -c.score)  # stable: equal blends keep the fused order
    return True


def _best_chunk_texts(index: ProjectIndex, candidates: list[Candidate]) -> dict[str, str]:
    by_rowid = {c.bm25_rowid: c.document_id for c in candidates if c.bm25_rowid is not None}
    by_id = {c.vector_chunk: c.document_id for c in candidates if c.bm25_rowid is None and c.vector_chunk}
    out: dict[str, str] = {}
    for r in chunk_reads.texts_by_rowid_or_id(index, by_rowid, by_id):
        doc = by_rowid.get(r[0]) or by_id.get(r[1])
        if doc:
            out[doc] = r[2]
    return out


def fts_snippets(index: ProjectIndex, match: str, rowids: list[int], tokens: int) -> dict[int, dict]:
    """The best run of `tokens` words of each chunk with the offsets of its (stemmed) matches, by chunk rowid."""
    if not match or not rowids:
        return {}
    found = chunk_reads.fts_snippets(index, match, rowids, tokens, OPEN, CLOSE)
    # A window FTS5 chose for a match a reader cannot see (inside a URL) shows none: the chunk's readable text is
    # searched for the words instead (the caller's fallback).
    shown = {rowid: readable_marked(text, OPEN, CLOSE) for rowid, text in found.items()}
    return {rowid: marked for rowid, marked in shown.items() if marked["highlights"]}


def leading_callout(text: str) -> dict | None:
    """Parse an Obsidian callout (`> [!type] title` and its `>` lines) opening a note, after an optional H1."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and re.match(r"^#\s", lines[i]):
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
    m = CALLOUT.match(lines[i].strip()) if i < len(lines) else None
    if not m:
        return None
    body = []
    for line in lines[i + 1:]:
        if not line.lstrip().startswith(">"):
            break
        body.append(re.sub(r"^\s*> ?", "", line))
    return {"type": m.group(1).lower(), "title": m.group(2).strip(), "body": "\n".join(body).strip()}


def note_results(index: ProjectIndex, document_ids: list[str], include_leading_callout: bool = False
                 ) -> dict[str, dict]:
    """Build the result of each note (without snippet or score), keyed by document id."""
    if not document_ids:
        return {}
    tags = note_reads.tags_of(index, document_ids)
    firsts = chunk_reads.first_chunk_texts(index, document_ids) if include_leading_callout else {}
    out = {}
    for d in note_reads.documents(index, document_ids):
        path, file_type = d["rel_path"], d["file_type"]
        result = {"path": path, "title": display_title(d["title"]), "tags": tags.get(d["document_id"], []),
                  "folder": path.rsplit("/", 1)[0] if "/" in path else "", "type": d["frontmatter_type"],
                  "kind": "note" if file_type == "md" else "file"}
        name = path.rsplit("/", 1)[-1]
        if result["kind"] == "file":
            result["extension"] = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
        frontmatter = json.loads(d["frontmatter"] or "{}")
        if created_day(frontmatter) is not None:
            result["created"] = frontmatter["created"].strip()
        result.update({"modified": iso(d["modified"]), "bytes": d["size"], "document_id": d["document_id"],
                       "project": index.name})
        if include_leading_callout and file_type == "md":
            callout = leading_callout(firsts.get(d["document_id"], ""))
            if callout:
                result["leading_callout"] = callout
        out[d["document_id"]] = result
    return out


def vault_search(index: ProjectIndex, request, reranker: Reranker | None = None, fusion: str = DEFAULT_FUSION,
                 note_leg: bool = DEFAULT_NOTE_LEG) -> dict:
    """Search one project's notes by text and metadata (a SearchRequest of mode 'vault'); the answer every surface
    renders.

    fusion and note_leg choose how the legs are merged (see fuse); the defaults are the product's, the others are
    there for tests/bench to compare on real data. The request's explain adds to each result why it ranked;
    explain_document=ID says where that note ranked in each leg, or which filter, threshold or limit kept it out.
    """
    query, extra = Query.of(request), {}
    if request.correct and query.terms and not asking(index, query).wanted:
        query, extra = corrected([index], query)
    index = meaning_index(index, query)  # searched by meaning as its language asks
    query = names_across(index, query, asking(index, query)) or query  # across languages: its names alone
    limit, document_id = request.limit, request.explain_document
    ranking = rank_notes(index, query, limit, fusion, note_leg, whole=request.explain or bool(document_id))
    fused = ranking.fused
    reranked = bool(fused and reranker is not None and reranker.available
                    and _rerank(index, query.text, fused, reranker, ranking))
    results = _note_hits(index, query, ranking, fused[:limit], request) if fused else []
    answer = {"results": results, **counted(results, len(fused) > len(results), len(fused)),
              "search_mode": "hybrid" if ranking.legs.get("meaning") else "fts",  # spec 001: when vectors contributed
              "reranked": reranked, **extra}
    if not ranking.legs.get("meaning") and not index.semantic_available:
        answer["semantic_reason"] = index.embedder.now.why_not
    if across := across_rows([index], query):
        answer["across"] = across
    if notice := switch_notice([index]):
        answer["notice"] = notice
    if not results and query.meaning.strip():
        answer["empty_reason"] = empty_reason([index], query, request, bool(ranking.legs.get("meaning")),
                                              answer.get("semantic_reason"))
    if document_id:
        answer["explain_document"] = vault_explain_document(index, ranking, document_id, limit, query.filters,
                                                            query.allowed(index), query.fts_for(index).match)
    return answer


def rank_notes(index: ProjectIndex, query: Query, limit: int, fusion: str = DEFAULT_FUSION,
               note_leg: bool = DEFAULT_NOTE_LEG, whole: bool = False, depth: int = LEG_CHUNKS) -> VaultRanking:
    """Run the legs (BM25, best chunk by meaning, first chunk by meaning) on the allowed notes and fuse them; each
    leg read as deep as `depth` chunks, or whole (for explain, which says where a note ranked however far down).
    When fewer than `limit` notes hold every word, notes holding some of them join the BM25 leg."""
    ranking = VaultRanking(fusion, query.fts_for(index).words, HYBRID_THRESHOLD)
    allowed = query.allowed(index)
    if allowed is not None and not allowed:
        return ranking
    depth = None if whole else depth
    ranking.scan.update(every_word={}, some_words={})  # the chunks each BM25 leg read, rowid: rank
    bm25 = bm25_leg(index, query.fts_for(index).match, allowed, depth, ranking.scan["every_word"])
    strict = len(bm25)
    vector, notes, query_vector = None, None, None
    if index.semantic_available:
        try:
            query_vector = query.vector(index)
            vector, notes = vector_legs(index, query_vector, allowed, note_leg, depth, ranking.scan)
        except EmbeddingsUnavailable:
            pass
    if len(bm25) < limit and query.fts_for(index).any_match and (vector is not None
                                                                 or (not bm25 and index.embedder.now.loading)):
        # Notes holding some of the terms follow those holding all of them in the BM25 leg, so a long
        # natural-language question still gets a keyword signal (see tests/bench/bench_quality.py), even when
        # no chunk is close enough in meaning ("the 1982 Ridley Scott film I rated" must still find Blade Runner).
        # Without a model (search_mode "fts") spec 001's implicit AND holds; only while the model still loads, a
        # question no note holds whole is answered by the notes with some of its words.
        have = {hit[0] for hit in bm25}
        some = [hit for hit in bm25_leg(index, query.any_match(index), allowed, depth, ranking.scan["some_words"])
                if hit[0] not in have]
        if fusion != "rrf" and bm25:  # by score, a note with some of the words stays under those with all of them
            floor = min(hit[2] for hit in bm25)
            some = [(doc, rowid, min(score, floor * 0.999)) for doc, rowid, score in some]
        bm25 += some
    blind = blind_legs(index, bm25, vector, notes) if vector is not None else {}
    ranking.fused = fuse(bm25, vector or [], how=fusion, notes=notes, blind=blind, words_weight=query.words_weight)
    named = query.named_documents(index) if query.terms else {}
    if named:  # the note named what was typed first (hybrid's name bonus, the same rule)
        for c in ranking.fused:
            c.name = named.get(c.document_id, 0)
            c.score += TITLE_BONUS[c.name]
        ranking.fused.sort(key=lambda c: -c.score)  # stable: equal scores keep the fused order
    ranking.legs = {"bm25": bm25}
    if vector is not None:
        ranking.legs["meaning"] = vector
        if notes is not None:
            ranking.legs["first_chunk"] = notes
    else:
        ranking.semantic_error = unavailable(index)
    ranking.strict = strict
    ranking.fused_rank = {c.document_id: rank for rank, c in enumerate(ranking.fused, start=1)}
    ranking.vector = query_vector
    return ranking


def _note_hits(index: ProjectIndex, query: Query, ranking: VaultRanking, top: list[Candidate], request) -> list[dict]:
    """The notes of the first candidates as spec 001's results, each with its snippet (and explain when asked)."""
    notes = note_results(index, [c.document_id for c in top], request.include_leading_callout)
    tokens, strict = request.snippet_tokens, ranking.strict
    # Notes found only by meaning are highlighted by substring: skip words too short or common to mean anything.
    words = [w for w in query.fts_for(index).words or query.words
             if (len(w) > 2 or CJK_RUN.match(w)) and w not in COMMON_WORDS]
    # A note with only some of the words (past `strict` in the BM25 leg) is marked by the OR of the words.
    found = [c for c in top if c.bm25_rowid is not None]
    marked = {**fts_snippets(index, query.fts_for(index).match,
                             [c.bm25_rowid for c in found if c.bm25_rank <= strict], tokens),
              **fts_snippets(index, query.any_match(index), [c.bm25_rowid for c in found if c.bm25_rank > strict],
                             tokens)}
    texts = _best_chunk_texts(index, [c for c in top if marked.get(c.bm25_rowid) is None])
    results = []
    for c in top:
        result = notes.get(c.document_id)
        if result is None:  # deleted between ranking and fetching
            continue
        text = marked.get(c.bm25_rowid) or snippet(display_text(texts.get(c.document_id, "")), words,
                                                   tokens * CHARS_PER_TOKEN)
        result = {"path": result["path"], "title": result["title"], "snippet": text["snippet"],
                  "score": round(c.score, 6), "highlights": text["highlights"],
                  **{k: v for k, v in result.items() if k not in ("path", "title")}}
        if request.explain:
            shown = [text["snippet"][a:b].lower() for a, b in text["highlights"]]
            rule = fusion_rule(ranking, c, RRF_K, MAX_MIN_BONUS, WEIGHTS, MEANING_FLOOR)
            result["explain"] = vault_explain(ranking, c, rule,
                                              list(dict.fromkeys(shown)) or held_words(words, text["snippet"]))
        results.append(result)
    return results
