"""``lode upgrade``: bring an index to this lode's schema."""

from __future__ import annotations

from pathlib import Path

import click

from indexer.cli._common import LodeCommand, db_option, echo_json, handle_errors, json_option, make_config

__all__ = ["upgrade_command"]


@click.command("upgrade", cls=LodeCommand)
@db_option
@json_option
@handle_errors
def upgrade_command(db: Path | str | None, as_json: bool) -> None:
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
        report = lode.upgrade()
    finally:
        lode.close()
    if as_json:
        echo_json(report)
        return
    if report.from_version == report.to_version:
        click.echo(f"the index at {report.db} has schema {report.to_version} already", nl=False)
    else:
        click.echo(
            f"upgraded the index at {report.db} from schema {report.from_version} to {report.to_version}",
            nl=False,
        )
    click.echo(f"; {report.files_rechunked} file(s) chunked again")
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
