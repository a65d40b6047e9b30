"""What the MCP tools answer, sized for an agent's context, and the sentences they answer bad calls with.

The JSON API answers every field a window could draw (a chunk hit is about 2,400 characters). An agent needs less
to choose what to read: one row per note in one vocabulary (path, title, score, heading, lines, snippet), a
snippet of about 30 tokens, and a `more` flag when the limit cut the list. read_note then reads what it chose.
"""
from __future__ import annotations

import difflib
import json
import re

from pydantic import ValidationError


SNIPPET_CHARS = 150  # about 30 tokens of English


def clip(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    """One line of at most `limit` characters, cut at a word, with an ellipsis when cut."""
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    return flat[:cut if cut > limit // 2 else limit].rstrip(" ,;:") + "…"


def _day(value: str | None) -> str | None:
    return value[:10] if isinstance(value, str) else None


def note_row(hit: dict, with_project: bool = False) -> dict:
    """A chunk or note hit of the API as one compact row (the contract's CompactRow)."""
    row = {"path": hit["path"], "title": hit["title"], "score": round(hit["score"], 3)}
    if heading := heading_of(hit):
        row["heading"] = heading
    if hit.get("lines"):
        row["lines"] = hit["lines"]
    row["snippet"] = clip(hit.get("snippet") or hit.get("content"))
    if with_project:
        row["project"] = hit["project"]
    return row


def heading_of(hit: dict) -> str | None:
    """The headings a passage sits under, less the note's own H1 (its title, which the row says already: 106 of
    120 rows repeated it)."""
    headings = list(hit.get("heading_path") or [])
    if headings and headings[0].strip().lower() == str(hit.get("title") or "").strip().lower():
        headings = headings[1:]
    return " > ".join(headings) or None


def search_answer(api: dict) -> dict:
    """A spec-000 search's note hits as compact rows."""
    everywhere = api.get("scope") == "all"
    out = {"query": api["query"], "mode": api["mode"], "semantic_available": api["semantic_available"]}
    for key in ("semantic_reason", "keyword_only_projects", "notice"):
        if api.get(key):
            out[key] = api[key]
    if api.get("corrected"):
        out["corrected"] = {"from": api["corrected"]["original"], "to": api["corrected"]["query"]}
    if api.get("did_you_mean"):
        out["did_you_mean"] = api["did_you_mean"]["query"]
    _searched(api, out)
    _languages(api, out)
    out["results"] = [note_row(h, everywhere) for h in api["results"]]
    out["more"] = api["more"]
    if api.get("empty_reason"):
        out["empty_reason"] = api["empty_reason"]
    if api.get("weaker_matches"):
        out["weaker_matches"] = [note_row(h, everywhere) for h in api["weaker_matches"]]
    return out


def _languages(api: dict, out: dict) -> None:
    """A question in another language than the notes: how each project was searched, in a sentence."""
    if api.get("across"):
        out["languages"] = " ".join(dict.fromkeys(a["sentence"] for a in api["across"]))


def related_answer(api: dict) -> dict:
    """Notes related to a text as compact rows: path, title, score, why, lines, snippet."""
    out = {"semantic_available": api["semantic_available"]}
    if api.get("semantic_reason"):
        out["semantic_reason"] = api["semantic_reason"]
    rows = []
    for hit in api["results"]:
        row = {"path": hit["path"], "title": hit["title"], "score": round(hit["score"], 3), "why": clip(hit["reason"],
                                                                                                         120)}
        if hit.get("saved"):
            row["saved"] = True
        if hit.get("lines"):
            row["lines"] = hit["lines"]
        row["snippet"] = clip(hit.get("snippet"), 120)
        if api.get("scope") == "all" or hit.get("project") != api["results"][0].get("project"):
            row["project"] = hit["project"]
        rows.append(row)
    out["results"] = rows
    out["more"] = api["more"]
    if api.get("truncated"):  # the text asked about was cut to its first part (`more` is for the rows)
        out["text_cut"] = True
    return out


def suggestions_answer(api: dict) -> dict:
    """A note's link suggestions, each with the one link to paste in this vault's style and why."""
    key = "markdown_link" if api["style"] == "markdown" else "wikilink"
    return {
        "path": api["path"], "style": api["style"],
        "unlinked_mentions": [{"path": m["path"], "link": m[key], "line": m["line"], "snippet": clip(m["text"], 120)}
                              for m in api["unlinked_mentions"]],
        "mentions_total": api["mentions_total"],
        "close_in_meaning": [{"path": c["path"], "link": c[key], "why": clip(c["reason"], 120)}
                             for c in api["close_in_meaning"]],
        "semantic_available": api["semantic_available"],
    }


def context_answer(api: dict, every_project: bool, budget: int) -> dict:
    """get_context's passages with what an agent cites them by: path, the headings they sit under (when they say
    more than the title), file lines and the `text`, and the project when every project was drawn from. The API's
    ids, absolute path, score and token count cost ~450 characters a passage, more than a 300-token budget's text.

    The whole answer keeps to the budget, as an agent reads it (4 characters of its JSON text a token): the API packs
    the passages' own tokens, and the paths, lines and JSON around them took a 1,500-token budget to ~1,950; the
    last passages go, `more` says so."""
    out = {key: api[key] for key in ("query", "tokens_used", "more", "semantic_available", "semantic_reason")
           if key in api}
    items, tokens = [], []
    for item in api.get("items", []):
        row = {"project": item.get("project")} if every_project else {}
        row["path"] = item["path"]
        if heading := heading_of(item):
            row["heading"] = heading
        row.update(lines=item.get("lines"), text=item["content"])
        items.append(row)
        tokens.append(item.get("tokens", 0))
    out["items"] = items
    while len(items) > 1 and len(json.dumps(out, ensure_ascii=False, separators=(",", ":"))) // 4 > budget:
        items.pop()
        out["tokens_used"] = out.get("tokens_used", 0) - tokens.pop()
        out["more"] = True
    return out


def memory_answer(api: dict) -> dict:
    """memory_search's answer with spec 002's row (file_path, id, title, relevance, excerpt): its `path` alias, which
    repeated file_path in every row, left out."""
    return {**api, "results": [{k: v for k, v in row.items() if k != "path"} for row in api["results"]]}


def mindmap_answer(api: dict) -> dict:
    """A mind-map answer in the agents' one vocabulary: `path` is a file path everywhere, so a node's root-to-node
    titles are its `node_path`; a node row's text is its `snippet` (its whole `content` repeated it)."""
    def node(value):
        if isinstance(value, list):
            return [node(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: node(v) for k, v in value.items()}
        if "node_id" in out:
            if isinstance(out.get("path"), list):
                out["node_path"] = out.pop("path")
            if "snippet" in out:
                out.pop("content", None)
        return out
    return node(api)


def vault_row(note: dict) -> dict:
    """A vault_search or listing row as a compact one (same vocabulary as the search rows)."""
    row = {"path": note["path"], "title": note["title"]}
    if note.get("score") is not None:
        row["score"] = round(note["score"], 3)
    if note.get("snippet"):
        row["snippet"] = clip(note["snippet"])
    for key in ("tags", "type"):
        if note.get(key):
            row[key] = note[key]
    if note.get("modified"):
        row["modified"] = _day(note["modified"])
    if note.get("leading_callout"):
        row["leading_callout"] = note["leading_callout"]
    if note.get("explain"):
        row["explain"] = note["explain"]
    return row


def _searched(api: dict, out: dict) -> None:
    """Say which project a one-project search read, and the others it did not when none was named."""
    if api.get("scope") != "all" and api.get("project"):
        out["project"] = api["project"]
    if api.get("other_projects"):
        out["other_projects"] = api["other_projects"]


def vault_answer(api: dict) -> dict:
    out: dict = {}
    _searched(api, out)
    _languages(api, out)
    out.update({"results": [vault_row(n) for n in api["results"]], "total": api["total"], "more": api["more"]})
    for key in ("search_mode", "semantic_reason", "explain_document", "empty_reason"):
        if api.get(key):
            out[key] = api[key]
    if api.get("corrected"):
        out["corrected"] = {"from": api["corrected"]["original"], "to": api["corrected"]["query"]}
    if api.get("did_you_mean"):
        out["did_you_mean"] = api["did_you_mean"]["query"]
    return out


def projects_answer(projects: list[dict], model: str) -> dict:
    """Each project's name and size, and whether search by meaning covers all of it yet."""
    rows = []
    for p in projects:
        row = {"name": p["name"], "notes": p.get("documents"),
               "meaning_search_ready": model == "ready" and not p.get("pending") and not p.get("error"),
               "passages_left_to_embed": p.get("pending", 0)}
        if p.get("builtin"):
            row["builtin"] = True
        if p.get("error"):
            row["error"] = p["error"]
        rows.append(row)
    return {"projects": rows, "model": model}


# --- bad calls: the SDK checks arguments against each tool's schema; its pydantic report becomes sentences ------

TYPE_WORDS = {"int": "a whole number", "float": "a number", "bool": "true or false", "str": "text", "string": "text",
              "list": "a list", "dict": "an object", "model": "an object"}


def unknown_arguments(tool: str, unknown: list[str], known: list[str]) -> str:
    """Say which arguments a tool does not take, the one probably meant, and what it takes."""
    said = []
    for key in unknown[:3]:
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        said.append(f"{tool} has no argument '{str(key)[:40]}'" + (f"; did you mean '{near[0]}'?" if near else "."))
    return " ".join(said) + f" Its arguments: {', '.join(known)}."


def validation_sentences(tool: str, error: ValidationError, schema: dict) -> str:
    """Say what was wrong with a call's arguments and what to send instead, in the project's words."""
    said: list[str] = []
    seen: set[str] = set()
    for problem in error.errors():
        where = [str(p) for p in problem["loc"] if not _is_type_name(p)]
        name = ".".join(where) or "the arguments"
        if name in seen:
            continue
        seen.add(name)
        said.append(_sentence(tool, name, where, problem, _property(schema, where)))
        if len(said) == 3:
            break
    return " ".join(said)


def _is_type_name(part) -> bool:
    text = str(part)
    return "[" in text or text in ("str", "int", "float", "bool", "dict", "list", "none", "function-after",
                                   "constrained-str", "json-or-python")


def _property(schema: dict, where: list[str]) -> dict:
    node = schema
    for part in where:
        props = node.get("properties") or {}
        if part in props:
            node = props[part]
        else:
            return {}
        ref = _ref(schema, node)
        node = ref or node
    return node


def _ref(schema: dict, node: dict) -> dict | None:
    options = [node] + node.get("anyOf", [])
    for option in options:
        ref = option.get("$ref")
        if ref:
            return schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1])
    return None


def _range_of(prop: dict) -> tuple:
    options = [prop] + prop.get("anyOf", [])
    low = next((o["minimum"] for o in options if "minimum" in o), None)
    high = next((o["maximum"] for o in options if "maximum" in o), None)
    return low, high


def _sentence(tool: str, name: str, where: list[str], problem: dict, prop: dict) -> str:
    kind, ctx, got = problem["type"], problem.get("ctx") or {}, problem.get("input")
    about = prop.get("description", "")
    shown = json.dumps(got, ensure_ascii=False, default=str)[:60] if got is not None else "null"
    if kind == "missing":
        return f"{tool} needs '{name}'" + (f": {about}" if about else ".")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        low, high = _range_of(prop)
        if low is not None and high is not None:
            return f"'{name}' must be from {low} to {high:,}; you sent {shown}."
        bound = next((ctx[k] for k in ("ge", "le", "gt", "lt") if k in ctx), "?")
        words = {"greater_than_equal": "at least", "less_than_equal": "at most", "greater_than": "more than",
                 "less_than": "less than"}[kind]
        return f"'{name}' must be {words} {bound}; you sent {shown}."
    if kind in ("string_too_short", "too_short"):
        return f"'{name}' is empty; " + (about[0].lower() + about[1:] if about else "give a value.")
    if kind in ("string_too_long", "too_long"):
        return f"'{name}' is too long (at most {ctx.get('max_length', '?'):,}); shorten it."
    if kind in ("literal_error", "enum"):
        return f"'{name}' must be one of {ctx.get('expected', '')}; you sent {shown}."
    if kind.endswith("_parsing") or kind.endswith("_type") or kind in ("int_from_float",):
        word = TYPE_WORDS.get(kind.split("_")[0], kind.split("_")[0])
        return f"'{name}' must be {word}; you sent {shown}." + (f" ({about})" if about and "[" not in word else "")
    text = re.sub(r"\s+", " ", str(problem.get("msg", "is not valid")))
    return f"'{name}': {text[:120]}; you sent {shown}."
