"""What in the notes relates to a text: a web page in the browser, a note in the panel, the text an agent holds.

A long text is read the way the index reads a note: cut into passages of about PASSAGE_WORDS words at paragraph
breaks, the title leading the first. Two legs find notes, as vault_search's do:

- **meaning**: up to MEANING_PASSAGES of the passages (the first, then evenly through the text) are embedded with the
  query encoder, and each is compared exactly with every passage of the notes; a note counts by its best match,
  and by how many of the text's passages it matched (a note about the whole page, not about one aside);
- **rarest words**: the RARE_WORDS words of the text that are most frequent in it and rarest in the notes (tf x idf
  over the notes' own BM25 index) as one BM25 OR query.

A note's score is its better leg (each over the leg's best) plus 0.3 x the other, as vault_search fuses. Notes that
name the page's URL (a link to it, `source:` or `url:` in their frontmatter) come first, marked saved. Each answer
says why: which passage of the text matched which passage of the note, and which rare words it shares.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass

from ..errors import EmbeddingsUnavailable
from . import chunk_reads, note_reads
from ..contract.rows import RelatedNote
from ..text.readable import cut_at_word
from ..text.segment import CJK_RUN
from .grammar import COMMON_WORDS, STOPWORDS, held_words, highlight_words
from .hits import chunk_hits
from .hybrid import boilerplate_chunks
from .documents import project_links
from .index import ProjectIndex
from .semantic import HYBRID_THRESHOLD
from .vault import bm25_leg

PASSAGE_WORDS = 120  # about 160 word pieces: a passage the query encoder embeds in ~60 ms on one thread
# The most of a text read, in units of work: a word between spaces, or one character of Chinese, Japanese or Korean
# (each about a word piece). A 1,000,000-character page of English is ~170,000 words, read whole; of Chinese it
# would be a million units, 5x the work: it is read to here, and the answer says `truncated`.
MAX_UNITS = 200_000
_CJK = CJK_RUN.pattern[1:-2]  # the characters of segment.py's CJK_RUN, one definition
UNIT = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
MEANING_PASSAGES = 3  # the most passages of a text embedded for the meaning leg (a 5,000-word page: ~200 ms)
RARE_WORDS = 16
CANDIDATE_WORDS = 60  # the most frequent words of the text whose rarity in the notes is read
OTHER_LEG = 0.3  # a note's other leg counts this much beside its better one (vault_search's fusion)
COVER_BONUS = 0.04  # per further passage of the text a note matches closely, up to COVER_MAX
COVER_MAX = 4
CLOSE = 0.45  # a text passage "matches" a note at this similarity or above
MEANING_FLOOR = 0.55  # a meaning leg whose best is weaker does not count in full
SCAN_CHUNKS = 200  # chunks read per passage's meaning scan
NAME_WORD = re.compile(r"\w+")
MAX_NAME_WORDS = 5
COMMON_FROM = 20  # a one-word name held by this many passages or fewer is never too common to be a name
NAMES_WEIGHT = 0.7  # a mention of a note's name: less than the closest match in meaning (naming X is not being X)
NEIGHBOURS = 8  # the notes most like the text whose links vote
MIN_SCORE = 0.4  # a note whose best leg is weaker than this (its best over the leg's best) is not listed
NEIGHBOURS_WEIGHT = 0.9  # the most a note gets from the votes alone: less than a close match in meaning
WORD = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]{3,}")
URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# What a reader never reads in markdown: an address, a link's target, an HTML tag, a wikilink's target before its alias.
UNREAD = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\]\([^)\n]*\)|</?[a-z][^<>\n]*>|\[\[[^\]|\n]*\|", re.IGNORECASE)
TELLING_SHARE = 0.05  # a rare word more passages hold than this ranks notes but is not named as shared ...
TELLING_FROM = 200  # ... in a project of this many passages or more
WORDS_ALONE = 2  # a note related by its words alone shares at least this many rare words with the text
SOURCE_KEYS = ("source", "url", "link", "source_url")  # frontmatter keys that name the page a note was saved from


@dataclass(frozen=True)
class TextPassage:
    """One passage of the text asked about: its place among them and its words."""

    number: int  # 1-based
    text: str


def bounded(text: str, most: int = MAX_UNITS) -> tuple[str, bool]:
    """The text cut after `most` units of work (words, or CJK characters), and whether it was cut."""
    if len(text) <= most:
        return text, False
    for count, unit in enumerate(UNIT.finditer(text), start=1):
        if count == most:
            return text[:unit.end()], unit.end() < len(text.rstrip())
    return text, False


def _units(paragraph: str) -> list[str]:
    """A paragraph's words; a word holding Chinese, Japanese or Korean is its characters (and the rest), each a
    unit, joined again without spaces (a space stands only where the text had one)."""
    out: list[str] = []
    for word in paragraph.split():
        if CJK_RUN.search(word):
            pieces = UNIT.findall(word)
            out += [pieces[0]] + [GLUE + p for p in pieces[1:]]
        else:
            out.append(word)
    return out


GLUE = "\x00"  # marks a unit that continues the word before it (no space between them)


def _joined(units: list[str]) -> str:
    return " ".join(units).replace(" " + GLUE, "").replace(GLUE, "")


def passages_of(title: str, text: str, words: int | None = None) -> list[TextPassage]:
    """The text cut into passages of about `words` words at paragraph breaks (a longer paragraph is cut by words;
    a CJK character counts as a word), the title leading the first."""
    words = words or PASSAGE_WORDS
    out: list[str] = []
    current: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        tokens = _units(paragraph)
        while tokens:
            room = words - len(current)
            if len(tokens) <= room or not current and len(tokens) <= words * 3 // 2:
                current += tokens
                tokens = []
            elif current:
                out.append(_joined(current))
                current = []
            else:
                current, tokens = tokens[:words], tokens[words:]
                out.append(_joined(current))
                current = []
        if len(current) >= words * 2 // 3:
            out.append(_joined(current))
            current = []
    if current:
        out.append(_joined(current))
    if title.strip():
        out = [f"{title.strip()}\n\n{out[0]}" if out else title.strip()] + out[1:]
    return [TextPassage(i, p) for i, p in enumerate(out, start=1)]


def chosen(passages: list[TextPassage], most: int | None = None) -> list[TextPassage]:
    """The passages the meaning leg embeds: all of a short text; of a long one the first and then evenly through
    the rest."""
    most = most or MEANING_PASSAGES
    if len(passages) <= most:
        return passages
    step = (len(passages) - 1) / (most - 1)
    return [passages[round(i * step)] for i in range(most)]


def rare_words(index: ProjectIndex, text: str, most: int | None = None) -> list[str]:
    """The words of the text that say most about it in these notes: frequent in the text as a reader reads it, rare
    in the notes (and present in them: a word no note holds finds nothing); never a word common in any text."""
    # The words a reader reads: an address, a link's target or an HTML tag's name ("button") says nothing. (One
    # pattern, not display_text: a 50,000-word page took 228 ms instead of 150 ms through it.)
    # A Chinese or Japanese run counts by its character pairs, as the notes' BM25 index holds it (text/segment.py).
    counts = Counter(t for w in WORD.findall(UNREAD.sub(" ", text))
                     for t in (highlight_words([w]) if CJK_RUN.search(w) else [w.lower()]))
    candidates = [w for w, _ in counts.most_common(CANDIDATE_WORDS * 3)
                  if w not in COMMON_WORDS and (len(w) > 2 or CJK_RUN.fullmatch(w)) and not w.isdigit()
                  ][:CANDIDATE_WORDS]
    if not candidates:
        return []
    total = max(chunk_reads.chunk_count(index), 1)
    held = chunk_reads.bm25_frequencies(index, [chunk_reads.phrase(w) for w in candidates])
    scored = []
    for word in candidates:
        df = held.get(chunk_reads.phrase(word), 0)
        if df:
            scored.append(((1 + math.log(counts[word])) * math.log(1 + total / df), word))
    return [w for _, w in sorted(scored, key=lambda s: (-s[0], s[1]))[:most or RARE_WORDS]]


def named_notes(index: ProjectIndex, text: str) -> dict[str, int]:
    """The notes whose title the text mentions as words (an unlinked mention: "the Kanban plugin" names the note
    Kanban), with how many times; a title that is one common word, a number or a date is no name."""
    names = note_names(index)
    firsts = index.kept("related: first words of names", lambda: frozenset(n.split(" ", 1)[0] for n in names))
    words = [w.lower() for w in NAME_WORD.findall(text)]
    grams: Counter = Counter()
    for i, word in enumerate(words):
        if word in firsts:  # only where a name could start
            grams.update(g for g in (" ".join(words[i:i + n]) for n in range(1, MAX_NAME_WORDS + 1)) if g in names)
    found: dict[str, int] = {}
    for name, times in grams.items():
        for doc in names[name]:
            found[doc] = max(found.get(doc, 0), times)
    return found


def note_names(index: ProjectIndex) -> dict[str, list[str]]:
    """Each name a note goes by (its title, its file name; lowercase words), with the notes of that name, leaving out
    names too common to name one note; built once per change of the index."""
    def build():
        common = _common_words(index)
        names: dict[str, list[str]] = {}
        for doc, rel_path, title in note_reads.catalogue(index):
            for name in {_name(title), _name(rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0])}:
                if name and name not in common and name not in STOPWORDS:
                    names.setdefault(name, []).append(doc)
        return names
    return index.kept("related: note names", build)


def _name(title: str) -> str:
    words = [w.lower() for w in NAME_WORD.findall(title or "")]
    if not words or len(words) > MAX_NAME_WORDS or all(w.isdigit() for w in words):
        return ""
    return " ".join(words) if len(words) > 1 or len(words[0]) > 2 else ""


def _common_words(index: ProjectIndex) -> frozenset[str]:
    """One-word names too common in these notes to name one of them (held by more than 1 passage in 20, and by more
    than COMMON_FROM passages: in a small vault a title that is a file name, "Sourdough", is said in a few passages
    and names its note there), and the words common in any text ("Index", "Notes" are no one note's name)."""
    def build():
        titles = {_name(t) for _, _, t in note_reads.catalogue(index)}
        single = [t for t in titles if t and " " not in t]
        total = max(chunk_reads.chunk_count(index), 1)
        counts = chunk_reads.bm25_frequencies(index, [chunk_reads.phrase(t) for t in single])
        return frozenset(t for t in single if t in COMMON_WORDS or
                         counts.get(chunk_reads.phrase(t), 0) > max(total / 20, COMMON_FROM))
    return index.kept("related: common one-word titles", build)


def saved_notes(index: ProjectIndex, url: str | None) -> set[str]:
    """The notes that name the page's address: a link to it, or `source:` / `url:` in their frontmatter (the text
    of a note holds both), matched without its scheme and a trailing slash."""
    if not url or not URL.match(url.strip()):
        return set()
    bare = URL.sub("", url.strip()).rstrip("/")
    if len(bare) < 4:
        return set()
    # The substring matched; keep the notes where it is the whole address (not the start of a longer one).
    whole = re.compile(re.escape(bare) + r"/?(?![\w/.-])", re.IGNORECASE)
    saved = set()
    for doc, frontmatter in note_reads.frontmatter_naming(index, bare):
        values = json.loads(frontmatter or "{}")
        named = [values.get(k) for k in SOURCE_KEYS] if isinstance(values, dict) else []
        if any(isinstance(v, str) and whole.search(v) for v in (x for n in named for x in (n if isinstance(n, list)
                                                                                         else [n]))):
            saved.add(doc)
    linked = chunk_reads.documents_holding(index, bare.lower())
    saved |= {doc for doc, content in chunk_reads.texts_of_documents(index, linked) if whole.search(content)}
    return saved


@dataclass
class Evidence:
    """What the legs found for one note."""

    meaning: float = 0.0  # its best similarity to a passage of the text
    chunk_id: str | None = None  # its passage that matched best (by meaning, else by words)
    passage: int = 0  # the text's passage that matched it best
    close: int = 0  # how many of the text's passages it matched closely
    matches: list | None = None  # [(similarity, text passage number, chunk id)], best first
    named: int = 0  # how many times the text names it (its title or file name)
    words: float = 0.0  # its best passage's BM25 over the rare words
    words_rowid: int | None = None
    votes: float = 0.0  # the scores of the notes most like the text that link to it
    saved: bool = False
    score: float = 0.0


def related(indexes: list[ProjectIndex], title: str, text: str, url: str | None, limit: int,
            exclude: set[str]) -> dict:
    """The notes of these projects related to the text, merged by score (saved pages first), and what was used."""
    text, cut = bounded(text)
    passages = passages_of(title, text)
    by_model: dict[int, tuple[dict, str | None]] = {}  # the passages embedded once per model the projects use
    rows: list[dict] = []
    words_used: dict[str, list[str]] = {}
    for index in indexes:
        if id(index.embedder) not in by_model:
            by_model[id(index.embedder)] = _embedded(index, passages)
        vectors = by_model[id(index.embedder)][0]
        found, words_used[index.name] = related_notes(index, title, text, url, limit, exclude, passages, vectors)
        rows += found
    rows.sort(key=lambda r: (not r["saved"], -r["score"], r["project"], r["path"]))
    embedded = max((len(v) for v, _ in by_model.values()), default=0)
    reason = next((why for _, why in by_model.values() if why), None)
    answer = {"title": title, "url": url, "passages": len(passages), "embedded_passages": embedded,
              "semantic_available": bool(embedded), "rare_words": words_used, "total": len(rows[:limit]),
              "limit": limit, "results": rows[:limit], "truncated": cut}
    if reason:
        answer["semantic_reason"] = reason
    return answer


def _embedded(index: ProjectIndex, passages: list[TextPassage]) -> tuple[dict[int, object], str | None]:
    """The chosen passages' vectors by number (once for every project: they share the model), or why none."""
    if not passages:
        return {}, None
    if not index.semantic_available:
        return {}, f"{index.embedder.now.why_not}; these notes were found by the text's words and names"
    picked = chosen(passages)
    try:
        return dict(zip([p.number for p in picked], index.embedder.embed_queries([p.text for p in picked]))), None
    except EmbeddingsUnavailable as exc:
        return {}, str(exc)


def related_notes(index: ProjectIndex, title: str, text: str, url: str | None, limit: int, exclude: set[str],
                  passages: list[TextPassage], vectors: dict) -> tuple[list[dict], list[str]]:
    """One project's notes related to the text, best first (at most limit), and the rare words it searched."""
    found: dict[str, Evidence] = {}
    if vectors and len(index.cache):
        _meaning(index, vectors, found, exclude)
    words = rare_words(index, f"{title}\n{text}")
    if words:
        match = " OR ".join(chunk_reads.phrase(w) for w in words)
        for doc, rowid, score in bm25_leg(index, match, None):
            if doc not in exclude:
                e = found.setdefault(doc, Evidence())
                e.words, e.words_rowid = score, rowid
    for doc, times in named_notes(index, f"{title}\n{text}").items():
        if doc not in exclude:
            found.setdefault(doc, Evidence()).named = times
    for doc in saved_notes(index, url) - exclude:
        found.setdefault(doc, Evidence()).saved = True
    _neighbours(index, found, exclude)
    ranked = [d for d in _fused(found) if found[d].saved or found[d].score >= MIN_SCORE][:limit]
    shown = telling(index, words)
    return _rows(index, ranked, found, passages, shown, by_meaning=bool(vectors) and len(index.cache) > 0), shown


def telling(index: ProjectIndex, words: list[str]) -> list[str]:
    """The rare words worth naming to a person: not those more than TELLING_SHARE of the passages hold (a template's
    "github", "compatible"). They still rank the notes: leaving them out of the search cost logseq-docs' link
    recovery 0.326 -> 0.262 / 0.246 -> 0.192."""
    total = chunk_reads.chunk_count(index)
    if not words or total < TELLING_FROM:
        return words
    held = chunk_reads.bm25_frequencies(index, [chunk_reads.phrase(w) for w in words])
    return [w for w in words if held.get(chunk_reads.phrase(w), 0) <= TELLING_SHARE * total]


def _meaning(index: ProjectIndex, vectors: dict, found: dict[str, Evidence], exclude: set[str]) -> None:
    for number, vector in vectors.items():
        hits = index.cache.search(vector, HYBRID_THRESHOLD, SCAN_CHUNKS)
        boiler = boilerplate_chunks(index, [c for c, _ in hits])  # a footer speaks for no note: not its best match
        hits = [(c, similarity) for c, similarity in hits if c not in boiler]
        owners = chunk_reads.documents_of(index, [c for c, _ in hits])
        seen: set[str] = set()
        for chunk_id, similarity in hits:  # best first: a note's first hit is its best for this passage
            doc = owners.get(chunk_id)
            if doc is None or doc in exclude or doc in seen:
                continue
            seen.add(doc)
            e = found.setdefault(doc, Evidence())
            e.matches = (e.matches or []) + [(similarity, number, chunk_id)]
            e.close += similarity >= CLOSE
            if similarity > e.meaning:
                e.meaning, e.chunk_id, e.passage = similarity, chunk_id, number


def _neighbours(index: ProjectIndex, found: dict[str, Evidence], exclude: set[str]) -> None:
    """The notes that the notes most like the text link to: each gets the votes of the NEIGHBOURS best (by the
    other legs), weighted by their scores (a page about one feature relates to what every feature page links to)."""
    ranked = _fused(found)[:NEIGHBOURS]
    if not ranked:
        return
    docs, row_of, resolver = project_links(index)
    for doc in ranked:
        me = docs[row_of[doc]]["rel_path"] if doc in row_of else ""
        for target in {t for t, _ in note_reads.links_from(index, doc)}:
            row = resolver.resolve(target, me)
            linked = docs[row]["document_id"] if row is not None else None
            if linked and linked != doc and linked not in exclude:
                found.setdefault(linked, Evidence()).votes += found[doc].score


def _fused(found: dict[str, Evidence]) -> list[str]:
    """The notes by fused score: saved first, then the better leg (over its best) + OTHER_LEG x the other."""
    top_meaning = max(max((e.meaning for e in found.values()), default=0.0), MEANING_FLOOR)
    top_words = max((e.words for e in found.values()), default=0.0) or 1.0
    top_named = max((e.named for e in found.values()), default=0) or 1
    top_votes = max((e.votes for e in found.values()), default=0.0) or 1.0
    for e in found.values():
        meaning = e.meaning / top_meaning + COVER_BONUS * min(max(e.close - 1, 0), COVER_MAX) if e.meaning else 0.0
        legs = sorted((meaning, e.words / top_words, NAMES_WEIGHT * (0.5 + 0.5 * e.named / top_named)
                       if e.named else 0.0, NEIGHBOURS_WEIGHT * e.votes / top_votes), reverse=True)
        e.score = legs[0] + OTHER_LEG * sum(legs[1:]) / (len(legs) - 1)
    return sorted(found, key=lambda d: (not found[d].saved, -found[d].score, d))


def _rows(index: ProjectIndex, ranked: list[str], found: dict[str, Evidence], passages: list[TextPassage],
          words: list[str], by_meaning: bool) -> list[dict]:
    """The answer's rows: each note by its passage that matched best, with why."""
    by_words = chunk_reads.chunk_ids_at(index, [found[d].words_rowid for d in ranked
                                                if found[d].chunk_id is None and found[d].words_rowid is not None])
    best = {d: found[d].chunk_id or by_words.get(found[d].words_rowid) for d in ranked}
    hits = {h["document_id"]: h for h in chunk_hits(index, [(c, 0.0, "hybrid") for c in best.values() if c], words)}
    texts = {p.number: p.text for p in passages}
    rows = []
    shares = {doc: held_words(words, hits[doc]["content"], hits[doc]["title"]) for doc in ranked if doc in hits}
    if not any(_related_alone(found[doc], shares[doc], by_meaning) for doc in shares):
        return []  # the floor: no note relates to the text on evidence of its own, so none is listed
    for doc in ranked:
        hit, e = hits.get(doc), found[doc]
        if hit is None:
            continue
        shared = shares[doc]
        why = [{"passage": number, "text": _clip(texts.get(number, "")), "similarity": round(similarity, 4)}
               for similarity, number, _ in (e.matches or [])[:3]]
        rows.append(RelatedNote(
            chunk_id=hit["chunk_id"], document_id=doc, project=index.name, title=hit["title"], path=hit["path"],
            absolute_path=hit["absolute_path"], score=round(e.score + (1.0 if e.saved else 0.0), 4),
            similarity=round(e.meaning, 4) if e.meaning else None, saved=e.saved,
            reason=_reason(e, shared), heading_path=hit["heading_path"], lines=hit["lines"], snippet=hit["snippet"],
            highlights=hit["highlights"], matched_words=shared, why=why,
        ))
    return rows


def _related_alone(e: Evidence, shared: list[str], by_meaning: bool) -> bool:
    """Whether a note relates to the text on evidence of its own: saved from it, named by it, at least somewhat close
    in meaning (the hybrid floor, 0.3), or, where meaning could not be asked, sharing WORDS_ALONE rare words. Words
    alone never do where the model answered: a page about sourdough shares "proof", "starter", "fold" with a note
    about a starter kit and nothing of its meaning. The floor of an answer: when no note passes it, nothing is
    listed; when one does, the others are listed beside it as before (a floor on each row, or a floor at 0.45, cost
    kepano-obsidian's and logseq-docs' link recovery up to 0.04 of recall@10)."""
    if e.saved or e.named or e.meaning >= HYBRID_THRESHOLD:
        return True
    return not by_meaning and len(shared) >= WORDS_ALONE


def _reason(e: Evidence, shared: list[str]) -> str:
    """Why a note is related, in words."""
    parts = []
    if e.saved:
        parts.append("you saved this page")
    if e.meaning:
        close = f"; {e.close} passages of the text match it" if e.close > 1 else ""
        parts.append(f"close in meaning to passage {e.passage} ({round(e.meaning * 100)}% similar{close})")
    if e.votes and not (e.meaning or e.named):
        parts.append("the notes most like the text link to it")
    if e.named:
        parts.append("the text names it" + (f" {e.named} times" if e.named > 1 else ""))
    if shared:
        parts.append("shares rare words: " + ", ".join(shared[:5]))
    return "; ".join(parts) or "shares words with the page"


def _clip(text: str, limit: int = 160) -> str:
    return cut_at_word(" ".join(text.split()), limit)
