"""Talking to a running `skmemory serve` over localhost HTTP (the CLI and the MCP server use this)."""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from indexer.errors import SKMemoryError


class ServerError(SKMemoryError):
    """The server answered with an error; its detail is the sentence to show."""

    def __init__(self, status: int, error: str, detail: str):
        super().__init__(detail)
        self.status = status
        self.error = error


class ServerClient:
    """A small JSON client for the API of a server on 127.0.0.1."""

    def __init__(self, port: int, timeout: float = 60.0):
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout

    @classmethod
    def find(cls, port: int, home: Path | None = None) -> "ServerClient | None":
        """Return a client if an SK Memory server for this data home answers on the port, else None."""
        client = cls(port, timeout=2.0)
        try:
            health = client.get("/api/health")
        except (SKMemoryError, OSError, ValueError):  # nothing there, or something that is not SK Memory
            return None
        if health.get("app") != "sk-memory":
            return None
        if home is not None and Path(health.get("home", "")) != Path(home):
            return None
        client.timeout = 60.0
        return client

    def get(self, path: str, params: dict | None = None) -> dict:
        query = urllib.parse.urlencode(_flatten(params or {}), doseq=True)
        return self._send(urllib.request.Request(f"{self.base}{path}{'?' + query if query else ''}"))

    def post(self, path: str, body: dict) -> dict:
        data = json.dumps(body).encode()
        return self._send(urllib.request.Request(f"{self.base}{path}", data=data, method="POST",
                                                 headers={"Content-Type": "application/json"}))

    def _send(self, req: urllib.request.Request) -> dict:
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                body = json.loads(exc.read())
            except ValueError:
                body = {"error": "http_error", "detail": f"The server answered {exc.code}."}
            raise ServerError(exc.code, body.get("error", "error"), body.get("detail", str(exc))) from None
        except urllib.error.URLError as exc:
            raise SKMemoryError(f"Cannot reach SK Memory at {self.base} ({exc.reason}); start it with `skmemory serve`.") from None


def _flatten(params: dict) -> list[tuple[str, str]]:
    out = []
    for key, value in params.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            out.append((key, str(v)))
    return out
