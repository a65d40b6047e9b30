"""The `skmemory` command line: projects, indexing, watching and status, all through the engine's public API."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
import threading
from typing import TYPE_CHECKING

import click

from indexer.config import Settings
from indexer import MODES
from indexer.errors import ProjectNotFound, SKMemoryError

if TYPE_CHECKING:
    from indexer.contract.answers import SearchAnswer
    from indexer.home import Home
    from webapp.client import ServerClient


def exit_now(code: int) -> None:
    """Exit once every project is closed, without the interpreter's teardown: unloading torch, ONNX Runtime and
    Chroma takes over a second after a stop has already saved everything."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class ErrorsAsSentences(click.Group):
    """Turn engine errors into one sentence on stderr and exit code 2; never a traceback. The command list shows
    each command's first sentence whole (click cut them at 45 characters with "...")."""

    def format_commands(self, ctx: click.Context, formatter) -> None:
        rows = [(name, command.get_short_help_str(limit=300)) for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SKMemoryError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except BrokenPipeError:  # `skmemory search ... | head`: the reader has what it wanted
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (Python would report the pipe again at exit)
            ctx.exit(0)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get("SKMEMORY_DEBUG"):
                raise
            click.echo(f"Error: unexpected {type(exc).__name__}: {exc} (set SKMEMORY_DEBUG=1 for the traceback).",
                       err=True)
            ctx.exit(2)


def _home(ctx: click.Context) -> "Home":
    """The data home, opened on first use (the engine is not imported for commands that do not need it)."""
    if "home" not in ctx.obj:
        from indexer.home import Home

        ctx.obj["home"] = Home(ctx.obj["settings"])
    return ctx.obj["home"]


@click.group(cls=ErrorsAsSentences)
@click.option("--home", type=click.Path(file_okay=False), envvar="SKMEMORY_HOME",
              help="Data folder holding the project registry and indexes (env SKMEMORY_HOME).")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
@click.version_option(package_name="sk-memory")
@click.pass_context
def cli(ctx: click.Context, home: str | None, verbose: int) -> None:
    """SK Memory: local search over your own notes, documents and conversations.

    Example: skmemory add ~/Notes && skmemory index
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for noisy in ("chromadb", "httpx", "sentence_transformers", "transformers", "urllib3"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    ctx.ensure_object(dict)
    ctx.obj["settings"] = Settings.from_env(home)


def _server(ctx: click.Context, port: int | None = None) -> "ServerClient | None":
    """The running server of this data home, if one answers (found from the port it records there)."""
    if "server" not in ctx.obj:
        from webapp.client import ServerClient

        settings = ctx.obj["settings"]
        ctx.obj["server"] = ServerClient.find(settings.home, port or settings.port)
    return ctx.obj["server"]


def _engine(ctx: click.Context, port: int | None = None):
    """One way in: the running server's client when one answers for this data home, else the engine opened here."""
    server = _server(ctx, port)
    if server is not None:
        return server
    if "engine" not in ctx.obj:
        from indexer.engine import Engine

        engine = ctx.obj["engine"] = Engine(_home(ctx), read_only=True)  # searches read; writes go through Home
        ctx.call_on_close(engine.close)
    return ctx.obj["engine"]


def _selected(ctx: click.Context, name: str | None) -> list[str]:
    """The project named (as registered), or every project; the server is asked when one runs."""
    server = _server(ctx)
    names = [p["name"] for p in server.projects()] if server else [i.name for i in _home(ctx).projects()]
    if name:
        match = next((n for n in names if n.lower() == name.lower()), None)
        if match is None:
            known = ", ".join(names) or "none yet; add one with `skmemory add PATH`"
            raise ProjectNotFound(f"No project named '{name}'. Known projects: {known}.")
        return [match]
    if not names:
        raise ProjectNotFound("No projects yet; add one with `skmemory add PATH`.")
    return names


@cli.command()
@click.argument("path", type=click.Path())
@click.option("--name", help="Project name (default: the folder's name).")
@click.pass_context
def add(ctx: click.Context, path: str, name: str | None) -> None:
    """Register a folder as a project (a running server starts indexing it at once).

    Example: skmemory add ~/Notes --name notes
    """
    from pathlib import Path

    from indexer.errors import SKMemoryError

    folder = str(Path(path).expanduser().absolute())  # the server's working folder is not this shell's
    try:
        info = _engine(ctx).add_project(folder, name)
    except SKMemoryError as exc:  # the engine's or the running server's (which names no command-line flag)
        if "give this folder another name" not in str(exc):
            raise
        raise SKMemoryError(f"{exc} Choose one with --name, e.g. skmemory add {path} --name notes-2.") from None
    server = _server(ctx)
    if server is not None:
        click.echo(f"Added project '{info['name']}' at {info['root']}; the server at {server.url} is indexing and "
                   f"watching it now (`skmemory status {info['name']}` shows how far it is).")
    else:
        click.echo(f"Added project '{info['name']}' at {info['root']}. Run `skmemory index {info['name']}` "
                   "or `skmemory serve`.")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def projects(ctx: click.Context, as_json: bool) -> None:
    """List the registered projects with their documents and chunks.

    Example: skmemory projects --json
    """
    infos = _engine(ctx).projects()
    if as_json:
        click.echo(json.dumps(infos, indent=2))
        return
    if not infos:
        click.echo("No projects yet. Add one with `skmemory add PATH`.")
    for info in infos:
        counts = (f"{info.get('documents', 0)} documents, {info.get('chunks', 0)} chunks"
                  if "error" not in info else f"cannot be read: {info['error']}")
        click.echo(f"{info['name']}\t{info['root']}\t{counts}")


@cli.command()
@click.argument("old")
@click.argument("new")
@click.pass_context
def rename(ctx: click.Context, old: str, new: str) -> None:
    """Rename a project (its index is kept).

    Example: skmemory rename notes work-notes
    """
    info = _engine(ctx).rename_project(old, new)
    click.echo(f"Renamed '{old}' to '{info['name']}'.")


@cli.command()
@click.argument("name")
@click.pass_context
def remove(ctx: click.Context, name: str) -> None:
    """Remove a project and delete its index; your files are not touched.

    Example: skmemory remove notes
    """
    info = _engine(ctx).remove_project(name)
    click.echo(f"Removed project '{info['name']}'; its index is deleted, {info['root']} is untouched.")


@cli.command()
@click.pass_context
def pause(ctx: click.Context) -> None:
    """Pause embedding (the model's work), until `skmemory resume`, across restarts too.

    Files are still read, so keyword search stays current; meaning search answers with what is embedded so far.

    Example: skmemory pause
    """
    answer = _engine(ctx).set_embedding_paused(True)
    click.echo("Embedding paused after the passages in hand; `skmemory resume` goes on." if answer["server"] else
               "No server is running: the next `skmemory serve` starts with embedding paused; `skmemory resume` "
               "undoes it.")


@cli.command()
@click.pass_context
def resume(ctx: click.Context) -> None:
    """Go on embedding where `skmemory pause` stopped it.

    Example: skmemory resume
    """
    answer = _engine(ctx).set_embedding_paused(False)
    click.echo("Embedding goes on." if answer["server"] else
               "Embedding is not paused: the next `skmemory serve` embeds as usual.")


@cli.command()
@click.argument("name", required=False)
@click.option("--no-embed", is_flag=True, help="Index for keyword search only; embeddings wait for later.")
@click.pass_context
def index(ctx: click.Context, name: str | None, no_embed: bool) -> None:
    """Index a project (or all) and embed everything pending; a running server does the work and this follows it.

    Example: skmemory index notes
    """
    from webapp.indexing import index_here, index_on_server

    names = _selected(ctx, name)
    server = _server(ctx)
    if server is not None:
        index_on_server(server, names, no_embed)
    else:
        index_here(_home(ctx), names, no_embed)


@cli.command()
@click.argument("name", required=False)
@click.pass_context
def watch(ctx: click.Context, name: str | None) -> None:
    """Keep projects indexed in the foreground while files change (Ctrl+C stops).

    Example: skmemory watch notes
    """
    from indexer import BackgroundIndexer
    from webapp.indexing import interrupt

    server = _server(ctx)
    if server is not None:
        raise SKMemoryError(f"The SK Memory server at {server.url} already keeps every project indexed and watched; "
                            "`skmemory watch` is for when no server runs.")
    home = _home(ctx)
    names = _selected(ctx, name)
    background = BackgroundIndexer(home, names, role="skmemory watch").start()
    if background.open_errors and not background.projects:
        background.stop()
        raise SKMemoryError(next(iter(background.open_errors.values())))
    click.echo(f"Watching {', '.join(background.projects)}. Press Ctrl+C to stop.", err=True)
    signal.signal(signal.SIGTERM, interrupt)
    stop = threading.Event()
    try:
        while not stop.wait(5):
            for project in background.status()["projects"]:
                if project.get("pending"):
                    click.echo(f"{project['project']}: {project['pending']} chunks waiting for embeddings; notes "
                               f"searchable by meaning: {project['documents_embedded']} of "
                               f"{project['documents_with_text']}",
                               err=True)
    except KeyboardInterrupt:
        click.echo("\nStopping: finishing the current batch...", err=True)
    finally:
        background.stop()
    click.echo("Stopped. Everything indexed so far is saved; `skmemory watch` or `skmemory index` goes on from "
               "there.", err=True)
    exit_now(0)


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """Show documents, chunks, embedding progress and per-file errors.

    Example: skmemory status notes --json
    """
    server = _server(ctx)
    names = _selected(ctx, name)
    if server is not None:
        state = server.status()
        results = [_server_status(server, state, n) for n in names]
    else:
        results = [_home(ctx).describe(n) for n in names]
    if as_json:
        click.echo(json.dumps(results if not name else results[0], indent=2))
        return
    for s in results:
        click.echo(f"{s['project']} ({s['root']})")
        if s.get("repair"):
            click.echo(f"  {s['repair']}")
        if s.get("disk_full"):
            click.echo(f"  {s['disk_full']}")
        click.echo(f"  documents: {s['documents']}  chunks: {s['chunks']}  embedded: {s['embedded']}  "
                   f"pending: {s['pending']}  failed: {s['failed']}")
        click.echo(f"  notes searchable by meaning: {s.get('documents_embedded', 0)} of "
                   f"{s.get('documents_with_text', 0)}"
                   + (f"; long notes: {s['long_note_pending']:,} passages left (embedded after the top of every note)"
                      if s.get("long_note_pending") else ""))
        running = (s.get("sync") or {}).get("running") or {}
        if running:
            click.echo(f"  reading files: {running['files_done']:,} of {running['files_total']:,}"
                       + (f" ({running['files_per_second']:.0f} files/s, about {running['eta_seconds']} s left)"
                          if running.get("files_per_second") else ""))
        if s.get("embedding_paused"):
            click.echo("  embedding: paused (`skmemory resume` goes on)")
        elif s.get("eta_seconds"):
            click.echo(f"  embedding: about {s['eta_seconds']} s left")
        click.echo(f"  embeddings: {embeddings_state(s)}")
        if s.get("model_switch"):
            click.echo(f"  {s['model_switch']['sentence']}")
        if s.get("model_why"):
            click.echo(f"  model: {s.get('model')}, because {s['model_why']} (SKMEMORY_EMBED_MODEL=english or "
                       "multilingual chooses for every project)")
        if s.get("across"):
            click.echo(f"  {s['across']['sentence']}")
        if s.get("hnsw"):
            h = s["hnsw"]
            click.echo(f"  HNSW (SKMEMORY_VECTOR_SEARCH=hnsw): ef_search {h['ef_search']} finds "
                       f"{100 * h['recall_at_10']:.1f}% of the exact top 10 ({h['queries']} queries, {h['vectors']} "
                       f"vectors, {h['measured_at']})")
        if s.get("owner"):
            where = f" at {s['owner']['url']}" if s["owner"].get("url") else ""
            click.echo(f"  owned by: {s['owner'].get('role')} (pid {s['owner'].get('pid')}){where}")
        for err in s["errors"]:
            click.echo(f"  {'warning' if err['indexed'] else 'error'}: {err['path']}: {err['error']}")


def embeddings_state(s: dict) -> str:
    """A project status's model, in words: available (and how it embeds), unavailable with why, or loading."""
    if s.get("embeddings_available"):
        how = _embedding_how(s)
        return f"available ({s.get('model')}{'; ' + how if how else ''})"
    if s.get("embeddings_unavailable_reason"):
        return f"unavailable: {s['embeddings_unavailable_reason']}"
    if s.get("embeddings_preparing"):  # its first start on this computer: its copies for this CPU are being made
        return (f"not ready yet: the {s.get('model') or 'embedding'} model is being prepared for this computer, once: "
                f"making {s['embeddings_preparing']} (about a minute in all on two cores)")
    return (f"not ready yet: the {s.get('model') or 'embedding'} model is loading (its first start on this computer "
            "also makes its copies for this CPU: about a minute on two cores)")


def _embedding_how(s: dict) -> str:
    """What embeds on this machine, in words: 'int8 ONNX on 2 threads at low priority'."""
    backend = {"onnx-int8": "int8 ONNX", "openvino-int8": "int8 OpenVINO", "onnx": "fp32 ONNX",
               "torch": "torch"}.get(s.get("bulk_backend") or "")
    if not backend:
        return ""
    if s.get("bulk_precision") == "bf16":
        backend = "int8/bf16 OpenVINO"
    threads = s.get("embed_threads")
    if backend == "torch" or not threads:
        return backend
    return f"{backend} on {threads} thread{'s' if threads != 1 else ''} at low priority (SKMEMORY_INDEX_CPU)"


def _server_status(server, state: dict, name: str) -> dict:
    """A project's status as the running server reports it, in the shape the command prints."""
    from webapp.indexing import project_state

    result = dict(project_state(state, name))
    result.update({
        "indexed": True,
        "owner": {"role": "skmemory serve", "pid": server.health.get("pid"), "url": server.url},
        "embeddings_available": result.get("embeddings", state.get("embeddings")) == "ready",
        "embeddings_unavailable_reason": result.get("embeddings_unavailable_reason",
                                                    state.get("embeddings_unavailable_reason")),
        "embeddings_preparing": state.get("embeddings_preparing"),
        "model": result.get("model") or state.get("model"),
        "bulk_backend": state.get("bulk_backend"),
        "bulk_precision": state.get("bulk_precision"),
        "embed_threads": state.get("embed_threads"),
        "embedding_paused": state.get("embedding_paused", False),
        "disk_full": state.get("disk_full"),
    })
    return result


@cli.command()
@click.option("--port", type=int, envvar="SKMEMORY_PORT", default=8765, show_default=True,
              help="Port on 127.0.0.1 (env SKMEMORY_PORT).")
@click.option("--demo", is_flag=True, help="Add the built-in demo project first if it is not there.")
@click.pass_context
def serve(ctx: click.Context, port: int, demo: bool) -> None:
    """Run the app on 127.0.0.1: search window, JSON API, and the indexer for every project.

    Example: skmemory serve --port 8765
    """
    from indexer import ensure_demo_project
    from webapp.serve import check_not_running, claim_home, serve as run_server

    home = _home(ctx)
    check_not_running(home)  # before --demo registers anything beside a running server
    claim = claim_home(home)  # one server per data home, even when two start at the same moment
    if demo:
        ensure_demo_project(home)
    if not home.projects():
        click.echo("No projects yet: add one with `skmemory add PATH` (or start with --demo).", err=True)

    def ready(url: str, background) -> None:
        click.echo(f"SK Memory is running at {url} (Ctrl+C stops). Projects: "
                   f"{', '.join(background.projects) or 'none'}.", err=True)

    try:
        run_server(home, port, on_ready=ready)
    finally:
        claim.release()
    exit_now(0)


@cli.command()
@click.argument("words", nargs=-1)
@click.option("--mode", type=click.Choice([m for m in MODES if m != "vault"]), default="hybrid", show_default=True)
@click.option("--project", help="Project to search (default: the first).")
@click.option("--all", "all_projects", is_flag=True, help="Search every project.")
@click.option("--tag", "tags_all", multiple=True, help="Only documents with this tag (repeat: all of them).")
@click.option("--any-tag", "tags_any", multiple=True, help="Only documents with one of these tags.")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--documents/--passages", "group", default=None,
              help="One result per document, its best passage shown (the default), or one per matching passage "
                   "(the default with --json, the API's own answer).")
