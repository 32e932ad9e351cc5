"""Building Arrow rows from lode's data and lode's data from Arrow rows."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
from blake3 import blake3

from indexer.lexicon import expand_identifiers, identifier_words
from indexer.models import Chunk, ChunkView, Document, StoredChunk, Symbol, SymbolSite

__all__ = [
    "CHUNK_COLUMNS",
    "CHUNK_FIELDS",
    "PACKED_SYMBOL_COLUMNS",
    "PACKED_VIEW_COLUMNS",
    "SYMBOL_COLUMNS",
    "VIEW_COLUMNS",
    "ChunkWrite",
    "DocState",
    "FileWrite",
    "chunk_columns",
    "chunk_search_text",
    "chunks_from_columns",
    "document_search_text",
    "now",
    "pack_view",
    "parts",
    "path_words",
    "rows",
    "symbol_columns",
    "to_chunk_view",
    "to_document",
    "to_row",
    "to_stored_chunk",
    "to_symbol",
    "unit_mean",
    "unpack_symbol",
    "unpack_view",
    "vector_matrix",
]


def now() -> datetime:
    """The current time, UTC, microsecond precision (as stored)."""
    return datetime.now(UTC)


def rows(table: pa.Table) -> list[dict[str, Any]]:
    """Arrow rows as dicts."""
    return table.to_pylist()  # type: ignore[no-any-return]


def to_row(item: Any) -> dict[str, Any]:
    """A dataclass (a project, a task) as a table row: its tuples as lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(item).items()}


def parts(items: Sequence[str], size: int = 500) -> list[Sequence[str]]:
    """``items`` in runs of ``size``: one query per run keeps each ``IN`` list short."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def unit_mean(vectors: list[np.ndarray]) -> np.ndarray:
    """The unit-length mean of some vectors (a document's vector from its chunks')."""
    mean: np.ndarray = np.mean(np.stack(vectors), axis=0).astype(np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def vector_matrix(column: Any, dimension: int) -> np.ndarray:
    """An Arrow column of fixed-size float lists as a (rows, ``dimension``) float32 matrix."""
    whole = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if len(whole) == 0:
        return np.zeros((0, dimension), dtype=np.float32)
    values = whole.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.float32).reshape(-1, dimension)


#: The columns of a ``Chunk``, in its fields' order.
CHUNK_FIELDS = [f.name for f in dataclasses.fields(Chunk)]
#: The columns read to build a ``StoredChunk``.
CHUNK_COLUMNS = ["id", "file_id", "project_id", "file_path", "embedded", "indexed_at", "role", *CHUNK_FIELDS]


@dataclass(frozen=True, slots=True)
class ChunkWrite:
    """A chunk to store, with its id and its vector when the cache already had it."""

    id: str
    chunk: Chunk
    vector: np.ndarray | None = None
    search_text: str = ""
    """The chunk's full-text column when computed ahead (by a preparing worker); '' → at write."""
    role: str = "implementation"
    """The chunk's role (``indexer.roles.chunk_role``)."""
    text_hash: str = ""
    """The hash of its embedding text (``indexer.chunker.embedding_input``) when computed
    ahead; '' → at write. ``vector`` is the vector of that text."""


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One file's new version: its document row and every chunk of it."""

    document: Document
    content: str
    chunks: Sequence[ChunkWrite]
    file_hash: str
    priority: int = 0
    words: str | None = None
    """The vocabulary words of its chunks, one per line, when computed ahead; None → at write."""
    chunker_version: int = 0
    """The chunker that cut it (``indexer.chunker.CHUNKER_VERSION``)."""
    symbols: Sequence[SymbolSite] = ()
    """Its definitions and reference sites (``chunk_index`` into ``chunks``)."""
    rewrite: bool = False
    """The store holds this very content already (a full re-chunk): a write stopped midway
    would not show in the file hashes, so it is recorded as a write intent first."""


@dataclass(frozen=True, slots=True)
class DocState:
    """What the incremental diff needs to know about an indexed file."""

    id: str
    file_path: str
    content_hash: str
    file_size: int
    last_modified: float
    chunk_count: int
    embedded: bool
    chunker_version: int = 0
    """The chunker that cut the stored chunks (0: before versions were recorded)."""


def path_words(file_path: str) -> str:
    """The words of a path: ``src/httpParser.py`` → ``src http parser py``."""
    return " ".join(identifier_words(part) for part in file_path.replace(".", "/").split("/") if part)


def chunk_search_text(file_path: str, chunk: Chunk) -> str:
    """What the chunk full-text index reads: path words, the words of the unit's scope (its
    name and the names of the types and namespaces around it: a method cut out of a class
    still reads its class's name), then the expanded content."""
    scope = chunk.scope_path or ((chunk.node_name,) if chunk.node_name else ())
    names = " ".join(identifier_words(part) for part in scope)
    parent = expand_identifiers(chunk.parent_context) if chunk.parent_context else ""
    return f"{path_words(file_path)} {names} {parent}\n{expand_identifiers(chunk.content)}"


