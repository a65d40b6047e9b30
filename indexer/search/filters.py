"""vault_search metadata filters turned into the set of notes they allow, checked before any search runs.

Every filter narrows the same set (AND). Dates are calendar days in the server's local time zone.
"""
from __future__ import annotations

import json
import re
from datetime import date, datetime, time, timedelta

from ..errors import InvalidQuery
from .index import ProjectIndex
from .tags import documents_with_tags, normalise

FILTER_KEYS = ("folder", "tags", "type", "related", "properties", "created", "modified")
DATE_BOUNDS = ("before", "on", "after")
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
DATE_HELP = 'Use YYYY-MM-DD, for example {"after": "2026-06-30"}.'


def check_filters(filters: dict | None) -> dict:
    """Validate filters and return them tidied; raise InvalidQuery with a sentence that says what to change."""
    if filters is None:
        return {}
    if not isinstance(filters, dict):
        raise InvalidQuery("filters must be an object such as {\"folder\": \"Projects\", \"tags\": [\"reference\"]}.")
    unknown = [k for k in filters if k not in FILTER_KEYS]
    if unknown:
        raise InvalidQuery(f"Unknown filter '{unknown[0]}'; use any of: {', '.join(FILTER_KEYS)}.")
    out: dict = {}
    for key, value in filters.items():
        if value is None:
            continue
        if key in ("folder", "type"):
            if not isinstance(value, str):
                raise InvalidQuery(f"filters.{key} must be a string, such as \"{'Projects' if key == 'folder' else 'meeting'}\".")
            out[key] = value
        elif key in ("tags", "related"):
            out[key] = _string_list(key, value)
        elif key == "properties":
            out[key] = _properties(value)
        else:
            out[key] = _date_bounds(key, value)
    return out


def _string_list(key: str, value) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise InvalidQuery(f"filters.{key} must be a list of strings, such as [\"reference\", \"project\"].")
    return [i for i in items if i.strip()]


def _properties(value) -> dict:
    if not isinstance(value, dict):
        raise InvalidQuery("filters.properties must be an object of frontmatter keys and values, such as {\"status\": \"active\"}.")
    for key, wanted in value.items():
        if wanted is None or not isinstance(wanted, (str, int, float, bool)):
            raise InvalidQuery(f"filters.properties.{key} must be a string, number or boolean, not {json.dumps(wanted)}.")
    return dict(value)


def parse_day(value, where: str) -> date:
    """Read a YYYY-MM-DD calendar date, or raise InvalidQuery saying 'Use YYYY-MM-DD'."""
    if not isinstance(value, str) or not DAY.fullmatch(value.strip()):
        raise InvalidQuery(f"{where} is {json.dumps(value)}, which is not a date. {DATE_HELP}")
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise InvalidQuery(f"{where} is {value!r}, which is not a real calendar date. {DATE_HELP}") from None


def _date_bounds(key: str, value) -> dict[str, date]:
    if not isinstance(value, dict):
        raise InvalidQuery(f"filters.{key} must be an object with before, on and/or after dates. {DATE_HELP}")
    unknown = [k for k in value if k not in DATE_BOUNDS]
    if unknown:
        raise InvalidQuery(f"filters.{key} has '{unknown[0]}'; use before, on or after. {DATE_HELP}")
    return {bound: parse_day(day, f"filters.{key}.{bound}") for bound, day in value.items() if day is not None}


def day_matches(day: date, bounds: dict[str, date]) -> bool:
    """Say whether a calendar day is strictly before `before`, equal to `on` and strictly after `after`."""
    return (("before" not in bounds or day < bounds["before"]) and ("on" not in bounds or day == bounds["on"])
            and ("after" not in bounds or day > bounds["after"]))


def _local_midnight(day: date) -> float:
    return datetime.combine(day, time.min).timestamp()  # naive: the server's local time zone


def _modified_clause(bounds: dict[str, date]) -> tuple[list[str], list]:
    where, params = [], []
    if "before" in bounds:
        where.append("modified < ?")
        params.append(_local_midnight(bounds["before"]))
    if "on" in bounds:
        where.append("modified >= ? AND modified < ?")
        params += [_local_midnight(bounds["on"]), _local_midnight(bounds["on"] + timedelta(days=1))]
    if "after" in bounds:
        where.append("modified >= ?")
        params.append(_local_midnight(bounds["after"] + timedelta(days=1)))
    return where, params


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
        out += [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return out


def _property_matches(actual, wanted) -> bool:
    if isinstance(actual, list):
        return any(_property_matches(item, wanted) for item in actual)
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return isinstance(wanted, bool) and isinstance(actual, bool) and actual == wanted
    if isinstance(wanted, (int, float)):
        return isinstance(actual, (int, float)) and actual == wanted
    return isinstance(actual, str) and actual.strip().casefold() == wanted.strip().casefold()


def allowed_documents(index: ProjectIndex, filters: dict) -> set[str] | None:
    """Return the ids of the documents every filter allows; None when there are no filters (all allowed)."""
    if not filters:
        return None
    where, params = ["1"], []
    folder = filters.get("folder", "").strip().strip("/").lower()
    if folder:
        where.append("(lower(rel_path) = ? OR substr(lower(rel_path), 1, ?) = ?)")
        params += [folder, len(folder) + 1, folder + "/"]
    if "type" in filters:
        where.append("frontmatter_type = ?")
        params.append(filters["type"].strip())
    if "modified" in filters:
        clauses, values = _modified_clause(filters["modified"])
        where += clauses
        params += values
    rows = index.sql(f"SELECT document_id, frontmatter FROM documents WHERE {' AND '.join(where)}", params)
    docs = {r[0] for r in rows}
    if normalise(filters.get("tags")):
        docs &= documents_with_tags(index, filters["tags"], None) or set()
    related, properties, created = filters.get("related"), filters.get("properties"), filters.get("created")
    if not (related or properties or created) or not docs:
        return docs
    links: dict[str, list[str]] = {}
    if related:
        for r in index.sql("SELECT document_id, target FROM links WHERE kind = 'related_to'"):
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
