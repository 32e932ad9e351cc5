"""``lode index``, ``lode projects``, ``lode status``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import LodeGroup, echo_json, lode_command, make_config, server_for, through
from indexer.errors import ConflictError, LodeError, ServerUnavailableError

if TYPE_CHECKING:
    from indexer.models import Project
    from indexer.remote import RemoteLode

__all__ = ["index_command", "projects_group", "status_command"]


@lode_command("index", "db", "local", "json")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="Project name (default: the folder's name).")
@click.option("--full", is_flag=True, help="Re-chunk every file, not only changed ones.")
@click.option("--no-embed", is_flag=True, help="Phase 1 only: lexical search now, vectors later.")
@click.option("--force", is_flag=True, help="Index /, a system folder or the home folder itself anyway.")
def index_command(
    path: Path,
    name: str | None,
    full: bool,
    no_embed: bool,
    force: bool,
    db: Path | str | None,
    local: bool,
    as_json: bool,
) -> None:
    """Register PATH as a project and bring its index up to date.

    Goes through a running lode server when there is one (it stays the index's only
    writer); --local and --no-embed index in-process, and refuse while a server writes
    the same index.

    Example: lode index ~/src/myrepo --name myrepo
    """
    config = make_config(db=db)
    remote = server_for(config, db, local=False)
    if remote is not None and (local or no_embed):
        # the server writes this index: a second writer beside it is what it exists to prevent
        flag = "--local" if local else "--no-embed"
        raise ConflictError(
            f"the lode server at {remote.base_url} writes this index; {flag} would index it "
            f"in-process beside it: drop {flag} (the server indexes it) or stop the server"
        )
    if remote is not None and not remote.writer_alive:
        raise ServerUnavailableError(
            f"the lode server at {remote.base_url} is degraded (its index writer stopped): restart it"
        )
    if remote is not None:
        _index_remote(remote, path, name, full, as_json, force)
        return
    from indexer.api import Lode
    from indexer.cli._progress import IndexBar

    lode = Lode(config)
    with IndexBar(enabled=None if not as_json else False) as bar:
        report = lode.index(path, name=name, full=full, embed=not no_embed, force=force, progress=bar)
    lode.settle_later()  # the folder settles a minute after this process, not at the next run
    if as_json:
        echo_json(report)
        return
    earlier = f" (+{report.chunks_from_earlier} left by an earlier run)" if report.chunks_from_earlier else ""
    click.echo(
        f"indexed {report.files_indexed} file(s), {report.files_unchanged} unchanged, "
        f"{report.files_deleted} deleted, {len(report.files_skipped)} skipped; "
        f"{report.chunks_written} chunk(s) written{earlier}: {report.chunks_embedded} embedded by the "
        f"model, {report.embedding_cache_hits} from the cache, {report.chunks_queued} still queued; "
        f"in {report.seconds:.1f}s"
    )
    for failed in report.files_failed:
        click.echo(f"  failed: {failed.path}: {failed.reason}", err=True)


def _index_remote(
    remote: RemoteLode, path: Path, name: str | None, full: bool, as_json: bool, force: bool
) -> None:
    from indexer.api import resolve_project_root
    from indexer.cli._progress import IndexBar

    root = resolve_project_root(path, force=force)
    with IndexBar(enabled=None if not as_json else False) as bar:
        result = remote.index(str(root), name, full, progress=bar.from_task, force=force)
    if as_json:
        echo_json(result)
        return
    task = result["task"]
    click.echo(
        f"indexed through the server at {remote.base_url}: task {task['status']}, "
        f"{task['files_done']} file(s) read, {task['chunks_done']} chunk(s) written; "
        f"{task['chunks_embedded']} of the project's {task['chunks_total']} chunks have a vector, "
        f"in {result['seconds']:.1f}s"
    )
    for error in task["errors"]:
        click.echo(f"  failed: {error}", err=True)
    if task["status"] != "done":
        raise LodeError(f"the server's task ended {task['status']}: {task['message']}")


@click.group("projects", cls=LodeGroup, invoke_without_command=True)
@click.pass_context
def projects_group(ctx: click.Context) -> None:
    """List or remove registered projects (default: list).

    Example: lode projects list --json
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(projects_list)


