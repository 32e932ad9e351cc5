"""What every command shares: options, the API object, errors → one line and exit 2."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from indexer.config import LodeConfig, load_config
from indexer.errors import LodeError
from indexer.remote import RemoteLode, find_server

__all__ = [
    "db_option",
    "echo_json",
    "handle_errors",
    "json_option",
    "local_option",
    "make_config",
    "server_for",
    "to_jsonable",
]

F = TypeVar("F", bound=Callable[..., Any])


def db_option(func: F) -> F:
    """``--db DIR``: the index directory (default: per-user data dir, or LODE_DB)."""
    return click.option(
        "--db",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Index directory (default: $LODE_DB or the per-user data directory).",
    )(func)


def json_option(func: F) -> F:
    """``--json``: print machine-readable JSON instead of a table."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def local_option(func: F) -> F:
    """``--local``: run in this process even when a lode server is running."""
    return click.option("--local", is_flag=True, help="Run in-process even if a lode server is running.")(
        func
    )


def make_config(**overrides: Any) -> LodeConfig:
    """Settings from the environment plus the command's explicit options."""
    return load_config(overrides=overrides)


def server_for(config: LodeConfig, db: Path | None, local: bool) -> RemoteLode | None:
    """The running lode server to go through, or None to run in-process: none with
    ``--local``, and none serving another index than one chosen by ``--db`` / ``LODE_DB``."""
    if local:
        return None
    return find_server(config, same_db=db is not None or "LODE_DB" in os.environ)


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


def handle_errors(func: F) -> F:
    """Turn lode's errors into one line on stderr and exit code 2 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except LodeError as exc:
            click.echo(f"lode: error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("lode: interrupted", err=True)
            sys.exit(130)
        except OSError as exc:
            click.echo(f"lode: error: {exc.strerror or exc} ({exc.filename or ''})", err=True)
            sys.exit(2)
        except Exception as exc:
            if os.environ.get("LODE_DEBUG"):
                raise
            click.echo(f"lode: internal error: {exc!r} (set LODE_DEBUG=1 for the traceback)", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
