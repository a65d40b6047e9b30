"""Reading a request's arguments: query-string values and JSON bodies, refused with a sentence that names the field."""
from __future__ import annotations

from flask import request

from indexer.errors import InvalidQuery
from indexer.limits import MAX_LIMIT, parse_number


def arg(name: str, default: str = "", max_chars: int = 5000) -> str:
    """A trimmed query parameter."""
    return (request.args.get(name) or default).strip()[:max_chars]


def int_arg(name: str, default: int, low: int = 1, high: int = MAX_LIMIT) -> int:
    """A whole-number query parameter: the default when absent, an InvalidQuery naming it when out of range."""
    return parse_number(name, request.args.get(name), default, low, high)


def bool_arg(name: str, default: bool = False) -> bool:
    """A yes/no query parameter: true/false, 1/0, yes/no; anything else is refused with a sentence naming it."""
    raw = request.args.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise InvalidQuery(f"{name} must be true or false, not '{raw[:40]}'.")


def list_arg(name: str) -> list[str]:
    """A repeated query parameter; comma-separated values are split too."""
    values = []
    for raw in request.args.getlist(name):
        values += [v.strip() for v in raw.split(",") if v.strip()]
    return values


def json_body() -> dict:
    """The request's JSON object."""
    try:
        body = request.get_json(silent=True)
    except RecursionError:  # Python's JSON parser gives up on very deep nesting with RecursionError, not ValueError
        raise InvalidQuery("The JSON body is nested too deeply to read; send a plain object such as "
                           "{\"query\": \"...\"}.") from None
    if not isinstance(body, dict):
        raise InvalidQuery("Send a JSON object as the request body (Content-Type: application/json).")
    return body


def body_field(body: dict, name: str, kind, default=None, required: bool = False):
    """A typed field of a JSON body, or an InvalidQuery that names it."""
    value = body.get(name, default)
    if value is None:
        if required:
            raise InvalidQuery(f"The request body needs a '{name}' field.")
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        names = {str: "a string", int: "a whole number", dict: "an object", bool: "true or false", list: "a list"}
        expected = names.get(kind, " or ".join(names[k] for k in kind) if isinstance(kind, tuple) else str(kind))
        raise InvalidQuery(f"'{name}' must be {expected}.")
    return value
