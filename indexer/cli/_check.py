"""``lode check``: verify the index on disk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from indexer.cli._common import (
    LodeCommand,
    db_option,
    echo_json,
    handle_errors,
    json_option,
    local_option,
    make_config,
    server_for,
)

__all__ = ["check_command"]


@click.command("check", cls=LodeCommand)
@local_option
@db_option
@json_option
@handle_errors
def check_command(local: bool, db: Path | str | None, as_json: bool) -> None:
    """Verify the index: every table read whole, every index asked one question, rows in
    agreement (no duplicate, orphan, missing, stale or unembedded row; content matching its
    hash; vectors finite and unit-length). Exits 1 when something is wrong.

    Goes through a running lode server when there is one (GET /api/v1/check).

    Example: lode check --json
    """
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        result: dict[str, Any] = remote.get("/api/v1/check")
    else:
        from indexer.api import Lode
        from indexer.cli._common import to_jsonable

        lode = Lode(config)
        try:
            result = to_jsonable(lode.check())
        finally:
            lode.close()
        result["ok"] = not result["problems"]
    if as_json:
        echo_json(result)
    else:
        _print(result)
    if not result["ok"]:
        sys.exit(1)


def _print(result: dict[str, Any]) -> None:
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
