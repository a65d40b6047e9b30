"""Each MCP tool's default answer size and latency on real vaults, through the SDK's stdio client.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_mcp.py                       # logseq-docs and kepano-obsidian
    .venv/bin/python tests/bench/bench_mcp.py --vault ../shared/corpora/logseq-docs --rounds 9

For each vault it indexes and embeds the folder in a fresh data home, runs `skmemory serve`, launches
`skmemory mcp` as a client does, and calls every tool with its defaults (the read tools on the vault's largest
note) --rounds times. It prints a markdown table: each tool's answer as an agent reads it (the JSON text, in
characters and in tokens at 4 characters a token) and its p50 latency through MCP; plus tools/list's size, and
how soon a freshly launched `skmemory mcp` answers `initialize` and its first search, with the server running and
with none (it starts one).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from support import CORPORA, running_server  # noqa: E402
from webapp.client import ServerClient  # noqa: E402


def largest_note(vault: Path) -> str:
    notes = [p for p in vault.rglob("*.md") if p.is_file() and ".obsidian" not in p.parts]
    return str(max(notes, key=lambda p: p.stat().st_size).relative_to(vault))


def calls(note: str, query: str) -> list[tuple[str, dict]]:
    stem = Path(note).stem
    return [
        ("hybrid_search", {"query": query}), ("semantic_search", {"query": query}),
        ("search_all_projects", {"query": query}), ("vault_search", {"query": query}),
        ("hybrid_search", {"query": query, "detail": "chunks"}),
        ("vault_recent_notes", {}), ("vault_search_by_folder", {"folder": ""}),
        ("memory_search", {"mode": "content", "query": query.split()[0]}),
        ("list_projects", {}), ("list_tags", {}), ("list_properties", {}),
        ("get_document", {"note": note}), ("read_note", {"note": note}), ("links", {"note": stem}),
        ("get_context", {"query": query}),
        ("related_notes", {"note": note}), ("suggest_links", {"note": note}),
    ]


async def measure(env: dict, note: str, query: str, rounds: int) -> tuple[list[tuple], int, int]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "webapp.cli", "mcp"], env=env, cwd=str(REPO))
    rows = []
    with open(Path(tempfile.gettempdir()) / "bench-mcp.log", "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = (await session.list_tools()).tools
                listing = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True)
                                          for t in listed]))
                read = len(json.dumps([{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                                       for t in listed]))
                for tool, args in calls(note, query):
                    times, size = [], 0
                    for _ in range(rounds):
                        started = time.perf_counter()
                        result = await session.call_tool(tool, args)
                        times.append(time.perf_counter() - started)
                        if result.is_error:
                            raise SystemExit(f"{tool} {args}: {result.content[0].text}")
                        size = len(result.content[0].text)
                    label = tool + (" (detail=chunks)" if args.get("detail") else "")
                    rows.append((label, size, size // 4, statistics.median(times) * 1000))
                rows.append(await agent_task(session, query))
    return rows, listing, read


async def agent_task(session, query: str) -> tuple:
    """An agent's task end to end: find what the vault says about QUERY, read that section, list the note's
    backlinks; as (label, characters, tokens, ms) over every call it took."""
    started, sizes = time.perf_counter(), []

    async def call(tool: str, args: dict):
        result = await session.call_tool(tool, args)
        if result.is_error:
            raise SystemExit(f"{tool} {args}: {result.content[0].text}")
        sizes.append(len(result.content[0].text))
        return result.structured_content

    top = (await call("hybrid_search", {"query": query, "limit": 5}))["results"][0]
    where = {"section": top["heading"]} if top.get("heading") else {"start_line": top["lines"][0]}
    await call("read_note", {"note": top["path"], **where})
    await call("links", {"note": top["path"], "direction": "backlinks"})
    total = sum(sizes)
    return (f"**agent task** (search, read the section, backlinks: {len(sizes)} calls)", total, total // 4,
            (time.perf_counter() - started) * 1000)


async def first_answers(env: dict, query: str, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds from launching `skmemory mcp` (a server already running) to its `initialize` answer, and to its
    first hybrid_search answer, once per launch."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "webapp.cli", "mcp"], env=env, cwd=str(REPO))
    initialized, searched = [], []
    for _ in range(rounds):
        with open(Path(tempfile.gettempdir()) / "bench-mcp.log", "w") as err:
            started = time.perf_counter()
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    initialized.append(time.perf_counter() - started)
                    await session.call_tool("hybrid_search", {"query": query})
                    searched.append(time.perf_counter() - started)
    return initialized, searched


def cold_first_answers(env: dict, query: str, rounds: int) -> list[float]:
    """Seconds from launching `skmemory mcp` with no server running (it starts one) to its first hybrid_search
    answer, once per launch; the server it started is stopped after each."""
    seconds = []
    for _ in range(rounds):
        _, searched = asyncio.run(first_answers(env, query, 1))
        seconds += searched
        stop_server(env)
    return seconds


def stop_server(env: dict) -> None:
    """Stop the server that `skmemory mcp` started for this data home, and wait until it is gone."""
    client = ServerClient.find(Path(env["SKMEMORY_HOME"]), int(env["SKMEMORY_PORT"]))
    if client is None:
        return
    pid = client.get("/api/health")["pid"]
    os.kill(pid, signal.SIGTERM)
    for _ in range(300):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", action="append", type=Path)
    parser.add_argument("--query", default="how do I sync my notes between devices")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    vaults = args.vault or [CORPORA / "logseq-docs", CORPORA / "kepano-obsidian"]
    for vault in vaults:
        note = largest_note(vault)
        with tempfile.TemporaryDirectory() as root:
            with running_server(Path(root), vault, timeout=1800) as server:
                rows, listing, read = asyncio.run(measure(server.env, note, args.query, args.rounds))
                initialized, searched = asyncio.run(first_answers(server.env, args.query, args.rounds))
            cold = cold_first_answers(server.env, args.query, args.rounds)  # that server stopped: none runs
        print(f"\n{vault.name} (largest note {note}); tools/list {listing:,} characters (~{listing // 4:,} tokens), "
              f"{read:,} of them what a model reads (names, descriptions, input schemas: ~{read // 4:,} tokens)")
        print(f"launch `skmemory mcp` -> initialize answered: p50 {statistics.median(initialized):.2f} s, max "
              f"{max(initialized):.2f} s; -> first hybrid_search answered: p50 {statistics.median(searched):.2f} s, "
              f"max {max(searched):.2f} s ({args.rounds} launches, server running); no server running -> first "
              f"hybrid_search answered: p50 {statistics.median(cold):.2f} s, max {max(cold):.2f} s\n")
        print("| tool (defaults) | characters | ~tokens | p50 ms |\n|---|---|---|---|")
        for label, chars, tokens, ms in rows:
            print(f"| {label} | {chars:,} | {tokens:,} | {ms:.0f} |")


if __name__ == "__main__":
    main()
