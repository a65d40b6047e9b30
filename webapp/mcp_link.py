"""How `skmemory mcp` reaches the SK Memory server: found from the port its data folder records, or started in the
background (detached, same data folder and port) when none answers.

Importing this module imports nothing of the MCP SDK (a refusal is the SDK's ToolError, made when raised: only a
tool raises it, after the SDK is in), so `skmemory mcp` finds or starts the server while the SDK still imports.
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

from indexer import SearchRequest
from indexer.errors import InvalidQuery, SKMemoryError
from indexer.contract.limits import check_texts

from .client import CLIENT_HEADER, RouteClient, ServerClient, ServerError, query_pairs

logger = logging.getLogger(__name__)


def refusal(message: str) -> Exception:
    """The SDK's ToolError: a tool's refusal, which the client reads as the sentence."""
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(message)


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
        except Exception as exc:  # the SDK's ToolError: the tools say the same when called
            logger.warning("%s", exc)

    def connect(self) -> ServerClient:
        """Return a client of the running server, starting one if needed; raise ToolError saying how to start it."""
        with self._lock:
            if self._client is None:
                self._client = _find(self.port, self.home) or self._start_once()
            return self._client

    def _start_once(self) -> ServerClient:
        if self._failure and time.monotonic() - self._failure[0] < RESPAWN_AFTER:
            raise refusal(self._failure[1])
        try:
            client = self._start()
        except SKMemoryError as exc:
            message = (f"SK Memory's server is not running and could not be started: {exc} "
                       f"{HOW_TO_START.format(home=self.home)}")
            self._failure = (time.monotonic(), message)
            raise refusal(message) from None
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

    def ask(self, route: str, payload: dict) -> dict:
        """Ask one route of the route table by name (indexer/contract/routes.py); the server's error sentence
        becomes a ToolError."""
        try:  # a lone surrogate cannot even be sent: refuse it (and control characters) here, in the same words
            for name, value in payload.items():
                check_texts("The query" if name in ("q", "query") else f"'{name}'", value)
        except InvalidQuery as exc:
            raise refusal(str(exc)) from None
        return self._ask(lambda client: client.ask(route, payload))

    def search(self, request: SearchRequest) -> dict:
        """Run one search on the server, as the client sends it."""
        return self._ask(lambda client: client.search(request))

    def _ask(self, send) -> dict:
        for attempt in (1, 2):
            client = self.connect()
            try:
                return send(client)
            except ServerError as exc:
                raise refusal(str(exc)) from None
            except (SKMemoryError, OSError) as exc:
                with self._lock:  # the server went away: forget it, and start it again once
                    self._client = None
                if attempt == 2:
                    raise refusal(f"SK Memory's server stopped answering ({exc}). "
                                    f"{HOW_TO_START.format(home=self.home)}") from None
        raise AssertionError("unreachable")


class AppLink(ServerLink):
    """The tools' link to an app in this process (Flask's test client): every tool runs without a server or a
    socket, through the same routes, checks and answers (tests/test_mcp_tools.py runs each so)."""

    def __init__(self, app):
        super().__init__(Path("."), 0)
        self._client = AppClient(app)

    def connect(self) -> "AppClient":
        return self._client


class AppClient(RouteClient):
    """A RouteClient over a Flask app's test client, as a local program reaches the server."""

    def __init__(self, app):
        self.client = app.test_client()
        self.base = f"http://127.0.0.1:{app.config['SKMEMORY_PORT']}"

    def get(self, path: str, params: dict | None = None) -> dict:
        return self._answer(self.client.get(path, query_string=query_pairs(params or {}), base_url=self.base,
                                            headers={CLIENT_HEADER: "skmemory"}))

    def post(self, path: str, body: dict) -> dict:
        return self._answer(self.client.post(path, json=body, base_url=self.base, headers={CLIENT_HEADER: "skmemory"}))

    @staticmethod
    def _answer(response) -> dict:
        body = response.get_json(silent=True) or {}
        if response.status_code >= 400:
            raise ServerError(response.status_code, body.get("error", "error"), body.get("detail", response.status))
        return body



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
