"""Metadata filters (checked by the request, request.py) turned into the set of notes they allow, before any leg
runs.

Every filter narrows the same set (AND). Dates are calendar days in the server's local time zone.
"""
from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import Callable

from . import chunk_reads
from . import note_reads as reads
from ..contract.filters import DAY, FILTERS, narrowing
from ..errors import InvalidQuery
from .index import ProjectIndex
from .tags import documents_with_tags, normalise, tag_reason


def day_matches(day: date, bounds: dict[str, date]) -> bool:
    """Say whether a calendar day is strictly before `before`, equal to `on` and strictly after `after`."""
    return (("before" not in bounds or day < bounds["before"]) and ("on" not in bounds or day == bounds["on"])
            and ("after" not in bounds or day > bounds["after"]))


def _local_midnight(day: date) -> float:
    return datetime.combine(day, time.min).timestamp()  # naive: the server's local time zone


def _modified_bounds(bounds: dict[str, date]) -> list[tuple[str, float]]:
    """The modified-time bounds as (operator, local midnight) pairs."""
    out = []
    if "before" in bounds:
        out.append(("<", _local_midnight(bounds["before"])))
    if "on" in bounds:
        out += [(">=", _local_midnight(bounds["on"])), ("<", _local_midnight(bounds["on"] + timedelta(days=1)))]
    if "after" in bounds:
        out.append((">=", _local_midnight(bounds["after"] + timedelta(days=1))))
    return out


def created_day(frontmatter: dict) -> date | None:
    """The calendar day of a note's frontmatter `created` property, or None when it has none that parses."""
    value = frontmatter.get("created")
    if not isinstance(value, str) or not DAY.match(value.strip()):
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone().date() if moment.tzinfo else moment.date()


def _link_name(target: str) -> str:
    """A link target as a comparable name: no [[ ]], alias, heading or .md, lowercase."""
    name = target.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0].strip().lower()
    return name.removesuffix(".md")


def _links_to(targets: list[str], wanted: str) -> bool:
    want = _link_name(wanted)
    for target in targets:
        name = _link_name(target)
        if name == want or ("/" not in want and name.rsplit("/", 1)[-1] == want):
            return True
    return False


def _related_targets(frontmatter: dict, links: list[str]) -> list[str]:
    out = list(links)
    for key in ("related", "related_to"):
        value = frontmatter.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out += [v for v in value if isinstance(v, str)]
    return out


def _property_matches(actual, wanted) -> bool:
    if isinstance(actual, list):
        return any(_property_matches(item, wanted) for item in actual)
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return isinstance(wanted, bool) and isinstance(actual, bool) and actual == wanted
    if isinstance(wanted, (int, float)):
        return isinstance(actual, (int, float)) and actual == wanted
    return isinstance(actual, str) and actual.strip().casefold() == wanted.strip().casefold()


class Candidates:
    """The notes a search may find, narrowed by each filter in turn: by the documents table (folder, type, modified
    time: one query), by sets of documents, and by each note's frontmatter and related links."""

    def __init__(self, index: ProjectIndex):
        self.index = index
        self.where: list[str] = []  # conditions on the documents table, with ? for params
        self.params: list = []
        self.sets: list[Callable[[], set[str]]] = []
        self.tests: list[Callable[[dict, list[str]], bool]] = []  # (frontmatter, related links) -> kept
        self.needs_links = False

    def documents(self) -> set[str]:
        rows = reads.documents_where(self.index, self.where, self.params)
        docs = {r[0] for r in rows}
        for narrowed in self.sets:
            docs &= narrowed()
        if not self.tests or not docs:
            return docs
        links: dict[str, list[str]] = {}
        if self.needs_links:
            for r in reads.related_to_links(self.index):
                links.setdefault(r[0], []).append(r[1])
        return {doc for doc, meta in rows if doc in docs
                and all(test(json.loads(meta or "{}"), links.get(doc, [])) for test in self.tests)}


