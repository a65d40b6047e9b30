"""Keyword search: case-insensitive substring matching on chunk text, titles and paths, through the trigram index."""
from __future__ import annotations

import heapq
import re

from .index import ProjectIndex

MAX_TERMS = 12


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


def _documents_named(index: ProjectIndex, term: str) -> tuple[set[str], set[str]]:
    """Return (documents whose title contains term, documents whose path contains it)."""
    if len(term) >= 3:
        q = _fts_phrase(term)
        titled = index.sql("SELECT d.document_id FROM documents_trigram f JOIN documents d ON d.rowid = f.rowid "
                           "WHERE documents_trigram MATCH ?", ("title : " + q,))
        pathed = index.sql("SELECT d.document_id FROM documents_trigram f JOIN documents d ON d.rowid = f.rowid "
                           "WHERE documents_trigram MATCH ?", ("rel_path : " + q,))
    else:
        titled = index.sql("SELECT document_id FROM documents WHERE instr(lower(title), ?) > 0", (term,))
        pathed = index.sql("SELECT document_id FROM documents WHERE instr(lower(rel_path), ?) > 0", (term,))
    paths = {r[0] for r in pathed}
    if term in str(index.root).lower():  # the absolute path holds the root: every document matches
        paths |= {r[0] for r in index.sql("SELECT document_id FROM documents")}
    return {r[0] for r in titled}, paths


def keyword_search(index: ProjectIndex, query: str, limit: int = 20,
                   document_ids: set[str] | None = None) -> list[tuple[str, float, str]]:
    """Rank chunks where every term occurs in the content, title or path; title matches first. Score 1.0."""
    terms = parse_terms(query)
    if not terms:
        return []
    matched: set[int] | None = None
    title_hits: dict[str, int] = {}
    content_hits: dict[int, int] = {}
    for term in terms:
        in_content = _chunks_containing(index, term)
        titled, pathed = _documents_named(index, term)
        for doc in titled:
            title_hits[doc] = title_hits.get(doc, 0) + 1
        for rowid in in_content:
            content_hits[rowid] = content_hits.get(rowid, 0) + 1
        named = titled | pathed
        by_name = {r[0] for r in _rows_of_documents(index, named)} if named else set()
        found = in_content | by_name
        matched = found if matched is None else matched & found
        if not matched:
            return []
    rows = _chunk_rows(index, matched)
    if document_ids is not None:
        rows = [r for r in rows if r["document_id"] in document_ids]
    # Title matches rank above content matches; then chunks matching more terms in their text; then newer.
    best = heapq.nsmallest(limit, rows, key=lambda r: (-title_hits.get(r["document_id"], 0), -content_hits.get(r["rowid"], 0),
                                                         -(r["modified"] or 0), r["document_id"], r["ordinal"]))
    return [(r["chunk_id"], 1.0, "keyword") for r in best]


def _rows_of_documents(index: ProjectIndex, doc_ids: set[str]):
    return index.sql_in("SELECT rowid FROM chunks WHERE document_id IN ({ids})", doc_ids)


def _chunk_rows(index: ProjectIndex, rowids: set[int]) -> list:
    return index.sql_in("""SELECT c.rowid, c.chunk_id, c.document_id, c.ordinal, d.modified FROM chunks c
                           JOIN documents d USING (document_id) WHERE c.rowid IN ({ids})""", rowids)