def _print_projects(projects: list[Project]) -> None:
    if not projects:
        click.echo("no projects yet: lode index PATH")
    for p in projects:
        when = p.last_indexed_at.isoformat(timespec="seconds") if p.last_indexed_at else "never"
        click.echo(f"{p.name}\t{p.root}\tlast indexed {when}\t{p.id}")


@lode_command("list", "db", "json", render=_print_projects, group=projects_group)
def projects_list(db: Path | str | None = None) -> list[Project]:
    """List registered projects.

    Example: lode projects list
    """
    from indexer.api import Lode

    return Lode(make_config(db=db)).list_projects()


def _print_removed(answer: dict[str, Project]) -> None:
    click.echo(f"removed project {answer['removed'].name} ({answer['removed'].root})")


@lode_command("remove", "db", "json", render=_print_removed, group=projects_group)
@click.argument("project")
def projects_remove(project: str, db: Path | str | None) -> dict[str, Project]:
    """Remove PROJECT (name or id) and its index rows; source files are not touched.

    Example: lode projects remove myrepo
    """
    from indexer.api import Lode

    return {"removed": Lode(make_config(db=db)).remove_project(project)}


def _remote_status(remote: RemoteLode) -> dict[str, Any]:
    """The server's status, with its live tasks (running first) and each project's watcher."""
    status: dict[str, Any] = remote.get("/api/v1/status")
    tasks = [t for t in remote.get("/api/v1/tasks?limit=1000") if t["status"] in ("running", "queued")]
    tasks.sort(key=lambda t: t["status"] != "running")
    for project in status["projects"]:
        project["failed_files"] = None
    return {"via": remote.base_url, "exists": True, **status, "tasks": tasks}


def _watch_text(project: dict[str, Any], via: str) -> str:
    watch = project.get("watch")
    if via == "local" or watch is None:
        return "watcher unknown (no lode server)"
    text = str(watch["state"])
    if watch.get("pending_events"):
        text += f", {watch['pending_events']} pending event(s)"
    if watch.get("last_error"):
        text += f", last error: {watch['last_error']}"
    return text


def _task_text(task: dict[str, Any], names: dict[str, str]) -> str:
    project = names.get(task["project_id"], task["project_id"])
    text = f"{task['status']:<8} {project}: {task['phase']} {task['percent']:.0f} %"
    text += f" (files {task['files_done']}/{task['files_total']}, "
    text += f"{task['chunks_embedded']}/{task['chunks_total']} chunks embedded"
    if task.get("eta_seconds") is not None:
        text += f", about {task['eta_seconds']:.0f} s left"
    return text + f")  {task['id']}"


def _print_status(status: dict[str, Any]) -> None:
    via = status["via"]
    if not status["exists"]:
        click.echo(f"no index at {status['db']} yet: lode index PATH")
        return
    served = "" if via == "local" else f", served by {via}"
    click.echo(f"index {status['db']} (model {status['model_id']}, dim {status['dimension']}{served})")
    click.echo(
        f"{status['documents']} files, {status['chunks']} chunks ({status['chunks_embedded']} embedded), "
        f"{status['embedding_cache']} cached vectors, {status['file_errors']} failed file(s)"
    )
    for p in status["projects"]:
        failed = "" if p.get("failed_files") is None else f", {p['failed_files']} failed"
        if p.get("files_awaiting_rechunk"):
            failed += f", {p['files_awaiting_rechunk']} awaiting re-chunking (lode upgrade)"
        click.echo(
            f"  {p['name']}: {p['files']} files, {p['chunks']} chunks, "
            f"semantic {p['semantic_coverage']:.0%}{failed}; {_watch_text(p, via)} — {p['root']}"
        )
    names = {p["id"]: p["name"] for p in status["projects"]}
    tasks = status.get("tasks", [])
    click.echo(f"tasks: {len(tasks)} running or queued" if tasks else "tasks: none running or queued")
    for task in tasks:
        click.echo(f"  {_task_text(task, names)}")


@lode_command("status", "local", "db", "json", render=_print_status)
def status_command(local: bool, db: Path | str | None) -> dict[str, Any]:
    """Show the index: projects with their watcher state, running and queued tasks with
    their progress, files, chunks, semantic coverage, failures.

    Asks a running lode server when there is one (it knows its tasks' rates and its
    watchers); --local (or no server) reads what the index records.

    Example: lode status --json
    """
    return through(db, local, _remote_status, lambda lode: {"via": "local", **lode.status()}, search=False)
