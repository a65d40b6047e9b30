"""`skmemory index`: done here with progress bars, or handed to the running server and followed to the end."""
from __future__ import annotations

import signal
import sys
import time
from typing import TYPE_CHECKING

import click

from indexer.errors import EmbeddingsUnavailable, ProjectNotFound, SKMemoryError

if TYPE_CHECKING:
    from indexer.home import Home
    from indexer import Project

    from .client import ServerClient

POLL_SECONDS = 0.3


def report_line(name: str, report: dict) -> str:
    return (f"{name}: {report.get('added', 0)} added, {report.get('updated', 0)} updated, {report.get('moved', 0)} "
            f"moved, {report.get('deleted', 0)} deleted, {report.get('unchanged', 0)} unchanged, "
            f"{report.get('failed', 0)} failed" + (f", {report['vanished']} gone before they could be read."
                                                    if report.get("vanished") else "."))


def meaning_line(name: str, done: int, seconds: float, counts: dict) -> str:
    return (f"{name}: {done} chunks embedded in {seconds:.1f} s ({done / max(seconds, 1e-9):.1f} chunks/s); "
            f"notes searchable by meaning: {counts.get('documents_embedded', 0)} of "
            f"{counts.get('documents_with_text', 0)}.")


def interrupt(*_) -> None:
    """A signal handler that stops the command as Ctrl+C does."""
    raise KeyboardInterrupt


# --- no server: this process owns the index for the duration ---------------------------------------------------

def index_here(home: "Home", names: list[str], no_embed: bool) -> None:
    """Sync each project from its folder and embed what is pending, with progress bars on stderr; Ctrl+C stops
    with a line that says what was saved (every file parsed and every batch embedded is)."""
    signal.signal(signal.SIGTERM, interrupt)  # SIGTERM stops as Ctrl+C does: saying so
    done = {"files": 0, "chunks": 0}
    for project_name in names:
        done.update(files=0, chunks=0)
        try:
            _index_one(home, project_name, no_embed, done)
        except KeyboardInterrupt:
            click.echo(f"\nStopped. {project_name}: {done['files']:,} files parsed and {done['chunks']:,} passages "
                       f"embedded in this run are saved; `skmemory index {project_name}` goes on from there.", err=True)
            raise SystemExit(130) from None


def _index_one(home: "Home", project_name: str, no_embed: bool, done: dict) -> None:
    """Sync one project and embed what is pending; `done` follows how far it got."""
    with home.open_project(project_name, role="skmemory index") as project:
        if project.embedded_before_by:
            click.echo(f"{project_name}: its passages were embedded by {project.embedded_before_by}; this version "
                       f"embeds with {project.embedder.fingerprint}, so every passage is embedded again (keyword "
                       "search works meanwhile; vectors of the two are never mixed).", err=True)
        if project.rechunk_needed:
            click.echo(f"{project_name}: this version of SK Memory cuts notes into chunks differently; re-chunking "
                       "every note (passages whose text is unchanged keep their embeddings).", err=True)
        from indexer import ReadRate  # here: the background module is heavy for commands that never index

        rate = ReadRate()

        def files_rate(running) -> str:
            return f"{running['files_per_second']:.0f} files/s" if running and "files_per_second" in running else ""

        with click.progressbar(length=1, label=f"{project_name}: files parsed", file=sys.stderr, show_eta=True,
                               item_show_func=files_rate) as bar:
            def on_file(files: int, total: int) -> None:
                done["files"] = files
                bar.length = max(total, 1)
                bar.update(files - bar.pos, current_item=rate.update(files, total))
            report = project.sync(progress=on_file)
        click.echo(report_line(project_name, report.to_dict()), err=True)
        if no_embed:
            return
        if project.decide_language():
            click.echo(f"{project_name}: {project.store_language_why()}; its passages are embedded by "
                       f"{project.embedder.name}.", err=True)
        if not project.embedder.load():
            click.echo(f"Warning: embeddings are unavailable ({project.embedder.now.reason}); keyword search still "
                       "works.", err=True)
            return
        _embed_with_progress(project, done)
        _embed_across_with_progress(project)


