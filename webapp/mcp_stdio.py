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
