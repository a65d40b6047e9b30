"""The `skmemory` command line: projects, indexing, watching and status, all through the engine's public API."""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING

import click

from indexer.config import Settings
from indexer.errors import ProjectNotFound, SKMemoryError

if TYPE_CHECKING:
    from indexer.home import Home


class ErrorsAsSentences(click.Group):
    """Turn engine errors into one sentence on stderr and exit code 2; never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SKMemoryError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get("SKMEMORY_DEBUG"):
                raise
            click.echo(f"Error: unexpected {type(exc).__name__}: {exc} (set SKMEMORY_DEBUG=1 for the traceback).", err=True)
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


@cli.command()
@click.argument("path", type=click.Path())
@click.option("--name", help="Project name (default: the folder's name).")
@click.pass_context
def add(ctx: click.Context, path: str, name: str | None) -> None:
    """Register a folder as a project.

    Example: skmemory add ~/Notes --name notes
    """
    info = _home(ctx).add_project(path, name)
    click.echo(f"Added project '{info.name}' at {info.root}. Run `skmemory index {info.name}` or `skmemory serve`.")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def projects(ctx: click.Context, as_json: bool) -> None:
    """List the registered projects.

    Example: skmemory projects --json
    """
    infos = _home(ctx).projects()
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    if not infos:
        click.echo("No projects yet. Add one with `skmemory add PATH`.")
    for info in infos:
        click.echo(f"{info.name}\t{info.root}")


@cli.command()
@click.argument("old")
@click.argument("new")
@click.pass_context
def rename(ctx: click.Context, old: str, new: str) -> None:
    """Rename a project (its index is kept).

    Example: skmemory rename notes work-notes
    """
    info = _home(ctx).rename_project(old, new)
    click.echo(f"Renamed '{old}' to '{info.name}'.")


@cli.command()
@click.argument("name")
@click.pass_context
def remove(ctx: click.Context, name: str) -> None:
    """Remove a project and delete its index; your files are not touched.

    Example: skmemory remove notes
    """
    info = _home(ctx).remove_project(name)
    click.echo(f"Removed project '{info.name}'; its index is deleted, {info.root} is untouched.")


def _selected(home: "Home", name: str | None) -> list[str]:
    if name:
        return [home.project(name).name]
    names = [p.name for p in home.projects()]
    if not names:
        raise ProjectNotFound("No projects yet; add one with `skmemory add PATH`.")
    return names


@cli.command()
@click.argument("name", required=False)
@click.option("--no-embed", is_flag=True, help="Index for keyword search only; embeddings wait for later.")
@click.pass_context
def index(ctx: click.Context, name: str | None, no_embed: bool) -> None:
    """Index a project (or all), embed everything pending, then exit.

    Example: skmemory index notes
    """
    home = _home(ctx)
    for project_name in _selected(home, name):
        with home.open_project(project_name, role="skmemory index") as project:
            project.reconcile()
            if project.rechunk_needed:
                click.echo(f"{project_name}: this version of SK Memory cuts notes into chunks differently; re-chunking "
                           "every note (passages whose text is unchanged keep their embeddings).", err=True)
            files = []
            with click.progressbar(length=1, label=f"{project_name}: files parsed", file=sys.stderr) as bar:
                def on_file(done: int, total: int) -> None:
                    bar.length = max(total, 1)
                    bar.update(done - bar.pos)
                report = project.sync(progress=on_file)
                files.append(report)
            click.echo(
                f"{project_name}: {report.added} added, {report.updated} updated, {report.moved} moved, "
                f"{report.deleted} deleted, {report.unchanged} unchanged, {report.failed} failed.",
                err=True,
            )
            if no_embed:
                continue
            if not home.embedder.available:
                click.echo(f"Warning: embeddings are unavailable ({home.embedder.error}); keyword search still works.", err=True)
                continue
            _embed_with_progress(project)


def _embed_with_progress(project) -> None:
    pending = project.store.counts()["pending"]
    if not pending:
        return
    started = time.monotonic()
    state = {"done": 0}

    def rate(_item) -> str:
        elapsed = time.monotonic() - started
        return f"{state['done'] / elapsed:.1f} chunks/s" if elapsed > 0 and state["done"] else ""

    with click.progressbar(length=pending, label=f"{project.name}: chunks embedded", file=sys.stderr,
                           show_eta=True, item_show_func=rate) as bar:
        def on_batch(done: int, total: int) -> None:
            state["done"] = done
            bar.length = max(total, 1)
            bar.update(done - bar.pos, current_item=done)
        done = project.embed_pending(progress=on_batch)
    elapsed = time.monotonic() - started
    counts = project.store.counts()
    click.echo(f"{project.name}: {done} chunks embedded in {elapsed:.1f} s ({done / max(elapsed, 1e-9):.1f} chunks/s); "
               f"notes searchable by meaning: {counts['documents_embedded']} of {counts['documents_with_text']}.", err=True)


@cli.command()
@click.argument("name", required=False)
@click.pass_context
def watch(ctx: click.Context, name: str | None) -> None:
    """Keep projects indexed in the foreground while files change (Ctrl+C stops).

    Example: skmemory watch notes
    """
    from indexer.service import IndexerService

    home = _home(ctx)
    names = _selected(home, name)
    service = IndexerService(home, names, role="skmemory watch").start()
    if service.open_errors and not service.projects:
        service.stop()
        raise SKMemoryError(next(iter(service.open_errors.values())))
    click.echo(f"Watching {', '.join(service.projects)}. Press Ctrl+C to stop.", err=True)
    stop = threading.Event()
    try:
        while not stop.wait(5):
            for project in service.status()["projects"]:
                if project.get("pending"):
                    click.echo(f"{project['project']}: {project['pending']} chunks waiting for embeddings; notes "
                               f"searchable by meaning: {project['documents_embedded']} of {project['documents_with_text']}",
                               err=True)
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """Show documents, chunks, embedding progress and per-file errors.

    Example: skmemory status notes --json
    """
    home = _home(ctx)
    results = [_status_with_embeddings(home, n) for n in _selected(home, name)]
    if as_json:
        click.echo(json.dumps(results if not name else results[0], indent=2))
        return
    for s in results:
        click.echo(f"{s['project']} ({s['root']})")
        click.echo(f"  documents: {s['documents']}  chunks: {s['chunks']}  embedded: {s['embedded']}  "
                   f"pending: {s['pending']}  failed: {s['failed']}")
        click.echo(f"  notes searchable by meaning: {s.get('documents_embedded', 0)} of {s.get('documents_with_text', 0)}")
        if s.get("embeddings_available"):
            click.echo(f"  embeddings: available ({s.get('model')})")
        else:
            click.echo(f"  embeddings: unavailable: {s.get('embeddings_unavailable_reason')}")
        if s.get("owner"):
            click.echo(f"  owned by: {s['owner'].get('role')} (pid {s['owner'].get('pid')})")
        for err in s["errors"]:
            click.echo(f"  {'warning' if err['indexed'] else 'error'}: {err['path']}: {err['error']}")


def _status_with_embeddings(home: "Home", name: str) -> dict:
    from indexer.service import ENGINE_STATE

    result = home.status(name)
    engine = {}
    try:
        engine = json.loads((home.project(name).index_dir / ENGINE_STATE).read_text())
    except (OSError, ValueError):
        pass
    if result.get("owner") and engine:
        # A running indexer knows best whether its model loaded.
        result["embeddings_available"] = engine.get("embeddings") == "ready"
        result["embeddings_unavailable_reason"] = engine.get("embeddings_unavailable_reason")
        result["model"] = engine.get("model")
    else:
        result["embeddings_available"] = home.embedder.available
        result["embeddings_unavailable_reason"] = home.embedder.error
        result["model"] = home.embedder.name
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
    from indexer.demo import ensure_demo_project
    from webapp.serve import serve as run_server

    home = _home(ctx)
    if demo:
        ensure_demo_project(home)
    if not home.projects():
        click.echo("No projects yet: add one with `skmemory add PATH` (or start with --demo).", err=True)

    def ready(url: str, service) -> None:
        click.echo(f"SK Memory is running at {url} (Ctrl+C stops). Projects: {', '.join(service.projects) or 'none'}.", err=True)

    run_server(home, port, on_ready=ready)


@cli.command()
@click.argument("query", required=False, default="")
@click.option("--mode", type=click.Choice(["hybrid", "semantic", "recency", "keyword", "tag"]), default="hybrid",
              show_default=True)
@click.option("--project", help="Project to search (default: the first).")
@click.option("--all", "all_projects", is_flag=True, help="Search every project.")
@click.option("--tag", "tags_all", multiple=True, help="Only documents with this tag (repeat: all of them).")
@click.option("--any-tag", "tags_any", multiple=True, help="Only documents with one of these tags.")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON response unchanged.")
@click.option("--port", type=int, envvar="SKMEMORY_PORT", default=8765, help="Where to look for a running server.")
@click.pass_context
def search(ctx: click.Context, query: str, mode: str, project: str | None, all_projects: bool, tags_all: tuple,
           tags_any: tuple, limit: int, as_json: bool, port: int) -> None:
    """Search your projects; asks the running server when there is one, else opens the index itself.

    Example: skmemory search "keep a server running after logout" --mode semantic
    """
    from webapp.client import ServerClient

    home = _home(ctx)
    params = {"q": query, "mode": mode, "limit": limit, "scope": "all" if all_projects else "project",
              "tags_all": list(tags_all), "tags_any": list(tags_any)}
    if project:
        params["project"] = project
    client = ServerClient.find(port, home.settings.home)
    if client is not None:
        response = client.get("/api/search", params)
    else:
        from indexer.engine import Engine

        engine = Engine(home)
        try:
            response = engine.search(query, mode=mode, project=project, scope=params["scope"],
                                     tags_all=list(tags_all), tags_any=list(tags_any), limit=limit)
        finally:
            engine.close()
    if as_json:
        click.echo(json.dumps(response, indent=2, ensure_ascii=False))
        return
    _print_results(response)


def _print_results(response: dict) -> None:
    import html
    import re

    if not response.get("semantic_available", True) and response.get("mode") != "keyword":
        click.echo("(semantic search unavailable: keyword results only)", err=True)
    if not response["results"]:
        click.echo("No results.")
    for r in response["results"]:
        score = f"{r['similarity'] * 100:.0f}%" if r["similarity"] < 1 else f"{r['similarity']:.2f}"
        where = f"{r['project']}:" if response.get("scope") == "all" else ""
        click.echo(f"[{r['search_type']} {score}] {r['document_title']}  ({where}{r['relative_path']})")
        text = html.unescape(re.sub(r"</?mark>", "", r["snippet"]))
        click.echo(f"    {text[:160]}")


@cli.command("mcp")
@click.option("--port", type=int, envvar="SKMEMORY_PORT", default=8765, show_default=True,
              help="Port of the SK Memory server on 127.0.0.1 (env SKMEMORY_PORT); started there if none answers.")
@click.pass_context
def mcp_command(ctx: click.Context, port: int) -> None:
    """Serve SK Memory's search tools to an AI client over stdio (MCP); the client starts it.

    Example: claude mcp add skmemory -- skmemory mcp
    """
    from webapp.mcp_server import run

    run(ctx.obj["settings"].home, port)


@cli.command("extension-path")
def extension_path() -> None:
    """Print the folder of the Chrome extension, to load it unpacked.

    Example: skmemory extension-path
    """
    from pathlib import Path

    click.echo(str(Path(__file__).resolve().parent.parent / "extension"))


if __name__ == "__main__":  # pragma: no cover
    cli()
