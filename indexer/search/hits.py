"""Chunk hits and note hits (answers.py types them) built from the index's rows, and the snippet with the offsets
of its matches.

A **chunk hit** (answers.ChunkHit) is one matching chunk with its document, spec 000's result; a **note hit**
(answers.NoteHit), the `group=document` row, is the chunk hit of a note's best chunk plus passages (how many of its
chunks matched) and more_passages (the others, best first, without their whole text). vault_search (spec 001) and
memory search (spec 002) build their own rows (answers.NoteRow, answers.MemoryHit).
"""
from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Iterable

from ..text.boilerplate import only_shared, paragraph_keys, without_shared
from . import chunk_reads as reads
from ..text.readable import display_text, display_title, has_words
from ..contract.answers import counted
from ..contract.rows import ChunkHit, Passage
from ..text.segment import CJK_RUN
from .grammar import STOPWORDS, held_words, highlight_words, whole_words
from .index import ProjectIndex

SNIPPET_CHARS = 220


def chunk_hits(index: ProjectIndex, ranked: list[tuple[str, float, str]], terms: list[str],
               cosines: dict[str, float] | None = None, partial: Iterable[str] = (),
               documents: int | None = None, across: Iterable[str] = ()) -> list[dict]:
    """Turn (chunk_id, score, search_type) triples into chunk hits, keeping their order; the chunks of `partial`
    hold only some of the words, those of `across` are in another language than the question (found by meaning
    across languages: `across` true, when they hold none of its words). With `documents`, only the chunks of the
    first that many documents become hits (a grouped answer keeps no more, and a hit's readable snippet is most of
    its cost)."""
    partial, across = set(partial), set(across)
    if not ranked:
        return []
    sentences = [t for t in terms if len(t) > 2 and CJK_RUN.fullmatch(t)]  # a Chinese or Japanese sentence asked
    words = highlight_words(terms)  # ...is shown and counted by its character pairs
    rows = reads.hit_rows(index, [cid for cid, _, _ in ranked])
    shared = shared_in(index, [r["content"] for r in rows.values()])
    hits, kept = [], set()
    for cid, score, search_type in ranked:
        r = rows.get(cid)
        if r is None:  # deleted between ranking and fetching
            continue
        if documents is not None and r["document_id"] not in kept:
            if len(kept) == documents:
                continue
            kept.add(r["document_id"])
        hit = chunk_hit(index, r, score, search_type, words, (cosines or {}).get(cid), shared)
        if cid in across and not held(words, r):
            hit["across"] = True  # its language is not the question's: no word to match, only meaning
        elif search_type in ("keyword", "hybrid"):
            some = cid in partial or any(t not in f"{r['content']} {r['title']}".lower() for t in sentences)
            hit["matched_words"] = held(words, r) if some else list(terms)
            hit["partial"] = some
        hits.append(hit)
    return hits


def held(terms: list[str], r: dict) -> list[str]:
    """The terms a chunk row holds as whole words in its text, its note's title or its path."""
    return held_words(terms, r.get("content"), r.get("title"), r.get("rel_path"))


def shared_in(index: ProjectIndex, texts: Iterable[str]) -> set[str]:
    """The keys of the paragraphs of these texts that many notes share (text/boilerplate.py)."""
    shared = reads.shared_paragraphs(index)
    if not shared:
        return set()
    return {key for text in texts for key, _ in paragraph_keys(text or "") if key in shared}


# What a note whose passage holds nothing of its own (only its headings and a footer many notes share) shows.
ONLY_SHARED = "nothing of its own here, only text that many notes share (a footer, a banner)"


