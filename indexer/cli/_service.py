"""``lode service install|uninstall|start|stop|status|logs``: ``lode serve`` as a per-user
background service (``indexer.service``)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import cli, lode_command, make_config

if TYPE_CHECKING:
    from indexer.discovery import ServerRecord

__all__ = [
    "install_command",
    "logs_command",
    "service_group",
    "start_command",
    "status_command",
    "stop_command",
    "uninstall_command",
]


@cli.group("service")
def service_group() -> None:
    """Run lode serve as a per-user background service: a systemd --user unit on Linux,
    a launchd agent on macOS; it starts at login, restarts after a failure and logs to
    journald (or ~/Library/Logs/lode).

    Example: lode service status
    """


@lode_command("install", "db", group=service_group)
@click.option("--port", type=int, default=None, help="TCP port of the service (default 7370).")
def install_command(db: Path | str | None, port: int | None) -> None:
    """Write and enable the service (lode serve on the index, every registered project
    watched) and start it; again after an upgrade or to change its options.

    Example: lode service install --port 7370
    """
    from indexer.service import serve_command, service_manager

    manager = service_manager()
    changed = manager.install(serve_command(db, port))
    click.echo(
        f"lode: service {'installed' if changed else 'already installed'} ({manager.path}) and started"
    )


@lode_command("uninstall", group=service_group)
def uninstall_command() -> None:
    """Stop and disable the service and remove its file; the index stays.

    Example: lode service uninstall
    """
    from indexer.service import service_manager

    manager = service_manager()
    removed = manager.uninstall()
    click.echo(
        f"lode: service {'removed' if removed else 'was not installed'} ({manager.path}); the index stays"
    )


@lode_command("start", group=service_group)
def start_command() -> None:
    """Start the installed service.

    Example: lode service start
    """
    from indexer.service import service_manager

    service_manager().start()
    click.echo("lode: service started")


@lode_command("stop", group=service_group)
def stop_command() -> None:
    """Stop the service (it starts again at the next login, or with lode service start).

    Example: lode service stop
    """
    from indexer.service import service_manager

    service_manager().stop()
    click.echo("lode: service stopped")


def _uptime(started_at: str) -> float | None:
    try:
        started = datetime.strptime(started_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return round((datetime.now(UTC) - started).total_seconds())


def _server_state(record: ServerRecord) -> dict[str, Any]:
    """What the running server says of its indexing, asked with the user's token."""
    from indexer.errors import LodeError
    from indexer.remote import RemoteLode

    remote = RemoteLode(record.url, record.token(), timeout=5.0)
    try:
        status = remote.get("/api/v1/status")
    except LodeError as exc:
        return {"error": str(exc)}
    return {
        "projects": len(status["projects"]),
        "chunks": status["chunks"],
        "chunks_embedded": status["chunks_embedded"],
        "queue": status["queue"],
        "worker_error": status.get("worker_error"),
    }


def _print_status(status: dict[str, Any]) -> None:
    installed = f"installed ({status['file']})" if status["installed"] else "not installed"
    click.echo(f"service: {installed}, {status['manager']} says {status['state']}")
    server = status["server"]
    if server is None:
        click.echo("server: none running — start one with `lode serve <folder>` (or `lode service install`)")
        return
    click.echo(
        f"server: {server['url']} pid {server['pid']}, up {server['uptime_seconds']} s, "
        f"lode {server['version']}, index {server['db']}"
    )
    click.echo(
        f"auth: {server['auth']}" + (f" (token in {server['token_file']})" if server["token_file"] else "")
    )
    if server.get("login_link"):
        click.echo(f"web page: {server['login_link']}")
    state = server["indexing"]
    if "error" in state:
        click.echo(f"indexing: unknown ({state['error']})")
        return
    queue = state["queue"]
    click.echo(
        f"indexing: {queue.get('running', 0)} running, {queue.get('queued', 0)} queued; "
        f"{state['projects']} projects, {state['chunks']} chunks searchable, "
        f"{state['chunks_embedded']} embedded"
    )


@lode_command("status", "json", group=service_group, render=_print_status)
def status_command() -> dict[str, Any]:
    """Whether the service is installed and running, and the running server's URL, pid,
    uptime, indexing state and the web page's login link.

    Example: lode service status --json
    """
    from indexer.discovery import read_server_record
    from indexer.service import service_manager

    manager = service_manager()
    record = read_server_record(make_config())
    server: dict[str, Any] | None = None
    if record is not None:
        token = record.token()
        server = {
            "url": record.url,
            "pid": record.pid,
            "version": record.version,
            "db": record.db,
            "uptime_seconds": _uptime(record.started_at),
            "auth": record.auth,
            "token_file": record.token_file,
            "login_link": f"{record.url}/#token={token}" if token else f"{record.url}/",
            "indexing": _server_state(record),
        }
    return {
        "manager": manager.kind,
        "file": str(manager.path),
        "installed": manager.installed(),
        "state": manager.state(),
        "server": server,
    }


@lode_command("logs", group=service_group)
@click.option("-n", "--lines", type=int, default=100, show_default=True, help="How many of the last lines.")
@click.option("-f", "--follow", is_flag=True, help="Keep printing new lines.")
def logs_command(lines: int, follow: bool) -> None:
    """Show the service's log (journald on Linux, ~/Library/Logs/lode on macOS).

    Example: lode service logs -n 50 --follow
    """
    from indexer.errors import ServiceError
    from indexer.service import service_manager

    command = service_manager().logs_command(lines, follow)
    try:
        code = subprocess.call(command)
    except OSError as exc:
        raise ServiceError(f"cannot run `{command[0]}`: {exc.strerror or exc}") from None
    if code not in (0, 130):
        raise ServiceError(f"`{' '.join(command[:4])}` failed (exit {code})")
