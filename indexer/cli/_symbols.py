"""``lode symbols NAME`` (go to definition) and ``lode refs NAME`` (find references, grouped
by caller): through a running lode server when there is one (``GET /api/v1/symbols…``),
else in-process. Names are matched as text, like ctags: no language server."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

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

__all__ = ["refs_command", "symbols_command"]

_MATCHES = ("exact", "prefix", "glob", "fuzzy")  # indexer.symbols.MATCHES (not imported for --help)


def _common(func: Any) -> Any:
    """``--language``, ``--project``, ``--from-path``, ``--local``, ``--db``, ``--json``."""
    func = local_option(db_option(json_option(func)))
    for option in reversed(
        (
            click.option(
                "--language", multiple=True, help="Only these languages (repeatable, or comma-separated)."
            ),
            click.option("--project", default=None, help="Project name or id (default: all)."),
            click.option(
                "--from-path",
                default=None,
                help="The file the name is read in (relative to its project): nearer candidates "
                "first (same file, same folder, imported by it).",
            ),
        )
    ):
        func = option(func)
    return func


def _listed(values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeated and comma-separated values alike (``--kind function,method``)."""
    return tuple(v for value in values for v in value.split(",") if v)


def _query(**fields: Any) -> str:
    """The HTTP query string (a list is one comma-separated value, as the API takes it)."""
    pairs = {k: ",".join(v) if isinstance(v, tuple) else v for k, v in fields.items()}
    return urlencode({k: v for k, v in pairs.items() if v not in (None, "")})


def _ask(db: Path | None, local: bool, path: str, fields: dict[str, Any], call: str) -> dict[str, Any]:
    """The answer of the server at ``path`` when one serves the index, else of this process."""
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        answer: dict[str, Any] = remote.get(f"{path}?{_query(**fields)}")
        return answer
    from indexer import symbols
    from indexer.api import Lode

    lode = Lode(config)
    try:
        if call == "symbols":
            query = symbols.SymbolQuery(
                fields["name"], fields["match"], fields["kind"], fields["language"],
                (project,) if (project := fields["project"]) else (), fields["from_path"], fields["limit"],
            )  # fmt: skip
            return symbols.list_json(lode.symbols(query))
        projects = (fields["project"],) if fields["project"] else ()
        wanted = symbols.ReferenceQuery(
            fields["name"], fields["language"], projects, fields["from_path"], fields["limit"]
        )
        return symbols.references_json(lode.references(wanted))
    finally:
        lode.close()


def _where(item: dict[str, Any]) -> str:
    lines = f"{item['start_line']}-{item['end_line']}" if item["end_line"] > item["start_line"] else ""
    return f"{item['file_path']}:{lines or item['start_line']}"


@click.command("symbols", cls=LodeCommand)
@click.argument("name")
@click.option(
    "--match",
    type=click.Choice(_MATCHES),
    default="exact",
    show_default=True,
    help="exact; prefix; glob (*, ?, [...], case-sensitive); fuzzy (case and _ ignored).",
)
@click.option(
    "--kind", multiple=True, help="Only these node types, e.g. method (repeatable, or comma-separated)."
)
@click.option("--limit", type=int, default=50, show_default=True, help="Definitions listed.")
@_common
@handle_errors
def symbols_command(
    name: str,
    match: str,
    kind: tuple[str, ...],
    limit: int,
    language: tuple[str, ...],
    project: str | None,
    from_path: str | None,
    local: bool,
    db: Path | None,
    as_json: bool,
) -> None:
    """Go to definition: every unit (function, method, class, namespace, macro…) named NAME
    (or Type.name), nearest first. Resolution is by name, like ctags: an ambiguous name
    lists every candidate. Goes through a running lode server when there is one.

    Example: lode symbols add_item --kind method --from-path src/shop/checkout.py
    """
    fields = {"name": name, "match": match, "kind": _listed(kind), "language": _listed(language),
              "project": project, "from_path": from_path, "limit": limit}  # fmt: skip
    found = _ask(db, local, "/api/v1/symbols", fields, "symbols")
    if as_json:
        echo_json(found)
        return
    for item in found["symbols"]:
        near = f"  [{item['proximity']}]" if from_path else ""
        click.echo(f"{_where(item)}  {item['kind']}  {item['qualified_name']}  {item['signature']}{near}")
    if not found["symbols"]:
        click.echo(f"no definition of {name!r} ({match})")
    elif found["truncated"]:
        click.echo(f"… {found['total']} definitions in all (raise --limit)")


@click.command("refs", cls=LodeCommand)
@click.argument("name")
@click.option("--limit", type=int, default=100, show_default=True, help="Callers listed.")
@_common
@handle_errors
def refs_command(
    name: str,
    limit: int,
    language: tuple[str, ...],
    project: str | None,
    from_path: str | None,
    local: bool,
    db: Path | None,
    as_json: bool,
) -> None:
    """Find references: every line using NAME, grouped by the unit it is in (its callers),
    after NAME's candidate definitions. Uses are matched by name, like ctags: a receiver's
    type is not known. Goes through a running lode server when there is one.

    Example: lode refs add_item --from-path src/shop/cart.py
    """
    fields = {"name": name, "language": _listed(language), "project": project, "from_path": from_path,
              "limit": limit}  # fmt: skip
    found = _ask(db, local, "/api/v1/symbols/references", fields, "refs")
    if as_json:
        echo_json(found)
        return
    for item in found["definitions"]:
        click.echo(f"defined: {_where(item)}  {item['kind']}  {item['qualified_name']}")
    for caller in found["callers"]:
        unit = f"{caller['container']} ({caller['container_kind']})" if caller["container"] else "(top level)"
        click.echo(f"{caller['file_path']}  {unit}")
        for site in caller["sites"]:
            click.echo(f"  {site['line']}: {site['text']}")
    click.echo(f"{found['total_sites']} uses in {found['total_callers']} callers" + (
        " (raise --limit)" if found["truncated"] else ""))  # fmt: skip
