"""``lode serve`` and the ``lode`` entry point (the indexer's commands plus the server's)."""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import signal
import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli import cli, main
from indexer.cli._common import lode_command, make_config, server_for
from indexer.config import LodeConfig, ServerConfig
from indexer.errors import ConfigError

if TYPE_CHECKING:
    from server.context import ServerContext

__all__ = ["main", "mcp_command", "serve_command"]


def check_bind(config: LodeConfig) -> None:
    """Refuse to listen beyond loopback without an API key, or on a port already taken."""
    from server.security import is_loopback_address

    server = config.server
    if not is_loopback_address(server.host) and not server.api_key:
        raise ConfigError(
            f"refusing to listen on {server.host} without an API key: set --api-key or LODE_API_KEY "
            "(or bind 127.0.0.1)"
        )
    family = socket.AF_INET6 if ":" in server.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((server.host, server.port))
        except OSError as exc:
            raise ConfigError(f"cannot listen on {server.host}:{server.port}: {exc.strerror}") from None


_SERVER = ServerConfig()
#: On SIGINT or SIGTERM, how long requests in flight may still run.
_GRACE_SECONDS = 1
#: Exit status when the server could not start listening (uvicorn's).
_STARTUP_FAILURE = 3


@lode_command("serve", "db", group=cli)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--host", default=None, help=f"Bind address (default {_SERVER.host}; others need --api-key).")
@click.option("--port", type=int, default=None, help=f"TCP port (default {_SERVER.port}).")
@click.option("--api-key", default=None, help="Require 'Authorization: Bearer KEY' (or LODE_API_KEY).")
@click.option(
    "--no-auth",
    is_flag=True,
    default=None,
    help="Serve without the per-user token: any local account may use it (or LODE_NO_AUTH).",
)
@click.option("--no-watch", is_flag=True, help="Do not watch projects for changes.")
@click.option("--force", is_flag=True, help="Serve /, a system folder or the home folder itself anyway.")
@click.option(
    "--read-only",
    is_flag=True,
    default=None,
    help="Answer reads only: no writer, watcher or maintenance; writes answer 409 (or LODE_READ_ONLY).",
)
def serve_command(paths: tuple[Path, ...], no_watch: bool, force: bool, **settings: Any) -> None:
    """Serve the index over HTTP and MCP; register, index and watch each PATH given.
    With --read-only, one of many search servers of an index that one writer keeps current
    (see docs/scale-out.md). Private to its user by default: clients send the token of
    the per-user token file, named by the discovery file the server leaves while it runs
    (see docs/operations.md).

    Example: lode serve ~/src/shop ~/src/infra --port 7370
    """
    from indexer.api import resolve_project_root
    from indexer.cli._stop import STOP_WAIT, exit_now, fast_exit_wanted
    from indexer.writer import WriterBusyError, find_writer
    from server.app import server_url
    from server.context import open_context, register_paths

    config = make_config(
        enabled=False if no_watch else None, **settings
    )  # host, port, api_key, no_auth, read_only, db
    if config.server.read_only and paths:
        raise ConfigError("a read-only server indexes nothing: give the PATHs to the writer (lode serve)")
    roots = [str(resolve_project_root(p, field="PATH", force=force)) for p in paths]
    writer = None if config.server.read_only else find_writer(config)
    if writer is not None:  # a second server on another port would be a second writer
        raise WriterBusyError(config.db, writer)
    check_bind(config)
    config, token_file = _private(config)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # a crash inside a native library (a segfault, a stack overflow) leaves its reason and
    # the Python stacks in the log instead of a server that vanished without a word
    _enable_crash_log()
    _INTERRUPTED.clear()
    remember = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if remember:
        signal.signal(signal.SIGINT, _interrupt)
    try:
        # the index opens (the writer's claim, the store) before the port does: what fails
        # there is one line and exit 2, and "serving" is said only once the server answers
        ctx = open_context(config, url=server_url(config))
        try:
            ctx.stop_wait = STOP_WAIT  # a stop leaves a writer inside the model to the exit
            _check_interrupted()
            register_paths(ctx, roots)
            _check_interrupted()
            # the app's shutdown closes ctx (uvicorn then re-raises a SIGTERM)
            _serve(config, ctx, token_file)
        except BaseException:
            ctx.close()
            raise
    finally:
        if remember:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if fast_exit_wanted():
        exit_now(0)


#: The SIGINTs ``lode serve`` received before uvicorn took the signals over.
_INTERRUPTED: list[int] = []


