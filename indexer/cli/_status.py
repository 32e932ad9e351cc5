"""``lode status``, ``lode check`` and ``lode upgrade``: the state of the index."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import echo_json, lode_command, make_config, through, to_jsonable

if TYPE_CHECKING:
    from indexer.api import Lode
    from indexer.models import UpgradeReport
    from indexer.remote import RemoteLode

__all__ = ["check_command", "status_command", "upgrade_command"]


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


def _phases_text(project: dict[str, Any]) -> str:
    """The project's two states: searchable (phase 1 over) and embedded (its vectors in)."""
    task = project.get("current_task") or {}
    live = task.get("status") in ("queued", "running")
    if live and task.get("status") == "running" and not task.get("searchable"):
        searchable = f"updating ({task.get('files_done', 0)}/{task.get('files_total', 0)} files)"
    elif live and not task.get("searchable"):
        searchable = "yes (a run is queued)"
    else:
        searchable = "yes"
    coverage = float(project.get("semantic_coverage", 0.0))
    embedding = live and task.get("phase") == "embed"
    embedded = "yes" if coverage >= 1.0 else f"{coverage:.0%}" + (" (embedding)" if embedding else "")
    code = project.get("implementation_coverage")  # an older server does not say
    if coverage < 1.0 and code is not None:
        embedded += f", code {code:.0%}"
    return f"searchable: {searchable}, embedded: {embedded}"


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
            f"  {p['name']}: {p['files']} files, {p['chunks']} chunks; {_phases_text(p)}{failed}; "
            f"{_watch_text(p, via)} — {p['root']}"
        )
    names = {p["id"]: p["name"] for p in status["projects"]}
    tasks = status.get("tasks", [])
    click.echo(f"tasks: {len(tasks)} running or queued" if tasks else "tasks: none running or queued")
    for task in tasks:
        click.echo(f"  {_task_text(task, names)}")


@lode_command("status", "local", "db", "json", render=_print_status)
def status_command(local: bool, db: Path | str | None) -> dict[str, Any]:
    """Show the index: projects with their watcher state, whether each is searchable and
    embedded (and how much of its implementation code, embedded first), running and queued
    tasks with their progress, files, chunks, failures.

    Asks a running lode server when there is one (it knows its tasks' rates and its
    watchers); --local (or no server) reads what the index records.

    Example: lode status --json
    """
    return through(db, local, _remote_status, lambda lode: {"via": "local", **lode.status()}, search=False)


@lode_command("check", "local", "db", "json")
def check_command(local: bool, db: Path | str | None, as_json: bool) -> None:
    """Verify the index: every table read whole, every index asked one question, rows in
    agreement (no duplicate, orphan, missing, stale or unembedded row; content matching its
    hash; vectors finite and unit-length). Exits 1 when something is wrong.

    Goes through a running lode server when there is one (GET /api/v1/check).

    Example: lode check --json
    """

    def in_process(lode: Lode) -> dict[str, Any]:
        result: dict[str, Any] = to_jsonable(lode.check())
        return {**result, "ok": not result["problems"]}

    result = through(db, local, lambda remote: remote.get("/api/v1/check"), in_process, search=False)
    if as_json:
        echo_json(result)
    else:
        _print_check(result)
    if not result["ok"]:
        sys.exit(1)


def _print_check(result: dict[str, Any]) -> None:
    rows = ", ".join(f"{table} {count}" for table, count in result["rows"].items())
    answered = sum(1 for v in result["indexes"].values() if v == "ok")
    click.echo(f"read {rows}; {answered}/{len(result['indexes'])} indexes answered; {result['seconds']:.1f}s")
    for problem in result["problems"]:
        click.echo(f"  {problem['kind']} in {problem['table']}: {problem['detail']} ×{problem['count']}")
    pending = result.get("pending") or []
    if pending:
        click.echo("work left for the index's writer (not damage):")
    for item in pending:
        click.echo(f"  {item['kind']} in {item['table']}: {item['detail']} ×{item['count']}")
    click.echo("ok" if result["ok"] else f"{len(result['problems'])} problem(s)")


def _print_upgrade(report: UpgradeReport) -> None:
    if report.from_version == report.to_version:
        done = f"the index at {report.db} has schema {report.to_version} already"
    else:
        done = f"upgraded the index at {report.db} from schema {report.from_version} to {report.to_version}"
    click.echo(f"{done}; {report.files_rechunked} file(s) chunked again")
    if report.files_awaiting_rechunk:
        click.echo(
            f"{report.files_awaiting_rechunk} file(s) of projects whose folder could not be read "
            "are chunked again at their next `lode index`"
        )
    if report.vectors_outdated:
        click.echo(
            f"{report.vectors_outdated} vector(s) made before the upgrade answer searches until "
            "`lode serve` or the next `lode index` makes them again"
        )


@lode_command("upgrade", "db", "json", render=_print_upgrade)
def upgrade_command(db: Path | str | None) -> UpgradeReport:
    """Upgrade the index to this lode's schema: migrate its tables, then chunk again every
    file an older lode chunked (its symbols and roles). Refuses while another lode process
    uses the index (stop it first). Vectors made before the upgrade answer searches until
    `lode serve` or the next `lode index` makes them again. Commands that only read an
    older index say it needs this, and write nothing.

    Example: lode upgrade --db ~/.local/share/lode/index
    """
    from indexer.api import Lode

    lode = Lode(make_config(db=db))
    try:
        return lode.upgrade()
    finally:
        lode.close()
