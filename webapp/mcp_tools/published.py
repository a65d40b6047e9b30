"""The schemas a client lists (tools/list): pydantic's, less what tells a model nothing it does not already read.

An AI client puts every tool's schema into the model's context on every conversation, so each character is paid
for again and again. pydantic writes a `title` beside every field (its name again, capitalised), writes
`additionalProperties: true` (JSON Schema's default) and writes an optional argument as `anyOf: [T, null]` with
`default: null`. An argument that is not required may already be left out, so a client is told `T` alone; the
server still accepts an explicit null (the tools' own signatures check each call, not this copy).

An output schema is for the client, which checks each answer against it (the TypeScript SDK does), not for the
model, which reads the answer itself and each tool's description of it: it keeps its types, nulls and required
fields and loses its descriptions and defaults, which change no check.
"""
from __future__ import annotations

NULL = {"type": "null"}
SCHEMA_MAPS = ("properties", "$defs", "patternProperties")  # keys whose value maps names to schemas
# Keywords that bind a value of their own type only: beside a list of types they check what they checked in anyOf.
TYPE_BOUND = {"items", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "format",
              "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "properties", "additionalProperties",
              "required"}


def published(schema: dict | None, inputs: bool) -> dict | None:
    """The schema as listed to clients; `inputs` (an input schema): an optional argument's null is left out."""
    if schema is None:
        return None
    return _compact(schema, inputs)


def _compact(node, inputs: bool):
    if isinstance(node, list):
        return [_compact(item, inputs) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key in ("default", "description") and not inputs:  # a client checks an answer by types alone
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _compact(schema, inputs) for name, schema in value.items()}
        else:
            out[key] = _compact(value, inputs)
    if inputs and NULL in out.get("anyOf", ()) and "default" in out and out["default"] is None:
        rest = [schema for schema in out["anyOf"] if schema != NULL]
        if len(rest) == 1:
            out = {**rest[0], **{k: v for k, v in out.items() if k not in ("anyOf", "default")}}
    return _typed(out)


def _typed(node: dict) -> dict:
    """`anyOf` of bare types ({"type": "string"}, {"type": "null"}; one of them may carry more, such as an
    array's items) written as JSON Schema's list of types: {"type": ["string", "null"]}, which checks the same."""
    options = node.get("anyOf")
    if not isinstance(options, list) or not all(isinstance(o, dict) and isinstance(o.get("type"), str)
                                                for o in options):
        return node
    richer = [o for o in options if set(o) != {"type"}]
    if any(set(o) - {"type"} - TYPE_BOUND for o in richer):  # an enum or a const would bind every type
        return node
    types = [o["type"] for o in options]
    if len(richer) > 1 or len(set(types)) != len(types) or "type" in node:
        return node
    extra = {k: v for k, v in richer[0].items() if k != "type"} if richer else {}
    if set(extra) & set(node):
        return node
    return {"type": types, **extra, **{k: v for k, v in node.items() if k != "anyOf"}}
