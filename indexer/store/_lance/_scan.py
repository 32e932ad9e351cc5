"""Row ids and counts of pylance datasets read by a scan, which waits for Lance without the
GIL (pylance's ``count_rows`` holds it while Lance works; see ``count_admitted``)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["admitted_row_ids", "count_admitted"]


def admitted_row_ids(
    dataset: Any, where: str | None, *, fragments: list[Any] | None = None, limit: int | None = None
) -> pa.Array:
    """Row ids of a pylance ``dataset`` (or of some of its ``fragments``) admitted by
    ``where``, at most ``limit``. Read by a scan, which waits for Lance without the GIL."""
    scanner = dataset.scanner(columns=[], filter=where, with_row_id=True, fragments=fragments, limit=limit)
    return scanner.to_table()["_rowid"]


def count_admitted(
    dataset: Any, where: str | None, *, fragments: list[Any] | None = None, limit: int | None = None
) -> int:
    """Rows of a pylance ``dataset`` (or of some of its ``fragments``) admitted by ``where``,
    at most ``limit``. Counted by a scan (``admitted_row_ids``): pylance's ``count_rows``
    holds the GIL while Lance works, and Lance's threads may need it, which deadlocked a
    search process under concurrent searches while vectors were written."""
    return len(admitted_row_ids(dataset, where, fragments=fragments, limit=limit))
