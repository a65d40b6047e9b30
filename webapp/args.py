"""Reading a request's arguments: query-string values and JSON bodies, refused with a sentence that names the field."""
from __future__ import annotations

from flask import request

from indexer.errors import InvalidQuery
from indexer.contract.limits import MAX_LIMIT, check_text, check_texts, parse_number, typed_field


def arg(name: str, default: str = "", max_chars: int = 5000) -> str:
    """A trimmed query parameter."""
    return (request.args.get(name) or default).strip()[:max_chars]


def int_arg(name: str, default: int, low: int = 1, high: int = MAX_LIMIT) -> int:
    """A whole-number query parameter: the default when absent, an InvalidQuery naming it when out of range."""
    return parse_number(name, request.args.get(name), default, low, high)


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
    return typed_field(body, name, kind, default, required)


def refuse_odd_characters() -> None:
    """Refuse a request whose text holds control characters or lone surrogates, before any route or SQL reads it."""
    for source in (request.args, request.form):
        for name, value in source.items(multi=True):
            check_text("A parameter name", name)
            check_text("The query" if name == "q" else f"'{name}'", value)
    for name, value in (request.view_args or {}).items():
        if isinstance(value, str):
            check_text(f"The {name.replace('_', ' ')} in the address", value)
    if request.is_json:
        try:
            body = request.get_json(silent=True)
        except RecursionError:
            return  # json_body says so in its own words
        check_texts("The request body", body)
