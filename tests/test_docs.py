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
    from webapp.mcp_server import ServerLink, build_server

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
