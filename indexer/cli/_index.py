"""``lode index``, ``lode projects``, and ``lode chunk`` (the chunker's view of one file)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import click

from indexer.cli._common import cli, echo_json, lode_command, make_config, server_for
from indexer.config import ChunkerConfig
from indexer.errors import ConflictError, LodeError, PathError, ServerUnavailableError

if TYPE_CHECKING:
    from indexer.models import Project
    from indexer.remote import RemoteLode

__all__ = ["chunk_command", "index_command", "projects_group"]


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


@cli.group("projects", invoke_without_command=True)
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


@lode_command("chunk", "json")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--max-chunk-tokens",
    type=int,
    default=None,
    help=f"Largest chunk in model word-pieces (default {ChunkerConfig().max_chunk_tokens}).",
)
def chunk_command(path: Path, max_chunk_tokens: int | None, as_json: bool) -> None:
    """Print the chunks of the file PATH with their metadata.

    Example: lode chunk src/app.py --json
    """
    from rich.console import Console
    from rich.table import Table

    from indexer.chunker import chunk_file

    if not path.is_file():
        raise PathError("path", f"{path} is not a readable file")
    config = make_config(max_chunk_tokens=max_chunk_tokens)
    result = chunk_file(path.as_posix(), path.read_bytes(), config.chunker)
    if result.skipped_reason:
        raise PathError("path", f"{path}: {result.skipped_reason}")
    if as_json:
        echo_json([dataclasses.asdict(c) for c in result.chunks])
        return
    table = Table(title=f"{path} ({result.language}{', fallback' if result.used_fallback else ''})")
    for column in ("#", "lines", "type", "name", "parent", "scope", "refs"):
        table.add_column(column)
    for c in result.chunks:
        table.add_row(
            str(c.chunk_index),
            f"{c.start_line}-{c.end_line}",
            c.node_type,
            c.node_name,
            c.parent_context[:40],
            " > ".join(c.scope_path),
            str(len(c.references)),
        )
    Console().print(table)
