"""Talking to a running `skmemory serve` over localhost HTTP: the CLI's and the MCP server's one way in.

A running server records where it listens in its data home (`server.json`: port and pid), so every command
finds it from the data home alone, without SKMEMORY_PORT; an MCP client that passes no environment to the
process it starts still reaches it. `ServerClient` has the engine's own method names for what the command
line does (projects, add_project, rename_project, remove_project, reindex, status, search), so a command
calls one object whether it talks to the server or opens the data home itself.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from indexer import SearchRequest
from indexer.contract.answers import Answer, SearchAnswer, VaultAnswer
from indexer.contract.routes import ROUTES
from indexer.errors import SKMemoryError

from .errors import STATUS_FOR_KIND

RECORD_NAME = "server.json"
CLIENT_HEADER = "X-SKMemory-Client"  # how a program names itself to the server (webapp/security.py)


class ServerError(SKMemoryError):
    """The server answered with an error; its detail is the sentence to show."""

    def __init__(self, status: int, error: str, detail: str):
        super().__init__(detail)
        self.status = status
        self.error = error
        self.kind = error if error in STATUS_FOR_KIND else "invalid_request"  # relayed as the server said it


# --- the record a running server leaves in its data home -------------------------------------------------------

def write_record(home: Path, port: int) -> Path:
    """Say in the data home that this process serves it on port (replaced atomically)."""
    path = Path(home) / RECORD_NAME
    record = {"app": "sk-memory", "pid": os.getpid(), "port": port, "url": f"http://127.0.0.1:{port}/",
              "home": str(home), "since": time.time()}
    tmp = path.with_name(f".{RECORD_NAME}.{os.getpid()}")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)
    return path


def clear_record(home: Path) -> None:
    """Remove the record if it is this process's (a newer server's record is left alone)."""
    path = Path(home) / RECORD_NAME
    if read_record(home).get("pid") == os.getpid():
        try:
            path.unlink()
        except OSError:
            pass


def read_record(home: Path) -> dict:
    """What the data home says about its running server ({} when nothing or nothing readable)."""
    try:
        record = json.loads((Path(home) / RECORD_NAME).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


# --- the client --------------------------------------------------------------------------------------------------

class RouteClient:
    """Asks the routes of the route table (indexer/contract/routes.py) by name, over `get` and `post`, and decodes
    each answer into its route's type (`ask("search", ...)` is a SearchAnswer, its results ChunkHits or NoteHits)."""

    def get(self, path: str, params: dict | None = None) -> dict:
        raise NotImplementedError

    def post(self, path: str, body: dict) -> dict:
        raise NotImplementedError

    def ask(self, name: str, payload: dict | None = None) -> Answer:
        """One route by its name in the route table: a GET's payload as its query string, a POST's as its body; the
        answer decoded into the route's type (an SKMemoryError names what does not fit, from a server of another
        version)."""
        route = ROUTES[name]
        payload = {k: v for k, v in (payload or {}).items() if v is not None}
        answer = self.get(route.path, payload) if route.method == "GET" else self.post(route.path, payload)
        try:
            return route.answer.decode(answer)
        except ValueError as exc:
            raise SKMemoryError(f"The answer of {route.key} is not a {route.answer.__name__}: {str(exc)[:500]}. "
                                "Is the server another version of SK Memory than this client?") from None

    def search(self, request: SearchRequest) -> SearchAnswer | VaultAnswer:
        """Run a search on the server: spec 000's modes through GET /api/search, vault through POST
        /api/vault_search (the request's own to_params is what crosses)."""
        return self.ask("vault_search" if request.mode == "vault" else "search", request.to_params())


class ServerClient(RouteClient):
    """A JSON client of the API of an SK Memory server on 127.0.0.1, with the engine's method names."""

    def __init__(self, port: int, timeout: float = 60.0):
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout
        self.health: dict = {}

    @classmethod
    def find(cls, home: Path | None = None, port: int | None = None) -> "ServerClient | None":
        """Return a client of the server for this data home (its recorded port first, then port), else None."""
        ports = []
        recorded = read_record(home).get("port") if home is not None else None
        if isinstance(recorded, int):
            ports.append(recorded)
        if port is not None and port not in ports:
            ports.append(port)
        for candidate in ports:
            client = cls(candidate, timeout=2.0)
            try:
                health = client.get("/api/health")
            except (SKMemoryError, OSError, ValueError):  # nothing there, or something that is not SK Memory
                continue
            if health.get("app") != "sk-memory":
                continue
            if home is not None and Path(health.get("home", "")) != Path(home):
                continue
            client.timeout = 60.0
            client.health = health
            return client
        return None

    @property
    def url(self) -> str:
        return f"{self.base}/"

    # --- the engine's methods, answered by the server ---------------------------------------------------------

    def projects(self) -> list[dict]:
        """Every project with its counts."""
        return self.ask("projects")["projects"]

    def add_project(self, path: str, name: str | None = None) -> dict:
        """Register a folder (an absolute path) as a project; the server starts indexing and watching it."""
        return self.post("/api/projects", {"path": path, "name": name})

    def rename_project(self, old: str, new: str) -> dict:
        return self.post(f"/api/projects/{_segment(old)}/rename", {"name": new})

    def remove_project(self, name: str) -> dict:
        return self._send(urllib.request.Request(f"{self.base}/api/projects/{_segment(name)}", method="DELETE"))

    def reindex(self, name: str) -> dict:
        """Queue a re-read of the project's folder; the answer's sync_request is the number to follow in status."""
        return self.post(f"/api/projects/{_segment(name)}/reindex", {})

    def status(self) -> dict:
        """The server's status: embeddings, rate, and every project's counts, sync and errors."""
        return self.get("/api/status")

    def set_embedding_paused(self, paused: bool) -> dict:
        """Pause embedding after the passages in hand, or go on (kept across restarts)."""
        return self.post("/api/embedding", {"paused": paused})

    # --- HTTP ---------------------------------------------------------------------------------------------------

    def get(self, path: str, params: dict | None = None) -> dict:
        query = urllib.parse.urlencode(query_pairs(params or {}), doseq=True)
        return self._send(urllib.request.Request(f"{self.base}{path}{'?' + query if query else ''}"))

    def post(self, path: str, body: dict) -> dict:
        data = json.dumps(body).encode()
        return self._send(urllib.request.Request(f"{self.base}{path}", data=data, method="POST",
                                                 headers={"Content-Type": "application/json"}))

    def _send(self, req: urllib.request.Request) -> dict:
        req.add_header(CLIENT_HEADER, "skmemory")  # programs name themselves where browsers send Origin
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
            raise SKMemoryError(f"Cannot reach SK Memory at {self.base} ({exc.reason}); start it with "
                                "`skmemory serve`.") from None


def _segment(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def query_pairs(params: dict) -> list[tuple[str, str]]:
    """A query string's (name, value) pairs: a list repeats its name, None is left out."""
    out = []
    for key, value in params.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            out.append((key, str(v)))
    return out