def _interrupt(signum: int, frame: object) -> None:
    """Python's Ctrl-C (a ``KeyboardInterrupt``), remembered: a start swallowed one once
    (somewhere in opening the index; the server then served on, deaf to it)."""
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def _check_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` when a Ctrl-C came and was swallowed."""
    if _INTERRUPTED:
        raise KeyboardInterrupt


def _private(config: LodeConfig) -> tuple[LodeConfig, Path | None]:
    """``config`` requiring the per-user token (made once, kept in a 0600 file) unless it
    has a key already or ``no_auth`` says so; and the token's file."""
    from indexer.discovery import load_or_create_token, runtime_dir

    if config.server.api_key:
        return config, None
    if config.server.no_auth:  # said once it serves (``_announce``)
        return config, None
    try:
        token, path = load_or_create_token(config)
    except OSError as exc:
        raise ConfigError(
            f"cannot keep the per-user token in {runtime_dir(config)}: {exc.strerror or exc} "
            "(set LODE_RUNTIME_DIR to a folder of yours, or serve with --no-auth)"
        ) from None
    return replace(config, server=replace(config.server, api_key=token)), path


def _announce(config: LodeConfig, token_file: Path | None) -> None:
    """Leave the discovery file and say where the server is (and how the page gets in)."""
    from indexer import __version__
    from indexer.discovery import write_server_record
    from server.app import server_url

    url = server_url(config)
    auth = "bearer" if config.server.api_key else "none"
    try:
        written = write_server_record(config, url, auth=auth, token_file=token_file, version=__version__)
    except OSError as exc:
        written = None
        logging.getLogger(__name__).warning("no discovery file: %s", exc)
    role = " read-only" if config.server.read_only else ""
    click.echo(
        f"lode: serving {config.db}{role} on http://{config.server.host}:{config.server.port}/ "
        "(the search page; API docs at /api/docs)",
        err=True,
    )
    if not config.server.api_key:
        click.echo(
            "lode: warning: --no-auth: every account of this machine can search and change this index",
            err=True,
        )
    if written is None:
        click.echo("lode: another lode server is the one clients find (its discovery file stays)", err=True)
    if token_file is not None:
        # the link carries the secret: shown on a terminal, not written into a log
        link = f"{url}/#token={config.server.api_key}" if sys.stderr.isatty() else "`lode service status`"
        click.echo(
            f"lode: private to this user (token in {token_file}); the page's login link: {link}", err=True
        )


def _serve(config: LodeConfig, ctx: ServerContext, token_file: Path | None = None) -> None:
    """Run the app over ``ctx`` until SIGINT or SIGTERM (requests in flight get a moment,
    then the app's shutdown stops the watcher, the search processes and the writer;
    ``indexer.cli._stop``); the discovery file names it while it listens."""
    import uvicorn

    from indexer.discovery import remove_server_record
    from server.app import create_app
    from server.limits import UVICORN_LIMITS

    class Server(uvicorn.Server):
        """uvicorn's server, saying "serving" once it listens and the app has started."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            """Start as uvicorn does (it exits when the app's startup fails), then say so;
            a Ctrl-C that came before uvicorn listened for it stops the server now."""
            await super().startup(sockets)
            if _INTERRUPTED:
                self.should_exit = True
            if self.started:
                _announce(config, token_file)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            """Stop being found (the discovery file goes first), then stop as uvicorn does
            (a SIGTERM is raised again after it, before ``run`` returns)."""
            remove_server_record(config)
            await super().shutdown(sockets)

    app = create_app(config, context=ctx, search_processes=config.server.search_processes, close_context=True)
    server = Server(
        uvicorn.Config(
            app, host=config.server.host, port=config.server.port, log_level="warning",
            timeout_graceful_shutdown=_GRACE_SECONDS, **UVICORN_LIMITS,
        )
    )  # fmt: skip
    try:
        with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: a second Ctrl-C
            server.run()
    finally:
        remove_server_record(config)  # only this process's own record
    if not server.started:
        sys.exit(_STARTUP_FAILURE)


@lode_command("mcp", "db", group=cli)
@click.option("--no-watch", is_flag=True, help="Do not watch projects for changes.")
def mcp_command(no_watch: bool, db: Path | str | None) -> None:
    """Serve lode's MCP tools over stdio, for an MCP client that spawns this command.

    When a lode server writes the index, every tool call goes to it; otherwise this
    process opens the index and writes it (watching its projects).

    Example: lode mcp --db ~/.local/share/lode/index
    """
    from server.mcp import build_mcp

    # stdout carries the protocol; stderr only log lines, none of a library's chatter
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="lode mcp: %(levelname)s %(name)s: %(message)s"
    )
    _enable_crash_log()  # a native crash says so on stderr (stdout carries the protocol)
    config = make_config(db=db, enabled=False if no_watch else None)
    remote = server_for(config, db, local=False)
    if remote is not None:
        forward = (remote.base_url, remote.api_key, str(config.db))
        build_mcp(_no_context, forward_to=forward).run("stdio")
        return
    from indexer.api import cached_graph, query_embedder
    from server.context import open_context

    # queries through the cached ONNX graph: the first search does not wait for torch
    embedder = query_embedder(config, cached_graph(config))
    ctx = open_context(config, embedder=embedder, command="lode mcp")
    ctx.token_counter()  # loaded before the client's first call
    try:
        build_mcp(lambda: ctx).run("stdio")
    finally:
        ctx.close()


def _enable_crash_log() -> None:
    """Write a native crash's reason and the Python stacks to stderr (``faulthandler``);
    nothing when stderr is no file (a command run inside another program, as in tests)."""
    with contextlib.suppress(OSError, ValueError):
        faulthandler.enable()


def _no_context() -> Any:
    raise RuntimeError("forwarding: no context")
