"""The ``lode`` command line: each command parses options, makes one API call, prints.

Options are named as the API fields they set (``--path-include`` ↔ ``path_include``). A
command imports the engine, the store or the model only when it runs, so every ``--help``
answers at once (a test checks what ``lode --help`` imports)."""

from __future__ import annotations

import click

from indexer.cli._discover import discover_command
from indexer.cli._index import chunk_command, index_command, projects_group
from indexer.cli._outline import outline_group
from indexer.cli._search import find_documents_command, search_command, search_content_command
from indexer.cli._status import check_command, status_command, upgrade_command
from indexer.cli._symbols import refs_command, symbols_command
from indexer.cli._watch import watch_command

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lode")
def cli() -> None:
    """lode: local-first code search for people and LLM agents.

    Example: lode index . && lode search "where are tokens refreshed"
    """


for _command in (
    index_command,
    search_command,
    chunk_command,
    projects_group,
    status_command,
    check_command,
    upgrade_command,
    watch_command,
    outline_group,
    search_content_command,
    find_documents_command,
    discover_command,
    symbols_command,
    refs_command,
):
    cli.add_command(_command)


def main() -> None:
    """Entry point of the ``lode`` console script."""
    from indexer.cli._stop import FAST_EXIT, restore_sigint

    restore_sigint()
    cli(prog_name="lode", obj={FAST_EXIT: True})
