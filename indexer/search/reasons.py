"""What an answer says of the question's language, and why it holds nothing: never an empty list without a reason.

A search that finds nothing says what was tried (the words, meaning and its floor), what the notes are written in,
the model that reads them, and, for a question in another language, how it was searched: across languages by the
multilingual model, or not yet, because the vectors that compare the two are still being made (how far they are).
"""
from __future__ import annotations

from ..text.language import NAMES
from . import chunk_reads, note_reads
from .across import Asking, asking, notes_languages
from .index import ProjectIndex

FLOORS = {"hybrid": 0.3, "vault": 0.3, "semantic": 0.5, "recency": 0.5}


def language_of(code: str | None) -> str:
    if code == "foreign":
        return "a language other than the notes'"
    return NAMES.get(code or "", code or "an unknown language")


def across_rows(indexes: list[ProjectIndex], query) -> list[dict]:
    """Each project where the question is in another language than the notes: how it was searched there."""
    rows = []
    for index in indexes:
        asked = asking(index, query)
        if asked.wanted or asked.space != "own":
            rows.append({"project": index.name, **asked.to_dict(), "language_name": language_of(asked.language),
                         "notes_name": language_of(asked.notes), "sentence": language_sentence(index, asked)})
    return rows


def language_sentence(index: ProjectIndex, asked: Asking) -> str:
    """'Asked in Russian about notes in English: searched by multilingual-e5-small, which reads both.'"""
    question, notes = language_of(asked.language), language_of(asked.notes)
    own = index.embedder.name
    if asked.space == "mixed" and asked.ready:
        return (f"The notes of {index.name} are in several languages: searched by {asked.model} with each language's "
                "mean taken out, so that a note in any of them can answer.")
    if asked.space == "own" and asked.wanted:  # another language, but the space that compares it is not here
        return f"Asked in {question} about notes in {notes}, read by {own}."
    if not asked.ready:
        return (f"Asked in {question} about notes in {notes}: {own}, which reads these notes, does not read it, and "
                f"the vectors that let such a question find them ({asked.model}) are being made, {asked.made:,} of "
                f"{asked.total:,} passages so far; meanwhile it is searched by the notes' own model and its words.")
    return f"Asked in {question} about notes in {notes}: searched by {asked.model}, which reads both."


def empty_reason(indexes: list[ProjectIndex], query, request, available: bool, semantic_reason: str | None) -> str:
    """Why a search answered nothing, in sentences: what was tried, and what the notes and the question are
    written in."""
    mode = request.mode
    where = f"'{indexes[0].name}'" if len(indexes) == 1 else f"any of the {len(indexes)} projects"
    text = query.text.strip()
    if mode == "keyword":
        tried = "no passage, title or path holds every word as typed (keyword search matches words, not meaning)"
    elif not available:
        tried = "no passage holds its words, and meaning search could not run"
    elif mode in ("hybrid", "vault"):
        tried = (f"no passage holds its words and none is close enough in meaning ({FLOORS[mode]:.0%} or more "
                 "similar)")
    else:
        tried = f"no passage is close enough in meaning ({FLOORS.get(mode, 0.5):.0%} or more similar)"
    sentences = [f"Nothing in {where} matches “{text}”: {tried}."]
    if not available and semantic_reason:
        sentences.append(semantic_reason[0].upper() + semantic_reason[1:].rstrip(".") + ".")
    for index in indexes[:3]:
        asked = asking(index, query)
        found = notes_languages(index)
        if asked.wanted or asked.space != "own":
            sentences.append(language_sentence(index, asked))
        elif found is not None and len(indexes) == 1:
            sentences.append(f"Its notes are in {found.describe()}, read by {index.embedder.name}.")
    if mode == "keyword":
        sentences.append("Switch on Smart to search by meaning, in any language.")
    elif available:
        sentences.append("Try other words; the weaker matches, if any, are the closest by meaning.")
    return " ".join(sentences)


def excluded_notice(index: ProjectIndex, query) -> str | None:
    """A sentence when Obsidian's `-word` leaves out most of a project's notes (`sync -git` in a vault whose every note
    names git): the search found only what was left."""
    words = query.filters.get("exclude") or []
    if not words:
        return None
    total = len(note_reads.paths(index))
    left_out = set().union(*(chunk_reads.documents_holding(index, word) for word in words))
    if not total or len(left_out) * 2 <= total:
        return None
    said = " ".join(f"-{word}" for word in words)
    return (f"{said} left out {len(left_out):,} of {total:,} notes in {index.name} (those whose own text or title "
            f"holds {'the word' if len(words) == 1 else 'one of the words'}); search without it to see them.")
