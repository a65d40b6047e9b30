"""The wire of `skmemory mcp` (stdin and stdout), and its first answer, given before the MCP SDK is imported.

Importing the SDK takes most of a second (its protocol types for every revision), and an AI client waits for
`initialize` before it lists a tool. So the command takes the wire first, starts importing the SDK in a thread,
and answers `initialize` itself from what this module knows (stdlib only): the revision the SDK would agree on,
the capabilities it would announce, the server's name and instructions. The request is then handed to the SDK
anyway, so that its session is initialized as usual, and the SDK's own reply to it is not sent twice
(mcp_stdio.py drops it, after checking that it says what this one said; tests/test_mcp_agents.py holds both
equal for every revision).

While serving, fd 0 reads the null device and fd 1 writes to stderr, so that nothing a library prints reaches the
wire; the protocol uses private duplicates of both.
"""
from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from importlib import metadata

NAME, TITLE = "skmemory", "SK Memory"
INSTRUCTIONS = ("Search the user's own notes, documents and saved conversations, indexed locally by SK Memory. "
                "Start with hybrid_search (one compact row per note) or vault_search (with metadata filters); "
                "read a row with read_note(path, start_line=lines[0]) or by section, a page at a time; "
                "get_document gives a long note's outline first. list_projects, list_tags and list_properties "
                "say what there is to search. get_context packs passages into a token budget. For mind maps, "
                "mindmap_search_nodes then mindmap_get_context.")
# What the SDK agrees on through `initialize` (mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS, newest last) and
# announces for a server with tools; tests/test_mcp_agents.py fails when an SDK upgrade changes either.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES = {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}


def version() -> str:
    try:
        return metadata.version("sk-memory")
    except metadata.PackageNotFoundError:
        return "0"


@dataclass
class Wire:
    """The protocol's private stdin and stdout, the first line read (to be handed to the SDK), and the reply
    already sent to it (None: the first line was not an `initialize` request)."""

    stdin: io.TextIOWrapper
    stdout: io.TextIOWrapper
    first: str | None = None
    answered: dict | None = None  # the JSON-RPC reply sent for the first line


def take() -> Wire:
    """Take fds 0 and 1 for the protocol alone (see the module's docstring)."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return Wire(io.TextIOWrapper(os.fdopen(wire_in, "rb"), encoding="utf-8", errors="replace"),
                io.TextIOWrapper(os.fdopen(wire_out, "wb"), encoding="utf-8"))


def initialize_result(requested) -> dict:
    """What the SDK answers an `initialize` that asks for `requested`."""
    agreed = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS, "protocolVersion": agreed,
            "serverInfo": {"name": NAME, "title": TITLE, "version": version()}}


def answer_first(wire: Wire) -> None:
    """Read the first line; when it is an `initialize` request, answer it now. Either way the line is kept for
    the SDK (wire.first)."""
    wire.first = wire.stdin.readline()
    try:
        message = json.loads(wire.first)
    except ValueError:
        return
    if not (isinstance(message, dict) and message.get("method") == "initialize" and "id" in message):
        return
    params = message.get("params")
    if not (isinstance(params, dict) and isinstance(params.get("protocolVersion"), str)
            and isinstance(params.get("capabilities"), dict) and isinstance(params.get("clientInfo"), dict)
            and isinstance(params["clientInfo"].get("name"), str)
            and isinstance(params["clientInfo"].get("version"), str)):
        return  # the SDK refuses it, in its own words
    wire.answered = {"jsonrpc": "2.0", "id": message["id"],
                     "result": initialize_result(message["params"].get("protocolVersion"))}
    wire.stdout.write(json.dumps(wire.answered, separators=(",", ":")) + "\n")
    wire.stdout.flush()
