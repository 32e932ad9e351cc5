"""Arrow schemas of lode's LanceDB tables, their indexes and the store's schema version."""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "CHUNKS",
    "DOCUMENTS",
    "EMBEDDING_CACHE",
    "FILE_ERRORS",
    "INTENTS",
    "META",
    "PROJECTS",
    "SCALAR_INDEXES",
    "SCHEMA_VERSION",
    "SEARCHED_TABLES",
    "SYMBOLS",
    "TASKS",
    "TEXT_INDEXES",
    "UPKEPT_TABLES",
    "VOCABULARY",
    "chunks_schema",
    "documents_schema",
    "embedding_cache_schema",
    "file_errors_schema",
    "intents_schema",
    "meta_schema",
    "projects_schema",
    "symbols_schema",
    "table_schemas",
    "tasks_schema",
    "vocabulary_schema",
]

#: Bumped on every incompatible change of the tables below (``_migrate`` migrates the
#: older ones it knows, each step saying what it adds).
SCHEMA_VERSION = 6

META = "meta"
PROJECTS = "projects"
DOCUMENTS = "code_documents"
CHUNKS = "code_chunks"
EMBEDDING_CACHE = "embedding_cache"
TASKS = "tasks"
FILE_ERRORS = "file_errors"
VOCABULARY = "chunk_vocabulary"
SYMBOLS = "code_symbols"
INTENTS = "write_intents"
#: The tables searches read: new rows are folded into their indexes as a run writes.
SEARCHED_TABLES = (CHUNKS, DOCUMENTS, SYMBOLS)
#: The other tables an optimize compacts and a prune thins (``meta`` and ``file_errors``
#: change rarely).
UPKEPT_TABLES = (EMBEDDING_CACHE, PROJECTS, TASKS, VOCABULARY, INTENTS)

#: (table, column, kind) of every scalar index lode keeps (``_lance._indexes`` builds them).
SCALAR_INDEXES = [
    (CHUNKS, "id", "BTREE"),
    (CHUNKS, "file_id", "BTREE"),
    (CHUNKS, "project_id", "BITMAP"),
    (CHUNKS, "language", "BITMAP"),
    (CHUNKS, "node_type", "BITMAP"),
    (CHUNKS, "role", "BITMAP"),
    (CHUNKS, "embedded", "BITMAP"),
    (CHUNKS, "file_path", "BTREE"),
    (CHUNKS, "definitions", "LABEL_LIST"),
    (CHUNKS, "references", "LABEL_LIST"),
    (DOCUMENTS, "id", "BTREE"),
    (DOCUMENTS, "project_id", "BITMAP"),
    (DOCUMENTS, "file_path", "BTREE"),
    (EMBEDDING_CACHE, "key", "BTREE"),
    (TASKS, "id", "BTREE"),
    (PROJECTS, "id", "BTREE"),
    (SYMBOLS, "name", "BTREE"),
    (SYMBOLS, "id", "BTREE"),
    (SYMBOLS, "file_id", "BTREE"),
    (SYMBOLS, "project_id", "BITMAP"),
    (SYMBOLS, "role", "BITMAP"),
    (SYMBOLS, "kind", "BITMAP"),
    (SYMBOLS, "language", "BITMAP"),
]
#: (table, column) of every full-text index; the vector columns get theirs once big enough.
TEXT_INDEXES = [(CHUNKS, "search_text"), (CHUNKS, "name_text"), (DOCUMENTS, "search_text")]

_TS = pa.timestamp("us", tz="UTC")
_STRS = pa.list_(pa.string())


def _vector(dimension: int) -> pa.DataType:
    return pa.list_(pa.float32(), dimension)


def meta_schema() -> pa.Schema:
    """Key/value facts about the store: schema version, model id, dimension."""
    return pa.schema([pa.field("key", pa.string(), False), pa.field("value", pa.string(), False)])


def projects_schema() -> pa.Schema:
    """Registered project folders."""
    return pa.schema(
        [
            pa.field("id", pa.string(), False),
            pa.field("name", pa.string(), False),
            pa.field("root", pa.string(), False),
            pa.field("include", _STRS),
            pa.field("exclude", _STRS),
            pa.field("created_at", _TS),
            pa.field("updated_at", _TS),
            pa.field("last_indexed_at", _TS),
        ]
    )


