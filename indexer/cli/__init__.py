"""The ``lode`` command line: each command parses options, makes one API call, prints.

Options are named as the API fields they set (``--path-include`` ↔ ``path_include``). A
command imports the engine, the store or the model only when it runs, so every ``--help``
answers at once (a test checks what ``lode --help`` imports). Each command module adds its
commands to ``cli`` as it is imported.
"""

from __future__ import annotations

from indexer.cli import _discover, _index, _outline, _search, _service, _status, _symbols, _watch  # noqa: F401
from indexer.cli._common import cli

__all__ = ["cli", "main"]


def main() -> None:
    """Entry point of the ``lode`` console script."""
    from indexer.cli._stop import FAST_EXIT, restore_sigint

    restore_sigint()
    cli(prog_name="lode", obj={FAST_EXIT: True})