@click.option("--explain", is_flag=True, help="Say why each result ranked: each leg's rank and score, the rule.")
@click.option("--explain-document", metavar="DOCUMENT_ID",
              help="Say where this document ranked in each leg, or what kept it out of the results.")
@click.option("--no-correct", "no_correct", is_flag=True,
              help="Search the words as typed (by default a word that matches nothing is corrected).")
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON response unchanged.")
@click.option("--port", type=int, envvar="SKMEMORY_PORT",
              help="Where to look for a running server when the data folder records none (env SKMEMORY_PORT).")
@click.pass_context
def search(ctx: click.Context, words: tuple, mode: str, project: str | None, all_projects: bool, tags_all: tuple,
           tags_any: tuple, limit: int, group: bool | None, explain: bool, explain_document: str | None,
           no_correct: bool, as_json: bool, port: int | None) -> None:
    """Search your projects; asks the running server when there is one, else opens the index itself.

    The words need no quotes: skmemory search how to sync is the query "how to sync" (quote a phrase to keep
    its words together: skmemory search '"exact phrase"').

    Example: skmemory search keep a server running after logout --mode semantic --explain
    """
    from indexer import SearchRequest

    query = " ".join(words)
    if group is None:  # a person reads one row per note; --json is the API's answer as it comes
        group = not as_json
    try:
        request = SearchRequest(query, mode, project=project, scope="all" if all_projects else "project",
                                tags_all=tags_all, tags_any=tags_any, limit=limit, group=group, explain=explain,
                                explain_document=explain_document, correct=not no_correct)
        response = _engine(ctx, port).search(request)
    except SKMemoryError as exc:  # in this command's words: its options, not the API's fields
        raise SKMemoryError(re.sub(r"\btags_all\b", "--tag", re.sub(r"\btags_any\b", "--any-tag", str(exc)))) from None
    if as_json:
        click.echo(json.dumps(response, indent=2, ensure_ascii=False))
        return
    _print_results(response)
    if "explain_document" in response:
        _print_document_report(response["explain_document"])


