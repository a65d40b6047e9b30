"""The composition root: bind 127.0.0.1, start the indexer for every project, serve the app."""
from __future__ import annotations

import errno
import faulthandler
import logging
import signal
import socket
import threading
import time

import click
from werkzeug.serving import WSGIRequestHandler, make_server

from indexer import BackgroundIndexer, Engine, Home, ensure_user_docs
from indexer.errors import HomeInUse, SKMemoryError

from . import create_app
from .client import ServerClient, clear_record, write_record

logger = logging.getLogger(__name__)
HOST = "127.0.0.1"  # never another interface: the index is the user's private data
GRAPH_REFRESH_SECONDS = 10  # how often stale Cluster View graphs are built again in the background


class RequestLog(WSGIRequestHandler):
    """Each request at debug level (`skmemory -vv serve` shows them): the terminal keeps the line saying where the
    app is, not one line per keystroke of a search."""

    def log_request(self, code="-", size="-") -> None:
        logger.debug("%s %s", self.requestline, code)


def _check_port_free(port: int) -> None:
    # werkzeug would print its own message and exit 1; say it our way, before any project is locked.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise SKMemoryError(
                    f"Port {port} is already in use (is SK Memory already running?); "
                    "choose another with --port or SKMEMORY_PORT."
                ) from None
            raise SKMemoryError(f"Cannot listen on {HOST}:{port}: {exc.strerror}.") from None


def check_not_running(home: Home) -> None:
    """Refuse a second server for one data home: it records its port there, wherever it listens."""
    running = ServerClient.find(home.settings.home)
    if running is not None:
        raise SKMemoryError(f"SK Memory is already running for this data folder at {running.url} "
                            f"(pid {running.health.get('pid', '?')}); open it there, or stop it first.")


def claim_home(home: Home, wait: float = 20.0):
    """Take the data home for this server; when another server has it (two started at once), wait for that one to
    answer and refuse with its address, as check_not_running does."""
    try:
        return home.claim_for_server()
    except HomeInUse as exc:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if ServerClient.find(home.settings.home) is not None:
                check_not_running(home)  # raises, naming its address
            time.sleep(0.25)
        raise SKMemoryError(str(exc)) from None


def serve(home: Home, port: int, on_ready=None) -> None:
    """Run the server until Ctrl+C or SIGTERM; the single owner of every project's index."""
    faulthandler.enable()  # a crash in native code (SQLite, Chroma, ONNX Runtime) leaves each stack in the log
    app = create_app({"SKMEMORY_PORT": port})
    _check_port_free(port)  # the caller has already refused a second server for this home (check_not_running)
    try:
        ensure_user_docs(home)  # the built-in, read-only help project that F1 searches
    except SKMemoryError as exc:
        logger.warning("The user docs are not available: %s", exc)
    server = make_server(HOST, port, app, threaded=True, request_handler=RequestLog)
    background = BackgroundIndexer(home, role="skmemory serve").start()
    engine = Engine(home, background)
    app.config["ENGINE"] = engine
    # The model loads while the person looks at the page; a search that comes first answers by keyword and says so.
    home.embedder.wait_for_load = False
    stopping = threading.Event()

    def warm_then_keep_graphs() -> None:  # Cluster View's graphs stay built as notes change: the open never waits
        engine.warm()
        while not stopping.wait(GRAPH_REFRESH_SECONDS):
            engine.refresh_graphs()

    threading.Thread(target=warm_then_keep_graphs, name="skmemory-warm", daemon=True).start()

    def stop(*_):
        if stopping.is_set():  # a second Ctrl+C: now (the index survives any stop; the next start repairs it)
            click.echo("Stopping at once.", err=True)
            raise KeyboardInterrupt
        stopping.set()
        click.echo("Stopping SK Memory: finishing the current batch (Ctrl+C again stops at once)...", err=True)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    write_record(home.settings.home, port)  # how the CLI and MCP find this server without SKMEMORY_PORT
    if on_ready:
        on_ready(f"http://{HOST}:{port}/", background)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        clear_record(home.settings.home)
        server.server_close()
        engine.close()
        pending = sum(p.get("pending", 0) for p in background.status()["projects"])
        background.stop()
        click.echo("Stopped. Everything indexed so far is saved" + (
            f"; {pending:,} passages still to embed resume at the next start." if pending else "."), err=True)
