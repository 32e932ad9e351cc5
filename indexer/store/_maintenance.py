"""Indexes and compaction: created once a table has rows, refreshed after writes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from indexer.errors import StoreError
from indexer.memory import child_env
from indexer.priority import lower_thread_priority, threads_named
from indexer.storage_failure import log_failure, storage_cause, storage_error
from indexer.store import _lance_jobs
from indexer.store._access import store_uri
from indexer.store._base import StoreBase, is_vector_index
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    INTENTS,
    PROJECTS,
    SYMBOLS,
    TASKS,
    VOCABULARY,
)
from indexer.store._versions import VersionsMixin
from indexer.store._vocabulary import VocabularyMixin

__all__ = [
    "FOLD_ROWS",
    "FORCED_FOLD_ROWS",
    "OPTIMIZE_AFTER_ROWS",
    "OPTIMIZE_AFTER_SECONDS",
    "OPTIMIZE_MIN_ROWS",
    "OPTIMIZE_QUIET_MIN_ROWS",
    "OPTIMIZE_QUIET_SHARE",
    "OPTIMIZE_SHARE",
    "SETTLE_MIN_ROWS",
    "VECTOR_INDEX_MIN_ROWS",
    "MaintenanceMixin",
]

log = logging.getLogger(__name__)

#: Below this many rows a flat scan answers vector queries; above it an IVF index does.
VECTOR_INDEX_MIN_ROWS = 20_000
#: Rows per IVF partition the vector index aims at (queries probe ``nprobes`` of them).
VECTOR_PARTITION_ROWS = 512
# Rows written since the last optimize are outside the full-text indexes: every lexical
# query scans them (~25-50 µs a row: 1,300 fresh rows doubled a query on a 110k-chunk
# store), while an optimize costs ~0.8 s on a small store and ~4 s on 110k chunks.
#: ``maybe_optimize`` runs once this share of the chunk table changed…
OPTIMIZE_SHARE = 0.05
#: …but not for fewer rows than this…
OPTIMIZE_MIN_ROWS = 512
#: …and always after this many…
OPTIMIZE_AFTER_ROWS = 5_000
#: …or this long after the last optimize when anything changed.
OPTIMIZE_AFTER_SECONDS = 300.0
#: Stores with fewer chunks than this fold and optimize in this process, bigger ones in a
#: child process (see ``_lance_jobs``).
CHILD_MIN_ROWS = 20_000
#: An optimize merges fragments of fewer rows than this and leaves bigger ones alone: the
#: default (1M rows) rewrote a whole 118k-chunk table to add 8k rows to it (6.2 s of CPU
#: against 2.6 s for the same optimize that rewrites only the small fragments).
COMPACT_TARGET_ROWS = 65_536
#: Rows written since the last fold (or optimize) after which a write folds them into the
#: indexes as a delta segment (``fold_new_rows``): ~0.15 s per 1,000 rows on a 110k-chunk
#: store, where every unindexed row costs each full-text query ~28 µs (1,000 of them made
#: a 1.4 ms query 26 ms). Each fold waits for as many rows as all
#: folds before it since the last optimize, so segments stay few until the optimize
#: merges them.
FOLD_ROWS = 1_000
#: …and at the end of an index run, once this many are waiting, or any when the run
#: folded rows before (a big run: it ends with all of them in). A fold is a
#: child process, ~0.5 s; each unfolded row costs every full-text query ~28 µs (measured
#: on 110k chunks: 214 rows left over by a run made it 1.4 → 7 ms, and a search has two).
FORCED_FOLD_ROWS = 64
#: At the end of an index run (``maybe_optimize(settle=True)``): an optimize once the
#: indexes miss this many rows (phase 2 rewrites every row it gives a vector).
SETTLE_MIN_ROWS = 512
#: When the writer is idle (``quiet=True``): this share of the table…
OPTIMIZE_QUIET_SHARE = 0.01
#: …at least this many rows (still at most ``OPTIMIZE_AFTER_ROWS``).
OPTIMIZE_QUIET_MIN_ROWS = 64

# (table, column, kind) of every scalar and full-text index lode keeps.
_SCALAR = [
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
_FTS = [(CHUNKS, "search_text"), (CHUNKS, "name_text"), (DOCUMENTS, "search_text")]


def _details(index: Any) -> dict[str, Any]:
    """The build parameters Lance records on an index (empty when it records none)."""
    return dict(getattr(index, "index_details", None) or {})


#: LanceDB's optimize prunes versions older than this: never, in effect (``prune_versions``
#: prunes by when a version was replaced, which LanceDB cannot).
_NO_CLEANUP = timedelta(days=3650)


#: A fold, merge or optimize still running after this long is killed (its table stays as it was).
_OPTIMIZE_INDICES_TIMEOUT = 600.0


def _optimize_indices(
    uri: str, names: list[str], merge: int, *, options: dict[str, str] | None = None, here: bool = False
) -> None:
    """``_lance_jobs.optimize_indices`` in a child process (see ``_lance_jobs``), or in
    this one with ``here`` (a small table: no child to start)."""
    _run_job("optimize_indices", [uri, names, merge], options, here, f"updating the indexes of {uri}")


def _merge_segments(uri: str, *, options: dict[str, str] | None = None, here: bool = False) -> None:
    """``_lance_jobs.merge_segments`` of the split indexes, in a child process or here."""
    _run_job("merge_segments", [uri, True], options, here, f"merging the index segments of {uri}")


def _optimize_table(
    uri: str, target_rows: int, *, options: dict[str, str] | None = None, here: bool = False
) -> None:
    """``_lance_jobs.optimize_table`` in a child process, or in this one with ``here``."""
    _run_job("optimize_table", [uri, target_rows], options, here, f"optimizing {uri}")


#: A vector index build still running after this long is killed (1M chunks take minutes).
_VECTOR_INDEX_TIMEOUT = 3600.0


def _run_job(
    job: str,
    args: list[Any],
    options: dict[str, str] | None,
    here: bool,
    what: str,
    timeout: float = _OPTIMIZE_INDICES_TIMEOUT,
) -> None:
    """Run a job of ``_lance_jobs`` here or in a child (its storage options on its stdin)."""
    if here:
        getattr(_lance_jobs, job)(*args, options=options)
        return
    done = subprocess.run(
        [sys.executable, _lance_jobs.__file__, job, json.dumps(args)],
        input=json.dumps(options or {}),
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    if done.returncode != 0:
        if storage_cause(done.stderr).waits:  # a full disk, refused credentials… (one line)
            raise storage_error(done.stderr)
        raise StoreError(f"{what} failed: {done.stderr.strip()[-2000:]}")


def _is_current_vector_index(index: Any) -> bool:
    """Whether a vector index is the kind lode builds now (IVF_SQ with its target size)."""
    details = _details(index)
    return (
        str(getattr(index, "index_type", "")) == "IvfSq"
        and details.get("target_partition_size") == VECTOR_PARTITION_ROWS
    )


def _index_config(kind: str) -> Any:
    from lancedb.index import Bitmap, BTree, LabelList

    return {"BTREE": BTree(), "BITMAP": Bitmap(), "LABEL_LIST": LabelList()}[kind]


class MaintenanceMixin(VersionsMixin, VocabularyMixin, StoreBase):
    """Creates missing indexes and folds new rows into them."""

    def _indexed_columns(self, table: Any) -> set[str]:
        return {col for idx in table.list_indices() for col in idx.columns}

    def ensure_indexes(self) -> None:
        """Create every scalar, full-text and vector index whose table has rows but no index yet."""
        with self._write_lock:
            self.ensure_text_indexes()
            self._ensure_vector_index(CHUNKS, "embedding")
            self._ensure_vector_index(DOCUMENTS, "content_embedding")

    def ensure_text_indexes(self) -> None:
        """Create every scalar and full-text index whose table has rows but no index yet (and
        the vocabulary). Rows written later are still found: full-text queries scan the rows
        an index does not cover yet, until ``optimize`` folds them in."""
        from lancedb.index import FTS

        with self._write_lock:
            self.ensure_vocabulary()
            self._indexes_complete = all(
                self._t(name).count_rows() > 0
                for name in (CHUNKS, DOCUMENTS, EMBEDDING_CACHE, TASKS, PROJECTS)
            )
            existing = {name: self._indexed_columns(self._t(name)) for name in {t for t, _, _ in _SCALAR}}
            # a new store: the indexes made now cover every row written so far
            new_store = not existing[CHUNKS]
            for name, column, kind in _SCALAR:
                table = self._t(name)
                if column not in existing[name] and table.count_rows() > 0:
                    table.create_index(column, config=_index_config(kind))
            missing = [
                (self._t(name), column)
                for name, column in _FTS
                if column not in existing[name] and self._t(name).count_rows() > 0
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
                self._rows_folded = (self._rows_added, self._rows_rewritten)

    def _ensure_vector_index(self, name: str, column: str) -> None:
        from lancedb.index import IvfSq

        table = self._t(name)
        current = next((i for i in table.list_indices() if column in i.columns), None)
        if current is not None and _is_current_vector_index(current):
            return
        rows = int(table.count_rows("embedded = true"))
        if rows < VECTOR_INDEX_MIN_ROWS:
            return
        # A target size, not a partition count: Lance keeps partitions near it as the table
        # grows (a fixed count is merged down to ~16k-row partitions by optimize, which turns
        # every query into a scan of the whole table). Vectors are kept as 8-bit scalars in
        # the index (IVF_SQ): a query reads a quarter of the bytes of IVF_FLAT, 3.5 instead
        # of 5.4 ms of CPU on 110k chunks at the same recall@10 (0.97 at 32 probes). An
        # index of another kind or without a target size is rebuilt.
        log.info(
            "building the vector index of %s (%d rows, ~%d rows per partition)",
            name,
            rows,
            VECTOR_PARTITION_ROWS,
        )
        # in a child for a big table: training and assigning ~115k vectors took ~360 MB for
        # a moment, which the indexing process kept as its peak (1.56-1.78 GB on 5,000 files)
        if not self._maintain_here():
            try:
                _run_job(
                    "create_vector_index",
                    [table.uri, column, VECTOR_PARTITION_ROWS],
                    self.access.lance_options(),
                    False,
                    f"building the vector index of {name}",
                    _VECTOR_INDEX_TIMEOUT,
                )
                return
            except (StoreError, OSError, RuntimeError, ValueError, subprocess.SubprocessError) as exc:
                log_failure(log, f"building the vector index of {name} in a child failed; here then", exc)
        table.create_index(
            column,
            config=IvfSq(distance_type="cosine", target_partition_size=VECTOR_PARTITION_ROWS),
            replace=True,
        )

    def unindexed_rows(self) -> int:
        """Rows of the chunk and document tables that their indexes do not cover yet."""
        total = 0
        for name in (CHUNKS, DOCUMENTS):
            for index in self._t(name).list_indices():
                total = max(total, int(getattr(index, "num_unindexed_rows", 0) or 0))
        return total

    def _optimize_searched_table(self, name: str, here: bool) -> None:
        """Optimize the chunk or document table.

        A table with a fragment of ``COMPACT_TARGET_ROWS`` rows or more is optimized by
        ``_optimize_table`` (in a child process unless ``here``), which leaves such
        fragments as they are: LanceDB's optimize rewrote a whole 118k-chunk table to add
        8k rows to it (6.2 s of CPU, against 2.6). A table of small fragments only (a first
        index) is optimized by LanceDB, whose compaction rewrites it faster than Lance's
        own with its index remapping (Django, 59k chunks in 21 fragments: 8.4 s against
        20 s), and its delta segments are merged after; in a child process too unless
        ``here``."""
        dataset = self._own_dataset(name)
        fragments = [f.metadata.physical_rows for f in dataset.get_fragments()]
        log.debug(
            "optimizing %s: %d fragments, the biggest %d rows",
            name,
            len(fragments),
            max(fragments, default=0),
        )
        # rows written, deleted or not (pylance's count_rows holds the GIL: ``count_admitted``)
        if any(rows >= COMPACT_TARGET_ROWS for rows in fragments):
            try:
                _optimize_table(
                    self._t(name).uri, COMPACT_TARGET_ROWS, options=self.access.lance_options(), here=here
                )
                return
            except (StoreError, OSError, RuntimeError, ValueError, subprocess.SubprocessError) as exc:
                log_failure(log, f"optimizing {name} in a child failed; optimizing here", exc)
        if not here:
            # a big store's table of small fragments (a first index of 50k+ chunks, the
            # documents): rewriting the chunks whole took this process +280 MB for 1 s (the
            # peak of a 107k-chunk first index), the documents' +220 MB it kept
            try:
                _run_job(
                    "optimize_small_table",
                    [store_uri(self.path), name],
                    self.access.lance_options(),
                    False,
                    f"optimizing {name}",
                )
                return
            except (StoreError, OSError, RuntimeError, ValueError, subprocess.SubprocessError) as exc:
                log_failure(log, f"optimizing {name} in a child failed; optimizing here", exc)
        self._t(name).optimize(cleanup_older_than=_NO_CLEANUP)
        try:
            _merge_segments(self._t(name).uri, options=self.access.lance_options(), here=here)
        except (StoreError, OSError, RuntimeError, ValueError, subprocess.SubprocessError) as exc:
            # more segments to search until the next optimize merges them
            log_failure(log, f"merging the index segments of {name} failed", exc)

    def maintenance_settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds while ``optimize`` runs a big store's maintenance
        in child processes; True once none runs. Phase 2 waits here before each model
        batch: the model's working memory beside such a child (the first optimize of a
        107k-chunk index rewrites every chunk) took the writer and its children past 1.5
        GB, and both compete for the same cores anyway."""
        return self._maintenance_idle.wait(timeout)

    def _maintain_here(self) -> bool:
        """Whether index and table maintenance runs in this process: for a chunk table under
        ``CHILD_MIN_ROWS`` rows it takes a fraction of the ~0.5–0.8 s a child process
        needs to start (an index run of 680 chunks spent 2 s in children)."""
        return int(self._t(CHUNKS).count_rows()) < CHILD_MIN_ROWS

    def optimize(self, *, cleanup: bool = True) -> None:
        """Compact small fragments, fold new rows into the indexes (one segment per index),
        and (``cleanup``) prune the versions replaced more than ``access.keep_versions``
        seconds ago (see ``_optimize_searched_table`` and ``prune_versions``)."""
        with self._write_lock:
            here = self._maintain_here()
            if not here:
                self._maintenance_idle.clear()
            try:
                self.ensure_indexes()
                for name in (CHUNKS, DOCUMENTS, SYMBOLS):
                    self._optimize_searched_table(name, here)
                for name in (EMBEDDING_CACHE, PROJECTS, TASKS, VOCABULARY, INTENTS):
                    self._t(name).optimize(cleanup_older_than=_NO_CLEANUP)
                if cleanup:
                    self.prune_versions(timedelta(seconds=self.access.keep_versions))
                    self._versions_pruned = None  # what this optimize replaced waits for its window
            finally:
                self._maintenance_idle.set()
            self._rows_written = self._rows_added = self._rows_rewritten = 0
            self._rows_folded = (0, 0)
            self._last_optimize = time.monotonic()
        # compaction and merges give the indexes new files: load them now, not piece by
        # piece in the searches that come first (seconds of stalls under load). The
        # readers start afresh: their caches held the replaced indexes' pages, which no
        # search reads again (each optimize of a long phase 2 left ~90 MB of them)
        with self._readers_lock:
            self._readers.clear()
        if not self._keep_warm:  # a process that does not search (see ``_keep_warm``)
            return
        try:
            self.prewarm()
        except (OSError, RuntimeError, ValueError):  # only slower first searches
            log.warning("prewarming the indexes after an optimize failed", exc_info=True)

    def yield_writes_to_searches(self, nice: int) -> int:
        """Run lancedb's threads (its Rust runtime and its event loop) at niceness ``nice``;
        returns how many threads were changed. The store's writes and maintenance (merges,
        compaction, index builds) run on them and on the Lance pools they start later,
        which inherit it; searches run on pylance's own runtime and keep the process's
        niceness, so an optimize takes the cores searches leave."""
        from lancedb.background_loop import LOOP

        if nice <= 0:
            return 0
        self._start_read_runtime()
        self._t(PROJECTS).count_rows()  # the runtime starts with the first query
        tids = threads_named(("lancedb-tokio",))
        loop = getattr(LOOP, "thread", None)
        if loop is not None and loop.native_id is not None:
            tids.append(loop.native_id)
        return sum(lower_thread_priority(nice, tid) for tid in tids)

    def _start_read_runtime(self) -> None:
        """Start pylance's threads from this thread, at its niceness: they serve every search,
        and a thread inherits its creator's niceness, so they must not first be started by
        the index writer (a fold, or a prewarm after an optimize)."""
        from lance.query import MatchQuery

        dataset = self._dataset(CHUNKS)
        reads: tuple[Callable[[], Any], ...] = (  # a scan, a full-text and a vector query
            lambda: dataset.to_table(columns=["id"], limit=1),
            lambda: dataset.to_table(
                columns=["_score"],
                full_text_query=MatchQuery("lode", "search_text"),
                limit=1,
                with_row_id=True,
            ),
            lambda: dataset.to_table(
                columns=["_distance"],
                nearest={"column": "embedding", "q": self.placeholder, "k": 1},
                with_row_id=True,
            ),
        )
        for read in reads:
            try:
                read()
            except (OSError, RuntimeError, ValueError):  # no index yet, an empty table
                log.debug("starting the read runtime", exc_info=True)

    def prewarm(self) -> None:
        """Load the chunk table's vector and full-text indexes into the index cache, so the
        first searches after a start do not each load the pieces they touch (~3 ms a
        vector partition); ~0.3 s for 110k chunks. From then on every optimize does it
        again (this process answers searches)."""
        self._keep_warm = True
        dataset = self._dataset(CHUNKS)
        for index in dataset.describe_indices():
            kind = index.index_type.upper()
            if is_vector_index(kind) or "INVERTED" in kind:
                dataset.prewarm_index(index.name)

    def _folded_indexes(self, name: str) -> dict[str, int]:
        """The scalar and full-text indexes of table ``name`` with their segment counts.
        Vector indexes are left to ``optimize`` (vector queries search the rows they miss
        exactly, where those have vectors): Lance 13 cannot merge the IVF_SQ delta
        segments a fold makes with the ones its optimize makes ("vector index segments do
        not share IVF centroids")."""
        return {
            index.name: len(index.segments)
            for index in self._own_dataset(name).describe_indices()
            if not is_vector_index(index.index_type)
        }

    def fold_new_rows(self, *, force: bool = False, everything: bool = False, rewritten: bool = True) -> bool:
        """Add the rows added or rewritten since the last fold to the existing scalar and
        full-text indexes as a delta segment, without compaction, once there are enough of
        them (see ``FOLD_ROWS``); True when it folded. ``force`` (the end of an index run)
        folds once ``FORCED_FOLD_ROWS`` wait, ``everything`` (the end of a run that folded
        before) whatever waits. Without ``rewritten`` only the rows phase 1 added count
        (the end of a saved file's phase 1 waits for no fold of phase 2's rows: phase 2
        folds those itself). Queries read the tables meanwhile; the next optimize merges
        the segments."""
        with self._write_lock:
            added = self._rows_added - self._rows_folded[0]
            pending = added + self._rows_rewritten - self._rows_folded[1] if rewritten else added
            if everything:
                wanted = 1
            elif force:
                wanted = FORCED_FOLD_ROWS
            else:
                wanted = max(FOLD_ROWS, sum(self._rows_folded))
            if pending < wanted:
                return False
            here = self._maintain_here()
            try:
                for name in (CHUNKS, DOCUMENTS, SYMBOLS):
                    indexes = self._folded_indexes(name)
                    if indexes:
                        _optimize_indices(
                            self._t(name).uri,
                            list(indexes),
                            0,
                            options=self.access.lance_options(),
                            here=here,
                        )
            except (StoreError, OSError, RuntimeError, ValueError, subprocess.SubprocessError) as exc:
                # the rows stay found (scanned) until the optimize folds them in
                log_failure(log, "folding new rows into the indexes failed", exc)
                # tried again once as many rows wait
                self._rows_folded = (self._rows_added, self._rows_rewritten)
                return False
            self._rows_folded = (self._rows_added, self._rows_rewritten)
            return True

    def adopt_unindexed_rows(self) -> None:
        """Count rows an earlier process left outside the indexes as changed (so the next
        ``maybe_optimize`` folds them in; the counter starts at 0 in every process)."""
        unindexed = self.unindexed_rows()
        self._rows_written = max(self._rows_written, unindexed)
        self._rows_added = max(self._rows_added, unindexed)

    def optimize_threshold(self, *, quiet: bool = False) -> int:
        """Rows that may change before ``maybe_optimize`` folds them in: a share of the chunk
        table (``OPTIMIZE_SHARE``, or ``OPTIMIZE_QUIET_SHARE`` when ``quiet``: nothing else is
        waiting for the writer), at least ``OPTIMIZE_MIN_ROWS`` (``OPTIMIZE_QUIET_MIN_ROWS``)
        and at most ``OPTIMIZE_AFTER_ROWS``."""
        share, floor = OPTIMIZE_SHARE, OPTIMIZE_MIN_ROWS
        if quiet:
            share, floor = OPTIMIZE_QUIET_SHARE, OPTIMIZE_QUIET_MIN_ROWS
        return min(OPTIMIZE_AFTER_ROWS, max(floor, int(share * self._t(CHUNKS).count_rows())))

    def maybe_optimize(
        self,
        *,
        rows: int | None = None,
        seconds: float = OPTIMIZE_AFTER_SECONDS,
        quiet: bool = False,
        settle: bool = False,
    ) -> bool:
        """Optimize once enough rows changed since the last time (or long ago when any did).

        Rows not yet in an index are still found (queries scan them), so small writes such as
        a saved file skip this ~1 s step; a first index, a long phase 2 or a long trickle of
        edits triggers it (``rows`` overrides ``optimize_threshold``; ``quiet`` lowers it for
        an idle writer). Missing indexes (a new, small store) are always created.

        ``settle`` (an index run ended) also optimizes once the indexes miss
        ``SETTLE_MIN_ROWS`` rows, ``quiet`` once they miss ``OPTIMIZE_QUIET_MIN_ROWS``,
        however few rows were written: the rows a run's last writes left outside the vector
        and scalar indexes cost every search until the next optimize (when vector writes
        merged columns, each took its rows' whole fragment out: the end of a phase 2 left
        36k of 38k chunks outside, ~4x the CPU per hybrid query). Fewer are folded in
        (``fold_new_rows``). Not while a run writes: each write would pay for it.
        """
        if not self._rows_written:
            return False
        limit = self.optimize_threshold(quiet=quiet) if rows is None else rows
        missed = OPTIMIZE_QUIET_MIN_ROWS if quiet else SETTLE_MIN_ROWS
        if (
            self._rows_written >= limit
            or time.monotonic() - self._last_optimize >= seconds
            or ((quiet or settle) and self.unindexed_rows() >= missed)
        ):
            self.optimize()
            return True
        if not self._indexes_complete:
            self.ensure_indexes()
        # the end of a run folds in its last rows (phase 2 rewrites every row it gives a
        # vector) once ``FORCED_FOLD_ROWS`` wait
        self.fold_new_rows(force=settle)
        return False
