"""The store: one object per table (and per concern across tables) over one LanceDB
connection, and opening it (the model and schema checks, a writer's migration)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from indexer.errors import StoreError
from indexer.models import StoreCheck
from indexer.storage_failure import is_storage_failure, storage_cause, storage_error
from indexer.store._access import StoreAccess
from indexer.store._check import Checker
from indexer.store._chunks import Chunks
from indexer.store._content import Content
from indexer.store._documents import Documents
from indexer.store._files import Files
from indexer.store._lance._connect import connect, connection_session
from indexer.store._lance._db import Db
from indexer.store._lance._indexes import Indexes
from indexer.store._lance._maintenance import Maintenance
from indexer.store._lance._versions import Versions
from indexer.store._migrate import (
    check_meta,
    embedding_text_version,
    migrate,
    needs_upgrade,
    read_meta,
    table_names,
    upgrade_error,
    vectors_made_by,
    write_meta,
)
from indexer.store._projects import Projects
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    FILE_ERRORS,
    PROJECTS,
    SCHEMA_VERSION,
    SYMBOLS,
    VOCABULARY,
    table_schemas,
    vocabulary_schema,
)
from indexer.store._search import Search
from indexer.store._symbols import Symbols
from indexer.store._tasks import Tasks
from indexer.store._vectors import CURRENT, OUTDATED, Vectors
from indexer.store._vocabulary import Vocabulary

__all__ = ["Store", "open_store", "read_store_info"]

log = logging.getLogger(__name__)


class Store:
    """lode's index on disk: the only object that talks to LanceDB.

    Each table has its object, which owns its reads and writes (``projects``, ``tasks``,
    ``documents``, ``chunks``, ``symbols``, ``vocabulary``, and ``vectors``: the embedding
    cache and the vectors phase 2 fills in); ``search`` holds the search's reads pinned to
    a table version, ``content`` the chunks holding an exact term; ``files`` writes whole files
    across tables and repairs them. ``indexes``, ``maintenance`` and ``versions`` keep the
    tables fast and the folder small (``_lance``); ``db`` is what they all share.
    """

    def __init__(self, db: Db) -> None:
        self.db = db
        self.path = db.path
        self.model_id = db.model_id
        self.dimension = db.dimension
        self.access = db.access
        self.projects = Projects(db)
        self.tasks = Tasks(db)
        self.documents = Documents(db)
        self.chunks = Chunks(db)
        self.symbols = Symbols(db)
        self.vocabulary = Vocabulary(db)
        self.vectors = Vectors(db)
        self.search = Search(db)
        self.content = Content(db, self.vocabulary)
        self.files = Files(db, self.documents, self.chunks, self.symbols, self.vocabulary)
        self.indexes = Indexes(db, self.vocabulary.ensure)
        self.versions = Versions(db)
        self.maintenance = Maintenance(db, self.indexes, self.versions)

    def close(self) -> None:
        """Release the connection (tables become unusable)."""
        self.db.tables.clear()

    def stats(self) -> dict[str, int]:
        """Row counts of the main tables."""
        t = self.db.table
        return {
            "projects": int(t(PROJECTS).count_rows()),
            "documents": int(t(DOCUMENTS).count_rows()),
            "chunks": int(t(CHUNKS).count_rows()),
            "chunks_embedded": int(t(CHUNKS).count_rows(CURRENT)),
            # vectors made for a text no longer known (before an upgrade), being made again
            "vectors_outdated": int(t(CHUNKS).count_rows(OUTDATED)),
            "symbols": int(t(SYMBOLS).count_rows()),
            "embedding_cache": int(t(EMBEDDING_CACHE).count_rows()),
            "file_errors": int(t(FILE_ERRORS).count_rows()),
        }

    def check(self) -> StoreCheck:
        """Verify tables, data files, indexes and row agreement; never raises for damage."""
        return Checker(self.db).check()

    def index_version(self) -> int:
        """A number that changes whenever chunks or documents change (for continuation tokens)."""
        return int(self.db.table(CHUNKS).version) * 1_000_000 + int(self.db.table(DOCUMENTS).version)


def read_store_info(path: Path | str, access: StoreAccess | None = None) -> dict[str, str]:
    """The facts a store records about itself (schema version, model id, dimension)."""
    if isinstance(path, Path) and not path.is_dir():
        return {}
    try:
        return read_meta(connect(path, access or StoreAccess()))
    except ValueError as exc:
        if storage_cause(exc).waits:  # a missing bucket, refused credentials, no answer
            raise storage_error(exc, path) from exc
        return {}  # listed but not committed yet: another process is creating the store
    except OSError as exc:  # an object store that cannot be reached
        raise storage_error(exc, path, doing=f"read the index at {path}") from exc


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
    existing = table_names(conn)
    missing = sorted(set(table_schemas(dimension)) - existing)
    if missing:
        raise StoreError(f"the index at {path} lacks tables {missing}: its writer creates them")
    return {name: conn.open_table(name) for name in existing & {*table_schemas(dimension), VOCABULARY}}


def _open_as_writer(
    conn: Any,
    path: Path | str,
    meta: dict[str, str],
    model_id: str,
    dimension: int,
    access: StoreAccess,
    session: Any,
    upgrade: bool,
    vector_encoder: str = "float",
) -> Store:
    """``open_store`` for a process that may write: tables created where missing, an older
    schema migrated (only with ``upgrade``), a new store's facts written."""
    if meta:
        if needs_upgrade(meta):
            if not upgrade:
                raise upgrade_error(path, meta)
            meta = migrate(conn, path, meta, access)
        check_meta(meta, path, model_id, dimension)
    existing = table_names(conn)
    tables = {
        name: conn.open_table(name) if name in existing else conn.create_table(name, schema=schema)
        for name, schema in table_schemas(dimension).items()
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
            "vector_encoder": vector_encoder,
        }
        write_meta(conn, meta)
    store = Store(Db(path, conn, tables, model_id, dimension, access, session, vector_encoder))
    if upgrade and meta.get("embedding_text_version") != str(embedding_text_version()):
        stale = store.vectors.refresh_keys()
        log.info("the embedding text changed: %d vectors are embedded again", stale)
        meta = {**meta, "embedding_text_version": str(embedding_text_version())}
        write_meta(conn, meta)
    if upgrade and vectors_made_by(meta) != vector_encoder:
        # never two kinds of vectors under one key: each chunk is embedded again, its old
        # vector answering searches until then (as after an upgrade)
        stale = store.vectors.forget_all()
        log.warning(
            "the index's vectors were made by the %s encoder, documents are now embedded by the "
            "%s one: %d vectors are embedded again",
            vectors_made_by(meta),
            vector_encoder,
            stale,
        )
        write_meta(conn, {**meta, "vector_encoder": vector_encoder})
    return store


