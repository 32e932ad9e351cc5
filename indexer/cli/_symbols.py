"""``lode symbols NAME`` (go to definition) and ``lode refs NAME`` (find references, grouped
by caller): through a running lode server when there is one (``GET /api/v1/symbols…``),
else in-process. Names are matched as text, like ctags: no language server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

import click

from indexer.cli._common import echo_json, lode_command, through

if TYPE_CHECKING:
    from indexer.api import Lode

__all__ = ["refs_command", "symbols_command"]

F = TypeVar("F", bound=Callable[..., Any])
_MATCHES = ("exact", "prefix", "glob", "fuzzy")  # indexer.symbols.MATCHES (not imported for --help)
#: The query's fields named as the HTTP parameters (and the options) that set them.
_RENAMED = {"kind": "kinds", "language": "languages", "project": "projects"}


def _common(func: F) -> F:
    """``--language``, ``--project``, ``--from-path``: what both commands take."""
    func = click.option(
        "--from-path",
        default=None,
        help="The file the name is read in (relative to its project): nearer candidates "
        "first (same file, same folder, imported by it).",
    )(func)
    func = click.option("--project", default=None, help="Project name or id (default: all).")(func)
    return click.option(
        "--language", multiple=True, help="Only these languages (repeatable, or comma-separated)."
    )(func)


def _ask(db: Path | None, local: bool, fields: dict[str, Any], references: bool = False) -> Any:
    """The definitions (or the ``references``) the options ask for, from the server when one
    serves the index, else from this process. Repeated and comma-separated values alike
    (``--kind function,method``)."""
    path = "/api/v1/symbols/references" if references else "/api/v1/symbols"
    for name in ("kind", "language"):
        if name in fields:
            fields[name] = tuple(v for value in fields[name] for v in value.split(",") if v)
    # lists as repeated parameters (kind=function&kind=method)
    query = urlencode({k: v for k, v in fields.items() if v not in (None, "", ())}, doseq=True)

    def in_process(lode: Lode) -> Any:
        from indexer import symbols

        wanted = {_RENAMED.get(k, k): v for k, v in fields.items()}
        wanted["projects"] = (fields["project"],) if fields["project"] else ()
        if references:
            return symbols.references_json(lode.references(symbols.ReferenceQuery(**wanted)))
        return symbols.list_json(lode.symbols(symbols.SymbolQuery(**wanted)))

    return through(db, local, lambda remote: remote.get(f"{path}?{query}"), in_process, search=False)


def _where(item: dict[str, Any]) -> str:
    lines = f"{item['start_line']}-{item['end_line']}" if item["end_line"] > item["start_line"] else ""
    return f"{item['file_path']}:{lines or item['start_line']}"


@lode_command("symbols", "local", "db", "json")
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
def symbols_command(db: Path | None, local: bool, as_json: bool, **fields: Any) -> None:
    """Go to definition: every unit (function, method, class, namespace, macro…) named NAME
    (or Type.name), nearest first. Resolution is by name, like ctags: an ambiguous name
    lists every candidate. Goes through a running lode server when there is one.

    Example: lode symbols add_item --kind method --from-path src/shop/checkout.py
    """
    found = _ask(db, local, fields)
    if as_json:
        echo_json(found)
        return
    for item in found["symbols"]:
        near = f"  [{item['proximity']}]" if fields["from_path"] else ""
        click.echo(f"{_where(item)}  {item['kind']}  {item['qualified_name']}  {item['signature']}{near}")
    if not found["symbols"]:
        click.echo(f"no definition of {fields['name']!r} ({fields['match']})")
    elif found["truncated"]:
        click.echo(f"… {found['total']} definitions in all (raise --limit)")


@lode_command("refs", "local", "db", "json")
@click.argument("name")
@click.option("--limit", type=int, default=100, show_default=True, help="Callers listed.")
@_common
def refs_command(db: Path | None, local: bool, as_json: bool, **fields: Any) -> None:
    """Find references: every line using NAME, grouped by the unit it is in (its callers),
    after NAME's candidate definitions. Uses are matched by name, like ctags: a receiver's
    type is not known. Goes through a running lode server when there is one.

    Example: lode refs add_item --from-path src/shop/cart.py
    """
    found = _ask(db, local, fields, references=True)
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
