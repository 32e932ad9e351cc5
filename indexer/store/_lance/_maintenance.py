"""When and how new rows reach the indexes: folds into them as delta segments while a run
writes, and optimizes (compaction, merged segments, the vector index) once enough changed."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from indexer.priority import lower_thread_priority, threads_named
from indexer.storage_failure import log_failure
from indexer.store._lance._children import JOB_FAILURES, JobInterruptedError, in_process, job_ran, run_job
from indexer.store._lance._db import Db
from indexer.store._lance._indexes import Indexes
from indexer.store._lance._versions import Versions
from indexer.store._schema import CHUNKS, PROJECTS, SEARCHED_TABLES, TASKS, UPKEPT_TABLES, VOCABULARY

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
    "SMALL_FRAGMENTS",
    "SMALL_FRAGMENT_ROWS",
    "Maintenance",
]

log = logging.getLogger(__name__)

# Rows written since the last optimize are outside the full-text indexes: every lexical
# query scans them, while an optimize costs seconds (figures: docs/performance.md).
#: ``maybe_optimize`` runs once this share of the chunk table changed…
OPTIMIZE_SHARE = 0.05
#: …but not for fewer rows than this…
OPTIMIZE_MIN_ROWS = 512
#: …and always after this many…
OPTIMIZE_AFTER_ROWS = 5_000
#: …or this long after the last optimize when anything changed.
OPTIMIZE_AFTER_SECONDS = 300.0
#: An optimize merges fragments of fewer rows than this and leaves bigger ones alone (the
#: default, 1M rows, rewrote a whole big table to add a few rows to it).
COMPACT_TARGET_ROWS = 65_536
#: Rows written since the last fold (or optimize) after which a write folds them into the
#: indexes as a delta segment (``fold_new_rows``), cheap beside what unindexed rows cost
#: each full-text query. Each fold waits for as many rows as all folds before it since
#: the last optimize, so segments stay few until the optimize merges them.
FOLD_ROWS = 1_000
#: …and at the end of an index run, once this many are waiting, or any when the run
#: folded rows before (a big run: it ends with all of them in): a fold is a child process,
#: and the rows a run leaves unfolded cost every full-text query until the next optimize.
FORCED_FOLD_ROWS = 64
#: At the end of an index run (``maybe_optimize(settle=True)``): an optimize once the
#: indexes miss this many rows (phase 2 rewrites every row it gives a vector).
SETTLE_MIN_ROWS = 512
#: When the writer is idle (``quiet=True``): this share of the table…
OPTIMIZE_QUIET_SHARE = 0.01
#: …at least this many rows (still at most ``OPTIMIZE_AFTER_ROWS``).
OPTIMIZE_QUIET_MIN_ROWS = 64

#: Every write makes a fragment, a save's a few rows (its chunks, then their vectors), and
#: every search opens each fragment: ``compact_small_fragments`` merges the fragments under
#: this many rows…
SMALL_FRAGMENT_ROWS = 256
#: …once there are this many (a save makes about two; figures: docs/performance.md)…
SMALL_FRAGMENTS = 16
#: …in these tables: the searched ones, and those every save writes and the writer reads
#: (a save's task is written three or four times, and the next task is found by a scan).
COMPACTED_TABLES = (*SEARCHED_TABLES, TASKS, PROJECTS, VOCABULARY)

#: LanceDB's optimize prunes versions older than this: never, in effect (``Versions.prune``
#: prunes by when a version was replaced, which LanceDB cannot).
_NO_CLEANUP = timedelta(days=3650)


class Maintenance:
    """Folds new rows into the indexes and optimizes the tables (``maybe_optimize``)."""

    def __init__(self, db: Db, indexes: Indexes, versions: Versions) -> None:
        self._db = db
        self._indexes = indexes
        self._versions = versions
        #: Clear while ``optimize`` runs a big store's maintenance in child processes
        #: (``settled``).
        self._idle = threading.Event()
        self._idle.set()
        #: True when a save waits (the index writer sets it): ``maybe_optimize`` and the
        #: folds then kill their child jobs, unless the last one was interrupted already
        #: (saves every few seconds must not starve the maintenance: ``_may_interrupt``).
        self.save_waits: Callable[[], bool] = lambda: False
        self._interrupted = False
        #: Set while ``maybe_optimize`` or ``fold_new_rows`` runs: a direct ``optimize``
        #: (``lode index``, a migration) is never interrupted.
        self._interruptible = False

    def _optimize_searched_table(self, name: str, here: bool) -> None:
        """Optimize the chunk or document table.

        A table with a fragment of ``COMPACT_TARGET_ROWS`` rows or more is optimized by
        ``_jobs.optimize_table`` (in a child process unless ``here``), which leaves such
        fragments as they are. A table of small fragments only (a first index) is optimized
        by LanceDB, whose compaction rewrites it faster than Lance's own with its index
        remapping, and its delta segments are merged after; in a child process too unless
        ``here``."""
        db = self._db
        uri = db.table(name).uri
        fragments = db.fragment_rows(name)
        log.debug(
            "optimizing %s: %d fragments, the biggest %d rows",
            name,
            len(fragments),
            max(fragments, default=0),
        )
        failed = f"optimizing {name} in a child failed; optimizing here"
        stop = self._may_interrupt
        compact = [uri, COMPACT_TARGET_ROWS]
        if any(rows >= COMPACT_TARGET_ROWS for rows in fragments) and job_ran(
            db, "optimize_table", compact, here, f"optimizing {uri}", failed, interrupt=stop
        ):
            return
        # a big store's table of small fragments (a first index, the documents): rewritten
        # in this process, it would keep the memory it took
        small = [str(db.path), name]
        if not here and job_ran(
            db, "optimize_small_table", small, False, f"optimizing {name}", failed, interrupt=stop
        ):
            return
        db.table(name).optimize(cleanup_older_than=_NO_CLEANUP)
        # (when it fails: more segments to search until the next optimize merges them)
        what = f"merging the index segments of {uri}"
        failed = f"merging the index segments of {name} failed"
        job_ran(db, "merge_segments", [uri, True], here, what, failed, interrupt=stop)

    def compact_small_fragments(self) -> bool:
        """Merge the small fragments of each table of ``COMPACTED_TABLES`` once it has
        ``SMALL_FRAGMENTS`` of them; True when it merged. Saves while nothing settles the
        store (another project embeds, the writer is never idle) leave a fragment or two
        each, and every search opens them all. Only those are rewritten (a few thousand
        rows at most, a fraction of a second on a small store, seconds on a big one), big
        fragments and their index segments stay as they are; in a child process for a big
        store, which every waiting save stops."""
        db = self._db
        with db.write_lock:
            small = {
                name: sum(1 for rows in db.fragment_rows(name) if rows < SMALL_FRAGMENT_ROWS)
                for name in COMPACTED_TABLES
            }
            tables = [name for name, count in small.items() if count >= SMALL_FRAGMENTS]
            if not tables:
                return False
            here = in_process(db)
            try:
                for name in tables:
                    uri = db.table(name).uri
                    args = [uri, SMALL_FRAGMENT_ROWS]
                    # always stopped for a save (seconds on a big store): left undone, it
                    # costs only what it cost before, until the idle writer's optimize
                    run_job(
                        "compact_small_fragments", args, db.access.lance_options(), here,
                        f"merging the small fragments of {uri}", interrupt=self.save_waits,
                    )  # fmt: skip
            except JobInterruptedError:
                log.debug("merging small fragments: interrupted for a save")
                return False
            except JOB_FAILURES as exc:  # more fragments to open until the next optimize
                log_failure(log, "merging small fragments failed", exc)
                return False
            log.debug("merged the small fragments of %s (%s)", ", ".join(tables), small)
            return True

    @contextmanager
    def _saves_may_interrupt(self) -> Iterator[None]:
        """The child jobs run inside may be killed for a waiting save (``_may_interrupt``)."""
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False

    def _may_interrupt(self) -> bool:
        """Whether a child job should stop now: a save waits, and the last job was not
        interrupted already (so each other one runs to its end, however often saves come)."""
        return self._interruptible and not self._interrupted and self.save_waits()

    def settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds while ``optimize`` runs a big store's maintenance
        in child processes; True once none runs. Phase 2 waits here before each model
        batch: the model's working memory beside such a child would add up, and both
        compete for the same cores anyway."""
        return self._idle.wait(timeout)

    def optimize(self, *, cleanup: bool = True) -> None:
        """Compact small fragments, fold new rows into the indexes (one segment per index),
        and (``cleanup``) prune the versions replaced more than ``access.keep_versions``
        seconds ago (see ``_optimize_searched_table`` and ``Versions.prune``)."""
        db = self._db
        with db.write_lock:
            here = in_process(db)
            if not here:
                self._idle.clear()
            try:
                self._indexes.ensure()
                for name in SEARCHED_TABLES:
                    self._optimize_searched_table(name, here)
                for name in UPKEPT_TABLES:
                    db.table(name).optimize(cleanup_older_than=_NO_CLEANUP)
                if cleanup:
                    self._versions.prune(timedelta(seconds=db.access.keep_versions))
                    self._versions.pruned = None  # what this optimize replaced waits for its window
            finally:
                self._idle.set()
            db.changes.written = db.changes.added = db.changes.rewritten = 0
            db.changes.folded = (0, 0)
            db.changes.last_optimize = time.monotonic()
        # compaction and merges give the indexes new files: load them now, not piece by
        # piece in the searches that come first. The readers start afresh: their caches
        # held the replaced indexes' pages, which no search reads again
        db.clear_readers()
        if not self._indexes.keep_warm:  # a process that does not search (see ``keep_warm``)
            return
        try:
            self._indexes.prewarm()
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
        self._db.table(PROJECTS).count_rows()  # the runtime starts with the first query
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

        dataset = self._db.dataset(CHUNKS)
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
                nearest={"column": "embedding", "q": self._db.placeholder, "k": 1},
                with_row_id=True,
            ),
        )
        for read in reads:
            try:
                read()
            except (OSError, RuntimeError, ValueError):  # no index yet, an empty table
                log.debug("starting the read runtime", exc_info=True)

    def fold_new_rows(self, *, force: bool = False, everything: bool = False, rewritten: bool = True) -> bool:
        """Add the rows added or rewritten since the last fold to the existing scalar and
        full-text indexes as a delta segment, without compaction, once there are enough of
        them (see ``FOLD_ROWS``); True when it folded. ``force`` (the end of an index run)
        folds once ``FORCED_FOLD_ROWS`` wait, ``everything`` (the end of a run that folded
        before) whatever waits. Without ``rewritten`` only the rows phase 1 added count
        (the end of a saved file's phase 1 waits for no fold of phase 2's rows: phase 2
        folds those itself). Queries read the tables meanwhile; the next optimize merges
        the segments."""
        db, changes = self._db, self._db.changes
        with db.write_lock:
            added = changes.added - changes.folded[0]
            pending = added + changes.rewritten - changes.folded[1] if rewritten else added
            if everything:
                wanted = 1
            elif force:
                wanted = FORCED_FOLD_ROWS
            else:
                wanted = max(FOLD_ROWS, sum(changes.folded))
            if pending < wanted:
                return False
            here = in_process(db)
            try:
                for name in SEARCHED_TABLES:
                    indexes = self._indexes.folded(name)
                    if indexes:
                        uri = db.table(name).uri
                        args = [uri, list(indexes), 0]
                        what = f"updating the indexes of {uri}"
                        options = db.access.lance_options()
                        with self._saves_may_interrupt():
                            run_job(
                                "optimize_indices", args, options, here, what, interrupt=self._may_interrupt
                            )
            except JobInterruptedError:
                log.debug("folding new rows into the indexes: interrupted for a save")
                self._interrupted = True
                return False
            except JOB_FAILURES as exc:
                # the rows stay found (scanned) until the optimize folds them in
                log_failure(log, "folding new rows into the indexes failed", exc)
                # tried again once as many rows wait
                changes.folded = (changes.added, changes.rewritten)
                return False
            changes.folded = (changes.added, changes.rewritten)
            self._interrupted = False
            return True

    def adopt_unindexed_rows(self) -> None:
        """Count rows an earlier process left outside the indexes as changed (so the next
        ``maybe_optimize`` folds them in; the counter starts at 0 in every process)."""
        unindexed = self._indexes.unindexed_rows()
        changes = self._db.changes
        changes.written = max(changes.written, unindexed)
        changes.added = max(changes.added, unindexed)

    def threshold(self, *, quiet: bool = False) -> int:
        """Rows that may change before ``maybe_optimize`` folds them in: a share of the chunk
        table (``OPTIMIZE_SHARE``, or ``OPTIMIZE_QUIET_SHARE`` when ``quiet``: nothing else is
        waiting for the writer), at least ``OPTIMIZE_MIN_ROWS`` (``OPTIMIZE_QUIET_MIN_ROWS``)
        and at most ``OPTIMIZE_AFTER_ROWS``."""
        share, floor = OPTIMIZE_SHARE, OPTIMIZE_MIN_ROWS
        if quiet:
            share, floor = OPTIMIZE_QUIET_SHARE, OPTIMIZE_QUIET_MIN_ROWS
        return min(OPTIMIZE_AFTER_ROWS, max(floor, int(share * self._db.table(CHUNKS).count_rows())))

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
        a saved file skip this step; a first index, a long phase 2 or a long trickle of
        edits triggers it (``rows`` overrides ``threshold``; ``quiet`` lowers it for
        an idle writer). Missing indexes (a new, small store) are always created.

        ``settle`` (an index run ended) also optimizes once the indexes miss
        ``SETTLE_MIN_ROWS`` rows, ``quiet`` once they miss ``OPTIMIZE_QUIET_MIN_ROWS``,
        however few rows were written: the rows a run's last writes left outside the vector
        and scalar indexes cost every search until the next optimize. Fewer are folded in
        (``fold_new_rows``). Not while a run writes: each write would pay for it.
        """
        changes = self._db.changes
        if not changes.written:
            return False
        limit = self.threshold(quiet=quiet) if rows is None else rows
        missed = OPTIMIZE_QUIET_MIN_ROWS if quiet else SETTLE_MIN_ROWS
        if (
            changes.written >= limit
            or time.monotonic() - changes.last_optimize >= seconds
            or ((quiet or settle) and self._indexes.unindexed_rows() >= missed)
        ):
            try:
                with self._saves_may_interrupt():
                    self.optimize()
            except JobInterruptedError:  # its changes stay counted: the next call does it
                log.debug("an optimize was interrupted for a save")
                self._interrupted = True
                return False
            self._interrupted = False
            return True
        if not self._indexes.complete:
            self._indexes.ensure()
        # the end of a run folds in its last rows (phase 2 rewrites every row it gives a
        # vector) once ``FORCED_FOLD_ROWS`` wait
        self.fold_new_rows(force=settle)
        return False
