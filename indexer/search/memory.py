"""Memory search (spec 002): locate documents by frontmatter fields, by a few keywords, or by cross-reference.

It finds, it never loads: answers carry paths, ids, titles and short excerpts, about 2,000 tokens at most.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..errors import DocumentNotFound, InvalidQuery
from ..contract.limits import check_texts
from ..text.inline import wikilink_target
from . import chunk_reads, note_reads
from ..contract.rows import MemoryHit
from ..contract.sibling_requests import MemoryRequest
from .grammar import parse_terms
from .index import ProjectIndex
from .links import LinkResolver, file_stem

TOP = 10
ANSWER_TOKENS = 2000
EXCERPT_TOKENS = 50
MAX_KEYWORDS = 3
# Ties among documents that match every field: an exact tag beats a parent tag, then domain, then level.
RANKED_FIELDS = ("domain", "level")
RELEVANCE_ORDER = {"related_to_inbound": 0, "related_to_outbound": 1, "direct_mention": 2}


@dataclass
class Doc:
    """What memory search needs of one document: identity, metadata and age."""

    document_id: str
    rel_path: str
    title: str
    frontmatter: dict
    modified: float
    tags: set[str] = field(default_factory=set)
    related_to: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        value = self.frontmatter.get("id")
        return str(value) if value not in (None, "") else self.document_id

    def result(self, relevance: str, **extra) -> dict:
        return MemoryHit(path=self.rel_path, id=self.id, title=self.title, relevance=relevance, **extra)


def memory_search(index: ProjectIndex, request: MemoryRequest) -> dict:
    """Run one memory search: mode 'frontmatter' (A), 'content' (B) or 'xref' (C); read-only, compact."""
    name, query = request.mode, request.query
    check_texts("The query", query)
    if name == "frontmatter":
        return _answer(index, name, query, _frontmatter_results(index, frontmatter_query(query)))
    if not isinstance(query, str):
        raise InvalidQuery(f"The {name} search takes a text query, not {type(query).__name__}.")
    if name == "content":
        return _answer(index, name, query, _content_results(index, content_terms(query)))
    return _answer(index, name, query, _xref_results(index, query))


def _answer(index: ProjectIndex, mode: str, query, results: list[dict]) -> dict:
    """Wrap ranked results (the modes rank one past their TOP, to say whether it cut the list), dropping the
    weakest until the whole answer fits ANSWER_TOKENS. total: the matches counted; more: rows left out, by TOP or
    by the tokens (omitted: how many of the TOP the tokens left out)."""
    counter = index.counter
    counted_rows = len(results)
    exact = mode == "xref" or counted_rows <= TOP  # xref counts every reference; the others stop one past TOP
    results = results if mode == "xref" else results[:TOP]
    kept = list(results)
    while True:
        answer = {"mode": mode, "query": query, "project": index.name, "results": kept, "total": counted_rows,
                  "total_is_exact": exact, "more": len(kept) < counted_rows, "omitted": len(results) - len(kept),
                  "tokens": 0}
        for _ in range(2):  # the second count includes the digits of the first
            answer["tokens"] = counter.count(json.dumps(answer, ensure_ascii=False))
        if answer["tokens"] <= ANSWER_TOKENS or not kept:
            return answer
        kept = kept[:-1]


# --- documents and references -----------------------------------------------------------------------------------

def _docs(index: ProjectIndex, ids: set[str] | None = None) -> dict[str, Doc]:
    """Load documents (all, or these ids) with their tags and related_to targets."""
    rows, tags, related = note_reads.memory_documents(index, ids)
    docs: dict[str, Doc] = {}
    for r in rows:
        docs[r[0]] = Doc(r[0], r["rel_path"], r["title"], json.loads(r["frontmatter"] or "{}"), r["modified"] or 0.0)
    for r in tags:
        docs[r[0]].tags.add(r[1])
    for r in related:
        docs[r[0]].related_to.append(r[1])
    return docs


def _ref(text: str) -> str:
    """Normalise a reference: no [[brackets]], |alias or #heading, lowercase."""
    text = str(text).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = wikilink_target(text[2:-2])
    return text.strip().lower()