def allowed_documents(index: ProjectIndex, filters: dict) -> set[str] | None:
    """Return the ids of the documents every filter allows; None when there are no filters (all allowed)."""
    if not filters:
        return None
    candidates = Candidates(index)
    for key, value in filters.items():
        record = FILTERS.get(key)
        if record is None or record.narrow is None:
            raise InvalidQuery(f"The filter '{key}' narrows nothing here (indexer/search/filters.py has no "
                               "@narrowing for it); leave it out.")
        record.narrow(candidates, value)
    return candidates.documents()


def _shown(index: ProjectIndex, row, names: list[str]) -> str:
    meta = json.loads(row["frontmatter"] or "{}")
    return f"; its frontmatter has {json.dumps({f: meta.get(f) for f in names}, default=str)}"


def _folder_has(index: ProjectIndex, row, value) -> str:
    folder = row["rel_path"].rsplit("/", 1)[0] if "/" in row["rel_path"] else ""
    return f"; the note is in '{folder}'" if folder else "; the note is at the top of the project"


def _tags_have(index: ProjectIndex, row, value) -> str:
    reason = tag_reason(index, row["document_id"], value, None)
    return "; " + reason.split(": ", 1)[1] if reason else ""


@narrowing("folder", _folder_has)
def _folder(candidates: Candidates, value: str) -> None:
    folder = value.strip().strip("/").lower()
    if folder:
        candidates.where.append("(lower(rel_path) = ? OR substr(lower(rel_path), 1, ?) = ?)")
        candidates.params += [folder, len(folder) + 1, folder + "/"]


@narrowing("type", lambda index, row, value: _shown(index, row, ["type"]))
def _type(candidates: Candidates, value: str) -> None:
    candidates.where.append("frontmatter_type = ?")
    candidates.params.append(value.strip())


@narrowing("modified")
def _modified(candidates: Candidates, bounds: dict[str, date]) -> None:
    for operator, moment in _modified_bounds(bounds):
        candidates.where.append(f"modified {operator} ?")
        candidates.params.append(moment)


@narrowing("tags", _tags_have)
def _tags(candidates: Candidates, tags: list[str]) -> None:
    if normalise(tags):
        candidates.sets.append(lambda: documents_with_tags(candidates.index, tags, None) or set())


@narrowing("related")
def _related(candidates: Candidates, wanted: list[str]) -> None:
    if wanted:
        candidates.needs_links = True
        candidates.tests.append(lambda meta, links: all(_links_to(_related_targets(meta, links), w) for w in wanted))


@narrowing("properties", lambda index, row, value: _shown(index, row, list(value)))
def _properties(candidates: Candidates, properties: dict) -> None:
    if properties:
        candidates.tests.append(lambda meta, links: all(k in meta and _property_matches(meta[k], v)
                                                        for k, v in properties.items()))


@narrowing("created", lambda index, row, value: _shown(index, row, ["created"]))
def _created(candidates: Candidates, bounds: dict[str, date]) -> None:
    def test(meta: dict, links: list[str]) -> bool:
        day = created_day(meta)
        return day is not None and day_matches(day, bounds)
    if bounds:
        candidates.tests.append(test)


# Obsidian's operators (operators.py): path: and file: texts, any case; -word: no excluded word in title or text

@narrowing("path")
def _path(candidates: Candidates, texts: list[str]) -> None:
    if texts:
        candidates.sets.append(lambda: {doc for doc, rel_path in reads.paths(candidates.index)
                                        if all(p in rel_path.lower() for p in texts)})


@narrowing("file")
def _file(candidates: Candidates, texts: list[str]) -> None:
    if texts:
        candidates.sets.append(lambda: {doc for doc, rel_path in reads.paths(candidates.index)
                                        if all(f in rel_path.rsplit("/", 1)[-1].lower() for f in texts)})


@narrowing("exclude")
def _exclude(candidates: Candidates, words: list[str]) -> None:
    def kept() -> set[str]:
        docs = {doc for doc, _ in reads.paths(candidates.index)}
        for word in words:
            docs -= chunk_reads.documents_holding(candidates.index, word)
        return docs
    if words:
        candidates.sets.append(kept)
