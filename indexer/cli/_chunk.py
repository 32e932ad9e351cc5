"""``lode chunk``: the chunker's view of one file (its debugging window)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from indexer.cli._common import echo_json, lode_command, make_config
from indexer.config import ChunkerConfig
from indexer.errors import PathError

__all__ = ["chunk_command"]


@lode_command("chunk", "json")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--max-chunk-tokens",
    type=int,
    default=None,
    help=f"Largest chunk in model word-pieces (default {ChunkerConfig().max_chunk_tokens}).",
)
def chunk_command(path: Path, max_chunk_tokens: int | None, as_json: bool) -> None:
    """Print the chunks of the file PATH with their metadata.

    Example: lode chunk src/app.py --json
    """
    from rich.console import Console
    from rich.table import Table

    from indexer.chunker import chunk_file

    if not path.is_file():
        raise PathError("path", f"{path} is not a readable file")
    config = make_config(max_chunk_tokens=max_chunk_tokens)
    result = chunk_file(path.as_posix(), path.read_bytes(), config.chunker)
    if result.skipped_reason:
        raise PathError("path", f"{path}: {result.skipped_reason}")
    if as_json:
        echo_json([dataclasses.asdict(c) for c in result.chunks])
        return
    table = Table(title=f"{path} ({result.language}{', fallback' if result.used_fallback else ''})")
    for column in ("#", "lines", "type", "name", "parent", "scope", "refs"):
        table.add_column(column)
    for c in result.chunks:
        table.add_row(
            str(c.chunk_index),
            f"{c.start_line}-{c.end_line}",
            c.node_type,
            c.node_name,
            c.parent_context[:40],
            " > ".join(c.scope_path),
            str(len(c.references)),
        )
    Console().print(table)
