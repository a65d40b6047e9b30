"""Metadata filters (checked by the request, request.py) turned into the set of notes they allow, before any leg
runs.

Every filter narrows the same set (AND). Dates are calendar days in the server's local time zone.
"""
from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta

from . import chunk_reads
from . import note_reads as reads
from .index import ProjectIndex
from .request import DAY
from .tags import documents_with_tags, normalise


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


def _by_name_and_words(index: ProjectIndex, filters: dict) -> set[str]:
    """The documents Obsidian's path:, file: and -word operators allow (operators.py): every path: text in the
    path, every file: text in the file name, none of the excluded words in the title or text; any case."""
    paths, files = filters.get("path") or [], filters.get("file") or []
    kept = {doc for doc, rel_path in reads.paths(index)
            if all(p in rel_path.lower() for p in paths)
            and all(f in rel_path.rsplit("/", 1)[-1].lower() for f in files)}
    for word in filters.get("exclude") or []:
        kept -= chunk_reads.documents_holding(index, word)
    return kept


def allowed_documents(index: ProjectIndex, filters: dict) -> set[str] | None:
    """Return the ids of the documents every filter allows; None when there are no filters (all allowed)."""
    if not filters:
        return None
    folder = filters.get("folder", "").strip().strip("/").lower()
    rows = reads.matching_metadata(index, folder, filters["type"].strip() if "type" in filters else None,
                                   _modified_bounds(filters.get("modified") or {}))
    docs = {r[0] for r in rows}
    if filters.get("path") or filters.get("file") or filters.get("exclude"):
        docs &= _by_name_and_words(index, filters)
    if normalise(filters.get("tags")):
        docs &= documents_with_tags(index, filters["tags"], None) or set()
    related, properties, created = filters.get("related"), filters.get("properties"), filters.get("created")
    if not (related or properties or created) or not docs:
        return docs
    links: dict[str, list[str]] = {}
    if related:
        for r in reads.related_to_links(index):
            links.setdefault(r[0], []).append(r[1])
    kept = set()
    for r in rows:
        if r[0] not in docs:
            continue
        meta = json.loads(r[1] or "{}")
        if related and not all(_links_to(_related_targets(meta, links.get(r[0], [])), w) for w in related):
            continue
        if properties and not all(k in meta and _property_matches(meta[k], v) for k, v in properties.items()):
            continue
        if created:
            day = created_day(meta)
            if day is None or not day_matches(day, created):
                continue
        kept.add(r[0])
    return kept