def open_store(
    path: Path | str,
    model_id: str,
    dimension: int,
    access: StoreAccess | None = None,
    *,
    upgrade: bool = False,
    vector_encoder: str = "float",
) -> Store:
    """Open (creating if needed) the index at ``path`` (a folder, or an object-storage URI)
    for a model of ``dimension``; with ``access.read_only``, only open what exists.

    An index of an older schema is migrated only with ``upgrade`` (by its writer, holding
    the writer's claim; ``indexer.api.Lode`` decides): otherwise the ``StoreVersionError``
    says how to upgrade it, and nothing is written. With ``upgrade``, vectors made for
    another embedding text than this lode's are found too (``Vectors.refresh_keys``), and
    vectors made by another kind of encoder than ``vector_encoder`` (``float``: torch or
    the float ONNX graph, ``int8``) are all embedded again (``Vectors.forget_all``)."""
    access = access or StoreAccess()
    try:
        if isinstance(path, Path) and not access.read_only:
            path.mkdir(parents=True, exist_ok=True)
        session = connection_session()
        conn = connect(path, access, session)
        meta = read_meta(conn)
        if access.read_only:
            tables = _open_tables(conn, path, meta, dimension)
            check_meta(meta, path, model_id, dimension)
            return Store(Db(path, conn, tables, model_id, dimension, access, session, vector_encoder))
        store = _open_as_writer(
            conn, path, meta, model_id, dimension, access, session, upgrade, vector_encoder
        )
    except StoreError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:
        if is_storage_failure(exc):  # a full disk, refused credentials… (one line)
            raise storage_error(exc, path, doing=f"open the index at {path}") from exc
        raise StoreError(f"cannot open the index at {path}: {exc}") from exc
    return store