def _bold_matches(text: str, highlights: list[list[int]], limit: int) -> str:
    """The snippet cut to limit characters with its matches in bold (plain text when not a terminal)."""
    from .highlights import pieces

    return "".join(click.style(piece, bold=True) if marked else piece
                   for piece, marked in pieces(text, highlights, limit))


def _print_results(response: SearchAnswer) -> None:
    """A SearchAnswer as the terminal shows it (the engine's, or the server's decoded: the same type)."""
    if not response.semantic_available and response.mode != "keyword":
        click.echo("(semantic search unavailable: keyword results only)", err=True)
    if response.get("corrected"):
        fixed = response.corrected
        click.echo(f"Showing results for: {fixed['query']}  (--no-correct to search for: {fixed['original']})",
                   err=True)
    if response.get("did_you_mean"):
        click.echo(f"Did you mean: {response.did_you_mean['query']}", err=True)
    if response.get("notice"):
        click.echo(response.notice, err=True)
    for across in response.get("across") or []:
        if not across.get("ready") and across.get("space") != "own":
            click.echo(f"({across['sentence']})", err=True)
    if not response.results:
        click.echo(response.get("empty_reason") or "No results.")
        if response.get("weaker_matches"):
            click.echo(f"Weaker matches (under {response.threshold * 100:.0f}% similar):")
            for hit in response.weaker_matches:
                score = f" {hit.cosine * 100:.0f}%" if hit.cosine is not None else ""
                click.echo(f"  [weaker{score}] {hit.title}  ({hit.path})")
    for hit in response.results:
        # How close in meaning, when meaning found it; a match by its words alone has no percentage to give.
        score = f" {hit.cosine * 100:.0f}%" if hit.cosine is not None else ""
        where = f"{hit.project}:" if response.get("scope") == "all" else ""
        click.echo(f"[{hit.search_type}{score}] {hit.title}  ({where}{hit.path})")
        click.echo(f"    {_bold_matches(hit.snippet, hit.highlights, 160)}")
        if "explain" in hit:
            click.echo(f"    why: {_why(hit.explain)}")


