"""The MCP server: SK Memory's search tools for AI clients, answered by the running `skmemory serve`.

The index has one owner, the server; this process only talks to it over localhost HTTP, and starts it in the
background (detached, same data home and port) when none answers. It never imports the model or torch, so a
client's `initialize` is answered at once. The tools (mcp_tools/) answer through the JSON API, sized for an agent
(mcp_tools/answers.py), as structured content checked against a published schema and as JSON text; expected
failures are tool errors with a sentence that says what to do.
"""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from indexer.errors import InvalidQuery
from indexer.contract.limits import check_texts

from .mcp_link import ServerLink
from .mcp_tools.answers import unknown_arguments, validation_sentences
from .mcp_stdio import stdio_streams
from .mcp_tools import register
from .mcp_tools.published import published
from .mcp_wire import INSTRUCTIONS, NAME, TITLE, Wire, take, version

logger = logging.getLogger(__name__)

# --- the server ----------------------------------------------------------------------------------------------------

class SKMemoryMCP(MCPServer):
    """The SDK's server, answering a call whose arguments do not fit a tool's schema in the project's sentences
    (what was wrong, what to send) instead of pydantic's report, and over a stdio transport that answers every
    line JSON allows (mcp_stdio.py)."""

    _published: list | None = None
    wire: Wire | None = None  # the stdin and stdout taken, and the initialize already answered (mcp_wire.py)

    async def run_stdio_async(self) -> None:
        async with stdio_streams(self.wire) as (read_stream, write_stream):
            await self._lowlevel_server.run(read_stream, write_stream,
                                            self._lowlevel_server.create_initialization_options())

    async def list_tools(self):
        if self._published is None:  # the tools never change while the process runs
            self._published = [tool.model_copy(update={"input_schema": published(tool.input_schema, inputs=True),
                                                       "output_schema": published(tool.output_schema, inputs=False)})
                               for tool in await super().list_tools()]
        return self._published

    async def call_tool(self, name, arguments, context=None):
        tool = self._tool_manager.get_tool(name)
        if tool is not None and isinstance(arguments, dict):
            known = (tool.parameters or {}).get("properties") or {}
            try:  # before the schema's own check, whose report would quote half a UTF-16 pair back
                for key, value in arguments.items():
                    check_texts("The query" if key in ("q", "query") else f"'{key}'", value)
            except InvalidQuery as exc:
                raise ToolError(str(exc)) from None
            unknown = [key for key in arguments if key not in known]
            if unknown:  # a misspelt argument silently dropped would answer another question than was asked
                raise ToolError(unknown_arguments(name, unknown, list(known)))
            if sentence := loose_argument(name, arguments, known):
                raise ToolError(sentence)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:  # a bug of ours: still logged as one, told as a sentence
            raise UnexpectedToolError(f"SK Memory could not answer this call of {name} (an internal error; "
                                      "`skmemory mcp` logged it). Try again, or use another tool.") from exc
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                tool = self._tool_manager.get_tool(name)
                raise ToolError(validation_sentences(name, exc.__cause__, tool.parameters if tool else {})) from None
            # One style for every refusal: the sentence itself, without the SDK's "Error executing tool X: ".
            prefix = f"Error executing tool {name}: "
            if str(exc).startswith(prefix):
                raise ToolError(str(exc)[len(prefix):]) from exc.__cause__
            raise


def loose_argument(tool: str, arguments: dict, known: dict) -> str | None:
    """The sentence for an argument the schema's lax reading would take as something else than meant: true or
    false for a number (taken as 1 or 0), an empty project name (taken as "no project named"); None when none."""
    for key, value in arguments.items():
        kinds = {option.get("type") for option in [known.get(key, {}), *known.get(key, {}).get("anyOf", [])]}
        if isinstance(value, bool) and kinds & {"integer", "number"} and "boolean" not in kinds:
            return f"'{key}' of {tool} is a number, not {json.dumps(value)}: send it as a number, such as 10."
        if key == "project" and isinstance(value, str) and not value.strip():
            return (f"'project' of {tool} is empty: name a project (list_projects gives their names), or leave "
                    "'project' out for the default one.")
    return None


def build_server(link: ServerLink) -> MCPServer:
    """Create the MCP server with every SK Memory tool, each answered through link."""
    server = SKMemoryMCP(name=NAME, title=TITLE, version=version(), instructions=INSTRUCTIONS)
    register(server, link)
    return server


def run(home: Path, port: int, wire: Wire | None = None, link: ServerLink | None = None) -> None:
    """Serve the tools over stdio until the client closes it; nothing but the protocol goes to stdout. `wire`: the
    stdin and stdout already taken (and the first line perhaps answered) by `skmemory mcp`; `link`: the server
    link it is already finding or starting the server through."""
    if link is None:
        link = ServerLink(home, port)
        threading.Thread(target=link.warm, name="skmemory-server-start", daemon=True).start()
    server = build_server(link)
    server.wire = wire or take()
    server.run("stdio")
