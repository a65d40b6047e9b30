"""Keyword search: case-insensitive substring matching on chunk text, titles and paths, through the trigram index.

A chunk matches when every term occurs in its text or in its note's title or path. The order is spec 000's: notes
whose titles hold more of the terms first, then chunks holding more of them in their text, then newer notes.

It is asked in that order too, so that a common word costs what the limit needs, not what the index holds
(measured: 646 ms for one frequent word at 100,000 chunks when every match was fetched to be ranked):

1. titles and paths first (the documents table, small): the notes whose titles hold a term are ranked in Python,
   with only their own chunks read;
2. then, when those do not fill the limit, the other matches come from one SQL query that ranks them itself and
   returns only as many rows as are still needed.
"""
from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter

from .index import ProjectIndex

MAX_TERMS = 12
READ_TEXTS = 2000  # up to this many candidate chunks have their text read and searched in Python
DENSE = 2000  # a word matching this many chunks is ranked by walking the notes newest first


def parse_terms(query: str) -> list[str]:
    """Split a query into lowercase terms: "quoted phrases" stay whole, other words split on spaces."""
    terms = []
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', query or ""):
        term = (phrase if phrase else word).strip().lower()
        if term and term not in terms:
            terms.append(term)
    return terms[:MAX_TERMS]


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _chunks_containing(index: ProjectIndex, term: str) -> set[int]:
    if len(term) >= 3:  # the trigram index answers substring queries of three characters or more
        rows = index.sql("SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ?", (_fts_phrase(term),))
    else:
        rows = index.sql("SELECT rowid FROM chunks WHERE instr(lower(content), ?) > 0", (term,))
    return {r[0] for r in rows}


class Everything:
    """Stands for every document: a term in the project folder's own path is in every document's path."""


EVERYTHING = Everything()


def _documents_named(index: ProjectIndex, term: str) -> tuple[set[str], set[str] | Everything]:
    """Return (documents whose title contains term, documents whose path contains it, or EVERYTHING)."""
    if term in str(index.root).lower():
        pathed: set[str] | Everything = EVERYTHING
    elif len(term) >= 3:
        pathed = {r[0] for r in index.sql("SELECT d.document_id FROM documents_trigram f JOIN documents d "
                                          "ON d.rowid = f.rowid WHERE documents_trigram MATCH ?",
                                          ("rel_path : " + _fts_phrase(term),))}
    else:
        pathed = {r[0] for r in index.sql("SELECT document_id FROM documents WHERE instr(lower(rel_path), ?) > 0",
                                          (term,))}
    if len(term) >= 3:
        titled = index.sql("SELECT d.document_id FROM documents_trigram f JOIN documents d ON d.rowid = f.rowid "
                           "WHERE documents_trigram MATCH ?", ("title : " + _fts_phrase(term),))
    else:
        titled = index.sql("SELECT document_id FROM documents WHERE instr(lower(title), ?) > 0", (term,))
    return {r[0] for r in titled}, pathed


def keyword_search(index: ProjectIndex, query: str, limit: int = 20,
                   document_ids: set[str] | None = None) -> list[tuple[str, float, str]]:
    """Rank chunks where every term occurs in the content, title or path; title matches first. Score 1.0."""
    terms = parse_terms(query)
    if not terms or limit <= 0:
        return []
    named = [_documents_named(index, term) for term in terms]
    if any(not titled and not pathed and not _anywhere(index, term) for term, (titled, pathed) in zip(terms, named)):
        return []  # a term in no title, path or text: nothing holds every term
    title_hits = Counter(doc for titled, _ in named for doc in titled
                         if document_ids is None or doc in document_ids)
    found = _titled_matches(index, terms, named, title_hits, limit)
    if len(found) < limit:
        found += _other_matches(index, terms, named, set(title_hits), limit - len(found), document_ids)
    return [(chunk_id, 1.0, "keyword") for chunk_id in found]


def keyword_matching(index: ProjectIndex, query: str, chunk_ids: list[str]) -> set[str]:
    """Which of these chunks keyword search would find: every term in the text, the title or the path."""
    terms = parse_terms(query)
    if not terms or not chunk_ids:
        return set()
    named = [_documents_named(index, term) for term in terms]
    rows = index.sql("SELECT rowid, chunk_id, document_id FROM chunks WHERE chunk_id IN (SELECT value FROM json_each(?))",
                     [json.dumps(list(chunk_ids))])
    return {r[1] for r in _narrow(index, terms, named, rows)[0]}


def _titled_matches(index: ProjectIndex, terms: list[str], named, title_hits: Counter, limit: int) -> list[str]:
    """The matching chunks of notes whose titles hold some term, best first: those notes' chunks alone are read."""
    if not title_hits:
        return []
    # Rowids and notes first (cheap); what ranks them only for the chunks that match every term.
    rows = index.sql("SELECT rowid, NULL, document_id FROM chunks WHERE document_id IN (SELECT value FROM json_each(?))",
                     [json.dumps(list(title_hits))])
    rows, content_hits = _narrow(index, terms, named, rows)
    if not rows:
        return []
    rows = index.sql("""SELECT c.rowid, c.chunk_id, c.document_id, c.ordinal, d.modified FROM chunks c
                        JOIN documents d USING (document_id)
                        WHERE c.rowid IN (SELECT value FROM json_each(?))""", [json.dumps([r[0] for r in rows])])
    rows.sort(key=lambda r: (-title_hits[r[2]], -content_hits[r[0]], -(r[4] or 0), r[2], r[3]))
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
                texts = {r[0]: r[1].lower() for r in index.sql(
                    "SELECT rowid, content FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
                    [json.dumps([r[0] for r in rows])])}
            holding = {r[0] for r in rows if term in texts.get(r[0], "")}
        else:
            holding = _holding(index, term, json.dumps([r[0] for r in rows]))
        content_hits.update(holding)
        rows = [r for r in rows if r[0] in holding or r[2] in titled
                or pathed is EVERYTHING or r[2] in pathed]
    return rows, content_hits


