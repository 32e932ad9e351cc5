"""Opening the store: the connection, its tables, and the model/schema check.

LanceDB's connection keeps caches (a ``Session``: opened index data, table metadata) for
as long as the store is open, bounded here: with LanceDB's defaults (6 GiB of index data,
1 GiB of metadata) it kept every version's entries, and each write and optimize makes new
ones, so a writer's connection grew ~4 MB a minute through phase 2 (its working set:
~10 MB; see docs/performance.md, "Memory and disk"). The search readers (pylance) start
afresh after each optimize (``Store.optimize``), their caches with them.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from indexer.errors import ModelMismatchError, StoreError, StoreVersionError
from indexer.storage_failure import is_storage_failure, storage_cause, storage_error
from indexer.store._access import StoreAccess, open_dataset, store_uri
from indexer.store._check import CheckMixin
from indexer.store._content import ContentMixin
from indexer.store._disk import DiskMixin
from indexer.store._evidence import EvidenceMixin
from indexer.store._imports import defer_rest_client
from indexer.store._maintenance import MaintenanceMixin
from indexer.store._outline import OutlineMixin
from indexer.store._projects import ProjectsMixin
from indexer.store._repair import RepairMixin
from indexer.store._rows import PACKED_SYMBOL_COLUMNS, PACKED_VIEW_COLUMNS, pack_view_values
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    FILE_ERRORS,
    INTENTS,
    META,
    PROJECTS,
    SCHEMA_VERSION,
    SYMBOLS,
    TASKS,
    VOCABULARY,
    chunks_schema,
    documents_schema,
    embedding_cache_schema,
    file_errors_schema,
    intents_schema,
    meta_schema,
    projects_schema,
    symbols_schema,
    tasks_schema,
    vocabulary_schema,
)
from indexer.store._search import FactsMixin, FilteredMixin, SearchMixin
from indexer.store._tasks import TasksMixin
from indexer.store._vectors import CURRENT, OUTDATED, VectorsMixin
from indexer.store._vocabulary import VocabularyMixin

__all__ = ["Store", "needs_upgrade", "open_store", "read_store_info", "upgrade_due", "upgrade_error"]

log = logging.getLogger(__name__)

#: Each of the two caches (index data, metadata) of the store's LanceDB connection: its
#: writes and the reads made through LanceDB (content search, file and evidence reads)
#: hold ~50 MB together on a 115k-chunk store unbounded, at no measured cost bounded here.
CONNECTION_CACHE_BYTES = 32 << 20

#: Columns schema 3 added to ``code_chunks`` (name → SQL type).
_UNIT_COLUMNS = {"unit_start_line": "INT", "unit_end_line": "INT", "signature": "STRING"}


class Store(
    ProjectsMixin,
    RepairMixin,
    VectorsMixin,
    SearchMixin,
    FactsMixin,
    FilteredMixin,
    TasksMixin,
    MaintenanceMixin,
    OutlineMixin,
    ContentMixin,
    EvidenceMixin,
    VocabularyMixin,
    CheckMixin,
    DiskMixin,
):
    """lode's index on disk: the only object that talks to LanceDB."""

    def __init__(
        self,
        path: Path | str,
        conn: Any,
        tables: dict[str, Any],
        model_id: str,
        dimension: int,
        access: StoreAccess | None = None,
        session: Any = None,
    ) -> None:
        super().__init__(path, conn, tables, model_id, dimension, access, session)
        self._init_vocabulary()

    def close(self) -> None:
        """Release the connection (tables become unusable)."""
        self._tables.clear()

    def stats(self) -> dict[str, int]:
        """Row counts of the main tables."""
        return {
            "projects": int(self._t(PROJECTS).count_rows()),
            "documents": int(self._t(DOCUMENTS).count_rows()),
            "chunks": int(self._t(CHUNKS).count_rows()),
            "chunks_embedded": int(self._t(CHUNKS).count_rows(CURRENT)),
            # vectors made for a text no longer known (before an upgrade), being made again
            "vectors_outdated": int(self._t(CHUNKS).count_rows(OUTDATED)),
            "symbols": int(self._t(SYMBOLS).count_rows()),
            "embedding_cache": int(self._t(EMBEDDING_CACHE).count_rows()),
            "file_errors": int(self._t(FILE_ERRORS).count_rows()),
        }


def _lancedb() -> Any:
    """The lancedb module, imported without its REST client's modules, its log quiet."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    defer_rest_client()
    import lancedb

    return lancedb


def _connection_session() -> Any:
    """Bounded caches for the store's LanceDB connection (``CONNECTION_CACHE_BYTES`` each)."""
    return _lancedb().Session(
        index_cache_size_bytes=CONNECTION_CACHE_BYTES, metadata_cache_size_bytes=CONNECTION_CACHE_BYTES
    )