def document_search_text(file_path: str, content: str) -> str:
    """What the document full-text index reads: path words, then the expanded content."""
    return f"{path_words(file_path)}\n{expand_identifiers(content)}"


_WRITTEN_COLUMNS = (
    "id file_id project_id file_path file_hash chunk_index content search_text name_text chunk_hash embedded "
    "priority start_byte end_byte start_line end_line node_type node_name language parent_context scope_path "
    "scope_depth definitions references indexed_at view role unit_start_line unit_end_line signature "
    "vector_text_hash vectors"
).split()


def chunk_columns(write: FileWrite, stamp: datetime, placeholder: np.ndarray) -> dict[str, list[Any]]:
    """Column lists (without ``embedding``) for every chunk of one file, plus their vectors."""
    from indexer.chunker import embedding_input  # the chunker's grammars only when writing

    cols: dict[str, list[Any]] = {name: [] for name in _WRITTEN_COLUMNS}
    doc = write.document
    for item in write.chunks:
        c = item.chunk
        view = ChunkView.of(StoredChunk(item.id, doc.id, doc.project_id, doc.file_path, c, role=item.role))
        values = (
            item.id, doc.id, doc.project_id, doc.file_path, write.file_hash, c.chunk_index, c.content,
            item.search_text or chunk_search_text(doc.file_path, c), identifier_words(c.node_name),
            c.chunk_hash,
            item.vector is not None, write.priority,
            c.start_byte, c.end_byte, c.start_line, c.end_line, c.node_type, c.node_name, c.language,
            c.parent_context, list(c.scope_path), len(c.scope_path), list(c.definitions),
            list(c.references), stamp, pack_view(view), item.role, c.unit_start_line, c.unit_end_line,
            c.signature,
            (item.text_hash or embedding_input(doc.file_path, c)[1]) if item.vector is not None else None,
            item.vector if item.vector is not None else placeholder,
        )  # fmt: skip
        for name, value in zip(cols, values, strict=True):
            cols[name].append(value)
    return cols


def to_chunk(row: dict[str, Any]) -> Chunk:
    """A chunk from a ``code_chunks`` row."""
    return chunks_from_columns({name: [row.get(name)] for name in CHUNK_FIELDS})[0]


def to_stored_chunk(row: dict[str, Any]) -> StoredChunk:
    """A stored chunk from a ``code_chunks`` row."""
    return StoredChunk(
        id=row["id"],
        file_id=row["file_id"],
        project_id=row["project_id"],
        file_path=row["file_path"],
        chunk=to_chunk(row),
        embedded=bool(row["embedded"]),
        indexed_at=row["indexed_at"],
        role=row.get("role") or "implementation",
    )


def chunks_from_columns(cols: dict[str, list[Any]]) -> list[Chunk]:
    """Chunks from column lists (``CHUNK_FIELDS``, read column by column: much faster than
    row dicts for whole projects)."""
    for name in ("scope_path", "definitions", "references"):
        cols[name] = [tuple(v or ()) for v in cols[name]]
    # rows of an older schema: the unit is the chunk itself
    starts, ends = cols["start_line"], cols["end_line"]
    cols["unit_start_line"] = [u or s for u, s in zip(cols["unit_start_line"], starts, strict=True)]
    cols["unit_end_line"] = [u or e for u, e in zip(cols["unit_end_line"], ends, strict=True)]
    cols["signature"] = [v or "" for v in cols["signature"]]
    return [Chunk(*values) for values in zip(*(cols[name] for name in CHUNK_FIELDS), strict=True)]


#: The columns of a ``ChunkView`` (reading a column of a few scattered rows costs ~0.5 ms).
VIEW_COLUMNS = [f.name for f in dataclasses.fields(ChunkView)]
#: The columns ``view`` packs, in order: every view column but ``content`` and ``role``
#: (columns of their own; ``role`` came with schema 3, after the views were packed).
PACKED_VIEW_COLUMNS = [name for name in VIEW_COLUMNS if name not in ("content", "role")]
_VIEW_ENCODER = msgspec.msgpack.Encoder()
_VIEW_DECODER = msgspec.msgpack.Decoder()


def pack_view(view: ChunkView) -> bytes:
    """The ``view`` cell of a chunk: its ``PACKED_VIEW_COLUMNS`` values (a msgpack array)."""
    return pack_view_values([getattr(view, name) for name in PACKED_VIEW_COLUMNS])


def pack_view_values(values: Sequence[Any]) -> bytes:
    """A packed ``view`` cell (a msgpack array) from column values in order: a chunk's
    ``PACKED_VIEW_COLUMNS``, a symbol's ``PACKED_SYMBOL_COLUMNS`` (tuples as lists)."""
    return _VIEW_ENCODER.encode([list(v) if isinstance(v, tuple) else v for v in values])


