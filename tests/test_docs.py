"""The documentation in docs/ names everything a user can call: every JSON API route, every command of the command
line and every MCP tool (datasette tests its docs the same way). The README is the front door: short, with the two
commands of the quick start."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from support import REPO

DOCS = REPO / "docs"


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))


def api_routes() -> list[str]:
    from webapp import create_app

    app = create_app({"TESTING": True})
    return sorted({rule.rule for rule in app.url_map.iter_rules() if rule.rule.startswith("/api")})


def documented(route: str, text: str) -> bool:
    """A route is documented when docs name its path, a <parameter> written as anything (ID, NAME, ...)."""
    pattern = re.escape(route)
    pattern = re.sub(r"<(?:[^:>]+:)?[^>]+>", r"[^/\\s`?]+", pattern.replace(r"\<", "<").replace(r"\>", ">"))
    return re.search(pattern + r"(?![\w/])", text) is not None


def test_every_api_route_is_documented():
    text = docs_text()
    routes = api_routes()
    assert len(routes) > 20
    missing = [r for r in routes if not documented(r, text)]
    assert missing == [], f"routes not documented in docs/: {missing}"


def test_every_cli_command_is_documented():
    from webapp.cli import cli

    text = docs_text()
    missing = [name for name in cli.commands if not re.search(rf"skmemory (?:[-\w]+ )*?{re.escape(name)}\b", text)
               and f"`{name}`" not in text]
    assert len(cli.commands) > 10
    assert missing == [], f"commands not documented in docs/: {missing}"


def test_every_mcp_tool_is_documented():
    from webapp.mcp_link import ServerLink
    from webapp.mcp_server import build_server

    server = build_server(ServerLink(Path("/nonexistent"), 1))
    tools = [t.name for t in asyncio.run(server.list_tools())]
    text = docs_text()
    assert len(tools) > 10
    missing = [t for t in tools if f"`{t}`" not in text]
    assert missing == [], f"MCP tools not documented in docs/mcp.md: {missing}"


def test_the_checks_above_can_fail():
    assert not documented("/api/nowhere/<name>", "GET /api/nowhere")
    assert documented("/api/projects/<name>/rename", "POST /api/projects/NAME/rename")
    assert not documented("/api/documents/<document_id>", "GET /api/documents/ID/related only")


def test_the_readme_is_a_front_door_with_the_quick_start_and_links_into_docs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= 200
    assert "make run" in readme and "make test" in readme
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(set(links)) >= 8
    broken = [link for link in links if not (REPO / link).exists()]
    assert broken == []


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_links_between_docs_pages_lead_somewhere(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text) if not t.startswith("http")]
    broken = [t for t in targets if not (DOCS / t).exists()]
    assert broken == [], f"{page} links to {broken}"


# --- the vocabularies defined once in the code, and the docs that must agree with them --------------------------

def api_doc() -> str:
    return (DOCS / "api.md").read_text(encoding="utf-8")


def test_every_mode_and_filter_key_is_where_the_docs_list_them():
    from indexer import FILTER_KEYS, MODES

    text = api_doc()
    modes_row = next(line for line in text.splitlines() if line.startswith("| mode |"))
    assert [m for m in MODES if m not in modes_row] == []
    filters_row = next(line for line in text.splitlines() if line.startswith("| filters |"))
    assert [k for k in FILTER_KEYS if k not in filters_row] == []
    mcp_row = next(line for line in (DOCS / "mcp.md").read_text(encoding="utf-8").splitlines()
                   if line.startswith("| `vault_search` with `filters`"))
    missing = [k for k in FILTER_KEYS if k not in mcp_row]
    assert missing == [], f"name {missing} in docs/mcp.md's row of vault_search (its filters, in brackets)"


def test_every_request_field_is_in_the_request_table():
    from dataclasses import fields

    from indexer import SearchRequest

    rows = "\n".join(line.split("|")[1] for line in api_doc().splitlines() if line.startswith("| ") and
                     line.count("|") >= 5)
    names = [f.name for f in fields(SearchRequest) if f.init]
    assert [n for n in names if n not in rows] == []


def test_every_request_value_names_the_route_that_builds_it():
    from indexer.contract.routes import ROUTES

    text = api_doc()
    for route in ROUTES.values():
        if route.request:
            assert route.reader in text, f"docs/api.md does not say that {route.key} builds {route.reader}"
        assert documented(route.path.replace("<document_id>", "<id>"), text), route.path


def test_every_answer_row_type_and_alias_is_documented():
    import typing

    from indexer.contract.routes import ROUTES
    from indexer.contract.rows import ChunkHit, MemoryHit, Row

    text = api_doc()
    for route in ROUTES.values():
        assert f"`{route.answer.__name__}`" in text, f"docs/api.md does not name {route.key}'s answer type"
        for hint in typing.get_type_hints(route.answer).values():
            for kind in _types_in(hint):
                if isinstance(kind, type) and issubclass(kind, Row):
                    assert f"`{kind.__name__}`" in text, kind.__name__
    for alias in [*ChunkHit.ALIASES, *MemoryHit.ALIASES]:
        assert f"`{alias}`" in text


def _types_in(hint) -> list:
    import typing

    args = typing.get_args(hint)
    return [hint] if not args else [k for a in args for k in _types_in(a)]


def test_the_mcp_tools_ask_routes_the_app_serves_and_the_docs_name():
    from indexer.contract.filters import FILTER_KEYS, FILTERS_SCHEMA
    from indexer.contract.routes import ROUTES
    from webapp.mcp_tools import TOOL_ROUTES, tools

    assert [t.__name__ for t in tools()] == list(TOOL_ROUTES), "each tool needs a route of the table that names it"
    mcp_doc = (DOCS / "mcp.md").read_text(encoding="utf-8")
    routes = set(api_routes())
    for tool, names in TOOL_ROUTES.items():
        assert f"`{tool}`" in mcp_doc
        for name in names:
            assert ROUTES[name].path in routes, f"{tool} asks {ROUTES[name].key}, which the app does not serve"
    assert set(FILTERS_SCHEMA["properties"]) == set(FILTER_KEYS)  # the MCP schema's filters are the request's


def test_where_things_live_names_every_module_over_100_lines():
    """docs/architecture.md's map of the house names every module a newcomer must find (over 100 lines) by file."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    start = text.index("## Where things live")
    block = text[start:text.index("```", text.index("```", start) + 3)]
    unnamed = []
    for package in ("indexer", "webapp"):
        for path in sorted((REPO / package).rglob("*.py")):
            if sum(1 for _ in path.open(encoding="utf-8")) <= 100:
                continue
            name = f"{path.parent.name}/" if path.name == "__init__.py" else path.name
            if not re.search(r"(?<![\w.])" + re.escape(name), block):
                unnamed.append(str(path.relative_to(REPO)))
    assert unnamed == [], "name these in docs/architecture.md's Where things live: " + ", ".join(unnamed)