def _connect(path: Path | str, access: StoreAccess, session: Any = None) -> Any:
    return _lancedb().connect(
        store_uri(path),
        read_consistency_interval=timedelta(seconds=access.read_consistency),
        storage_options=access.lance_options(),
        session=session,
    )


def _table_names(conn: Any) -> set[str]:
    return set(conn.list_tables().tables)


def _read_meta(conn: Any) -> dict[str, str]:
    if META not in _table_names(conn):
        return {}
    table = conn.open_table(META).to_arrow()
    return dict(zip(table["key"].to_pylist(), table["value"].to_pylist(), strict=True))


def read_store_info(path: Path | str, access: StoreAccess | None = None) -> dict[str, str]:
    """The facts a store records about itself (schema version, model id, dimension)."""
    if isinstance(path, Path) and not path.is_dir():
        return {}
    try:
        return _read_meta(_connect(path, access or StoreAccess()))
    except ValueError as exc:
        if storage_cause(exc).waits:  # a missing bucket, refused credentials, no answer
            raise storage_error(exc, path) from exc
        return {}  # listed but not committed yet: another process is creating the store
    except OSError as exc:  # an object store that cannot be reached
        raise storage_error(exc, path, doing=f"read the index at {path}") from exc


def _write_meta(conn: Any, facts: dict[str, str]) -> None:
    table = pa.table({"key": list(facts), "value": list(facts.values())}, schema=meta_schema())
    conn.create_table(META, data=table, mode="overwrite")


#: The columns a schema-2 ``view`` cell packs (later ones take defaults when unpacked).
_V2_VIEW_COLUMNS = [name for name in PACKED_VIEW_COLUMNS if name not in _UNIT_COLUMNS]


def _add_packed_view(uri: str, columns: list[str], access: StoreAccess) -> None:
    """Give every row of table ``uri`` its ``view`` cell, packed from its ``columns``
    (``pack_view_values``): new column files beside the old ones, so rows, row ids and
    indexes stay (~0.4 s for 110k chunks). Nothing when the table has one (another
    process migrated it meanwhile)."""
    import lance

    if "view" in open_dataset(uri, access).schema.names:
        return

    @lance.batch_udf(output_schema=pa.schema([pa.field("view", pa.binary())]))
    def views(batch: pa.RecordBatch) -> pa.RecordBatch:
        values = [batch.column(name).to_pylist() for name in columns]
        cells = [pack_view_values(row) for row in zip(*values, strict=True)]
        return pa.record_batch([pa.array(cells, pa.binary())], names=["view"])

    try:
        open_dataset(uri, access).add_columns(views, read_columns=columns)
    except (OSError, RuntimeError, ValueError):
        if "view" not in open_dataset(uri, access).schema.names:
            raise


def _add_roles(documents_uri: str, chunks_uri: str, access: StoreAccess) -> None:
    """Schema 2 → 3: give every document and chunk its ``role`` (``indexer.roles``), computed
    from the file's path and text and the chunk's fields (new column files: rows, row ids
    and indexes stay)."""
    import lance

    from indexer.roles import chunk_role, file_role, rust_test_modules

    documents = open_dataset(documents_uri, access)
    files: dict[str, tuple[str, frozenset[str]]] = {}
    for batch in documents.to_batches(columns=["id", "file_path", "content"]):
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

    for uri, udf, inputs in (
        (documents_uri, document_roles, ["id"]),
        (chunks_uri, chunk_roles, _ROLE_INPUTS),
    ):
        if "role" in open_dataset(uri, access).schema.names:  # another process migrated it meanwhile
            continue
        try:
            open_dataset(uri, access).add_columns(udf, read_columns=inputs)
        except (OSError, RuntimeError, ValueError):
            if "role" not in open_dataset(uri, access).schema.names:
                raise


_ROLE_INPUTS = ["file_id", "language", "node_type", "content", "scope_path"]


def _add_null_columns(uri: str, columns: dict[str, str], access: StoreAccess) -> None:
    """Add columns (name → SQL type) holding nulls to a table, unless it has them already
    (another process migrated it meanwhile). No data file is rewritten."""
    dataset = open_dataset(uri, access)
    present = set(dataset.schema.names)
    missing = {name: f"CAST(NULL AS {kind})" for name, kind in columns.items() if name not in present}
    if not missing:
        return
    try:
        dataset.add_columns(missing)
    except (OSError, RuntimeError, ValueError):
        if set(missing) - set(open_dataset(uri, access).schema.names):
            raise