def _unit_lines(values: dict[str, Any]) -> dict[str, Any]:
    """Fill what a row of an older schema lacks: the unit is the chunk itself."""
    values["scope_path"] = tuple(values["scope_path"] or ())
    values["unit_start_line"] = values.get("unit_start_line") or values["start_line"]
    values["unit_end_line"] = values.get("unit_end_line") or values["end_line"]
    values["signature"] = values.get("signature") or ""
    values["role"] = values.get("role") or "implementation"
    return values


def unpack_view(view: bytes, content: str, role: str | None = None) -> ChunkView:
    """A chunk view from its ``view``, ``content`` and ``role`` cells (a cell packed by an
    older schema has fewer values: the later ones take their defaults)."""
    values = dict(zip(PACKED_VIEW_COLUMNS, _VIEW_DECODER.decode(view), strict=False))
    return ChunkView(content=content, **_unit_lines({**values, "role": role}))


def to_chunk_view(row: dict[str, Any]) -> ChunkView:
    """A chunk view from a ``code_chunks`` row holding at least ``VIEW_COLUMNS``."""
    return ChunkView(**_unit_lines({name: row.get(name) for name in VIEW_COLUMNS}))


def to_document(row: dict[str, Any]) -> Document:
    """A document from a ``code_documents`` row."""
    values: dict[str, Any] = {f.name: row.get(f.name) for f in dataclasses.fields(Document)}
    for name in ("languages", "keywords"):
        values[name] = tuple(values[name] or ())
    for name in ("primary_language", "summary"):
        values[name] = values[name] or ""
    values["role"] = values["role"] or "implementation"
    return Document(**values)


def table_from_columns(cols: dict[str, Any], schema: pa.Schema) -> pa.Table:
    """An Arrow table in ``schema`` from column lists or arrays (missing columns left null)."""
    length = len(next(iter(cols.values()))) if cols else 0
    arrays = [pa.array(cols.get(f.name, [None] * length), type=f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


#: The columns read to build a ``Symbol``.
SYMBOL_COLUMNS = [
    "id", "project_id", "file_id", "file_path", "language", "role", "name", "kind", "container",
    "container_kind", "scope_path", "signature", "text", "start_line", "end_line", "chunk_id",
]  # fmt: skip


#: The columns a symbol's ``view`` cell packs, in order: all of ``SYMBOL_COLUMNS`` but ``id``
#: (a lookup reads 2 columns, not 16: each column read costs ~0.45 ms on 100k chunks).
PACKED_SYMBOL_COLUMNS = SYMBOL_COLUMNS[1:]


def unpack_symbol(symbol_id: str, view: bytes) -> Symbol:
    """A symbol from its ``id`` and ``view`` cells."""
    values = dict(zip(PACKED_SYMBOL_COLUMNS, _VIEW_DECODER.decode(view), strict=True))
    return to_symbol({"id": symbol_id, **values})


def _symbol_id(file_id: str, key: str) -> str:
    """A symbol's id: stable while the file keeps the symbol (a definition by its qualified
    name and rank among same-named ones, a reference by its name and line)."""
    return blake3(f"{file_id}\0{key}".encode()).hexdigest()[:32]


def symbol_columns(write: FileWrite) -> dict[str, list[Any]]:
    """Column lists of the symbol rows of one file."""
    doc = write.document
    names = [*SYMBOL_COLUMNS, "file_hash", "chunk_index"]
    cols: dict[str, list[Any]] = {name: [] for name in [*names, "view"]}
    seen: dict[str, int] = {}
    language = doc.primary_language
    for site in write.symbols:
        if site.role == "definition":
            qualified = f"d\0{site.kind}\0{'.'.join(site.scope_path)}"
            seen[qualified] = rank = seen.get(qualified, 0) + 1
            key = f"{qualified}\0{rank}"
        else:
            key = f"r\0{site.name}\0{site.start_line}"
        index = min(max(site.chunk_index, 0), len(write.chunks) - 1)
        values = (
            _symbol_id(doc.id, key), doc.project_id, doc.id, doc.file_path, language, site.role, site.name,
            site.kind, site.container, site.container_kind, list(site.scope_path), site.signature, site.text,
            site.start_line, site.end_line, write.chunks[index].id if write.chunks else "", write.file_hash,
            site.chunk_index,
        )  # fmt: skip
        for name, value in zip(names, values, strict=True):
            cols[name].append(value)
        cols["view"].append(pack_view_values(values[1 : len(SYMBOL_COLUMNS)]))
    return cols


def to_symbol(row: dict[str, Any]) -> Symbol:
    """A symbol from a ``code_symbols`` row holding at least ``SYMBOL_COLUMNS``."""
    values = {name: row[name] for name in SYMBOL_COLUMNS}
    values["scope_path"] = tuple(values["scope_path"] or ())
    for name in ("language", "kind", "container", "container_kind", "signature", "text", "chunk_id"):
        values[name] = values[name] or ""
    return Symbol(**values)
