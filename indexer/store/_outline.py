"""Reads for the outline: every chunk of many files, and the texts of many documents,
each in one query read column by column (much faster than row dicts for whole projects)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from indexer.models import Chunk
from indexer.store._base import StoreBase
from indexer.store._schema import CHUNKS, DOCUMENTS
from indexer.store._sql import in_list

__all__ = ["OutlineMixin"]

_CHUNK_FIELDS = [
    "chunk_index", "content", "chunk_hash", "start_byte", "end_byte", "start_line", "end_line",
    "language", "node_type", "node_name", "parent_context", "scope_path", "definitions", "references",
    "unit_start_line", "unit_end_line", "signature",
]  # fmt: skip
_LISTS = ("scope_path", "definitions", "references")
_BATCH = 500


class OutlineMixin(StoreBase):
    """Bulk reads for the outline's build, ``cat`` and ``grep``."""

    def _columns(
        self, table: str, column: str, ids: Sequence[str], select: list[str]
    ) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {name: [] for name in select}
        for start in range(0, len(ids), _BATCH):
            part = list(ids[start : start + _BATCH])
            arrow = self._t(table).search().where(in_list(column, part)).select(select).limit(None).to_arrow()
            for name in select:
                out[name].extend(arrow[name].to_pylist())
        return out

    def chunks_by_file(self, file_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """Every chunk of these files by file id, in chunk order."""
        cols = self._columns(CHUNKS, "file_id", file_ids, ["file_id", *_CHUNK_FIELDS])
        for name in _LISTS:
            cols[name] = [tuple(v or ()) for v in cols[name]]
        # rows of an older schema: the unit is the chunk itself
        starts, ends = cols["start_line"], cols["end_line"]
        cols["unit_start_line"] = [u or s for u, s in zip(cols["unit_start_line"], starts, strict=True)]
        cols["unit_end_line"] = [u or e for u, e in zip(cols["unit_end_line"], ends, strict=True)]
        cols["signature"] = [v or "" for v in cols["signature"]]
        out: dict[str, list[Chunk]] = {}
        fields = [cols[name] for name in _CHUNK_FIELDS]
        for file_id, *values in zip(cols["file_id"], *fields, strict=True):
            out.setdefault(file_id, []).append(Chunk(*values))
        for chunks in out.values():
            chunks.sort(key=lambda c: c.chunk_index)
        return out

    def document_contents(self, ids: Sequence[str]) -> dict[str, str]:
        """Full texts of documents by id, as indexed (unknown ids are left out)."""
        cols = self._columns(DOCUMENTS, "id", ids, ["id", "content"])
        return {doc_id: text or "" for doc_id, text in zip(cols["id"], cols["content"], strict=True)}
