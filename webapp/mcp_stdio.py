"""MCP over stdio, as the SDK's transport does it, with one difference: a line the SDK's strict JSON reader refuses
but Python's JSON reader takes (text with half of a UTF-16 pair, `"kan\\ud800ban"`, which JSON allows) is read and
answered, where the SDK dropped it and the client waited for ever (issue 40 row 2). The tools then refuse the text
with the same sentence the web API gives.

The wire (mcp_wire.py) may hold a first line already read and answered: it is read here like any other, and the
SDK's own reply to it is checked against the one sent and not sent again.
"""
from __future__ import annotations

import json
import logging
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from .mcp_wire import Wire

logger = logging.getLogger(__name__)

try:  # the SDK's streams carry each message's context; older 2.x releases used plain memory streams
    from mcp.shared._context_streams import create_context_streams as _streams
except ImportError:  # pragma: no cover
    _streams = None


def _pair(kind):
    if _streams is not None:
        return _streams[kind](0)
    return anyio.create_memory_object_stream(0)


def lenient(line: str):
    """The message in a line that only Python's JSON reader takes, or None."""
    try:
        return types.jsonrpc_message_adapter.validate_python(json.loads(line), by_name=False)
    except Exception:
        return None


PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def refusal(line: str) -> types.JSONRPCError | None:
    """JSON-RPC's own error for a line that holds no message the SDK can take (it logged such lines and answered
    nothing, and the client waited for ever), with a sentence saying what to send; None for a good line. The reply
    carries the request's id where one can be read, else null, as JSON-RPC 2.0 says."""
    try:
        message = json.loads(line.strip())
    except ValueError as exc:
        shown = line.strip()[:80]
        return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({exc.msg}: character {exc.pos + 1}"
                                         f" of {shown!r}). Send one JSON-RPC message per line, as a JSON object.")
    if isinstance(message, list):
        return _error(None, INVALID_REQUEST, "Invalid Request: a batch (a JSON array) is not taken: MCP sends one "
                                             "JSON-RPC message per line, each a JSON object.")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, f"Invalid Request: a JSON-RPC message is a JSON object, not "
                                             f"{_kind(message)} ({line.strip()[:40]!r}).")
    request_id = message.get("id")
    readable = isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
    if "id" in message and not readable and request_id is not None:
        return _error(None, INVALID_REQUEST, f"Invalid Request: an id is a string or an integer, not "
                                             f"{_kind(request_id)} ({json.dumps(request_id)[:40]}).")
    if message.get("jsonrpc") != "2.0":
        return _error(request_id if readable else None, INVALID_REQUEST,
                      'Invalid Request: every message says "jsonrpc": "2.0".')
    if "method" not in message and not ({"result", "error"} & message.keys() and readable):
        return _error(request_id if readable else None, INVALID_REQUEST,
                      'Invalid Request: a request names its "method" (and an "id", unless it is a notification).')
    params = message.get("params")
    if message.get("method") == "tools/call" and readable and isinstance(params, dict) \
            and params.get("arguments") is not None and not isinstance(params["arguments"], dict):
        sent = json.dumps(params["arguments"])[:60]
        return _error(request_id, INVALID_PARAMS, f"Invalid params: a tool's arguments are a JSON object of argument "
                                                  f"names and values, not {sent} (tools/list gives each tool's "
                                                  f"inputSchema).")
    return None


def _kind(value) -> str:
    """JSON's name for a value's type."""
    return {dict: "an object", list: "an array", str: "a string", bool: "true or false", float: "a number",
            int: "a number"}.get(type(value), "null")


def _error(request_id, code: int, sentence: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=sentence))


@asynccontextmanager
async def stdio_streams(wire: Wire):
    """(read stream, write stream) of MCP messages over the wire."""
    stdin, stdout = anyio.wrap_file(wire.stdin), anyio.wrap_file(wire.stdout)
    read_writer, read_stream = _pair(SessionMessage | Exception)
    write_stream, write_reader = _pair(SessionMessage)
    answered = wire.answered

    async def lines():
        if wire.first:
            yield wire.first
        async for line in stdin:
            yield line

    async def reader():
        try:
            async with read_writer:
                async for line in lines():
                    if not line.strip():
                        continue  # a blank line between messages: nothing asked
                    refused = refusal(line)
                    if refused is not None:
                        await write_stream.send(SessionMessage(refused))
                        continue
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except Exception as exc:
                        message = lenient(line)
                        if message is None:
                            await read_writer.send(exc)
                            continue
                    await read_writer.send(SessionMessage(message))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def writer():
        nonlocal answered
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    if answered is not None and getattr(session_message.message, "id", None) == answered["id"]:
                        if json.loads(text).get("result") != answered["result"]:
                            logger.warning("The SDK's answer to initialize differs from the one sent before it "
                                           "was imported (webapp/mcp_wire.py): %s", text)
                        answered = None
                        continue
                    # A lone surrogate echoed back (in a sentence quoting the call) goes out as JSON's own escape
                    # for it, where UTF-8 has no bytes for it and the write would end the transport.
                    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
                    await stdout.write(text + "\n")
                    await stdout.flush()
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        yield read_stream, write_stream
