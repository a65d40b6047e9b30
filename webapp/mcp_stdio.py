"""MCP over stdio, as the SDK's transport does it, with one difference: a line the SDK's strict JSON reader refuses
but Python's JSON reader takes (text with half of a UTF-16 pair, `"kan\\ud800ban"`, which JSON allows) is read and
answered, where the SDK dropped it and the client waited for ever (issue 40 row 2). The tools then refuse the text
with the same sentence the web API gives.

While serving, fd 0 reads the null device and fd 1 writes to stderr, so that nothing a library prints reaches the
wire; the protocol uses private duplicates of both.
"""
from __future__ import annotations

import io
import json
import os
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

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


@asynccontextmanager
async def stdio_streams():
    """(read stream, write stream) of MCP messages over this process's stdin and stdout."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire_in, "rb"), encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire_out, "wb"), encoding="utf-8"))
    read_writer, read_stream = _pair(SessionMessage | Exception)
    write_stream, write_reader = _pair(SessionMessage)

    async def reader():
        try:
            async with read_writer:
                async for line in stdin:
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
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
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
