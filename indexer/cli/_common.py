"""What every command shares: the root group, options, one output path, the server or
the index opened here, and errors → one line and exit 2. Imports only what ``--help``
needs (click, the config's defaults)."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from indexer.config import LodeConfig, load_config
from indexer.errors import LodeError, ValidationError
from indexer.storage_failure import describe_storage_failure, is_storage_failure, storage_cause

if TYPE_CHECKING:
    from indexer.api import Lode
    from indexer.remote import RemoteLode

__all__ = [
    "api_option",
    "cli",
    "echo_json",
    "handle_errors",
    "lode_command",
    "make_config",
    "server_for",
    "through",
    "to_jsonable",
]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
_ARGV = "lode.argv"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lode")
def cli() -> None:
    """lode: local-first code search for people and LLM agents.

    Example: lode index . && lode search "where are tokens refreshed"
    """


class LodeCommand(click.Command):
    """A command that remembers the arguments it was given, so an error can name the
    option the user typed (``--path``) rather than the API field (``path_include``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Keep the raw arguments, then parse them as click does."""
        ctx.meta[_ARGV] = tuple(args)
        return super().parse_args(ctx, args)


class ApiOption(click.Option):
    """An option named as the API field it sets (``--path-include`` ↔ ``path_include``);
    the older spellings in ``old`` still work but are not shown in ``--help``."""

    def __init__(self, param_decls: Sequence[str], old: Sequence[str] = (), **attrs: Any) -> None:
        super().__init__([*param_decls, *old], **attrs)
        self.old_names = tuple(old)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """The help line, without the old spellings."""
        every = self.opts
        self.opts = [name for name in every if name not in self.old_names]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = every


class DbLocation(click.ParamType):  # type: ignore[type-arg]
    """An index location: a local folder (a ``Path``; not an existing file) or an
    object-storage URI such as ``s3://bucket/prefix`` (kept as text)."""

    name = "DIR|URI"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        """The location as ``indexer.config.db_location`` keeps it."""
        from indexer.config import db_location
        from indexer.errors import ConfigError

        try:
            location = db_location(value if isinstance(value, Path) else str(value))
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)
        if isinstance(location, Path) and location.is_file():
            self.fail(f"{str(location)!r} is a file", param, ctx)
        return location


_DB_HELP = (
    "Index folder, or object-storage URI such as s3://bucket/prefix "
    "(default: $LODE_DB or the per-user data directory)."
)
#: The options every command that names them shares, in the order named.
_SHARED: dict[str, Callable[[], click.Option]] = {
    "db": lambda: click.Option(["--db"], type=DbLocation(), default=None, help=_DB_HELP),
    "json": lambda: click.Option(["--json", "as_json"], is_flag=True, help="Print JSON."),
    "local": lambda: click.Option(
        ["--local"], is_flag=True, help="Run in-process even if a lode server is running."
    ),
}


def api_option(field: str, *old: str, **attrs: Any) -> Callable[[F], F]:
    """``--field-name``: the option setting the API field ``field``; the ``old`` spellings
    still work but are not shown in ``--help``."""
    return click.option("--" + field.replace("_", "-"), field, cls=ApiOption, old=old, **attrs)


def lode_command(
    name: str, *shared: str, render: Callable[[Any], None] | None = None, group: click.Group | None = None
) -> Callable[[Callable[..., Any]], click.Command]:
    """A command of ``group`` (default: ``lode`` itself) with the ``shared`` options (``local``, ``db``,
    ``json``) after its own and lode's error handling. Given ``render``, the callback
    returns its answer and the command prints it: as JSON with ``--json``, else by ``render``."""

    def decorate(func: Callable[..., Any]) -> click.Command:
        @functools.wraps(func)
        def callback(*args: Any, **kwargs: Any) -> None:
            if render is None:
                func(*args, **kwargs)
                return
            as_json = kwargs.pop("as_json")
            answer = func(*args, **kwargs)
            if as_json:
                echo_json(answer)
            else:
                render(answer)

        command = click.command(name, cls=LodeCommand)(handle_errors(callback))
        command.params.extend(_SHARED[option]() for option in shared)
        (group or cli).add_command(command)
        return command

    return decorate


