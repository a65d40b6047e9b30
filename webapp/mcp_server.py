"""The MCP server: SK Memory's search tools for AI clients, answered by the running `skmemory serve`.

The index has one owner, the server; this process only talks to it over localhost HTTP, and starts it in the
background (detached, same data home and port) when none answers. It never imports the model or torch, so a
client's `initialize` is answered at once. The tools (mcp_tools/) answer through the JSON API, sized for an agent
(mcp_tools/answers.py), as structured content checked against a published schema and as JSON text; expected
failures are tool errors with a sentence that says what to do.
"""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from indexer import SearchRequest
from indexer.errors import InvalidQuery, SKMemoryError
from indexer.limits import check_texts

from .client import ServerClient, ServerError
from .mcp_tools.answers import unknown_arguments, validation_sentences
from . import mcp_wire
from .mcp_stdio import stdio_streams
from .mcp_tools import register
from .mcp_tools.published import published
from .mcp_wire import INSTRUCTIONS, NAME, TITLE, Wire, version

logger = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # seconds for a started server to answer /api/health (it answers before the model loads)
RESPAWN_AFTER = 30.0  # after a failed start, tool calls report that failure this long before trying again
HOW_TO_START = ("Start it yourself with `skmemory serve` for the data folder this MCP server reads "
                "(`skmemory --home {home} serve`), then call the tool again.")


class ServerLink:
    """The SK Memory server this process asks, found on the port or started in the background."""

    def __init__(self, home: Path, port: int, start_timeout: float = START_TIMEOUT):
        self.home, self.port, self.start_timeout = Path(home), port, start_timeout
        self._client: ServerClient | None = None
        self._lock = threading.Lock()
        self._failure: tuple[float, str] | None = None

    def warm(self) -> None:
        """Find or start the server now, so the first tool call does not wait for it."""
        try:
            self.connect()
        except ToolError as exc:
            logger.warning("%s", exc)

    def connect(self) -> ServerClient:
        """Return a client of the running server, starting one if needed; raise ToolError saying how to start it."""
        with self._lock:
            if self._client is None:
                self._client = _find(self.port, self.home) or self._start_once()
            return self._client

    def _start_once(self) -> ServerClient:
        if self._failure and time.monotonic() - self._failure[0] < RESPAWN_AFTER:
            raise ToolError(self._failure[1])
        try:
            client = self._start()
        except SKMemoryError as exc:
            message = (f"SK Memory's server is not running and could not be started: {exc} "
                       f"{HOW_TO_START.format(home=self.home)}")
            self._failure = (time.monotonic(), message)
            raise ToolError(message) from None
        self._failure = None
        return client

    def _start(self) -> ServerClient:
        other = _listener(self.port)
        if other:
            raise SKMemoryError(f"port {self.port} on 127.0.0.1 is taken by {other}.")
        log_path = self.home / "logs" / "mcp-serve.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        logger.info("No SK Memory server on port %d; starting one (log: %s)", self.port, log_path)
        env = {**os.environ, "SKMEMORY_HOME": str(self.home), "SKMEMORY_PORT": str(self.port)}
        with open(log_path, "ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "webapp.cli", "serve"], env=env, start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout
        while True:
            client = _find(self.port, self.home)
            if client is not None:
                return client
            if proc.poll() is not None:
                client = _find(self.port, self.home)  # another MCP process may have won the race to start it
                if client is not None:
                    return client
                raise SKMemoryError(f"`skmemory serve` exited with code {proc.returncode} ({_last_line(log_path)}).")
            if time.monotonic() > deadline:
                raise SKMemoryError(f"`skmemory serve` did not answer within {self.start_timeout:.0f} s "
                                    f"(its log is {log_path}).")
            time.sleep(0.25)

    def call(self, method: str, path: str, payload: dict) -> dict:
        """Send one API request; the server's error sentence becomes a ToolError."""
        try:  # a lone surrogate cannot even be sent: refuse it (and control characters) here, in the same words
            for name, value in payload.items():
                check_texts("The query" if name in ("q", "query") else f"'{name}'", value)
        except InvalidQuery as exc:
            raise ToolError(str(exc)) from None
        return self._ask(lambda client: client.get(path, payload) if method == "GET" else client.post(path, payload))

    def search(self, request: SearchRequest) -> dict:
        """Run one search on the server, as the client sends it."""
        return self._ask(lambda client: client.search(request))

    def _ask(self, send) -> dict:
        for attempt in (1, 2):
            client = self.connect()
            try:
                return send(client)
            except ServerError as exc:
                raise ToolError(str(exc)) from None
            except (SKMemoryError, OSError) as exc:
                with self._lock:  # the server went away: forget it, and start it again once
                    self._client = None
                if attempt == 2:
                    raise ToolError(f"SK Memory's server stopped answering ({exc}). "
                                    f"{HOW_TO_START.format(home=self.home)}") from None
        raise AssertionError("unreachable")


def _find(port: int, home: Path) -> ServerClient | None:
    try:
        return ServerClient.find(home, port)  # the port the data home records first, then the given one
    except ValueError:  # something answered, but not with JSON
        return None


def _listener(port: int) -> str | None:
    """Describe what already listens on the port (when it is not our server), or None when it is free."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
    except OSError:
        return None
    try:
        health = ServerClient(port, timeout=2).get("/api/health")
    except (SKMemoryError, OSError, ValueError):
        return "another program"
    if health.get("app") == "sk-memory":
        return f"an SK Memory server for another data folder ({health.get('home')})"
    return "another program"


def _last_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    return lines[-1].strip() if lines else f"see {path}"


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
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:  # a bug of ours: still logged as one, told as a sentence
            raise UnexpectedToolError(f"SK Memory could not answer this call of {name} (an internal error; "
                                      "`skmemory mcp` logged it). Try again, or use another tool.") from exc
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                tool = self._tool_manager.get_tool(name)
                raise ToolError(validation_sentences(name, exc.__cause__, tool.parameters if tool else {})) from None
            raise


def build_server(link: ServerLink) -> MCPServer:
    """Create the MCP server with every SK Memory tool, each answered through link."""
    server = SKMemoryMCP(name=NAME, title=TITLE, version=version(), instructions=INSTRUCTIONS)
    register(server, link)
    return server


def run(home: Path, port: int, wire: Wire | None = None) -> None:
    """Serve the tools over stdio until the client closes it; nothing but the protocol goes to stdout. `wire`: the
    stdin and stdout already taken (and the first line perhaps answered) by `skmemory mcp`."""
    link = ServerLink(home, port)
    server = build_server(link)
    server.wire = wire or mcp_wire.take()
    threading.Thread(target=link.warm, name="skmemory-server-start", daemon=True).start()
    server.run("stdio")