def _leg_line(name: str, leg: dict) -> str:
    if not leg.get("found"):
        return f"{name}: not found ({leg.get('why', '')})"
    if leg.get("partial"):
        return f"{name}: some of the words, BM25 {leg['bm25_rank']}"
    numbers = [f"#{leg['rank']}"] if leg.get("rank") else []
    numbers += [f"{key} {leg[key]}" for key in ("similarity", "score") if leg.get(key) is not None]
    return f"{name} {' '.join(numbers)}"


def _why(explain: dict) -> str:
    """One line per result: each leg's rank and score, then the rule that made its score."""
    parts = [_leg_line(name, leg) for name, leg in explain.get("legs", {}).items()]
    parts.append(explain.get("rule", ""))
    if explain.get("matched_words"):
        parts.append("words: " + ", ".join(explain["matched_words"]))
    return " · ".join(p for p in parts if p)


def _print_document_report(report: dict) -> None:
    click.echo("")
    click.echo(f"{report.get('title') or report['document_id']}: {report['verdict']}")
    for name, leg in report.get("legs", {}).items():
        click.echo(f"    {_leg_line(name, leg)}")


@cli.command("mcp")
@click.option("--port", type=int, envvar="SKMEMORY_PORT", default=8765, show_default=True,
              help="Where to start the server when none runs for the data folder (env SKMEMORY_PORT).")