class Catalogue:
    """Resolves a reference (frontmatter id, relative path, file name or title) to one document, by the link rules
    of search/links.py."""

    def __init__(self, docs: dict[str, Doc]):
        self.docs = docs
        ordered = list(docs.values())
        self._ids = [d.document_id for d in ordered]
        self._resolver = LinkResolver([d.rel_path for d in ordered], [d.title for d in ordered],
                                      [d.id if "id" in d.frontmatter else None for d in ordered])

    def resolve(self, reference: str) -> Doc | None:
        """The document a reference names; a document id (what a result's `id` is without a frontmatter id) too."""
        row = self._resolver.resolve(reference)
        if row is not None:
            return self.docs[self._ids[row]]
        return self.docs.get(reference.strip().lower())


# --- mode A: frontmatter ----------------------------------------------------------------------------------------

def frontmatter_query(query) -> dict[str, list]:
    """Check a frontmatter query ({field: value or [values]}) and return each field with its list of values."""
    example = 'e.g. {"tags": ["database"], "status": "active"}'
    if isinstance(query, str):
        try:
            query = json.loads(query)
        except ValueError:
            raise InvalidQuery(f"Frontmatter search takes field-value pairs as a JSON object, {example}.") from None
    if not isinstance(query, dict) or not query:
        raise InvalidQuery(f"Frontmatter search needs at least one field-value pair, {example}.")
    fields: dict[str, list] = {}
    for key, value in query.items():
        values = value if isinstance(value, list) else [value]
        if not str(key).strip() or not values or any(v is None or isinstance(v, (dict, list)) or str(v).strip() == ""
                                                      for v in values):
            raise InvalidQuery(f"Give '{key}' a text, number or true/false value (or a list of them), {example}.")
        fields[str(key).strip()] = values
    return fields