def _anywhere(index: ProjectIndex, term: str) -> bool:
    """Whether any chunk's text holds the term (the first match found is enough)."""
    contains, params = _contains(term)
    if len(term) >= 3:
        return bool(index.sql("SELECT 1 FROM chunks_trigram WHERE chunks_trigram MATCH ? LIMIT 1", params))
    return bool(index.sql(f"SELECT 1 FROM chunks c WHERE {contains} LIMIT 1", params))


def _holding(index: ProjectIndex, term: str, rowids_json: str) -> set[int]:
    """Which of these chunks hold the term in their text."""
    contains, params = _contains(term)
    return {r[0] for r in index.sql(f"SELECT c.rowid FROM chunks c WHERE c.rowid IN (SELECT value FROM json_each(?)) "
                                    f"AND {contains}", [rowids_json, *params])}


def _contains(term: str) -> tuple[str, list]:
    """SQL that is true when chunk c's text holds the term (the trigram index for three characters or more)."""
    if len(term) >= 3:
        return "c.rowid IN (SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ?)", [_fts_phrase(term)]
    return "instr(lower(c.content), ?) > 0", [term]


def _other_matches(index: ProjectIndex, terms: list[str], named, titled: set[str], need: int,
                   document_ids: set[str] | None) -> list[str]:
    """The best `need` matching chunks of notes whose titles hold no term, ranked by SQLite itself: chunks holding
    more of the terms in their text, then newer notes. Terms no path holds are found together by the trigram index
    (the rows it yields drive the query); each other term may also be met by the note's path."""
    plain = [t for t, (_, pathed) in zip(terms, named) if len(t) >= 3 and not pathed]
    if plain:
        source = "(SELECT rowid AS r FROM chunks_trigram WHERE chunks_trigram MATCH ?) m JOIN chunks c ON c.rowid = m.r"
        params: list = [" AND ".join(_fts_phrase(t) for t in plain)]
    else:  # every term is short or also in some path: the chunks are walked (rare, and what it always cost)
        source, params = "chunks c", []
    where, counted = [], []
    for term, (_, pathed) in zip(terms, named):
        if term in plain:
            continue
        contains, cparams = _contains(term)
        counted.append((f"({contains})", cparams))
        if pathed is EVERYTHING:
            continue
        if pathed:
            where.append((f"({contains} OR c.document_id IN (SELECT value FROM json_each(?)))",
                          [*cparams, json.dumps(sorted(pathed))]))
        else:
            where.append((contains, cparams))
    if titled:
        where.append(("c.document_id NOT IN (SELECT value FROM json_each(?))", [json.dumps(sorted(titled))]))
    if document_ids is not None:
        where.append(("c.document_id IN (SELECT value FROM json_each(?))", [json.dumps(sorted(document_ids))]))
    filters = [p for _, ps in where for p in ps]
    few = None  # the trigram index's matches, when there are no more than DENSE of them
    if plain:
        found = [r[0] for r in index.sql("SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ? LIMIT ?",
                                         [params[0], DENSE + 1])]
        if len(found) <= DENSE:
            few = found
            source, params = "chunks c", []
            where.insert(0, ("c.rowid IN (SELECT value FROM json_each(?))", [json.dumps(few)]))
            filters = [p for _, ps in where for p in ps]
    if few is None and not any(pathed for _, pathed in named) and all(t.isascii() for t in terms):
        # Every term must be in the text, so every match ranks alike, and there are thousands: walk the notes newest
        # first (index documents_newest) and stop at the `need`-th match, rather than sort every match by date.
        # ASCII terms only: SQLite's lower() folds no other letters (the trigram index folds them all).
        sql = ("SELECT c.chunk_id FROM documents d INDEXED BY documents_newest CROSS JOIN chunks c "
               "ON c.document_id = d.document_id WHERE "
               + " AND ".join(["instr(lower(c.content), ?) > 0"] * len(plain) + [sql for sql, _ in where])
               + " ORDER BY d.modified DESC, d.document_id, c.ordinal LIMIT ?")
        try:  # the short terms' own instr() conditions are already in `where`
            return [r[0] for r in index.sql(sql, [*plain, *filters, need])]
        except sqlite3.OperationalError:  # an index read before migration m010 added documents_newest: sort instead
            pass
    hits = " + ".join(sql for sql, _ in counted) or "0"
    sql = (f"SELECT c.chunk_id, {hits} AS hits FROM {source} JOIN documents d USING (document_id)"
           + (" WHERE " + " AND ".join(sql for sql, _ in where) if where else "")
           + " ORDER BY hits DESC, d.modified DESC, c.document_id, c.ordinal LIMIT ?")
    bound = [p for _, ps in counted for p in ps] + params + filters  # in the SQL's order
    return [r[0] for r in index.sql(sql, [*bound, need])]
