"""``lode upgrade``: bring an index to this lode's schema."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from indexer.cli._common import lode_command, make_config

if TYPE_CHECKING:
    from indexer.models import UpgradeReport

__all__ = ["upgrade_command"]


def _print(report: UpgradeReport) -> None:
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


@lode_command("upgrade", "db", "json", render=_print)
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