def _scalar(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().lower() if not isinstance(value, bool) else str(value).lower()


def _field_value(frontmatter: dict, name: str):
    if name in frontmatter:
        return frontmatter[name]
    return next((v for k, v in frontmatter.items() if k.lower() == name.lower()), None)


def _match_field(doc: Doc, name: str, wanted: list, catalogue: Catalogue) -> tuple[object, int] | None:
    """Return (the document's matching values, how many matched exactly) when every wanted value matches."""
    if name.lower() in ("tags", "tag"):
        matched, exact = [], 0
        for tag in (_scalar(w).lstrip("#").rstrip("/") for w in wanted):
            hits = sorted(t for t in doc.tags if t == tag or t.startswith(tag + "/"))
            if not hits:
                return None
            exact += tag in hits
            matched += [t for t in hits if t not in matched]
        return matched, exact
    if name.lower() == "related_to":
        matched = []
        for ref in wanted:
            target = catalogue.resolve(ref)
            hits = [t for t in doc.related_to if _ref(t) == _ref(ref)
                    or (target is not None and catalogue.resolve(t) is target)]
            if not hits:
                return None
            matched += [t for t in hits if t not in matched]
        return matched, len(wanted)
    value = _field_value(doc.frontmatter, name)
    have = [_scalar(v) for v in (value if isinstance(value, list) else [value])
            if v is not None and not isinstance(v, (dict, list))]
    if not all(_scalar(w) in have for w in wanted):
        return None
    return value, int(len(have) == len(wanted))  # the whole value, not one item of a longer list


def _frontmatter_results(index: ProjectIndex, fields: dict[str, list]) -> list[dict]:
    docs = _docs(index)
    catalogue = Catalogue(docs)
    hits = []
    for doc in docs.values():
        matched, exact = {}, {}
        for name, wanted in fields.items():
            found = _match_field(doc, name, wanted, catalogue)
            if found is None:
                break
            matched[name], exact[name.lower()] = found
        else:
            hits.append((doc, matched, exact))

    def rank(hit):
        doc, _, exact = hit
        others = sum(v for k, v in exact.items() if k not in ("tags", "tag", *RANKED_FIELDS))
        return (-exact.get("tags", exact.get("tag", 0)), *(-exact.get(k, 0) for k in RANKED_FIELDS), -others,
                -doc.modified, doc.rel_path)

    hits.sort(key=rank)
    return [doc.result("frontmatter_match", matched=matched) for doc, matched, _ in hits[:TOP + 1]]


# --- excerpts ---------------------------------------------------------------------------------------------------

def _lines(index: ProjectIndex, doc_ids: set[str]) -> dict[str, list[tuple[int, str]]]:
    """Each document's indexed non-blank lines as (line number, text), in file order."""
    by_doc: dict[str, dict[int, str]] = {d: {} for d in doc_ids}
    for r in chunk_reads.lines_of_documents(index, doc_ids):
        lines = by_doc[r["document_id"]]
        for offset, text in enumerate(r["content"].split("\n")):
            number = r["start_line"] + offset
            # Overlapping chunks of a long paragraph each hold part of a line: keep the fullest.
            if text.strip() and len(text) > len(lines.get(number, "")):
                lines[number] = text
    return {d: sorted(lines.items()) for d, lines in by_doc.items()}


def excerpt(counter, lines: list[tuple[int, str]], at: int, needle: str) -> str:
    """The line at position `at` with the line before and after it, cut to about EXCERPT_TOKENS around needle."""
    window = [text.strip() for _, text in lines[max(0, at - 1):at + 2]]
    text = "\n".join(window)
    if counter.count(text) - 2 <= EXCERPT_TOKENS:
        return text
    pieces = counter.pieces(text)
    line_start = sum(len(t) + 1 for t in window[:1 if at else 0])
    hit = text.lower().find(needle.lower(), line_start)
    centre = next((i for i, p in enumerate(pieces) if p[1] > max(hit, line_start)), 0)
    first = max(0, min(centre - EXCERPT_TOKENS // 3, len(pieces) - EXCERPT_TOKENS))
    last = min(len(pieces), first + EXCERPT_TOKENS) - 1
    return ("…" if first else "") + text[pieces[first][0]:pieces[last][1]] + ("…" if last < len(pieces) - 1 else "")


# --- mode B: content --------------------------------------------------------------------------------------------

def content_terms(query: str) -> list[str]:
    """Check a content query: 1 to 3 keywords, a "quoted phrase" counting as one."""
    terms = parse_terms(query)
    words = re.findall(r'"[^"]*"|\S+', query or "")
    if not terms or len(words) > MAX_KEYWORDS:
        raise InvalidQuery(f"Content search takes 1 to {MAX_KEYWORDS} keywords; you gave {len(words)}. "
                           'Give 1 to 3 keywords (a "quoted phrase" counts as one).')
    return terms


def _content_results(index: ProjectIndex, terms: list[str]) -> list[dict]:
    rowids: set[int] = set()
    for term in terms:
        rowids |= chunk_reads.chunks_with_term(index, term)
    doc_ids = chunk_reads.documents_of_rowids(index, rowids)
    docs, lines = _docs(index, doc_ids), _lines(index, doc_ids)
    ranked = []
    for doc_id, doc_lines in lines.items():
        counts = [sum(text.lower().count(t) for t in terms) for _, text in doc_lines]
        present = [t for t in terms if any(t in text.lower() for _, text in doc_lines)]
        if not present:  # the match was in a line the chunks cut apart; nothing to show
            continue
        # The line to show: the one holding the most different keywords, the first of those.
        best = max(range(len(doc_lines)), key=lambda i: (sum(t in doc_lines[i][1].lower() for t in terms), -i))
        ranked.append((len(present), sum(counts), docs[doc_id], doc_lines, best))
    ranked.sort(key=lambda r: (-r[0], -r[1], -r[2].modified, r[2].rel_path))
    counter = index.counter
    out = []
    for _, matches, doc, doc_lines, best in ranked[:TOP + 1]:
        needle = next(t for t in terms if t in doc_lines[best][1].lower())
        out.append(doc.result("content_match", matches=matches, line=doc_lines[best][0],
                              excerpt=excerpt(counter, doc_lines, best, needle)))
    return out


# --- mode C: cross-reference ------------------------------------------------------------------------------------

def _mention(name: str) -> re.Pattern:
    # 'DEC-4' must not be found inside 'DEC-42': the name stands alone, as grep -w would see it.
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])", re.IGNORECASE)


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if value is not None else []


def _xref_results(index: ProjectIndex, query: str) -> list[dict]:
    if not query.strip():
        raise InvalidQuery("Cross-reference search needs a document: give its id (such as DEC-42), title or path.")
    docs = _docs(index)
    catalogue = Catalogue(docs)
    target = catalogue.resolve(query)
    if target is None:
        raise DocumentNotFound(f"No document in project '{index.name}' has the id, title or path '{query.strip()}'; "
                               "give a frontmatter id such as DEC-42, a result's id, a title, or a relative path.")
    found: dict[str, tuple[str, dict]] = {}  # document id -> (relevance, extra fields)

    def add(doc_id: str, relevance: str, **extra) -> None:
        if doc_id == target.document_id:
            return
        held = found.get(doc_id)
        if held is None or RELEVANCE_ORDER[relevance] < RELEVANCE_ORDER[held[0]]:
            found[doc_id] = (relevance, extra)

    for doc in docs.values():
        if any(catalogue.resolve(t) is target for t in doc.related_to):
            add(doc.document_id, "related_to_inbound")
    outbound_missing = []
    for ref in target.related_to:
        other = catalogue.resolve(ref)
        if other is None:
            outbound_missing.append(ref)
        else:
            add(other.document_id, "related_to_outbound")
    for doc_id, extra in _mentions(index, docs, target).items():
        add(doc_id, "direct_mention", **extra)
    ranked = sorted(found.items(), key=lambda kv: (RELEVANCE_ORDER[kv[1][0]], -docs[kv[0]].modified,
                                                   docs[kv[0]].rel_path))
    results = [docs[doc_id].result(relevance, **extra) for doc_id, (relevance, extra) in ranked]
    # A related_to that names no indexed document is still worth telling: the agent may look for it.
    missing = [MemoryHit(path=None, id=ref, title=None, relevance="related_to_outbound")
               for ref in outbound_missing]
    return sorted(results + missing, key=lambda r: RELEVANCE_ORDER[r["relevance"]])


def _mentions(index: ProjectIndex, docs: dict[str, Doc], target: Doc) -> dict[str, dict]:
    """Documents whose text or frontmatter names the target by its id, file name or title, with an excerpt."""
    names = sorted({n for n in (target.id if "id" in target.frontmatter else None, file_stem(target.rel_path),
                                target.title) if n and len(n) >= 3}, key=len, reverse=True)
    patterns = [_mention(n) for n in names]
    rowids: set[int] = set()
    for name in names:
        rowids |= chunk_reads.chunks_with_term(index, name.lower())
    candidates = chunk_reads.documents_of_rowids(index, rowids) - {target.document_id}
    counter = index.counter
    out: dict[str, dict] = {}
    for doc_id, doc_lines in _lines(index, candidates).items():
        for at, (_, text) in enumerate(doc_lines):
            hit = next((m for m in (p.search(text) for p in patterns) if m), None)
            if hit:
                out[doc_id] = {"line": doc_lines[at][0], "excerpt": excerpt(counter, doc_lines, at, hit.group(0))}
                break
    if "id" in target.frontmatter:  # a frontmatter field such as `supersedes: DEC-42` is a mention too
        by_id = _mention(target.id)
        for doc in docs.values():
            if doc.document_id not in out and doc is not target and any(by_id.search(s)
                                                                        for s in _strings(doc.frontmatter)):
                out[doc.document_id] = {}
    return out
