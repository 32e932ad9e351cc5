"""The store's facts about itself (``meta``: schema version, model id, dimension,
embedding-text version) and the migrations that bring a store of an older schema to this
lode's, each in place (new column files beside the old ones: rows, row ids and indexes stay)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from indexer.errors import ModelMismatchError, StoreVersionError
from indexer.store._access import StoreAccess, open_dataset
from indexer.store._rows import PACKED_SYMBOL_COLUMNS, PACKED_VIEW_COLUMNS, pack_view_values
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    META,
    SCHEMA_VERSION,
    SYMBOLS,
    embedding_cache_schema,
    meta_schema,
)

__all__ = [
    "check_meta",
    "embedding_text_version",
    "migrate",
    "needs_upgrade",
    "read_meta",
    "table_names",
    "upgrade_due",
    "upgrade_error",
    "vectors_made_by",
    "write_meta",
]

log = logging.getLogger(__name__)

#: Columns schema 3 added to ``code_chunks`` (name → SQL type).
_UNIT_COLUMNS = {"unit_start_line": "INT", "unit_end_line": "INT", "signature": "STRING"}


def table_names(conn: Any) -> set[str]:
    """The names of the tables the connection has."""
    return set(conn.list_tables().tables)


def read_meta(conn: Any) -> dict[str, str]:
    """The facts the ``meta`` table holds (none for a new store)."""
    if META not in table_names(conn):
        return {}
    table = conn.open_table(META).to_arrow()
    return dict(zip(table["key"].to_pylist(), table["value"].to_pylist(), strict=True))


def write_meta(conn: Any, facts: dict[str, str]) -> None:
    """Replace the facts the ``meta`` table holds."""
    table = pa.table({"key": list(facts), "value": list(facts.values())}, schema=meta_schema())
    conn.create_table(META, data=table, mode="overwrite")


#: The columns a schema-2 ``view`` cell packs (later ones take defaults when unpacked).
_V2_VIEW_COLUMNS = [name for name in PACKED_VIEW_COLUMNS if name not in _UNIT_COLUMNS]
_ROLE_INPUTS = ["file_id", "language", "node_type", "content", "scope_path"]


def _uri(conn: Any, name: str) -> str | None:
    """Where table ``name`` is (None when the store has no such table)."""
    return str(conn.open_table(name).uri) if name in table_names(conn) else None


def _add_columns(uri: str, access: StoreAccess, names: set[str], columns: Any, read: Any = None) -> None:
    """Add ``columns`` (SQL expressions by name, or a batch UDF making ``names`` from the
    ``read`` columns) to table ``uri``: new column files beside the old ones, so rows, row
    ids and indexes stay. Nothing when it has them (another process migrated it meanwhile)."""
    if names <= set(open_dataset(uri, access).schema.names):
        return
    try:
        open_dataset(uri, access).add_columns(columns, read_columns=read)
    except (OSError, RuntimeError, ValueError):
        if names - set(open_dataset(uri, access).schema.names):
            raise


def _add_null_columns(uri: str | None, columns: dict[str, str], access: StoreAccess) -> None:
    """Add columns (name → SQL type) holding nulls (no data file is rewritten)."""
    if uri is None:
        return
    present = set(open_dataset(uri, access).schema.names)
    nulls = {name: f"CAST(NULL AS {kind})" for name, kind in columns.items() if name not in present}
    _add_columns(uri, access, set(columns), nulls)


def _add_packed_view(uri: str | None, columns: list[str], access: StoreAccess) -> None:
    """Give every row of table ``uri`` its ``view`` cell, packed from its ``columns``
    (``pack_view_values``)."""
    import lance

    @lance.batch_udf(output_schema=pa.schema([pa.field("view", pa.binary())]))
    def views(batch: pa.RecordBatch) -> pa.RecordBatch:
        values = [batch.column(name).to_pylist() for name in columns]
        cells = [pack_view_values(row) for row in zip(*values, strict=True)]
        return pa.record_batch([pa.array(cells, pa.binary())], names=["view"])

    if uri is not None:
        _add_columns(uri, access, {"view"}, views, columns)


def _add_roles(conn: Any, access: StoreAccess) -> None:
    """Give every document and chunk its ``role`` (``indexer.roles``), computed from the
    file's path and text and the chunk's fields."""
    import lance

    from indexer.roles import chunk_role, file_role, rust_test_modules

    documents_uri, chunks_uri = _uri(conn, DOCUMENTS), _uri(conn, CHUNKS)
    if documents_uri is None or chunks_uri is None:
        return
    files: dict[str, tuple[str, frozenset[str]]] = {}
    for batch in open_dataset(documents_uri, access).to_batches(columns=["id", "file_path", "content"]):
        for doc_id, path, content in zip(
            *(batch.column(n).to_pylist() for n in batch.schema.names), strict=True
        ):
            role = file_role(path, content or "")
            modules = rust_test_modules(content or "") if role == "implementation" else frozenset()
            files[doc_id] = (role, modules)

    @lance.batch_udf(output_schema=pa.schema([pa.field("role", pa.string())]))
    def document_roles(batch: pa.RecordBatch) -> pa.RecordBatch:
        roles = [files.get(i, ("implementation",))[0] for i in batch.column("id").to_pylist()]
        return pa.record_batch([pa.array(roles, pa.string())], names=["role"])

    @lance.batch_udf(output_schema=pa.schema([pa.field("role", pa.string())]))
    def chunk_roles(batch: pa.RecordBatch) -> pa.RecordBatch:
        columns = [batch.column(n).to_pylist() for n in _ROLE_INPUTS]
        roles = []
        for file_id, language, node_type, content, scope in zip(*columns, strict=True):
            role, modules = files.get(file_id, ("implementation", frozenset()))
            roles.append(chunk_role(role, language, node_type, content or "", scope or (), modules))
        return pa.record_batch([pa.array(roles, pa.string())], names=["role"])

    _add_columns(documents_uri, access, {"role"}, document_roles, ["id"])
    _add_columns(chunks_uri, access, {"role"}, chunk_roles, _ROLE_INPUTS)


def _add_units(conn: Any, access: StoreAccess) -> None:
    """The chunks' unit lines and signature, the documents' chunker version. Null in old
    rows (read as "the chunk itself" and "chunker 0"): every file is chunked again by the
    next run, as its chunker version differs, which fills the symbol index (its table, like
    ``write_intents``, is created on open when missing)."""
    _add_null_columns(_uri(conn, CHUNKS), _UNIT_COLUMNS, access)
    _add_null_columns(_uri(conn, DOCUMENTS), {"chunker_version": "INT"}, access)


def _key_vectors_by_text(conn: Any, access: StoreAccess, meta: dict[str, str]) -> None:
    """The chunks' ``vector_text_hash`` (null: their vectors were made for a text no longer
    known, so phase 2 embeds every chunk again, the old vectors answering searches
    meanwhile), and an embedding cache keyed by text hash (the old one, keyed by content
    hash, handed a chunk the vector of another file's text: it is emptied)."""
    _add_null_columns(_uri(conn, CHUNKS), {"vector_text_hash": "STRING"}, access)
    cache = conn.open_table(EMBEDDING_CACHE) if EMBEDDING_CACHE in table_names(conn) else None
    if cache is None or "text_hash" not in cache.schema.names:
        schema = embedding_cache_schema(int(meta.get("dimension", "0")))
        conn.create_table(EMBEDDING_CACHE, schema=schema, mode="overwrite")


#: What each migration does, from the schema version it starts at to the next.
_STEPS: dict[int, tuple[str, Callable[[Any, StoreAccess, dict[str, str]], None]]] = {
    1: ("packed chunk views", lambda c, a, m: _add_packed_view(_uri(c, CHUNKS), _V2_VIEW_COLUMNS, a)),
    2: ("file and chunk roles", lambda c, a, m: _add_roles(c, a)),
    3: ("units and symbols", lambda c, a, m: _add_units(c, a)),
    4: ("packed symbol rows", lambda c, a, m: _add_packed_view(_uri(c, SYMBOLS), PACKED_SYMBOL_COLUMNS, a)),
    5: ("vectors keyed by their text", _key_vectors_by_text),
}


def migrate(conn: Any, path: Path | str, meta: dict[str, str], access: StoreAccess) -> dict[str, str]:
    """Bring a store of an older schema this lode knows to ``SCHEMA_VERSION``; the new facts."""
    version = int(meta.get("schema_version", "0"))
    while version in _STEPS:
        what, step = _STEPS[version]
        log.info("migrating the index at %s from schema %d to %d (%s)", path, version, version + 1, what)
        step(conn, access, meta)
        version += 1
        meta = {**meta, "schema_version": str(version)}
        if version == 6:  # its vectors are known by their text from now on
            meta["embedding_text_version"] = str(embedding_text_version())
        write_meta(conn, meta)
    return meta


def embedding_text_version() -> int:
    """This lode's embedding-text version (``indexer.chunker``, imported when needed: the
    chunker's grammars would slow a reader's start)."""
    from indexer.chunker import embedding_text_version as version

    return version()


def needs_upgrade(meta: dict[str, str]) -> bool:
    """True when a store with these facts has an older schema than this lode's (its writer
    migrates it: ``lode upgrade``, or the next ``lode index`` / ``lode serve``)."""
    return 0 < int(meta.get("schema_version", "0")) < SCHEMA_VERSION


def upgrade_due(meta: dict[str, str], vector_encoder: str = "float") -> bool:
    """True when the writer of a store with these facts has to upgrade it before it writes:
    an older schema to migrate, vectors of another embedding-text version to find, or
    vectors of another kind of encoder than ``vector_encoder`` to embed again."""
    if not meta:
        return False
    return (
        needs_upgrade(meta)
        or meta.get("embedding_text_version") != str(embedding_text_version())
        or vectors_made_by(meta) != vector_encoder
    )


def vectors_made_by(meta: dict[str, str]) -> str:
    """The kind of encoder the store's vectors were made by (``float`` before it was recorded)."""
    return meta.get("vector_encoder", "float")


def upgrade_error(path: Path | str, meta: dict[str, str]) -> StoreVersionError:
    """The one line a process that may not migrate the index answers with."""
    return StoreVersionError(
        f"the index at {path} has schema version {meta.get('schema_version')}; this lode reads "
        f"version {SCHEMA_VERSION}: it needs `lode upgrade` (or the next `lode index` / "
        "`lode serve`, which upgrade it)"
    )


def check_meta(meta: dict[str, str], path: Path | str, model_id: str, dimension: int) -> None:
    """Refuse a store of another schema version or model than this lode's."""
    version = int(meta.get("schema_version", "0"))
    if version != SCHEMA_VERSION:
        raise StoreVersionError(
            f"the index at {path} has schema version {version}; this lode reads version "
            f"{SCHEMA_VERSION}. Re-create it (remove the folder or use another --db)"
        )
    if meta.get("model_id") != model_id or int(meta.get("dimension", "0")) != dimension:
        raise ModelMismatchError(
            f"the index at {path} was built with model {meta.get('model_id')!r} "
            f"(dimension {meta.get('dimension')}), not {model_id!r} (dimension {dimension}); "
            "use the same model, or another --db for a new index"
        )
