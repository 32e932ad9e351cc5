"""Repairing what an interrupted run left half-done: rows of another version of their file,
rows of no document, documents missing chunks, re-chunks stopped midway (write intents)."""

from __future__ import annotations

from collections import defaultdict

from indexer.store._files import FilesMixin, _chunked
from indexer.store._schema import CHUNKS, INTENTS, SYMBOLS
from indexer.store._sql import in_list, quote

__all__ = ["RepairMixin"]


class RepairMixin(FilesMixin):
    """``repair``: find the files an interrupted write left out of step, drop their rows."""

    def _intents(self, project_id: str) -> set[str]:
        table = self._t(INTENTS).search().where(f"project_id = {quote(project_id)}").select(["file_id"])
        return set(table.limit(None).to_arrow()["file_id"].to_pylist())

    def _file_hashes(self, table: str, project_id: str) -> tuple[dict[str, set[str]], dict[str, int]]:
        """file id → the ``file_hash`` values of its rows in ``table``, and its row count."""
        where = f"project_id = {quote(project_id)}"
        # through pylance: ~12 ms for 100k rows, ~8x less than lancedb's query builder
        found = self._dataset(table).to_table(columns=["file_id", "file_hash"], filter=where)
        grouped = found.group_by(["file_id", "file_hash"]).aggregate([("file_id", "count")])
        hashes: dict[str, set[str]] = defaultdict(set)
        counts: dict[str, int] = defaultdict(int)
        for file_id, file_hash, count in zip(
            grouped["file_id"].to_pylist(),
            grouped["file_hash"].to_pylist(),
            grouped["file_id_count"].to_pylist(),
            strict=True,
        ):
            hashes[file_id].add(file_hash)
            counts[file_id] += count
        return hashes, counts

    def repair(self, project_id: str) -> set[str]:
        """Undo what an interrupted run left half-done; return file paths to re-index.

        Rows of files a re-chunk was interrupted on (an intent left behind) are dropped.
        Orphan chunks and symbols (no document) are deleted. A document whose chunks or
        symbols carry another file hash, or that has fewer chunks than it records, is
        dropped so the file is indexed again from scratch.
        """
        seen, counts = self._file_hashes(CHUNKS, project_id)
        symbol_hashes, _ = self._file_hashes(SYMBOLS, project_id)
        interrupted = self._intents(project_id)
        states = self.document_states(project_id)
        by_id = {s.id: s for s in states.values()}
        orphans = sorted({fid for fid in (*seen, *symbol_hashes, *interrupted) if fid not in by_id})
        dirty = [
            s
            for s in states.values()
            if s.id in interrupted
            or seen.get(s.id, {s.content_hash}) != {s.content_hash}
            or symbol_hashes.get(s.id, {s.content_hash}) != {s.content_hash}
            or counts.get(s.id, 0) != s.chunk_count
        ]
        with self.write_unit(), self._write_lock:
            for part in _chunked(orphans):
                self._t(CHUNKS).delete(in_list("file_id", part))
                self._t(SYMBOLS).delete(in_list("file_id", part))
            self.delete_files([s.id for s in dirty])
            if interrupted:
                self._forget_intents(sorted(interrupted))
        return {s.file_path for s in dirty}
