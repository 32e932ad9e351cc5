"""The store's indexes: created once a table has rows (``_schema`` lists them), the vector
index once it is big enough to need one, and loaded ahead of the first searches."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from indexer.store._lance._children import VECTOR_INDEX_TIMEOUT, in_process, job_ran
from indexer.store._lance._db import Db
from indexer.store._lance._jobs import is_vector_index
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    PROJECTS,
    SCALAR_INDEXES,
    TASKS,
    TEXT_INDEXES,
)

__all__ = ["VECTOR_INDEX_MIN_ROWS", "VECTOR_PARTITION_ROWS", "Indexes"]

log = logging.getLogger(__name__)

#: Below this many rows a flat scan answers vector queries; above it an IVF index does.
VECTOR_INDEX_MIN_ROWS = 20_000
#: Rows per IVF partition the vector index aims at (queries probe ``NPROBES`` of them).
VECTOR_PARTITION_ROWS = 512


def _is_current_vector_index(index: Any) -> bool:
    """Whether a vector index is the kind lode builds now (IVF_SQ with its target size)."""
    details = dict(getattr(index, "index_details", None) or {})  # (empty when none recorded)
    return (
        str(getattr(index, "index_type", "")) == "IvfSq"
        and details.get("target_partition_size") == VECTOR_PARTITION_ROWS
    )


def _index_config(kind: str) -> Any:
    from lancedb.index import Bitmap, BTree, LabelList

    return {"BTREE": BTree(), "BITMAP": Bitmap(), "LABEL_LIST": LabelList()}[kind]


def _indexed_columns(table: Any) -> set[str]:
    return {col for idx in table.list_indices() for col in idx.columns}


class Indexes:
    """Creates the missing indexes, counts the rows they miss, loads them for searches."""

    def __init__(self, db: Db, ensure_vocabulary: Callable[[], None]) -> None:
        self._db = db
        self._ensure_vocabulary = ensure_vocabulary
        #: True once every scalar and full-text index exists (the vector index comes later).
        self.complete = False
        #: Set by the first ``prewarm``: this process answers searches, so each optimize
        #: loads the new indexes again (a process that only indexes, ``lode index`` or
        #: ``lode watch``, would hold them for nothing).
        self.keep_warm = False

    def ensure(self) -> None:
        """Create every scalar, full-text and vector index whose table has rows but no index yet."""
        with self._db.write_lock:
            self.ensure_text()
            self._ensure_vector_index(CHUNKS, "embedding")
            self._ensure_vector_index(DOCUMENTS, "content_embedding")

    def ensure_text(self) -> None:
        """Create every scalar and full-text index whose table has rows but no index yet (and
        the vocabulary). Rows written later are still found: full-text queries scan the rows
        an index does not cover yet, until ``optimize`` folds them in."""
        from lancedb.index import FTS

        db = self._db
        with db.write_lock:
            self._ensure_vocabulary()
            self.complete = all(
                db.table(name).count_rows() > 0
                for name in (CHUNKS, DOCUMENTS, EMBEDDING_CACHE, TASKS, PROJECTS)
            )
            existing = {name: _indexed_columns(db.table(name)) for name in {t for t, _, _ in SCALAR_INDEXES}}
            # a new store: the indexes made now cover every row written so far
            new_store = not existing[CHUNKS]
            for name, column, kind in SCALAR_INDEXES:
                table = db.table(name)
                if column not in existing[name] and table.count_rows() > 0:
                    table.create_index(column, config=_index_config(kind))
            missing = [
                (db.table(name), column)
                for name, column in TEXT_INDEXES
                if column not in existing[name] and db.table(name).count_rows() > 0
            ]
            # full-text indexes are the slow ones (seconds on a big first index); each builds
            # on one core, so they build side by side
            with ThreadPoolExecutor(max_workers=2, thread_name_prefix="lode-fts") as pool:
                futures = [
                    pool.submit(table.create_index, column, config=FTS(with_position=False, stem=True))
                    for table, column in missing
                ]
                for future in futures:
                    future.result()
            if new_store:
                db.changes.folded = (db.changes.added, db.changes.rewritten)

    def _ensure_vector_index(self, name: str, column: str) -> None:
        from lancedb.index import IvfSq

        table = self._db.table(name)
        current = next((i for i in table.list_indices() if column in i.columns), None)
        if current is not None and _is_current_vector_index(current):
            return
        rows = int(table.count_rows("embedded = true"))
        if rows < VECTOR_INDEX_MIN_ROWS:
            return
        # A target size, not a partition count: Lance keeps partitions near it as the table
        # grows (a fixed count is merged down to big partitions by optimize, which turns
        # every query into a scan of the whole table). Vectors are kept as 8-bit scalars in
        # the index (IVF_SQ): a query reads a quarter of the bytes of IVF_FLAT at the same
        # recall. An index of another kind or without a target size is rebuilt.
        log.info(
            "building the vector index of %s (%d rows, ~%d rows per partition)",
            name,
            rows,
            VECTOR_PARTITION_ROWS,
        )
        # in a child for a big table: the memory training and assigning takes for a moment
        # would stay the indexing process's peak
        what, args = f"building the vector index of {name}", [table.uri, column, VECTOR_PARTITION_ROWS]
        failed = f"{what} in a child failed; here then"
        if not in_process(self._db) and job_ran(
            self._db, "create_vector_index", args, False, what, failed, VECTOR_INDEX_TIMEOUT
        ):
            return
        table.create_index(
            column,
            config=IvfSq(distance_type="cosine", target_partition_size=VECTOR_PARTITION_ROWS),
            replace=True,
        )

    def unindexed_rows(self) -> int:
        """Rows of the chunk and document tables that their indexes do not cover yet."""
        total = 0
        for name in (CHUNKS, DOCUMENTS):
            for index in self._db.table(name).list_indices():
                total = max(total, int(getattr(index, "num_unindexed_rows", 0) or 0))
        return total

    def folded(self, name: str) -> dict[str, int]:
        """The scalar and full-text indexes of table ``name`` with their segment counts.
        Vector indexes are left to ``optimize`` (vector queries search the rows they miss
        exactly, where those have vectors): Lance 13 cannot merge the IVF_SQ delta
        segments a fold makes with the ones its optimize makes ("vector index segments do
        not share IVF centroids")."""
        return {
            index.name: len(index.segments)
            for index in self._db.own_dataset(name).describe_indices()
            if not is_vector_index(index.index_type)
        }

    def prewarm(self) -> None:
        """Load the chunk table's vector and full-text indexes into the index cache, so the
        first searches after a start do not each load the pieces they touch. From then on
        every optimize does it again (this process answers searches)."""
        self.keep_warm = True
        dataset = self._db.dataset(CHUNKS)
        for index in dataset.describe_indices():
            kind = index.index_type.upper()
            if is_vector_index(kind) or "INVERTED" in kind:
                dataset.prewarm_index(index.name)
