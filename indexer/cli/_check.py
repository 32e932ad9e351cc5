"""``lode check``: verify the index on disk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import echo_json, lode_command, through, to_jsonable

if TYPE_CHECKING:
    from indexer.api import Lode

__all__ = ["check_command"]


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