@click.pass_context
def mcp_command(ctx: click.Context, port: int) -> None:
    """Serve SK Memory's search tools to an AI client over stdio (MCP); the client starts it.

    The tools are answered by the `skmemory serve` of the data folder, found from the port it records there
    (no SKMEMORY_PORT needed), and started in the background when none runs.

    An AI client starts this command with almost none of your shell's environment (usually only HOME and
    PATH), so it reads the default data folder unless you name another one in the client's settings:
    put `--home /path/to/data` before `mcp` in the arguments, or set SKMEMORY_HOME in the client's "env".

    Example: claude mcp add skmemory -- skmemory --home ~/skmemory-data mcp
    """
    import importlib
    import threading

    from webapp import mcp_wire
    from webapp.mcp_link import ServerLink

    # The SDK imports for most of a second: meanwhile the server is found (or started) and the client's
    # `initialize` answered (see mcp_wire.py).
    link = ServerLink(ctx.obj["settings"].home, port)
    threading.Thread(target=link.warm, name="skmemory-server-start", daemon=True).start()
    importing = threading.Thread(target=importlib.import_module, args=("webapp.mcp_server",), daemon=True)
    importing.start()
    wire = mcp_wire.take()
    mcp_wire.answer_first(wire)
    importing.join()
    from webapp.mcp_server import run

    run(ctx.obj["settings"].home, port, wire, link)


@cli.command("extension-path")
def extension_path() -> None:
    """Print the folder of the Chrome extension, to load it unpacked.

    Example: skmemory extension-path
    """
    from webapp.assets import extension_folder

    click.echo(str(extension_folder()))


if __name__ == "__main__":  # pragma: no cover
    cli()
