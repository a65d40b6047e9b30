"""The metadata filters, one record each: what a request may say (key, check), what an agent reads (the JSON
schema fragment) and, filled in by the search side, how it narrows the notes and how it tells what kept a note out.

vault_search, the four listings and every spec 000 mode take the same filters, AND-combined. A filter is added
here, with its check and schema; `indexer/search/filters.py` gives it its narrowing and explanation with
`@narrowing(key)`. A key without a narrowing is refused by the search (and fails tests/test_contract.py), so a
filter can never be accepted and silently narrow nothing.

Imports nothing but the errors it raises.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Callable

from ..errors import InvalidQuery

DATE_BOUNDS = ("before", "on", "after")
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
DATE_HELP = 'Use YYYY-MM-DD, for example {"after": "2026-06-30"}.'


@dataclass
class Filter:
    """One metadata filter: `check` tidies a value or raises InvalidQuery saying what to change; `schema` is the
    JSON schema an MCP client reads; `narrow` and `explain` are the search side's (indexer/search/filters.py)."""

    key: str
    check: Callable[[str, Any], Any]
    schema: dict
    public: bool = True  # False: set by Obsidian's operators (path:, file:, -word), never sent by a client
    narrow: Callable | None = None  # (Candidates, value) -> None: narrows the notes a search may find
    explain: Callable | None = None  # (index, document row, value) -> what the note has instead, or ""


def _string(key: str, value) -> str:
    if not isinstance(value, str):
        example = "Projects" if key == "folder" else "meeting"
        raise InvalidQuery(f"filters.{key} must be a string, such as \"{example}\".")
    return value


def _string_list(key: str, value) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise InvalidQuery(f"filters.{key} must be a list of strings, such as [\"reference\", \"project\"].")
    return [i for i in items if i.strip()]


def _properties(key: str, value) -> dict:
    if not isinstance(value, dict):
        raise InvalidQuery("filters.properties must be an object of frontmatter keys and values, such as "
                           "{\"status\": \"active\"}.")
    for name, wanted in value.items():
        if wanted is None or not isinstance(wanted, (str, int, float, bool)):
            raise InvalidQuery(f"filters.properties.{name} must be a string, number or boolean, not "
                               f"{json.dumps(wanted)}.")
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


def _days(description: str) -> dict:
    return {"type": "object", "additionalProperties": False, "description": description,
            "properties": {bound: {"type": "string"} for bound in ("after", "before", "on")}}


STRINGS = {"type": "array", "items": {"type": "string"}}

FILTERS: dict[str, Filter] = {f.key: f for f in (
    Filter("folder", _string, {"type": "string", "description": "Path prefix."}),
    Filter("tags", _string_list, {**STRINGS, "description": "All of these tags."}),
    Filter("type", _string, {"type": "string", "description": "Frontmatter type."}),
    Filter("related", _string_list, {**STRINGS, "description": "Links to all of these notes."}),
    Filter("properties", _properties, {"type": "object", "description": 'Frontmatter values, all matching: '
                                       '{"status": "active"}.', "additionalProperties": {
                                           "type": ["string", "integer", "number", "boolean"]}}),
    Filter("created", _date_bounds, _days("Frontmatter created date.")),
    Filter("modified", _date_bounds, _days("File modified time.")),
    # Obsidian's search operators (search/operators.py) narrow through the same registry; no client sends them
    Filter("path", _string_list, {}, public=False),
    Filter("file", _string_list, {}, public=False),
    Filter("exclude", _string_list, {}, public=False),
)}
FILTER_KEYS = tuple(key for key, f in FILTERS.items() if f.public)

# What an MCP client reads of the filters (vault_search's `filters` argument), built from the records
FILTERS_SCHEMA = {"type": "object", "additionalProperties": False,
                  "description": "Metadata filters, AND-combined with each other and the query; days as YYYY-MM-DD "
                                 "(server-local), before and after exclude the day.",
                  "properties": {key: FILTERS[key].schema for key in FILTER_KEYS}}


def check_filters(filters: dict | None) -> dict:
    """Validate filters and return them tidied; raise InvalidQuery with a sentence that says what to change."""
    if filters is None:
        return {}
    if not isinstance(filters, dict):
        raise InvalidQuery("filters must be an object such as {\"folder\": \"Projects\", \"tags\": [\"reference\"]}.")
    unknown = [k for k in filters if k not in FILTER_KEYS]
    if unknown:
        raise InvalidQuery(f"Unknown filter '{unknown[0]}'; use any of: {', '.join(FILTER_KEYS)}.")
    return {key: FILTERS[key].check(key, value) for key, value in filters.items() if value is not None}


def narrowing(key: str, explain: Callable | None = None) -> Callable:
    """Decorate the function that narrows the notes by filter `key` (the search side's half of its record)."""
    def register(narrow: Callable) -> Callable:
        if key not in FILTERS:
            raise KeyError(f"no filter '{key}' in indexer/contract/filters.py's FILTERS")
        FILTERS[key].narrow, FILTERS[key].explain = narrow, explain
        return narrow
    return register
