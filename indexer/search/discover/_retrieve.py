"""Retrieval shared by broad discovery and semantic focus, for one request.

A ``Retriever`` embeds every query in one batch and answers candidate lists with few store
calls: one vector search for all queries at once, full-text search for the question (and,
if asked, its expansions), run in parallel with ``Searcher.gather``. Lists are remembered,
so a later stage asking for fewer candidates from the same projects reuses their prefix.
Vectors and chunk texts are loaded by id, only for the candidates that need them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from indexer.models import ChunkFilter, StoredChunk
from indexer.search._engine import Searcher
from indexer.search._lexical import fts_query
from indexer.search._ranking import fuse_chunks
from indexer.search.discover._models import ScoredChunk
from indexer.store import Candidate

__all__ = ["Retriever"]


class Retriever:
    """Candidates for a fixed set of queries, and the vectors and texts of candidate chunks."""

    def __init__(
        self,
        searcher: Searcher,
        queries: Sequence[str],
        vectors: np.ndarray | None = None,
        names: Mapping[str, str] | None = None,
        lexical_queries: int = 1,
    ) -> None:
        self.searcher = searcher
        self.queries = tuple(queries)
        self.vectors = (
            np.asarray(vectors, dtype=np.float32)
            if vectors is not None
            else searcher.embedder.embed_queries(list(self.queries))
        )
        self.names = dict(names or {})
        self.lexical_queries = min(lexical_queries, len(self.queries))
        self._semantic: dict[tuple[str, ...], tuple[int, list[list[Candidate]]]] = {}
        self._lexical: dict[tuple[int, tuple[str, ...]], tuple[int, list[Candidate]]] = {}
        self._vectors: dict[str, np.ndarray | None] = {}
        self._chunks: dict[str, StoredChunk | None] = {}

    # ---- candidate lists ----------------------------------------------------------------
    def fetch(self, project_ids: tuple[str, ...], k: int, lexical: bool = True) -> None:
        """Run (in parallel) the store queries not yet answered with at least ``k`` candidates."""
        store = self.searcher.store
        flt = ChunkFilter(project_ids=project_ids)
        calls: dict[str, Callable[[], Any]] = {}
        cached = self._semantic.get(project_ids)
        if cached is None or cached[0] < k:
            calls["semantic"] = functools.partial(store.search.vector_candidates_many, self.vectors, flt, k)
        for i in range(self.lexical_queries if lexical else 0):
            old = self._lexical.get((i, project_ids))
            if old is None or old[0] < k:
                text = fts_query(self.queries[i])
                calls[f"lexical/{i}"] = functools.partial(
                    store.search.text_candidates, "chunks", text, flt, k
                )
        for name, found in self.searcher.gather(calls).items():
            if name == "semantic":
                self._semantic[project_ids] = (k, found)
            else:
                self._lexical[(int(name.split("/")[1]), project_ids)] = (k, found)

    def candidates(
        self, project_ids: tuple[str, ...], k: int, lexical: bool = True
    ) -> dict[str, tuple[float, str]]:
        """chunk id → (best fused score over the queries in [0, 1], file id)."""
        self.fetch(project_ids, k, lexical)
        semantic = self._semantic[project_ids][1]
        best: dict[str, tuple[float, str]] = {}
        for i, query in enumerate(self.queries):
            lists = {"semantic": semantic[i][:k] if i < len(semantic) else []}
            if lexical and i < self.lexical_queries:
                lists["lexical"] = self._lexical[(i, project_ids)][1][:k]
            for cand, score in fuse_chunks(query, lists):
                if score > best.get(cand.id, (-1.0, ""))[0]:
                    best[cand.id] = (score, cand.file_id)
        return best

    # ---- vectors and texts -------------------------------------------------------------
    def load(self, ids: Iterable[str], texts: bool = True) -> None:
        """Fetch the vectors (and texts) of chunks not seen yet: one store call each, in parallel."""
        wanted = list(dict.fromkeys(ids))
        calls: dict[str, Callable[[], Any]] = {}
        need_vectors = [i for i in wanted if i not in self._vectors]
        need_texts = [i for i in wanted if i not in self._chunks] if texts else []
        if need_vectors:
            calls["vectors"] = functools.partial(self.searcher.store.vectors.of_chunks, need_vectors)
        if need_texts:
            calls["texts"] = functools.partial(self.searcher.store.chunks.get, need_texts)
        found = self.searcher.gather(calls)
        if "vectors" in found:
            self._vectors.update({i: found["vectors"].get(i) for i in need_vectors})
        if "texts" in found:
            stored = {c.id: c for c in found["texts"]}
            self._chunks.update({i: stored.get(i) for i in need_texts})

    def vector(self, chunk_id: str) -> np.ndarray | None:
        """A loaded chunk vector (None without one)."""
        return self._vectors.get(chunk_id)

    def similarity(self, vector: np.ndarray | None) -> float | None:
        """Best cosine similarity of a chunk vector to any query (None without a vector)."""
        if vector is None or not len(self.vectors):
            return None
        return round(float(np.max(self.vectors @ vector)), 6)

    def pool(
        self, project_ids: tuple[str, ...], k: int, origin: str, lexical: bool = True
    ) -> list[ScoredChunk]:
        """The fused candidates as id-only chunks with score and similarity, best first
        (their texts are loaded alongside their vectors; ``complete`` fills them in)."""
        best = self.candidates(project_ids, k, lexical)
        self.load(best)
        out = [
            ScoredChunk(
                "",
                "",
                "",
                0,
                0,
                score=round(score, 6),
                similarity=self.similarity(self.vector(cid)),
                id=cid,
                file_id=fid,
                origin=origin,
            )
            for cid, (score, fid) in best.items()
        ]
        out.sort(key=lambda c: (-c.score, c.key))
        return out

    def complete(self, chunks: Sequence[ScoredChunk]) -> list[ScoredChunk]:
        """The chunks with text and metadata filled in (chunks deleted meanwhile are left out)."""
        self.load((c.id for c in chunks), texts=True)
        out = []
        for chunk in chunks:
            stored = self._chunks.get(chunk.id)
            if stored is not None:
                out.append(self.scored(stored, chunk.score, chunk.origin, chunk.similarity))
        return out

    def scored(
        self, stored: StoredChunk, score: float, origin: str, similarity: float | None = None
    ) -> ScoredChunk:
        """A ``ScoredChunk`` from a stored chunk."""
        c = stored.chunk
        return ScoredChunk(
            project=self.names.get(stored.project_id, stored.project_id),
            file_path=stored.file_path,
            content=c.content,
            start_line=c.start_line,
            end_line=c.end_line,
            chunk_index=c.chunk_index,
            score=round(score, 6),
            similarity=similarity,
            id=stored.id,
            file_id=stored.file_id,
            project_id=stored.project_id,
            language=c.language,
            node_type=c.node_type,
            node_name=c.node_name,
            origin=origin,
        )

    def neighbours(
        self, hits: Sequence[ScoredChunk], window: int
    ) -> dict[tuple[str, str], list[ScoredChunk]]:
        """Chunks within ``window`` positions of each hit, per (project, path), in one store call."""
        if window <= 0 or not hits:
            return {}
        spans = [(h.file_id, h.chunk_index - window, h.chunk_index + window) for h in hits]
        out: dict[tuple[str, str], list[ScoredChunk]] = {}
        for stored in self.searcher.store.chunks.windows(spans):
            chunk = self.scored(stored, 0.0, "context")
            out.setdefault((chunk.project, chunk.file_path), []).append(chunk)
        return out