def _embed_across_with_progress(project: "Project") -> None:
    """The vectors that let a question in another language find these notes (made after their own: a note is
    searchable by its own model first)."""
    progress = project.across_progress()
    if progress is None or progress[0] >= progress[1]:  # a built-in project, or nothing left
        return
    made, total = progress
    try:
        with click.progressbar(length=total - made, label=f"{project.name}: passages readable in other languages",
                               file=sys.stderr, show_eta=True) as bar:
            def on_round(done: int, left: int) -> None:
                bar.length = max(left, 1)
                bar.update(done - bar.pos)
            project.embed_across(progress=on_round)
    except EmbeddingsUnavailable as exc:
        click.echo(f"{project.name}: questions in other languages are searched by keyword only ({exc}).", err=True)


def _embed_with_progress(project: "Project", counts: dict) -> None:
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
            state["done"] = counts["chunks"] = done
            bar.length = max(total, 1)
            bar.update(done - bar.pos, current_item=done)
        done = project.embed_pending(progress=on_batch)
    click.echo(meaning_line(project.name, done, time.monotonic() - started, project.store.counts()), err=True)


# --- a server runs: it owns the index; ask it to re-read and follow its progress ----------------------------------

LANGUAGE_WAIT_SECONDS = 30  # how long `index` waits for the server to tell the notes' language after its re-read


def index_on_server(server: "ServerClient", names: list[str], no_embed: bool) -> None:
    """Ask the server to re-read each project, and show its progress until the files (and embeddings) are done."""
    click.echo(f"The SK Memory server at {server.url} owns the index; it re-reads the folders and this command "
               "follows its progress (Ctrl+C stops following, not the indexing).", err=True)
    try:
        for name in names:
            accepted = server.reindex(name)
            _follow_sync(server, accepted["project"], accepted["sync_request"])
            if not no_embed:
                _follow_embeddings(server, accepted["project"])
    except KeyboardInterrupt:
        click.echo("Stopped following; the server goes on indexing (`skmemory status` shows how far it is).", err=True)
        raise SystemExit(130) from None


def project_state(status: dict, name: str) -> dict:
    """One project's entry in the server's status, or ProjectNotFound."""
    for entry in status["projects"]:
        if entry["project"].lower() == name.lower():
            if entry.get("open_error"):
                raise SKMemoryError(f"The server cannot index '{entry['project']}': {entry['open_error']}")
            return entry
    raise ProjectNotFound(f"The running server has no project '{name}' open; `skmemory projects` lists them.")


def _follow_sync(server: "ServerClient", name: str, number: int) -> None:
    with click.progressbar(length=1, label=f"{name}: files parsed", file=sys.stderr) as bar:
        while True:
            entry = project_state(server.status(), name)
            sync = entry.get("sync") or {}
            running = sync.get("running") or {}
            if running:
                bar.length = max(running.get("files_total", 1), 1)
                bar.update(running.get("files_done", 0) - bar.pos)
            if sync.get("done", 0) >= number:
                bar.update(bar.length - bar.pos)
                break
            time.sleep(POLL_SECONDS)
    last = entry.get("last_sync") or {}
    if last.get("error"):
        raise SKMemoryError(f"{name}: the server could not re-read the folder: {last['error']}")
    click.echo(report_line(name, last), err=True)


def _follow_embeddings(server: "ServerClient", name: str) -> None:
    status = server.status()
    entry = project_state(status, name)
    waited = time.monotonic() + LANGUAGE_WAIT_SECONDS
    while entry.get("language_due") and time.monotonic() < waited:  # the re-read may call for another model
        time.sleep(POLL_SECONDS)
        status = server.status()
        entry = project_state(status, name)
    if entry.get("model_switch"):
        click.echo(f"{name}: {entry['model_switch']['sentence']}.", err=True)
    if status.get("embeddings") == "unavailable":
        click.echo(f"Warning: embeddings are unavailable ({status.get('embeddings_unavailable_reason')}); "
                   "keyword search still works.", err=True)
        return
    if not entry.get("pending"):
        return
    started, total = time.monotonic(), entry["pending"]
    with click.progressbar(length=total, label=f"{name}: chunks embedded", file=sys.stderr, show_eta=True) as bar:
        while entry.get("pending"):
            total = max(total, entry["pending"])
            bar.length = total
            bar.update(total - entry["pending"] - bar.pos)
            time.sleep(POLL_SECONDS)
            status = server.status()
            if status.get("embeddings") == "unavailable":
                break
            entry = project_state(status, name)
        bar.update(bar.length - bar.pos)
    click.echo(meaning_line(name, total - entry.get("pending", 0), time.monotonic() - started, entry), err=True)