def chunk_hit(index: ProjectIndex, r: dict, score: float, search_type: str, terms: list[str],
              cosine: float | None = None, shared: set[str] = frozenset()) -> dict:
    """One chunk hit from a joined chunk-and-document row; heading, lines and snippet are the matching part's,
    never a paragraph many notes share (a footer) while the passage holds anything else."""
    sections = chunk_sections(r)
    part, text = matching_section(r["content"], sections, terms, shared)
    title = display_title(r["title"])
    shown = ({"snippet": f"{title}: {ONLY_SHARED}", "highlights": []} if only_shared(r["content"], shared)
             else snippet(display_text(text), terms))
    return ChunkHit(
        chunk_id=r["chunk_id"], document_id=r["document_id"], project=index.name, title=title,
        path=r["rel_path"], absolute_path=str(index.root / r["rel_path"]), file_type=r["file_type"],
        score=round(float(score), 4), cosine=None if cosine is None else round(float(cosine), 4),
        search_type=search_type, tags=sorted(r["tags"].split("\x1f")) if r.get("tags") else [],
        created=r["created"], modified=iso(r["modified"]),
        heading_path=[display_title(h) for h in part["heading_path"]],  # as the reader reads it
        lines=part["lines"], chunk_lines=[r["start_line"], r["end_line"]], content=r["content"],
        **shown, matched_words=[], partial=False,
    )


def chunk_sections(r) -> list[dict]:
    """The sections a chunk row spans (heading_path, lines, offset); one for chunks cut before packing."""
    raw = r["sections"] if "sections" in r.keys() else None
    if raw:
        return json.loads(raw)
    heading = json.loads(r["heading_path"]) if r["heading_path"] else []
    return [{"heading_path": heading, "lines": [r["start_line"], r["end_line"]], "offset": 0}]


_HEADING_LINE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?#{1,6}(?:[ \t]|$)")


def section_texts(content: str, sections: list[dict]) -> list[tuple[dict, str]]:
    """Each section of a chunk with its own text, cut from the chunk's content at the sections' offsets."""
    return [(s, content[s["offset"]:(sections[i + 1]["offset"] if i + 1 < len(sections) else len(content))])
            for i, s in enumerate(sections)]


def matching_section(content: str, sections: list[dict], terms: Iterable[str], shared: set[str] = frozenset()
                     ) -> tuple[dict, str]:
    """The part of a chunk a result should point at, with its text: the one whose words, as a person reads them,
    hold most query terms, read without the paragraphs many notes share (`shared`: a footer's words match every
    question about its topic, and a badge's address holds the note's own name). A part that is nothing but such text,
    or nothing a reader sees (a row of badges), is pointed at only when no other part says anything.

    Without any matching term (a match by meaning alone), the first part with more than a heading line.
    """
    parts = [(section, without_shared(text, shared)) for section, text in section_texts(content, sections)]
    if len(parts) == 1:
        return parts[0]
    shown = [display_text(text).lower() for _, text in parts]
    own = [i for i, (_, text) in enumerate(parts)
           if has_words(shown[i]) and not (shared and only_shared(text, shared))]
    if not own:
        return parts[0]
    words = [w for w in (t.lower() for t in terms if t) if w not in STOPWORDS]
    if words:
        scored = {i: (sum(w in shown[i] for w in words), sum(shown[i].count(w) for w in words), -i) for i in own}
        best = max(own, key=lambda i: scored[i])
        if scored[best][0]:
            return parts[best]
    for i in own:
        lines = [line for line in parts[i][1].strip().split("\n") if line.strip()]
        if len(lines) > 1 or (lines and not _HEADING_LINE.match(lines[0])):
            return parts[i]
    return parts[own[0]]


def iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch).isoformat(timespec="seconds") if epoch else None


