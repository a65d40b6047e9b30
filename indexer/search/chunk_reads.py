"""The read side's questions about chunks, by name: every SELECT that search, explain, context, memory search, the
mind-map node index and the Forge Graph ask of the chunks and their full-text indexes. No other module of the read
side holds SQL (tests/test_architecture.py checks); note_reads.py asks about notes, tags and links.

Id lists are passed one way: as one JSON array bound to `json_each(?)` (no limit on their number). Each function
takes the project's read side (`ProjectIndex`) first.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Iterable

from ..text.boilerplate import blank_shared
from ..text.language import kept
from ..text.segment import STEMMERS
from ..store.migrations import SUBSTRINGS_LIVE
from .grammar import BM25_RANK, whole_words
from .index import ProjectIndex

IN = "IN (SELECT value FROM json_each(?))"
DENSE = 2000  # a word matching this many chunks is ranked by walking the notes newest first

# What a chunk hit is made of: a chunk (c) with its document (d) and the document's tags.
HIT_SELECT = """SELECT c.chunk_id, d.document_id, c.content, c.heading_path, c.start_line, c.end_line, c.sections,
                       d.title, d.rel_path, d.file_type, d.created, d.modified,
                       (SELECT group_concat(tag, char(31)) FROM tags t WHERE t.document_id = d.document_id) AS tags"""


def ids(values: Iterable) -> str:
    """An id list as the one JSON array a query binds to json_each(?)."""
    return json.dumps(list(values))


def phrase(term: str) -> str:
    """A term as an FTS5 phrase (quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


# --- keyword search: substrings through the trigram index ------------------------------------------------------

def substring_tail(index: ProjectIndex) -> int | None:
    """The last chunk rowid the substring index holds while it catches up after a big sync (migration m015): chunks
    after it are searched by a scan instead, slower but whole. None when the index is whole."""
    def read() -> int | None:
        try:
            upto = index.sql("SELECT upto FROM trigram_state WHERE id = 1")[0][0]
        except sqlite3.OperationalError:  # an index from before m015
            return None
        return None if upto >= SUBSTRINGS_LIVE else upto
    return index.kept("substring tail", read)


def substring_backlog(index: ProjectIndex) -> tuple[int, int]:
    """(chunks the substring index does not hold yet, chunks in all); (0, n) when it is whole."""
    tail = substring_tail(index)
    left = 0 if tail is None else index.sql("SELECT count(*) FROM chunks WHERE rowid > ?", (tail,))[0][0]
    return left, chunk_count(index)


def _scan_tail(index: ProjectIndex, term: str, tail: int | None, select: str = "c.rowid") -> list:
    """The chunks after the substring index's tail whose text holds the term (none when the index is whole)."""
    if tail is None:
        return []
    return index.sql(f"SELECT {select} FROM chunks c WHERE c.rowid > ? AND instr(lower(c.content), ?) > 0",
                     (tail, term.lower()))


def chunks_with_term(index: ProjectIndex, term: str) -> set[int]:
    """The rowids of the chunks whose text holds the term (case-insensitive substring)."""
    if len(term) >= 3:  # the trigram index answers substring queries of three characters or more
        rows = index.sql("SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ?", (phrase(term),))
        rows += _scan_tail(index, term, substring_tail(index))
    else:
        rows = index.sql("SELECT rowid FROM chunks WHERE instr(lower(content), ?) > 0", (term,))
    return {r[0] for r in rows}


def documents_titled(index: ProjectIndex, term: str) -> set[str]:
    """The documents whose title holds the term."""
    return _documents_holding(index, "title", term)


def documents_pathed(index: ProjectIndex, term: str) -> set[str]:
    """The documents whose path inside the project holds the term."""
    return _documents_holding(index, "rel_path", term)


def _documents_holding(index: ProjectIndex, column: str, term: str) -> set[str]:
    if len(term) >= 3:
        rows = index.sql("SELECT d.document_id FROM documents_trigram f JOIN documents d ON d.rowid = f.rowid "
                         "WHERE documents_trigram MATCH ?", (f"{column} : " + phrase(term),))
    else:
        rows = index.sql(f"SELECT document_id FROM documents WHERE instr(lower({column}), ?) > 0", (term,))
    return {r[0] for r in rows}


def any_chunk_holds(index: ProjectIndex, term: str) -> bool:
    """Whether any chunk's text holds the term (the first match found is enough)."""
    contains, params = _contains(term)
    if len(term) >= 3:
        return bool(index.sql("SELECT 1 FROM chunks_trigram WHERE chunks_trigram MATCH ? LIMIT 1", params)
                    or _scan_tail(index, term, substring_tail(index)))
    return bool(index.sql(f"SELECT 1 FROM chunks c WHERE {contains} LIMIT 1", params))


HELD_KEPT = 64  # the words whose documents are kept until the index changes (a search and its notice ask twice)


def documents_holding(index: ProjectIndex, term: str) -> set[str]:
    """The documents whose title or own text holds the term as a whole word (Obsidian's `-word` leaves them out):
    `-git` keeps a note that says only "GitHub", and a paragraph many notes share (a footer: text/boilerplate.py)
    speaks for none of them. Kept until the index changes: the filter and the answer's notice ask the same."""
    held = index.kept("documents holding a word", dict)
    if term not in held:
        if len(held) >= HELD_KEPT:
            held.clear()
        held[term] = _documents_holding_word(index, term)
    return held[term]


def _documents_holding_word(index: ProjectIndex, term: str) -> set[str]:
    contains, params = _contains(term)
    if len(term) >= 3:  # the substring index finds the candidates; the word and the note's own text decide
        rows = index.sql("SELECT c.document_id, c.content FROM chunks_trigram f JOIN chunks c ON c.rowid = f.rowid "
                         "WHERE chunks_trigram MATCH ?", params)
        rows += _scan_tail(index, term, substring_tail(index), "c.document_id, c.content")
        titles = index.sql("SELECT d.document_id, d.title FROM documents_trigram f JOIN documents d "
                           "ON d.rowid = f.rowid WHERE documents_trigram MATCH ?", ("title : " + phrase(term),))
    else:
        rows = index.sql(f"SELECT c.document_id, c.content FROM chunks c WHERE {contains}", params)
        titles = index.sql("SELECT document_id, title FROM documents WHERE instr(lower(title), ?) > 0", (term,))
    word, shared = whole_words([term]), shared_paragraphs(index)
    if word is None:
        return set()
    found = {doc for doc, title in titles if word.search(title or "")}
    for doc, content in rows:
        if doc not in found and word.search(blank_shared(content or "", shared)):
            found.add(doc)
    return found


def chunk_keys_of_documents(index: ProjectIndex, document_ids: Iterable[str]) -> list[tuple]:
    """(rowid, None, document_id) of every chunk of these documents."""
    return [tuple(r) for r in index.sql(f"SELECT rowid, NULL, document_id FROM chunks WHERE document_id {IN}",
                                        [ids(document_ids)])]


def chunk_keys(index: ProjectIndex, chunk_ids: Iterable[str]) -> list[tuple]:
    """(rowid, chunk_id, document_id) of these chunks."""
    return [tuple(r) for r in index.sql(f"SELECT rowid, chunk_id, document_id FROM chunks WHERE chunk_id {IN}",
                                        [ids(chunk_ids)])]


def chunk_order_keys(index: ProjectIndex, rowids: Iterable[int]) -> list[tuple]:
    """(rowid, chunk_id, document_id, ordinal, the note's modified time) of these chunks."""
    return [tuple(r) for r in index.sql(f"""SELECT c.rowid, c.chunk_id, c.document_id, c.ordinal, d.modified
                                            FROM chunks c JOIN documents d USING (document_id)
                                            WHERE c.rowid {IN}""", [ids(rowids)])]


def lowered_texts(index: ProjectIndex, rowids: Iterable[int]) -> dict[int, str]:
    """Each of these chunks' text, lowercase, by rowid."""
    return {r[0]: r[1].lower() for r in index.sql(f"SELECT rowid, content FROM chunks WHERE rowid {IN}",
                                                  [ids(rowids)])}


def chunks_holding(index: ProjectIndex, term: str, rowids: Iterable[int]) -> set[int]:
    """Which of these chunks hold the term in their text."""
    contains, params = _contains(term, substring_tail(index))
    return {r[0] for r in index.sql(f"SELECT c.rowid FROM chunks c WHERE c.rowid {IN} AND {contains}",
                                    [ids(rowids), *params])}


def _contains(term: str, tail: int | None = None) -> tuple[str, list]:
    """SQL that is true when chunk c's text holds the term (the trigram index for three characters or more, and a
    scan of the chunks after its tail while it catches up)."""
    if len(term) >= 3:
        if tail is not None:
            return ("(c.rowid IN (SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ?) OR "
                    "(c.rowid > ? AND instr(lower(c.content), ?) > 0))", [phrase(term), tail, term.lower()])
        return "c.rowid IN (SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ?)", [phrase(term)]
    return "instr(lower(c.content), ?) > 0", [term]


class Everything:
    """Stands for every document: a term in the project folder's own path is in every document's path."""


EVERYTHING = Everything()


def untitled_matches(index: ProjectIndex, terms: list[str], named, titled: set[str], need: int,
                     document_ids: set[str] | None) -> list[str]:
    """The best `need` chunks holding every term, of notes whose titles hold none, ranked by SQLite itself: chunks
    holding more of the terms in their text, then newer notes.

    `named` is each term's (titled documents, pathed documents or EVERYTHING). Terms no path holds are found
    together by the trigram index (the rows it yields drive the query); each other term may also be met by the
    note's path. When every match ranks alike and a word is common (over DENSE matches), the notes are walked
    newest first (index documents_newest) and the walk stops at the `need`-th match, rather than sort every match.
    """
    tail = substring_tail(index)
    plain = [t for t, (_, pathed) in zip(terms, named) if len(t) >= 3 and not pathed and tail is None]
    if plain:
        source = "(SELECT rowid AS r FROM chunks_trigram WHERE chunks_trigram MATCH ?) m JOIN chunks c ON c.rowid = m.r"
        params: list = [" AND ".join(phrase(t) for t in plain)]
    else:  # every term is short or also in some path: the chunks are walked (rare, and what it always cost)
        source, params = "chunks c", []
    where, counted = [], []
    for term, (_, pathed) in zip(terms, named):
        if term in plain:
            continue
        contains, cparams = _contains(term, tail)
        counted.append((f"({contains})", cparams))
        if pathed is EVERYTHING:
            continue
        if pathed:
            where.append((f"({contains} OR c.document_id {IN})", [*cparams, ids(sorted(pathed))]))
        else:
            where.append((contains, cparams))
    if titled:
        where.append((f"c.document_id NOT {IN}", [ids(sorted(titled))]))
    if document_ids is not None:
        where.append((f"c.document_id {IN}", [ids(sorted(document_ids))]))
    filters = [p for _, ps in where for p in ps]
    few = None  # the trigram index's matches, when there are no more than DENSE of them
    if plain:
        found = [r[0] for r in index.sql("SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ? LIMIT ?",
                                         [params[0], DENSE + 1])]
        if len(found) <= DENSE:
            few = found
            source, params = "chunks c", []
            where.insert(0, (f"c.rowid {IN}", [ids(few)]))
            filters = [p for _, ps in where for p in ps]
    if few is None and not any(pathed for _, pathed in named) and all(t.isascii() for t in terms):
        # ASCII terms only: SQLite's lower() folds no other letters (the trigram index folds them all).
        sql = ("SELECT c.chunk_id FROM documents d INDEXED BY documents_newest CROSS JOIN chunks c "
               "ON c.document_id = d.document_id WHERE "
               + " AND ".join(["instr(lower(c.content), ?) > 0"] * len(plain) + [sql for sql, _ in where])
               + " ORDER BY d.modified DESC, d.document_id, c.ordinal LIMIT ?")
        return [r[0] for r in index.sql(sql, [*plain, *filters, need])]
    hits = " + ".join(sql for sql, _ in counted) or "0"
    sql = (f"SELECT c.chunk_id, {hits} AS hits FROM {source} JOIN documents d USING (document_id)"
           + (" WHERE " + " AND ".join(sql for sql, _ in where) if where else "")
           + " ORDER BY hits DESC, d.modified DESC, c.document_id, c.ordinal LIMIT ?")
    bound = [p for _, ps in counted for p in ps] + params + filters  # in the SQL's order
    return [r[0] for r in index.sql(sql, [*bound, need])]


STEMMED_SHARE = 0.05

# --- BM25 through chunks_bm25 (porter-stemmed words) ----------------------------------------------------------

def chunk_count(index: ProjectIndex) -> int:
    """How many chunks the project has (kept until the index changes)."""
    return index.kept("chunk count", lambda: index.sql("SELECT count(*) FROM chunks")[0][0])


def bm25_frequencies(index: ProjectIndex, terms: Iterable[str]) -> dict[str, int]:
    """How many chunks each FTS5 term matches (a count reads the term's doclist alone, without scoring)."""
    return {term: index.sql("SELECT count(*) FROM chunks_bm25 WHERE chunks_bm25 MATCH ?", [term])[0][0]
            for term in terms}


def bm25_every_score(index: ProjectIndex, match: str) -> dict[int, float]:
    """The BM25 score (higher is better) of every chunk matching an FTS5 expression, by rowid, from the full-text
    index alone."""
    return dict(index.sql(f"SELECT rowid, -{BM25_RANK} FROM chunks_bm25 WHERE chunks_bm25 MATCH ?", [match]))


def bm25_chunk_ids(index: ProjectIndex, match: str, limit: int, document_ids: set[str]) -> list[str]:
    """The chunks of these documents BM25 ranks best for an FTS5 expression, best first."""
    rows = index.sql(f"""SELECT c.chunk_id FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid
                         WHERE chunks_bm25 MATCH ? AND c.document_id {IN} ORDER BY {BM25_RANK}, f.rowid LIMIT ?""",
                     [match, ids(sorted(document_ids)), limit])
    return [r[0] for r in rows]




def chunk_ids_at(index: ProjectIndex, rowids: Iterable[int]) -> dict[int, str]:
    """The chunk id at each of these rowids."""
    return dict(index.sql(f"SELECT rowid, chunk_id FROM chunks WHERE rowid {IN}", [ids(rowids)]))


def bm25_chunk_scores(index: ProjectIndex, match: str, limit: int, document_ids: set[str] | None
                      ) -> list[tuple[str, float]]:
    """(chunk_id, BM25 score, higher is better) of the best `limit` chunks for an FTS5 expression, best first."""
    clause, params = "", [match]
    if document_ids is not None:
        clause = f" AND c.document_id {IN}"
        params.append(ids(sorted(document_ids)))
    rows = index.sql(f"""SELECT c.chunk_id, -{BM25_RANK} FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid
                         WHERE chunks_bm25 MATCH ?{clause} ORDER BY {BM25_RANK}, f.rowid LIMIT ?""", [*params, limit])
    return [(r[0], r[1]) for r in rows]




def bm25_best_chunks(index: ProjectIndex, match: str, limit: int) -> list[tuple[int, float]]:
    """(rowid, BM25 score, lower is better) of the best `limit` chunks, from the full-text index alone."""
    return [tuple(r) for r in index.sql(f"SELECT f.rowid, {BM25_RANK} AS score FROM chunks_bm25 f "
                                        "WHERE chunks_bm25 MATCH ? ORDER BY score, f.rowid LIMIT ?", [match, limit])]


def bm25_note_chunks(index: ProjectIndex, match: str, allowed: set[str] | None, limit: int | None
                     ) -> list[tuple[str, int, float]]:
    """(document_id, rowid, BM25 score) of the best `limit` chunks (None: all) of the allowed notes, best first."""
    clause, params = "", []
    if allowed is not None:
        clause, params = f" AND c.document_id {IN}", [ids(sorted(allowed))]
    rows = index.sql(f"""SELECT c.document_id, f.rowid, {BM25_RANK} AS score
                         FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid
                         WHERE chunks_bm25 MATCH ?{clause} ORDER BY score, c.document_id, f.rowid LIMIT ?""",
                     [match, *params, -1 if limit is None else limit])  # LIMIT -1: no limit
    return [tuple(r) for r in rows]


def bm25_holds_in_document(index: ProjectIndex, match: str, document_id: str) -> bool:
    """Whether some chunk of the document matches an FTS5 expression."""
    return bool(index.sql("SELECT 1 FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid "
                          "WHERE chunks_bm25 MATCH ? AND c.document_id = ? LIMIT 1", [match, document_id]))


def fts_snippets(index: ProjectIndex, match: str, rowids: list[int], tokens: int, open_mark: str, close_mark: str
                 ) -> dict[int, str]:
    """The best run of `tokens` words of each chunk, its (stemmed) matches between the marks, by rowid: one
    full-text query for them all (FTS5 evaluates the expression once, not once per chunk)."""
    rows = index.sql("SELECT f.rowid, snippet(chunks_bm25, 2, ?, ?, '…', ?), f.content = c.content "
                     "FROM chunks_bm25 f JOIN chunks c ON c.rowid = f.rowid "
                     f"WHERE chunks_bm25 MATCH ? AND f.rowid {IN}", [open_mark, close_mark, tokens, match, ids(rowids)])
    # A passage cut into character pairs or given its stems (text/segment.py) is not snipped from that copy: the
    # caller snips its own text.
    return {r[0]: r[1] for r in rows if r[1] is not None and r[2]}


def kept_languages(index: ProjectIndex) -> dict:
    """What the project's notes are written in and the model that follows, as its writer last told (index_meta
    'languages': counts, model, why), kept until the writer commits again; {} before the first telling."""
    def read() -> dict:
        rows = index.sql("SELECT value FROM index_meta WHERE key = 'languages'")
        return kept(rows[0][0] if rows else None)
    return index.kept("languages", read)


def stemmed_languages(index: ProjectIndex) -> tuple[str, ...]:
    """The languages with a Snowball stemmer that at least STEMMED_SHARE of the project's sampled passages are
    written in (text/language.py); none in a project embedded by the English model (its few German notes still
    hold their stems, so a German question's exact form finds them, and no English question changes)."""
    kept = kept_languages(index)
    if kept.get("model", "english") == "english":  # an English project's questions are read as typed
        return ()
    counts = kept.get("counts") or {}
    told = sum(counts.values()) or 1
    return tuple(sorted(lang for lang, n in counts.items() if lang in STEMMERS and n >= STEMMED_SHARE * told))


# --- chunks by id, by rowid and by document -------------------------------------------------------------------

def hit_rows(index: ProjectIndex, chunk_ids: Iterable[str]) -> dict[str, dict]:
    """What a chunk hit is made of (HIT_SELECT), by chunk id."""
    return {r["chunk_id"]: dict(r) for r in index.sql(
        f"{HIT_SELECT} FROM chunks c JOIN documents d USING (document_id) WHERE c.chunk_id {IN}", [ids(chunk_ids)])}


def first_chunk_hit_rows(index: ProjectIndex, document_ids: Iterable[str]) -> list[dict]:
    """HIT_SELECT of each document with its first chunk (empty fields for a document without chunks)."""
    return [dict(r) for r in index.sql(f"""{HIT_SELECT} FROM documents d LEFT JOIN chunks c
                                              ON c.document_id = d.document_id AND c.ordinal =
                                                 (SELECT min(ordinal) FROM chunks WHERE document_id = d.document_id)
                                           WHERE d.document_id {IN}""", [ids(document_ids)])]


def chunk_ids_of(index: ProjectIndex, document_ids: Iterable[str]) -> list[str]:
    """The chunk ids of these documents."""
    return [r[0] for r in index.sql(f"SELECT chunk_id FROM chunks WHERE document_id {IN}", [ids(document_ids)])]


def documents_of(index: ProjectIndex, chunk_ids: Iterable[str]) -> dict[str, str]:
    """Each of these chunks' document id, by chunk id."""
    return {r[0]: r[1] for r in index.sql(f"SELECT chunk_id, document_id FROM chunks WHERE chunk_id {IN}",
                                          [ids(dict.fromkeys(chunk_ids))])}


def contents(index: ProjectIndex, chunk_ids: Iterable[str]) -> dict[str, str]:
    """Each of these chunks' text as written, by chunk id."""
    return dict(index.sql(f"SELECT chunk_id, content FROM chunks WHERE chunk_id {IN}", [ids(chunk_ids)]))


def shared_paragraphs(index: ProjectIndex) -> frozenset[str]:
    """The keys of the paragraphs that many notes hold (text/boilerplate.py), kept until the index changes."""
    return index.kept("shared paragraphs", lambda: frozenset(r[0] for r in index.sql(
        "SELECT hash FROM shared_paragraphs")))


def owners(index: ProjectIndex, chunk_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Each of these chunks' (document id, ordinal), by chunk id."""
    return {r[0]: (r[1], r[2]) for r in index.sql(
        f"SELECT chunk_id, document_id, ordinal FROM chunks WHERE chunk_id {IN}", [ids(chunk_ids)])}


def owners_and_rowids(index: ProjectIndex, chunk_ids: Iterable[str]) -> dict[str, tuple[str, int, int]]:
    """Each of these chunks' (document id, ordinal, rowid), by chunk id."""
    return {r[0]: (r[1], r[2], r[3]) for r in index.sql(
        f"SELECT chunk_id, document_id, ordinal, rowid FROM chunks WHERE chunk_id {IN}", [ids(chunk_ids)])}


def owners_of_rowids(index: ProjectIndex, rowids: Iterable[int]) -> dict[int, str]:
    """Each of these chunks' document id, by rowid."""
    return {r[0]: r[1] for r in index.sql(f"SELECT rowid, document_id FROM chunks WHERE rowid {IN}", [ids(rowids)])}


def texts_of_documents(index: ProjectIndex, document_ids: Iterable[str]) -> list[tuple[str, str]]:
    """(document_id, content) of every chunk of these documents."""
    return [tuple(r) for r in index.sql(f"SELECT document_id, content FROM chunks WHERE document_id {IN}",
                                        [ids(sorted(document_ids))])]


def documents_of_rowids(index: ProjectIndex, rowids: Iterable[int]) -> set[str]:
    """The documents these chunks belong to."""
    return {r[0] for r in index.sql(f"SELECT DISTINCT document_id FROM chunks WHERE rowid {IN}",
                                    [ids(sorted(rowids))])}


def chunk_ordinals(index: ProjectIndex, document_ids: Iterable[str], ordinal: int | None = None
                   ) -> list[tuple[str, str, int]]:
    """(document_id, chunk_id, ordinal) of every chunk of these documents, or only of their chunk at `ordinal`."""
    at, params = ("", []) if ordinal is None else (" AND ordinal = ?", [ordinal])
    return [tuple(r) for r in index.sql(
        f"SELECT document_id, chunk_id, ordinal FROM chunks WHERE document_id {IN}{at}", [ids(document_ids), *params])]


def texts_by_rowid_or_id(index: ProjectIndex, rowids: Iterable[int], chunk_ids: Iterable[str]) -> list[tuple]:
    """(rowid, chunk_id, content) of the chunks named by either list."""
    return [tuple(r) for r in index.sql(f"SELECT rowid, chunk_id, content FROM chunks WHERE rowid {IN} "
                                        f"OR chunk_id {IN}", [ids(rowids), ids(chunk_ids)])]


def first_chunk_texts(index: ProjectIndex, document_ids: list[str]) -> dict[str, str]:
    """The text of each document's first chunk: where a note's body begins."""
    return {r[0]: r[1] for r in index.sql(
        f"SELECT document_id, content FROM chunks c WHERE document_id {IN} "
        "AND ordinal = (SELECT min(ordinal) FROM chunks WHERE document_id = c.document_id)", [ids(document_ids)])}


def document_chunk_texts(index: ProjectIndex, document_id: str) -> list[tuple[str, int, str]]:
    """(chunk_id, ordinal, content) of a document's chunks, in order."""
    return [(r[0], r[1], r[2]) for r in index.sql(
        "SELECT chunk_id, ordinal, content FROM chunks WHERE document_id = ? ORDER BY ordinal", [document_id])]


def document_chunks(index: ProjectIndex, document_id: str) -> list:
    """A document's chunks in order, with their headings, lines and sections."""
    return index.sql("SELECT heading_path, content, start_line, end_line, sections FROM chunks "
                     "WHERE document_id = ? ORDER BY ordinal", (document_id,))


def document_chunk_ids(index: ProjectIndex, document_id: str) -> list[str]:
    """The chunk ids of one document."""
    return [r[0] for r in index.sql("SELECT chunk_id FROM chunks WHERE document_id = ?", (document_id,))]


def modified_of_chunks(index: ProjectIndex, chunk_ids: Iterable[str]) -> dict[str, float]:
    """The modified time of each of these chunks' notes, by chunk id."""
    return {r[0]: r[1] for r in index.sql(f"SELECT c.chunk_id, d.modified FROM chunks c JOIN documents d "
                                          f"USING (document_id) WHERE c.chunk_id {IN}", [ids(chunk_ids)])}


def lines_of_documents(index: ProjectIndex, document_ids: Iterable[str]) -> list:
    """(document_id, content, start_line) of every chunk of these documents, by document then in order."""
    return index.sql(f"SELECT document_id, content, start_line FROM chunks WHERE document_id {IN} "
                     "ORDER BY document_id, ordinal", [ids(sorted(document_ids))])


# --- the mind-map node index, the Forge Graph ---------------------------------------------------------------

def node_chunk_states(index: ProjectIndex, document_id: str) -> list:
    """(ref, embed_state) of a map's node chunks."""
    return index.sql("SELECT ref, embed_state FROM chunks WHERE document_id = ?", (document_id,))


def node_chunks(index: ProjectIndex, document_id: str) -> dict[str, dict]:
    """A map's node chunks (chunk_id, content, ref), by chunk id."""
    return {r["chunk_id"]: r for r in index.sql("SELECT chunk_id, content, ref FROM chunks WHERE document_id = ?",
                                                (document_id,))}


def embedded_count(index: ProjectIndex) -> int:
    """How many chunks have vectors."""
    return index.sql("SELECT count(*) FROM chunks WHERE embed_state = 'embedded'")[0][0]


def embedded_owners(index: ProjectIndex) -> list[tuple[str, str]]:
    """(chunk_id, document_id) of every chunk with a vector."""
    return [tuple(r) for r in index.sql("SELECT chunk_id, document_id FROM chunks WHERE embed_state = 'embedded'")]


def chunk_counts_and_heads(index: ProjectIndex, head_chars: int) -> list[tuple[str, int, str | None]]:
    """(document_id, its chunk count, the start of its first chunk) of every document with chunks."""
    return [tuple(r) for r in index.sql(
        "SELECT document_id, count(*), substr(min(CASE WHEN ordinal = 0 THEN content END), 1, ?) "
        "FROM chunks GROUP BY document_id", (head_chars,))]


def map_index_state(index: ProjectIndex, rel_path: str) -> tuple[str, int] | None:
    """(content hash, chunks waiting to be embedded) of the document at a path, None when it is not indexed."""
    rows = index.sql("""SELECT d.content_hash, (SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id
                            AND c.embed_state = 'pending') AS pending FROM documents d WHERE d.rel_path = ?""",
                     (rel_path,))
    return (rows[0]["content_hash"], rows[0]["pending"]) if rows else None


# --- the vectors' SQLite copies (HNSW mode reads them here; `db` is anything with the read side's sql()) ---------

HAS_VECTOR = "embed_state = 'embedded' AND NOT keyword_only AND vector IS NOT NULL"


def vector_count(db) -> int:
    """How many chunks have a stored vector."""
    return db.sql(f"SELECT count(*) FROM chunks WHERE {HAS_VECTOR}")[0][0]


def vector_rowids(db) -> list[int]:
    """The rowids of every chunk with a stored vector."""
    return [r[0] for r in db.sql(f"SELECT rowid FROM chunks WHERE {HAS_VECTOR}")]


def vectors_by_rowid(db, rowids: Iterable[int]) -> dict[int, bytes]:
    """These chunks' stored vectors (float32 bytes), by rowid."""
    return {r[0]: r[1] for r in db.sql(f"SELECT rowid, vector FROM chunks WHERE rowid {IN}", [ids(rowids)])}


def vector_block(db, after: int, limit: int) -> list:
    """(rowid, chunk_id, vector bytes) of the next `limit` chunks with stored vectors after a rowid, in order."""
    return db.sql(f"SELECT rowid, chunk_id, vector FROM chunks WHERE rowid > ? AND {HAS_VECTOR} "
                  "ORDER BY rowid LIMIT ?", (after, limit))


def stored_vectors(db, chunk_ids: Iterable[str], ids_only: bool = False) -> list:
    """(chunk_id, float32 vector bytes) of those of these chunks that have a stored vector; the ids drive the query
    (with embed_state's index, SQLite would walk every chunk)."""
    columns = "c.chunk_id" if ids_only else "c.chunk_id, c.vector"
    return db.sql(f"SELECT {columns} FROM json_each(?) j CROSS JOIN chunks c ON c.chunk_id = j.value "
                  "WHERE c.embed_state = 'embedded' AND NOT c.keyword_only AND c.vector IS NOT NULL",
                  [ids(chunk_ids)])


def previous_vectors(index: ProjectIndex) -> list[sqlite3.Row]:
    """(chunk_id, vector) of every passage's previous model's vector, during a switch (search/switching.py)."""
    return [r for r in index.sql("SELECT chunk_id, vector FROM previous_vectors") if r[1] is not None]


def embedded_of(index: ProjectIndex) -> tuple[int, int]:
    """(passages with their vector, passages the model embeds, less those that failed)."""
    row = index.sql("SELECT sum(embed_state = 'embedded'), count(*) FROM chunks WHERE NOT keyword_only "
                    "AND embed_state != 'failed'")[0]
    return int(row[0] or 0), int(row[1] or 0)


def index_meta(db, key: str) -> str | None:
    """A value the index keeps about itself (index_meta), None when it has none."""
    rows = db.sql("SELECT value FROM index_meta WHERE key = ?", (key,))
    return rows[0][0] if rows else None


# --- the project's own vocabulary (typo correction) -----------------------------------------------------------

def word_holders(index: ProjectIndex, word: str) -> int:
    """How many chunks and titles hold the word as typed in the notes (not stemmed); 0 when none does."""
    rows = index.sql("SELECT doc FROM words_vocab WHERE term = ?", (word,))
    return rows[0][0] if rows else 0


def vocabulary_from(index: ProjectIndex, first: str, shortest: int, longest: int) -> list[tuple[str, int]]:
    """(word, chunks and titles holding it) of the words that begin with `first` and have shortest..longest
    letters, as typed in the notes (not stemmed)."""
    return [(r[0], r[1]) for r in index.sql(
        "SELECT term, doc FROM words_vocab WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ?",
        (first, first + "\U0010ffff", shortest, longest))]


# --- questions across languages (search/across.py) -------------------------------------------------------------

def titles_and_paths(index: ProjectIndex) -> list[tuple[str, str]]:
    """Every document's (title, relative path)."""
    return [(r[0], r[1]) for r in index.sql("SELECT title, rel_path FROM documents")]
