"""The limits a request must keep, and the checks that refuse one with a sentence that says what to change.

Every surface (search modes, vault search, context, mind-map node search, the web API's query strings, the MCP
tools' schemas) uses these numbers and these sentences, so a limit is stated once and read the same everywhere.
Imports nothing but the errors it raises.
"""
from __future__ import annotations

import re

from ..errors import InvalidQuery

MAX_LIMIT = 100  # results in one answer
MAX_QUERY_CHARS = 1000
MAX_SNIPPET_TOKENS = 64  # the most FTS5's snippet() returns
MIN_TOKEN_BUDGET, MAX_TOKEN_BUDGET = 50, 100_000  # the tokens of chunk text that context packs
SCOPES = ("project", "all")
DIRECTIONS = ("both", "outgoing", "backlinks")  # a note's links: both lists, its own, or the notes linking to it


# Control characters other than tab and line breaks, and UTF-16 halves without their pair: no note holds them, and
# SQLite's FTS5 reads a NUL as the end of the query.
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def check_text(name: str, value: str) -> str:
    """Return value when it is text a note could hold; refuse control characters and lone surrogates by name."""
    found = _NOT_TEXT.search(value)
    if found is None:
        return value
    char = f"U+{ord(found.group()):04X}"
    if "\ud800" <= found.group() <= "\udfff":
        raise InvalidQuery(f"{name} holds {char}, half of a UTF-16 pair without its other half, which is not "
                           "text; send it as valid UTF-8 (or with both halves of the pair).")
    raise InvalidQuery(f"{name} holds the control character {char} at position {found.start() + 1}, which no "
                       "note contains; remove it and send the text again.")


def check_texts(name: str, value):
    """Check every string in a JSON value (keys too), naming the field it sits in; return the value."""
    if isinstance(value, str):
        check_text(name, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(f"A key of {name}", key)
            check_texts(f"'{key}'" if name == "The request body" else name, item)
    elif isinstance(value, list):
        for item in value:
            check_texts(name, item)
    return value


EMPTY_QUERY = "Type something to search for (the query is empty)."


def check_query(query: str | None, required: bool = False) -> str:
    """Return the query when it fits; an empty one is refused only when required."""
    query = check_text("The query", query or "")
    if required and not query.strip():
        raise InvalidQuery(EMPTY_QUERY)
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"The query is {len(query)} characters long; shorten it to at most {MAX_QUERY_CHARS}.")
    return query


def check_number(name: str, value, low: int = 1, high: int = MAX_LIMIT) -> int:
    """Return value when it is a whole number from low to high (true and false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidQuery(f"{name} must be a whole number from {low} to {high}, not {value!r}.")
    return value


def parse_number(name: str, raw: str | None, default: int, low: int = 1, high: int = MAX_LIMIT) -> int:
    """A whole number given as text (a query-string parameter): the default when absent, else checked."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidQuery(f"{name} must be a whole number from {low} to {high}, not {raw!r}.") from None
    return check_number(name, value, low, high)


def check_scope(scope: str) -> str:
    """Return scope when it is 'project' or 'all'."""
    if scope not in SCOPES:
        raise InvalidQuery(f"Unknown scope '{scope}'; use 'project' or 'all'.")
    return scope


def parse_bool(name: str, raw: str | None, default: bool = False) -> bool:
    """A yes/no given as text (true/false, 1/0, yes/no, on/off): the default when absent, else refused by name."""
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise InvalidQuery(f"{name} must be true or false, not '{raw[:40]}'.")


KIND_NAMES = {str: "a string", int: "a whole number", dict: "an object", bool: "true or false", list: "a list"}


def typed_field(body, name: str, kind, default=None, required: bool = False):
    """A typed field of a JSON object (a request body), or an InvalidQuery that names it."""
    value = body.get(name, default)
    if value is None:
        if required:
            raise InvalidQuery(f"The request body needs a '{name}' field.")
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(KIND_NAMES.get(k, str(k)) for k in kinds)
        raise InvalidQuery(f"'{name}' must be {expected}.")
    return value