def _add_units(conn: Any, access: StoreAccess) -> None:
    """Schema 3 → 4: the chunks' unit lines and signature, the documents' chunker version.
    Null in old rows (read as "the chunk itself" and "chunker 0"): every file is chunked
    again by the next run, as its chunker version differs, which fills the symbol index
    (its table, like ``write_intents``, is created on open when missing)."""
    names = _table_names(conn)
    if CHUNKS in names:
        _add_null_columns(conn.open_table(CHUNKS).uri, _UNIT_COLUMNS, access)
    if DOCUMENTS in names:
        _add_null_columns(conn.open_table(DOCUMENTS).uri, {"chunker_version": "INT"}, access)


def _migrate(conn: Any, path: Path | str, meta: dict[str, str], access: StoreAccess) -> dict[str, str]:
    """Bring a store of an older schema this lode knows to ``SCHEMA_VERSION``; the new facts."""
    version = int(meta.get("schema_version", "0"))
    if version == 1:
        log.info("migrating the index at %s from schema 1 to 2 (packed chunk views)", path)
        if CHUNKS in _table_names(conn):
            _add_packed_view(conn.open_table(CHUNKS).uri, _V2_VIEW_COLUMNS, access)
        meta = {**meta, "schema_version": "2"}
        _write_meta(conn, meta)
        version = 2
    if version == 2:
        log.info("migrating the index at %s from schema 2 to 3 (file and chunk roles)", path)
        names = _table_names(conn)
        if CHUNKS in names and DOCUMENTS in names:
            _add_roles(conn.open_table(DOCUMENTS).uri, conn.open_table(CHUNKS).uri, access)
        meta = {**meta, "schema_version": "3"}
        _write_meta(conn, meta)
        version = 3
    if version == 3:
        log.info("migrating the index at %s from schema 3 to 4 (units and symbols)", path)
        _add_units(conn, access)
        meta = {**meta, "schema_version": "4"}
        _write_meta(conn, meta)
        version = 4
    if version == 4:
        log.info("migrating the index at %s from schema 4 to 5 (packed symbol rows)", path)
        if SYMBOLS in _table_names(conn):
            _add_packed_view(conn.open_table(SYMBOLS).uri, PACKED_SYMBOL_COLUMNS, access)
        meta = {**meta, "schema_version": "5"}
        _write_meta(conn, meta)
        version = 5
    if version == 5:
        log.info("migrating the index at %s from schema 5 to 6 (vectors keyed by their text)", path)
        _key_vectors_by_text(conn, meta, access)
        meta = {**meta, "schema_version": "6", "embedding_text_version": str(embedding_text_version())}
        _write_meta(conn, meta)
    return meta


def embedding_text_version() -> int:
    """This lode's embedding-text version (``indexer.chunker``, imported when needed: the
    chunker's grammars cost a reader's start ~70 ms)."""
    from indexer.chunker import embedding_text_version as version

    return version()


def _key_vectors_by_text(conn: Any, meta: dict[str, str], access: StoreAccess) -> None:
    """Schema 5 → 6: the chunks' ``vector_text_hash`` (null: their vectors were made for a
    text no longer known, so phase 2 embeds every chunk again, the old vectors answering
    searches meanwhile), and an embedding cache keyed by text hash (the old one, keyed by
    content hash, handed a chunk the vector of another file's text: it is emptied)."""
    names = _table_names(conn)
    if CHUNKS in names:
        _add_null_columns(conn.open_table(CHUNKS).uri, {"vector_text_hash": "STRING"}, access)
    cache = conn.open_table(EMBEDDING_CACHE) if EMBEDDING_CACHE in names else None
    if cache is None or "text_hash" not in cache.schema.names:
        schema = embedding_cache_schema(int(meta.get("dimension", "0")))
        conn.create_table(EMBEDDING_CACHE, schema=schema, mode="overwrite")


def needs_upgrade(meta: dict[str, str]) -> bool:
    """True when a store with these facts has an older schema than this lode's (its writer
    migrates it: ``lode upgrade``, or the next ``lode index`` / ``lode serve``)."""
    return 0 < int(meta.get("schema_version", "0")) < SCHEMA_VERSION


def upgrade_due(meta: dict[str, str]) -> bool:
    """True when the writer of a store with these facts has to upgrade it before it writes:
    an older schema to migrate, or vectors of another embedding-text version to find."""
    if not meta:
        return False
    return needs_upgrade(meta) or meta.get("embedding_text_version") != str(embedding_text_version())


def upgrade_error(path: Path | str, meta: dict[str, str]) -> StoreVersionError:
    """The one line a process that may not migrate the index answers with."""
    return StoreVersionError(
        f"the index at {path} has schema version {meta.get('schema_version')}; this lode reads "
        f"version {SCHEMA_VERSION}: it needs `lode upgrade` (or the next `lode index` / "
        "`lode serve`, which upgrade it)"
    )


