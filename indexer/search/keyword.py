"""The keyword leg: case-insensitive substring matching on chunk text, titles and paths, through the trigram index.

A chunk matches when every term occurs in its text or in its note's title or path. The order is spec 000's: notes
whose titles hold more of the terms first (the note whose title, alias or file name is the query before those where
it stands whole in one, before the rest: hybrid's name bonus), then chunks holding more of them in their text, then
newer notes.

It is asked in that order too, so that a common word costs what the limit needs, not what the index holds:
titles and paths first (the documents table, small), whose notes are ranked in Python with only their own chunks
read; then, when those do not fill the limit, the other matches from one query that SQLite ranks and cuts itself
(chunk_reads.untitled_matches).
"""
from __future__ import annotations

import sqlite3
from collections import Counter

from ..text.segment import CJK_RUN

from . import chunk_reads as reads
from . import note_reads
from .chunk_reads import EVERYTHING
from .index import ProjectIndex

READ_TEXTS = 2000  # up to this many candidate chunks have their text read and searched in Python


def keyword_search(index: ProjectIndex, query, limit: int = 20,
                   document_ids: set[str] | None = None) -> list[tuple[str, float, str]]:
    """Rank chunks where every term of the query occurs in the content, title or path; title matches first.

    Each is (chunk id, 1.0, 'keyword'), in the leg's order.
    """
    if query.alternatives:  # a OR b: each side's matches, the first side's first
        found: dict[str, tuple[str, float, str]] = {}
        for side in query.alternatives:
            for hit in keyword_search(index, side, limit, document_ids):
                found.setdefault(hit[0], hit)
        return list(found.values())[:limit]
    terms = query.terms
    if not terms or limit <= 0:
        return []
    found = _every_term(index, query, terms, limit, document_ids)
    if len(found) < limit and any(len(run) > 2 for t in terms for run in CJK_RUN.findall(t)):
        # A Chinese or Japanese sentence has no spaces to find its words by: after the passages holding it whole,
        # those holding most of its character pairs (text/segment.py), as BM25 ranks them.
        have = set(found)
        try:
            more = reads.bm25_chunk_scores(index, query.fts_for(index).match, limit, document_ids)
        except sqlite3.OperationalError:  # FTS5 refused the expression: the exact matches stand alone
            more = []
        found += [cid for cid, _ in more if cid not in have][:limit - len(found)]
    return [(chunk_id, 1.0, "keyword") for chunk_id in found]


def _every_term(index: ProjectIndex, query, terms: list[str], limit: int, document_ids: set[str] | None) -> list[str]:
    """The chunks whose content, title or path holds every term, title matches first."""
    named = query.named(index)
    if not all(query.held(index, i) for i in range(len(terms))):
        return []  # a term in no title, path or text: nothing holds every term
    title_hits = Counter(doc for titled, _ in named for doc in titled
                         if document_ids is None or doc in document_ids)
    found = _titled_matches(index, terms, named, title_hits, query.named_documents(index), limit)
    if len(found) < limit:
        found += reads.untitled_matches(index, terms, named, set(title_hits), limit - len(found), document_ids)
    return found


def keyword_matching(index: ProjectIndex, query, chunk_ids: list[str]) -> set[str]:
    """Which of these chunks keyword search would find: every term in the text, the title or the path."""
    if query.alternatives:
        return set().union(*(keyword_matching(index, side, chunk_ids) for side in query.alternatives))
    if not query.terms or not chunk_ids:
        return set()
    rows = reads.chunk_keys(index, chunk_ids)
    return {r[1] for r in _narrow(index, query.terms, query.named(index), rows)[0]}


def _titled_matches(index: ProjectIndex, terms: list[str], named, title_hits: Counter, names: dict[str, int],
                    limit: int) -> list[str]:
    """The matching chunks of notes whose titles hold some term, best first (the note the query names before the
    notes whose titles merely hold its words): those notes' chunks alone are read."""
    if not title_hits:
        return []
    # Rowids and notes first (cheap); what ranks them only for the chunks that match every term.
    rows, content_hits = _narrow(index, terms, named, reads.chunk_keys_of_documents(index, title_hits))
    if not rows:
        return []
    rows = reads.chunk_order_keys(index, [r[0] for r in rows])
    # Among the notes the query names, the shortest name first: `quer` puts "Query" before "Query Builder".
    length = {doc: len(title) for doc, title in note_reads.titles(index, [d for d in names if names[d]]).items()}
    rows.sort(key=lambda r: (-names.get(r[2], 0), length.get(r[2], 0), -title_hits[r[2]], -content_hits[r[0]],
                             -(r[4] or 0), r[2], r[3]))
    return [r[1] for r in rows[:limit]]


def _narrow(index: ProjectIndex, terms: list[str], named, rows: list) -> tuple[list, Counter]:
    """Keep the rows (rowid, chunk id, document id) that match every term; count the terms each holds in its text."""
    content_hits: Counter[int] = Counter()
    texts: dict[int, str] | None = None
    for term, (titled, pathed) in zip(terms, named):
        if not rows:  # a term met nowhere: nothing matches every term
            break
        if len(rows) <= READ_TEXTS:  # few chunks: read their text once, rather than ask the index per term
            if texts is None:
                texts = reads.lowered_texts(index, [r[0] for r in rows])
            holding = {r[0] for r in rows if term in texts.get(r[0], "")}
        else:
            holding = reads.chunks_holding(index, term, [r[0] for r in rows])
        content_hits.update(holding)
        rows = [r for r in rows if r[0] in holding or r[2] in titled
                or pathed is EVERYTHING or r[2] in pathed]
    return rows, content_hits
