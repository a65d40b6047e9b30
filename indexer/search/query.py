"""A search's query, parsed once at the edge of the engine and handed to every leg: no leg reads the raw string.

One `Query` holds every reading of what was typed: the keyword terms (lowercase; "quoted phrases" whole; each
marked when it is a stopword), the FTS5 expression of vault_search and partial matches (grammar.py), the words
worth highlighting in a match by meaning, the tags and filters that narrow the search, and, memoised per project
or per model, the documents they allow, each term's titled and pathed documents, and the query vector (embedded
once for every project of a search).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import numpy as np

from . import chunk_reads as reads
from . import note_reads
from .chunk_reads import EVERYTHING
from .filters import allowed_documents
from .grammar import (FtsQuery, aliases, name_match, normal_words, parse_query, parse_terms, query_words,
                      without_stopwords)
from .index import ProjectIndex
from .links import file_stem
from .operators import read_operators
from .tags import normalise

NAME_TERMS = 6  # a query of more words names no note: its aliases are not looked for
# In a big project, a word of the OR of a long question that is in more than this share of the chunks is left out of
# it: its BM25 weight is near nothing, and reading its doclist was most of a long question's time (britannica-10k,
# 85,651 chunks: "into" in 14,874, "used" in 11,681; the OR of one question scored 26,299 chunks in 238 ms, 4,990
# in 20 ms without its three commonest words). Small projects keep every word: there the reads are cheap anyway.
COMMON_SHARE = 0.05
COMMON_FROM_CHUNKS = 20_000
KEEP_RAREST = 2  # however common, the rarest words of a question stay


@dataclass(eq=False)
class Query:
    """What was typed, read every way a leg needs it, once; and what narrows the search."""

    text: str
    terms: list[str]  # the keyword side's terms: every one must match (stopwords left out, never required)
    words: list[str]  # highlighted in matches by meaning (stopwords left out)
    fts: FtsQuery  # the BM25 legs' expression (and its OR of positive terms), stopwords left out
    stopwords: frozenset[str]  # the stopwords left out of the three
    names: tuple[str, ...] = ()  # the query as a note's name is compared (normal_words), with and without stopwords
    tags_all: tuple[str, ...] = ()
    tags_any: tuple[str, ...] = ()
    filters: dict = field(default_factory=dict)
    meaning: str = ""  # what the model reads: the words, without Obsidian's operators
    alternatives: tuple["Query", ...] = ()  # each side of a top-level OR, a query of its own (the keyword side)
    # What the question's meaning is, worked out once for every reading of it (search/across.py narrows the words of
    # a question asked across languages into a second Query, which shares this): each project's Asking, and the
    # question's vector per model and space.
    asked: dict = field(default_factory=dict, repr=False)
    words_weight: float = 1.0  # the share of the question its words carry (below 1 when only its names count)
    _memo: dict = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, text: str, tags_all=(), tags_any=(), filters: dict | None = None) -> "Query":
        """Read a query once: Obsidian's operators (operators.py: tag:, path:, file:, -word, OR), then its terms,
        FTS5 expression and highlight words. A stopword outside quotes is never required and never highlighted
        ("MCP server for AI clients" needs no chunk holding "for"), unless every word is one."""
        text = text or ""
        ops = read_operators(text)
        tags_all = tuple(dict.fromkeys([*(tags_all or ()), *ops.tags]))
        filters = dict(filters or {})
        for key, values in ops.filters.items():
            filters[key] = list(dict.fromkeys([*filters.get(key, ()), *values]))
        alternatives = tuple(cls.parse(side, tags_all, tags_any, filters) for side in ops.alternatives)
        words = " ".join(side.meaning for side in alternatives) if alternatives else ops.words
        content, dropped = without_stopwords(words)
        names = tuple(dict.fromkeys(n for n in (normal_words(words), normal_words(content)) if n))
        terms = list(dict.fromkeys(t for side in alternatives for t in side.terms)) if alternatives \
            else parse_terms(content)
        return cls(text, terms, query_words(content), parse_query(without_stopwords(ops.words)[0]),
                   frozenset(dropped), names, tags_all, tuple(tags_any or ()), filters, ops.words, alternatives)

    @classmethod
    def of(cls, request) -> "Query":
        """The query of a SearchRequest (its words, tags and checked filters)."""
        return cls.parse(request.query, request.tags_all, request.tags_any, request.checked_filters)

    @property
    def narrowed(self) -> bool:
        """Whether tags or filters narrow the documents searched."""
        return bool(self.tags_all or self.tags_any or self.filters)

    # Each memo is built from the index alone, so two threads building one at once build the same value.

    def vector(self, index: ProjectIndex) -> np.ndarray:
        """The query embedded by the project's model (raises EmbeddingsUnavailable); once per model."""
        key = index.vector_key
        if key not in self.asked:
            self.asked[key] = index.embed_query(self.meaning)
        return self.asked[key]

    def named(self, index: ProjectIndex) -> list:
        """Each term's (documents whose title holds it, documents whose path holds it or EVERYTHING: a term in the
        project folder's own path is in every document's path), asked once per project."""
        key = ("named", index.name)
        if key not in self._memo:
            root, named = str(index.root).lower(), []
            for term in self.terms:
                named.append((reads.documents_titled(index, term),
                              EVERYTHING if term in root else reads.documents_pathed(index, term)))
            self._memo[key] = named
        return self._memo[key]

    def held(self, index: ProjectIndex, position: int) -> bool:
        """Whether any title, path or chunk of this project holds the term at `position`; asked once per project
        (by the spelling check, then the keyword leg)."""
        key = ("held", index.name, position)
        if key not in self._memo:
            titled, pathed = self.named(index)[position]
            self._memo[key] = bool(titled or pathed) or reads.any_chunk_holds(index, self.terms[position])
        return self._memo[key]

    def named_documents(self, index: ProjectIndex) -> dict[str, int]:
        """The notes the query names, with how (grammar.name_match: 2 it is the title, an alias or the file name,
        1 it stands whole in one), among the notes whose title or path holds every word, or (a query of at most
        NAME_TERMS words) whose aliases may; asked once per project."""
        key = ("named documents", index.name)
        if key not in self._memo:
            candidates: set[str] | None = None
            for titled, pathed in self.named(index):
                holding = set(titled) | (pathed if isinstance(pathed, set) else set())
                candidates = holding if candidates is None else candidates & holding
            candidates = set(candidates or ())
            if self.terms and len(self.terms) <= NAME_TERMS:  # and those whose alias may be the query
                candidates |= set(note_reads.aliased_holding(index, self.terms))
            found = {}
            for doc, (title, rel_path, frontmatter) in note_reads.names_of(index, sorted(candidates)).items():
                level = name_match(self.names, [title, file_stem(rel_path), *aliases(frontmatter)])
                if level:
                    found[doc] = level
            self._memo[key] = found
        return self._memo[key]

    def fts_for(self, index: ProjectIndex) -> FtsQuery:
        """The FTS5 expression as this project reads it: each bare word with its Snowball stems in the languages
        its notes are written in (text/segment.py), the query as parsed in an English project."""
        key = ("fts", index.name)  # asked by every leg of a search: the project's languages read once
        if key not in self._memo:
            languages = reads.stemmed_languages(index)
            self._memo[key] = self.fts.for_languages(languages) if languages else self.fts
        return self._memo[key]

    def any_match(self, index: ProjectIndex) -> str:
        """The OR of the positive terms as this project reads it best: in a project of COMMON_FROM_CHUNKS chunks or
        more, without the words in more than COMMON_SHARE of them (the KEEP_RAREST rarest always stay); asked once
        per project."""
        key = ("any match", index.name)
        if key not in self._memo:
            fts = self.fts_for(index)
            terms, chunks = fts.positive, 0
            # A word of one or two letters says little in an OR of words, and is often the part of the last word
            # typed so far ("extract a t"): its doclist is long, its weight small (a pair of CJK characters is a
            # word).
            if len(terms) > 1 and any(len(t.strip('"*')) > 2 for t in terms):
                terms = tuple(t for t in terms if len(t.strip('"*')) > 2 or t.startswith("("))
            if fts.any_match and len(terms) > KEEP_RAREST:
                chunks = reads.chunk_count(index)
            if chunks >= COMMON_FROM_CHUNKS:
                try:
                    counts = reads.bm25_frequencies(index, terms)
                except sqlite3.OperationalError:  # FTS5 refused a term: keep them all, as the legs then do
                    counts = dict.fromkeys(terms, 0)
                rarest = set(sorted(terms, key=lambda t: counts[t])[:KEEP_RAREST])
                terms = tuple(t for t in terms if t in rarest or counts[t] <= COMMON_SHARE * chunks)
            self._memo[key] = " OR ".join(terms) if len(terms) > 1 else (terms[0] if terms else "")
        return self._memo[key]

    def any_scores(self, index: ProjectIndex) -> dict[int, float]:
        """The BM25 of every chunk holding some of the words (any_match), by rowid: read once per project for the
        partial matches and every word strength of a search, each of which read the same expression again (a long
        question's OR is its costliest read). Raises sqlite3.OperationalError when FTS5 refuses the expression."""
        key = ("any scores", index.name)
        if key not in self._memo:
            self._memo[key] = reads.bm25_every_score(index, self.any_match(index))
        return self._memo[key]

    def allowed(self, index: ProjectIndex) -> set[str] | None:
        """The documents the tags and filters allow in this project; None when nothing narrows the search."""
        key = ("allowed", index.name)
        if key not in self._memo:
            by_tags = note_reads.documents_tagged(index, normalise(self.tags_all), normalise(self.tags_any))
            by_filters = allowed_documents(index, self.filters)
            both = by_tags & by_filters if by_tags is not None and by_filters is not None else None
            self._memo[key] = both if both is not None else by_tags if by_filters is None else by_filters
        return self._memo[key]

    def allowed_chunks(self, index: ProjectIndex) -> list[str] | None:
        """The chunks of the allowed documents; None when nothing narrows the search."""
        allowed, key = self.allowed(index), ("chunks", index.name)
        if allowed is not None and key not in self._memo:
            self._memo[key] = reads.chunk_ids_of(index, allowed)
        return None if allowed is None else self._memo[key]