def documents_schema(dimension: int) -> pa.Schema:
    """One row per indexed file."""
    return pa.schema(
        [
            pa.field("id", pa.string(), False),
            pa.field("project_id", pa.string(), False),
            pa.field("file_path", pa.string(), False),
            pa.field("content", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("content_hash", pa.string()),
            pa.field("content_embedding", _vector(dimension)),
            pa.field("embedded", pa.bool_()),
            pa.field("file_size", pa.int64()),
            pa.field("last_modified", pa.float64()),
            pa.field("indexed_at", _TS),
            pa.field("languages", _STRS),
            pa.field("primary_language", pa.string()),
            pa.field("chunk_count", pa.int32()),
            pa.field("keywords", _STRS),
            pa.field("summary", pa.string()),
            pa.field("role", pa.string()),
            # the chunker that cut the file (``indexer.chunker.CHUNKER_VERSION``): a file cut
            # by another is chunked again on the next run, whatever its bytes
            pa.field("chunker_version", pa.int32()),
        ]
    )


def chunks_schema(dimension: int) -> pa.Schema:
    """One row per chunk; ``embedded`` is false until phase 2 fills ``embedding``."""
    return pa.schema(
        [
            pa.field("id", pa.string(), False),
            pa.field("file_id", pa.string(), False),
            pa.field("project_id", pa.string(), False),
            pa.field("file_path", pa.string(), False),
            pa.field("file_hash", pa.string()),
            pa.field("chunk_index", pa.int32()),
            pa.field("content", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("name_text", pa.string()),
            pa.field("chunk_hash", pa.string()),
            pa.field("embedding", _vector(dimension)),
            pa.field("embedded", pa.bool_()),
            pa.field("priority", pa.int64()),
            pa.field("start_byte", pa.int64()),
            pa.field("end_byte", pa.int64()),
            pa.field("start_line", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("node_type", pa.string()),
            pa.field("node_name", pa.string()),
            pa.field("language", pa.string()),
            pa.field("parent_context", pa.string()),
            pa.field("scope_path", _STRS),
            pa.field("scope_depth", pa.int32()),
            pa.field("definitions", _STRS),
            pa.field("references", _STRS),
            pa.field("indexed_at", _TS),
            # what a search hit shows besides ``content`` and ``role``, packed
            # (``_rows.pack_view``): a page of hits reads 3 columns, not 14
            pa.field("view", pa.binary()),
            pa.field("role", pa.string()),
            # the unit a piece belongs to (a function cut in pieces, a class's skeleton)
            pa.field("unit_start_line", pa.int32()),
            pa.field("unit_end_line", pa.int32()),
            pa.field("signature", pa.string()),
            # the hash of the embedding text its vector was made from
            # (``indexer.chunker.text_hash``); null: no vector yet, or one made for a text
            # no longer known (an older lode's), which phase 2 makes again
            pa.field("vector_text_hash", pa.string()),
        ]
    )


def embedding_cache_schema(dimension: int) -> pa.Schema:
    """(model id, embedding-text version, text hash) → vector, so no text is embedded twice."""
    return pa.schema(
        [
            pa.field("key", pa.string(), False),
            pa.field("model_id", pa.string()),
            pa.field("text_hash", pa.string()),
            pa.field("vector", _vector(dimension)),
        ]
    )


def tasks_schema() -> pa.Schema:
    """Durable indexing tasks (the single writer's queue)."""
    return pa.schema(
        [
            pa.field("id", pa.string(), False),
            pa.field("project_id", pa.string(), False),
            pa.field("kind", pa.string()),
            pa.field("status", pa.string()),
            pa.field("phase", pa.string()),
            pa.field("paths", _STRS),
            pa.field("full", pa.bool_()),
            pa.field("files_total", pa.int64()),
            pa.field("files_done", pa.int64()),
            pa.field("chunks_done", pa.int64()),
            pa.field("chunks_total", pa.int64()),
            pa.field("chunks_embedded", pa.int64()),
            pa.field("errors", _STRS),
            pa.field("message", pa.string()),
            pa.field("created_at", _TS),
            pa.field("started_at", _TS),
            pa.field("finished_at", _TS),
            pa.field("updated_at", _TS),
        ]
    )


def file_errors_schema() -> pa.Schema:
    """Files that failed to chunk or embed; retried on the next run."""
    return pa.schema(
        [
            pa.field("id", pa.string(), False),
            pa.field("project_id", pa.string(), False),
            pa.field("file_path", pa.string()),
            pa.field("stage", pa.string()),
            pa.field("reason", pa.string()),
            pa.field("at", _TS),
        ]
    )


def vocabulary_schema() -> pa.Schema:
    """Every word (lower-case alphanumeric run) of every chunk's text, each once."""
    return pa.schema([pa.field("word", pa.string(), False)])


def symbols_schema() -> pa.Schema:
    """The symbol index: a row per definition (a unit) and per reference site (a name used on
    a line), written with the file's chunks."""
    return pa.schema(
        [
            pa.field("id", pa.string(), False),
            pa.field("project_id", pa.string(), False),
            pa.field("file_id", pa.string(), False),
            pa.field("file_path", pa.string(), False),
            pa.field("file_hash", pa.string()),
            pa.field("language", pa.string()),
            pa.field("role", pa.string()),
            pa.field("name", pa.string()),
            pa.field("kind", pa.string()),
            pa.field("container", pa.string()),
            pa.field("container_kind", pa.string()),
            pa.field("scope_path", _STRS),
            pa.field("signature", pa.string()),
            pa.field("text", pa.string()),
            pa.field("start_line", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("chunk_id", pa.string()),
            pa.field("chunk_index", pa.int32()),
            # every column but ``id`` packed (``_rows.pack_view_values``, schema 5): a
            # lookup reads 2 columns, not 16
            pa.field("view", pa.binary()),
        ]
    )


def intents_schema() -> pa.Schema:
    """Files whose rows a write is replacing or deleting: recorded before the write's first
    commit and removed after its last, so a write killed between its commits (chunks,
    symbols, documents: LanceDB has no transaction across tables) is found and redone."""
    return pa.schema(
        [
            pa.field("file_id", pa.string(), False),
            pa.field("project_id", pa.string(), False),
            pa.field("at", _TS),
        ]
    )


def table_schemas(dimension: int) -> dict[str, pa.Schema]:
    """Every table a store has from its start, by name (``chunk_vocabulary`` comes later
    to a store older than it; ``meta`` is written apart)."""
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
