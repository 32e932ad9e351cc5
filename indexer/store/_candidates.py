"""What a search's store queries return: candidates (ids, row ids and raw scores) and the
facts ranking reads of them, built from Arrow results column by column."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from indexer.models import ChunkFilter
from indexer.store._filters import chunk_where, document_where
from indexer.store._schema import CHUNKS, DOCUMENTS

__all__ = [
    "CANDIDATE_COLUMNS",
    "FACT_COLUMNS",
    "NAMES",
    "NPROBES",
    "UNIT_COLUMNS",
    "VECTOR_COLUMN",
    "Candidate",
    "ChunkFacts",
    "Detail",
    "TableKind",
    "TextField",
    "columns_of",
    "facts_of",
    "to_candidates",
    "where_of",
]

#: IVF partitions probed per query once a vector index exists.
NPROBES = 32

TableKind = Literal["chunks", "documents"]
TextField = Literal["search_text", "name_text"]
#: What a candidate carries besides its row id: ``full`` (ids, and for chunks file id, name
#: and definitions), ``id`` (the id only), ``file`` (a chunk's file id, a document's id) or
#: ``row`` (nothing). Reading any column of 100 hits costs a full-text query as much as its
#: search, so a caller that pins the table version keys chunks by row id and reads only
#: the page it shows.
Detail = Literal["full", "id", "file", "row"]
NAMES: dict[str, str] = {"chunks": CHUNKS, "documents": DOCUMENTS}
VECTOR_COLUMN = {"chunks": "embedding", "documents": "content_embedding"}
CANDIDATE_COLUMNS = {"chunks": ["id", "file_id", "node_name", "definitions"], "documents": ["id"]}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry of a candidate list: ids, the names it defines, and its raw score."""

    id: str
    """The row's id (empty for a candidate found with ``detail="row"``)."""
    file_id: str
    """The chunk's file (empty unless found with ``detail="full"``)."""
    score: float
    """Cosine similarity for vector lists, BM25 for full-text lists."""
    node_name: str = ""
    definitions: tuple[str, ...] = ()
    row_id: int = -1
    """Where the row was when found (``Search.views`` reads it without an id lookup)."""

    @property
    def key(self) -> str:
        """What identifies the candidate within one search: its id, else its row id (padded,
        so ties in a fused ranking fall in table order)."""
        return self.id or f"@{self.row_id:020d}"


def where_of(kind: TableKind, flt: ChunkFilter, embedded_only: bool = False) -> str | None:
    """The WHERE text selecting the rows of table ``kind`` that ``flt`` admits."""
    if kind == "chunks":
        return chunk_where(flt, embedded_only=embedded_only)
    return document_where(flt, embedded_only=embedded_only)


def columns_of(kind: TableKind, detail: Detail) -> list[str]:
    """The columns a candidate of table ``kind`` found with ``detail`` reads."""
    if detail == "file":
        return ["file_id"] if kind == "chunks" else ["id"]
    return {"full": CANDIDATE_COLUMNS[kind], "id": ["id"], "row": []}[detail]


def to_candidates(kind: TableKind, table: Any, score_column: str) -> list[Candidate]:
    """Candidates from a result table, read column by column (a dict per row costs a
    100-row list ~0.3 ms)."""
    raw = table[score_column].to_pylist()
    scores = [1.0 - r for r in raw] if score_column == "_distance" else raw
    n = len(scores)
    names = set(table.column_names)

    def column(name: str, default: Any) -> list[Any]:
        return table[name].to_pylist() if name in names else [default] * n

    row_ids, ids = column("_rowid", -1), column("id", None)
    if kind == "documents":
        return [
            Candidate(ids[i] or "", ids[i] or "", float(scores[i]), row_id=int(row_ids[i])) for i in range(n)
        ]
    file_ids, node_names, definitions = (
        column("file_id", None),
        column("node_name", None),
        column("definitions", None),
    )
    return [
        Candidate(
            ids[i] or "",
            file_ids[i] or "",
            float(scores[i]),
            node_names[i] or "",
            tuple(definitions[i] or ()),
            int(row_ids[i]),
        )
        for i in range(n)
    ]


@dataclass(frozen=True, slots=True)
class ChunkFacts:
    """What ranking needs of a candidate besides its score: role and unit."""

    role: str
    """The chunk's role (``indexer.roles``)."""
    file_id: str
    """Its file."""
    unit: tuple[Any, ...]
    """Identifies the unit the chunk is (a piece of) within its file: pieces of one split
    unit share it."""
    start_line: int
    """First line of its unit (of the chunk itself when it is a whole unit)."""
    end_line: int
    """Last line of its unit."""


#: Columns read for ``ChunkFacts``.
FACT_COLUMNS = ["id", "role", "file_id", "node_type", "scope_path", "start_line", "end_line"]
UNIT_COLUMNS = ["unit_start_line", "unit_end_line"]


def facts_of(table: pa.Table) -> list[tuple[int, str, ChunkFacts]]:
    """(row id, chunk id, facts) of each row of ``table``."""
    names = set(table.column_names)
    cols = {
        name: table[name].to_pylist() for name in [*FACT_COLUMNS, *UNIT_COLUMNS, "_rowid"] if name in names
    }
    n = table.num_rows
    unit_starts, unit_ends = cols.get("unit_start_line", [None] * n), cols.get("unit_end_line", [None] * n)
    out = []
    for i, row_id in enumerate(cols["_rowid"]):
        start, end = cols["start_line"][i], cols["end_line"][i]
        unit_start, unit_end = unit_starts[i] or 0, unit_ends[i] or 0
        if unit_start > 0:  # the chunker says which unit a piece is of (every piece shares it)
            unit: tuple[Any, ...] = ("unit", unit_start, unit_end)
        else:  # an index of an older chunker: pieces of one unit share its kind and scope path
            scope = tuple(cols["scope_path"][i] or ())
            unit = (cols["node_type"][i], scope) if scope else (cols["node_type"][i], start)
            unit_start, unit_end = start, end
        facts = ChunkFacts(
            role=cols["role"][i] or "implementation",
            file_id=cols["file_id"][i],
            unit=unit,
            start_line=unit_start if unit_start > 0 else start,
            end_line=unit_end if unit_end > 0 else end,
        )
        out.append((int(row_id), cols["id"][i], facts))
    return out