def snippet(text: str, terms: Iterable[str], width: int = SNIPPET_CHARS, whole: bool = True) -> dict:
    """An excerpt around the first match: {"snippet": plain text, "highlights": [[start, end], ...]}. Give it the
    text a person reads (readable.display_text), not markdown.

    The highlights are character offsets into the snippet (end exclusive) of every match of a term, as a whole word
    (grammar.whole_words: never "his" inside "This"), or exactly where the index marked it (`whole` false); each
    surface marks them its own way (the HTML window escapes then wraps them in <mark>, the CLI bolds them).
    """
    terms = sorted({t for t in terms if t}, key=len, reverse=True)
    flat = " ".join(text.split())
    if whole:
        pattern = whole_words(terms)
    else:
        pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE) if terms else None
    first = pattern.search(flat) if pattern else None
    if whole and sum(map(len, CJK_RUN.findall(flat[:2 * width]))) > width // 2:
        width = max(40, width // 2)  # Chinese or Japanese: a character says about what a word says, and is as wide
    start = max(0, (first.start() if first else 0) - width // 3)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    excerpt = flat[start:start + width]
    prefix = "…" if start else ""
    suffix = "…" if start + width < len(flat) else ""
    spans = [[len(prefix) + m.start(), len(prefix) + m.end()] for m in pattern.finditer(excerpt)] if pattern else []
    return {"snippet": prefix + excerpt + suffix, "highlights": spans}


def readable_marked(text: str, open_mark: str, close_mark: str) -> dict:
    """A snippet from markdown whose matches sit between two marker characters (as FTS5's snippet() leaves them),
    as a person reads it (readable.display_text), each word that was marked marked again where it still shows (a
    match inside a URL or a tag's name is gone with it)."""
    words = re.findall(f"{re.escape(open_mark)}(.*?){re.escape(close_mark)}", text)
    shown = " ".join(display_text(_whole_links(text.replace(open_mark, "").replace(close_mark, ""))).split())
    return snippet(shown, words, len(shown) + 1, whole=False)


# FTS5's snippet() cuts the raw text by words, often inside a link or image: `![badge](https://img.shields.io/…`
# at its end, `io/badge/x.svg)](https://…)` at its start. Neither is markup the readable-text rules can see whole.
# A link or image the window ends inside: `[text`, `![alt](url`, `[![alt](url)](url2`.
_CUT_TAIL = re.compile(r"(?:\[!|!)?\[[^\[\]\n]*(?:\](?:\([^)\n]*(?:\)(?:\](?:\([^)\n]*)?)?)?)?)?(?:…)?$")
_CUT_HEAD_URL = re.compile(r"^(?:…)?[^\s\[\]()]*/[^\s\[\]()]*\)")  # the end of a link's address
_CUT_HEAD_LINK = re.compile(r"^(?:…)?([^\[\]\n]*)\]\([^)\n]*(?:\)|$)")  # the end of a link's text, then its address


def _whole_links(text: str) -> str:
    """A snippet window without the parts of a link or image it cut through (the link text it holds is kept)."""
    text = _CUT_HEAD_URL.sub("…", text, count=1)
    text = _CUT_HEAD_LINK.sub(lambda m: "…" + m.group(1), text, count=1)
    return _CUT_TAIL.sub("…", text, count=1)


PASSAGE_FIELDS = tuple(Passage.names())


def note_hits(results: list[dict], limit: int) -> list[dict]:
    """One result per document, in the order of its best chunk; the rest of its chunks become more_passages.

    Each kept result gains "passages" (how many of its chunks matched) and "more_passages" (the others, best
    first, with their heading, lines, snippet and score but not their whole text).
    """
    groups: dict[tuple[str, str], dict] = {}
    for r in results:
        key = (r["project"], r["document_id"])
        if key in groups:
            groups[key]["more_passages"].append({k: r[k] for k in PASSAGE_FIELDS if k in r})
        elif len(groups) < limit:
            groups[key] = {**r, "more_passages": []}
    for g in groups.values():
        g["passages"] = 1 + len(g["more_passages"])
    return list(groups.values())


def envelope(results: list[dict], mode: str, query: str, semantic_available: bool, limit: int, more: bool = False,
             **extra) -> dict:
    """Wrap results in the response every surface returns: `more` when a row past the limit was ranked, `total`
    the rows counted (those held, and that one), exact unless the limit cut the list."""
    return {"query": query, "mode": mode, "semantic_available": semantic_available, **counted(results, more),
            "limit": limit, "results": results, **extra}

