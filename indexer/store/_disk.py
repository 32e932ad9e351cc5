"""How much room the index takes on disk, against what it holds.

A Lance table keeps every version until it is pruned: a vector write rewrites its rows,
a compaction rewrites whole fragments, and the files
they replaced stay on disk as long as some kept version refers to them. ``disk_usage``
weighs the folder against what its newest versions hold: the live rows (text, vectors,
metadata, as Arrow bytes) and the files of their indexes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import StoreError
from indexer.store._base import StoreBase
from indexer.store._schema import CHUNKS

__all__ = ["DiskMixin", "DiskUsage"]


@dataclass(frozen=True, slots=True)
class DiskUsage:
    """The size of a local index folder and of what it holds."""

    on_disk: int
    """Bytes of every file in the index folder."""
    held: int
    """Bytes the newest version of every table holds: its live rows as Arrow data, and the
    files of its current indexes."""
    versions: int
    """Table versions on disk, over all tables."""
    chunks: int
    """Rows of the chunk table."""

    @property
    def ratio(self) -> float:
        """``on_disk`` over ``held`` (1.0 for an empty store)."""
        return self.on_disk / self.held if self.held else 1.0


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _held_bytes(dataset: Any, folder: Path) -> int:
    """Live rows (streamed, batch by batch) plus the current index files of one table."""
    rows = sum(batch.nbytes for batch in dataset.to_batches(batch_size=8192))
    indexes = {str(segment.uuid) for index in dataset.describe_indices() for segment in index.segments}
    index_files = sum(_folder_bytes(folder / "_indices" / uuid) for uuid in indexes)
    return int(rows) + index_files


class DiskMixin(StoreBase):
    """Weighs the index folder (``disk_usage``)."""

    def disk_usage(self) -> DiskUsage:
        """The index folder's size on disk against what its newest versions hold (a local
        folder only: an object store has no folder to walk)."""
        folder = Path(str(self.path))
        if not folder.is_dir():
            raise StoreError(f"disk usage is measured on a local index folder, not {self.path}")
        held = versions = 0
        for name in sorted(self._tables):
            dataset = self._own_dataset(name)
            held += _held_bytes(dataset, Path(str(self._t(name).uri)))
            versions += len(dataset.versions())
        chunks = int(self._own_dataset(CHUNKS).count_rows())
        return DiskUsage(_folder_bytes(folder), held, versions, chunks)