def make_config(**overrides: Any) -> LodeConfig:
    """Settings from the environment plus the command's explicit options."""
    return load_config(overrides=overrides)


def server_for(config: LodeConfig, db: Path | str | None, local: bool) -> RemoteLode | None:
    """The running lode server to go through, or None to run in-process: none with
    ``--local``, and none serving another index than one chosen by ``--db`` / ``LODE_DB``."""
    if local:
        return None
    from indexer.remote import find_server

    return find_server(config, same_db=db is not None or "LODE_DB" in os.environ)


def through(
    db: Path | str | None,
    local: bool,
    remote: Callable[[RemoteLode], T],
    in_process: Callable[[Lode], T],
    *,
    search: bool = True,
) -> T:
    """``remote`` on the lode server serving the index when there is one (``server_for``),
    else ``in_process`` on the index opened here (``open_for_search`` when ``search``), then
    closed."""
    config = make_config(db=db)
    server = server_for(config, db, local)
    if server is not None:
        return remote(server)
    from indexer.api import Lode, open_for_search

    lode = open_for_search(config) if search else Lode(config)
    try:
        return in_process(lode)
    finally:
        lode.close()


def to_jsonable(value: Any) -> Any:
    """Dataclasses, tuples, paths and datetimes as JSON-ready values."""
    if is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    return value


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def typed_name(ctx: click.Context | None, field: str) -> str:
    """How the user spelled the option (or argument) that sets the API field ``field``:
    the spelling found in the command line, else the option's own name; the field itself
    when no parameter of the command sets it."""
    param = next((p for p in ctx.command.params if p.name == field), None) if ctx else None
    if ctx is None or param is None:
        return field
    if not isinstance(param, click.Option):
        return param.human_readable_name
    names = [*param.opts, *param.secondary_opts]
    for arg in ctx.meta.get(_ARGV, ()):
        for name in names:
            if arg == name or arg.startswith(name + "="):
                return name
    return names[0]


def _message(exc: LodeError) -> str:
    """A lode error in a line, each field named as the user typed its option."""
    ctx = click.get_current_context(silent=True)
    if isinstance(exc, ValidationError):
        return "; ".join(f"{typed_name(ctx, e.field)}: {e.message}" for e in exc.errors)
    field = getattr(exc, "field", None)
    return f"{typed_name(ctx, field)}: {exc}" if field else str(exc)


def _unexpected(exc: Exception) -> str:
    """What the CLI says of an error that is not one of lode's own: a storage failure (a
    full disk, refused credentials…) its cause and fix, another ``OSError`` the system's
    words, anything else an internal error."""
    db = _db_of_command()
    if isinstance(exc, OSError):
        # the index's own files (or no file named: Lance's): its storage; another file's
        # error (a project's, the cache's) names that file
        named = exc.filename is not None and not str(exc.filename).startswith(str(db))
        if storage_cause(exc).waits and not named:
            return f"error: {describe_storage_failure(exc, db)}"
        return f"error: {exc.strerror or exc} ({exc.filename or ''})"
    if is_storage_failure(exc):
        return f"error: {describe_storage_failure(exc, db)}"
    return f"internal error: {exc!r} (set LODE_DEBUG=1 for the traceback)"


def _db_of_command() -> Path | str:
    """The index the running command uses (``--db``, else ``LODE_DB``, else the default)."""
    ctx = click.get_current_context(silent=True)
    db = ctx.params.get("db") if ctx is not None else None
    if db is None:
        from indexer.config import default_db_dir

        db = os.environ.get("LODE_DB") or default_db_dir()
    return db


def handle_errors(func: F) -> F:
    """Turn lode's errors into one line on stderr and exit code 2 (no traceback); a field
    error names the option as the user typed it."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except LodeError as exc:
            click.echo(f"lode: error: {_message(exc)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("lode: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:
            if os.environ.get("LODE_DEBUG"):
                raise
            click.echo(f"lode: {_unexpected(exc)}", err=True)
            sys.exit(2 if isinstance(exc, OSError) or is_storage_failure(exc) else 1)

    return wrapper  # type: ignore[return-value]