def _check_meta(meta: dict[str, str], path: Path | str, model_id: str, dimension: int) -> None:
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


def _schemas(dimension: int) -> dict[str, pa.Schema]:
    return {
        PROJECTS: projects_schema(),
        DOCUMENTS: documents_schema(dimension),
        CHUNKS: chunks_schema(dimension),
        EMBEDDING_CACHE: embedding_cache_schema(dimension),
        TASKS: tasks_schema(),
        FILE_ERRORS: file_errors_schema(),
        SYMBOLS: symbols_schema(),
        INTENTS: intents_schema(),
    }


def _open_tables(conn: Any, path: Path | str, meta: dict[str, str], dimension: int) -> dict[str, Any]:
    """A reader's tables: the store must exist whole, at this lode's schema (only its
    writer creates, completes or migrates it)."""
    if not meta:
        raise StoreError(
            f"no index at {path} yet: a read-only process never creates one (start its writer: "
            "`lode serve`, `lode index` or `lode watch` with the same --db)"
        )
    if needs_upgrade(meta):
        raise upgrade_error(path, meta)
    existing = _table_names(conn)
    missing = sorted(set(_schemas(dimension)) - existing)
    if missing:
        raise StoreError(f"the index at {path} lacks tables {missing}: its writer creates them")
    return {name: conn.open_table(name) for name in existing & {*_schemas(dimension), VOCABULARY}}


def _open_as_writer(
    conn: Any,
    path: Path | str,
    meta: dict[str, str],
    model_id: str,
    dimension: int,
    access: StoreAccess,
    session: Any,
    upgrade: bool,
) -> Store:
    """``open_store`` for a process that may write: tables created where missing, an older
    schema migrated (only with ``upgrade``), a new store's facts written."""
    if meta:
        if needs_upgrade(meta):
            if not upgrade:
                raise upgrade_error(path, meta)
            meta = _migrate(conn, path, meta, access)
        _check_meta(meta, path, model_id, dimension)
    existing = _table_names(conn)
    tables = {
        name: conn.open_table(name) if name in existing else conn.create_table(name, schema=schema)
        for name, schema in _schemas(dimension).items()
    }
    if VOCABULARY in existing:
        tables[VOCABULARY] = conn.open_table(VOCABULARY)
    elif CHUNKS not in existing:  # a new store; an older one gets it from its chunks later
        tables[VOCABULARY] = conn.create_table(VOCABULARY, schema=vocabulary_schema())
    if not meta:
        meta = {
            "schema_version": str(SCHEMA_VERSION),
            "model_id": model_id,
            "dimension": str(dimension),
            "embedding_text_version": str(embedding_text_version()),
        }
        _write_meta(conn, meta)
    store = Store(path, conn, tables, model_id, dimension, access, session)
    if upgrade and meta.get("embedding_text_version") != str(embedding_text_version()):
        stale = store.refresh_vector_keys()
        log.info("the embedding text changed: %d vectors are embedded again", stale)
        _write_meta(conn, {**meta, "embedding_text_version": str(embedding_text_version())})
    return store


def open_store(
    path: Path | str,
    model_id: str,
    dimension: int,
    access: StoreAccess | None = None,
    *,
    upgrade: bool = False,
) -> Store:
    """Open (creating if needed) the index at ``path`` (a folder, or an object-storage URI)
    for a model of ``dimension``; with ``access.read_only``, only open what exists.

    An index of an older schema is migrated only with ``upgrade`` (by its writer, holding
    the writer's claim; ``indexer.api.Lode`` decides): otherwise the ``StoreVersionError``
    says how to upgrade it, and nothing is written. With ``upgrade``, vectors made for
    another embedding text than this lode's are found too (``refresh_vector_keys``)."""
    access = access or StoreAccess()
    try:
        if isinstance(path, Path) and not access.read_only:
            path.mkdir(parents=True, exist_ok=True)
        session = _connection_session()
        conn = _connect(path, access, session)
        meta = _read_meta(conn)
        if access.read_only:
            tables = _open_tables(conn, path, meta, dimension)
            _check_meta(meta, path, model_id, dimension)
            return Store(path, conn, tables, model_id, dimension, access, session)
        store = _open_as_writer(conn, path, meta, model_id, dimension, access, session, upgrade)
    except StoreError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:
        if is_storage_failure(exc):  # a full disk, refused credentials… (one line)
            raise storage_error(exc, path, doing=f"open the index at {path}") from exc
        raise StoreError(f"cannot open the index at {path}: {exc}") from exc
    return store
