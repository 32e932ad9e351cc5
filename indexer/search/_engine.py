"""Hybrid search over chunks and documents.

Chunk granularity: nearest chunk vectors and BM25 chunk matches (both prefiltered by the
metadata filter), plus an exact-identifier list, fused by reciprocal rank; the whole
candidate pool is ranked, then paged, then grouped by file.

Document granularity: files ranked by fusing the file's best chunk in the chunk ranking
with the document vector and document BM25; each returned file carries its best chunks in
that chunk ranking (a file short of them there is ranked within itself by vector
similarity and term overlap).
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from indexer.embed import Embedder
from indexer.errors import ValidationError
from indexer.models import ChunkFilter, Document, Project, StoredChunk
from indexer.search._fusion import Ranked, Scored, fuse, fuse_scores
from indexer.search._lexical import exact_identifiers, fts_query, is_identifier_query
from indexer.search._options import SearchOptions, to_filter, validate_options
from indexer.search._results import ChunkHit, DocumentHit, FileGroup, SearchResponse
from indexer.store import Candidate, Store

__all__ = ["Searcher", "fuse_chunks", "to_hit"]

_WORD = re.compile(r"[a-z0-9]+")
#: Candidates taken from each list (min-max normalisation runs over these).
CANDIDATES = 100
#: Weight of the whole-document signals next to the best-chunk signal (document granularity).
_DOC_SIGNAL_WEIGHT = 0.5


class Searcher:
    """Runs searches against one store with one model; safe to share between threads."""

    def __init__(
        self, store: Store, embedder: Embedder, known_languages: frozenset[str] | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.known_languages = known_languages
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lode-search")
        self._vectors: OrderedDict[str, Future[np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the query threads."""
        self._pool.shutdown(wait=False)

    # ---- shared pieces ----------------------------------------------------------------
    def query_vector(self, text: str) -> np.ndarray:
        """The query's embedding, computed once even when several threads ask at the same time
        (the last few hundred queries are remembered)."""
        with self._lock:
            known = self._vectors.get(text)
            if known is None:
                known = Future()
                self._vectors[text] = known
                owner = True
                if len(self._vectors) > 256:
                    self._vectors.popitem(last=False)
            else:
                owner = False
        if owner:
            try:
                known.set_result(self.embedder.embed_queries([text])[0])
            except BaseException as exc:
                known.set_exception(exc)
                with self._lock:
                    self._vectors.pop(text, None)
        vector: np.ndarray = known.result()
        return vector

    def resolve_projects(self, refs: Sequence[str], field: str = "projects") -> list[Project]:
        """Projects named by id or name (all when ``refs`` is empty)."""
        projects = self.store.list_projects()
        if not refs:
            return projects
        by_ref = {p.id: p for p in projects} | {p.name: p for p in projects}
        unknown = [r for r in refs if r not in by_ref]
        if unknown:
            raise ValidationError(field, f"unknown project(s) {unknown}")
        return list({by_ref[r].id: by_ref[r] for r in refs}.values())

    def candidate_calls(
        self, kind: str, mode: str, query: str, flt: ChunkFilter, k: int, *, details: bool = True
    ) -> dict[str, Callable[[], list[Candidate]]]:
        """The store queries ``mode`` needs: ``semantic`` (vectors) and/or ``lexical`` (BM25);
        without ``details`` chunk candidates carry ids only (see ``Store.vector_candidates``)."""
        calls: dict[str, Callable[[], list[Candidate]]] = {}
        if mode in ("hybrid", "semantic"):
            # the query is embedded inside the pool thread, while the full-text queries run
            calls["semantic"] = lambda: self.store.vector_candidates(
                kind,  # type: ignore[arg-type]
                self.query_vector(query),
                flt,
                k,
                details=details,
            )
        if mode in ("hybrid", "lexical"):
            text = fts_query(query)
            calls["lexical"] = lambda: self.store.text_candidates(
                kind,  # type: ignore[arg-type]
                text,
                flt,
                k,
                details=details,
            )
            if kind == "chunks":
                calls["name"] = lambda: self.store.text_candidates(
                    "chunks", text, flt, k, "name_text", details=details
                )
        return calls

    def project_scope(self, projects: Sequence[Project]) -> tuple[str, ...]:
        """The project ids a filter names: none when ``projects`` are all the store has
        (a condition that admits every row still costs every query its evaluation)."""
        ids = tuple(p.id for p in projects)
        every = {p.id for p in self.store.list_projects()}
        return () if every and every <= set(ids) else ids

    def gather(self, calls: dict[str, Callable[[], Any]]) -> dict[str, Any]:
        """Run independent store queries at once (LanceDB releases the GIL); never nested."""
        futures = {name: self._pool.submit(call) for name, call in calls.items()}
        return {name: f.result() for name, f in futures.items()}

    # ---- entry point -------------------------------------------------------------------
    def search(self, opts: SearchOptions) -> SearchResponse:
        """Run one search; a ValidationError names the bad field."""
        started = time.perf_counter()
        validate_options(opts, self.known_languages)
        projects = self.resolve_projects(opts.projects)
        names = {p.id: p.name for p in projects}
        flt = to_filter(opts, self.project_scope(projects))
        if opts.mode != "lexical":
            # embed first, alone: on a small machine the model competes for the same cores as
            # the full-text queries, and the vector query (the longest chain) waits for it
            self.query_vector(opts.query)
        if opts.granularity == "chunk":
            response = self._chunk_search(opts, flt, names)
        else:
            response = self._document_search(opts, flt, names)
        coverage = {pid: round(self.store.semantic_coverage(pid), 4) for pid in names}
        warnings = list(response.warnings)
        if opts.mode != "lexical" and any(v < 1.0 for v in coverage.values()):
            warnings.append("semantic index incomplete: vector results cover only the embedded chunks")
        took = round((time.perf_counter() - started) * 1000, 2)
        return replace(response, semantic_coverage=coverage, warnings=tuple(warnings), took_ms=took)

    # ---- chunk granularity -----------------------------------------------------------
    def rank_chunks(self, opts: SearchOptions, flt: ChunkFilter, k: int) -> list[tuple[Candidate, float]]:
        """The fused ranking of the whole chunk candidate pool: (candidate, score in [0, 1]);
        candidates carry ids only unless the query names an identifier."""
        # a chunk's name and definitions only matter to the exact-identifier list
        details = bool(exact_identifiers(opts.query))
        found = self.gather(self.candidate_calls("chunks", opts.mode, opts.query, flt, k, details=details))
        return fuse_chunks(opts.query, found)

    def _chunk_search(self, opts: SearchOptions, flt: ChunkFilter, names: dict[str, str]) -> SearchResponse:
        k = min(1000, max(CANDIDATES, (opts.offset + opts.limit) * 3))
        ranked = self.rank_chunks(opts, flt, k)
        page = ranked[opts.offset : opts.offset + opts.limit]
        hits = self.fetch_hits([(c, s) for c, s in page], names)
        groups: OrderedDict[str, list[ChunkHit]] = OrderedDict()
        for hit in hits:
            groups.setdefault(hit.file_id, []).append(hit)
        file_groups = [
            FileGroup(
                file_id=fid,
                file_path=chunks[0].file_path,
                project_id=chunks[0].project_id,
                project=chunks[0].project,
                total_relevance=_aggregate(chunks),
                chunks=tuple(chunks),
            )
            for fid, chunks in groups.items()
        ]
        file_groups.sort(key=lambda g: (-g.total_relevance, g.file_path))
        return SearchResponse(
            query=opts.query,
            mode=opts.mode,
            granularity="chunk",
            offset=opts.offset,
            limit=opts.limit,
            total=len(ranked),
            has_more=len(ranked) > opts.offset + opts.limit,
            groups=tuple(file_groups),
        )

    def fetch_hits(self, ranked: Sequence[tuple[Candidate, float]], names: dict[str, str]) -> list[ChunkHit]:
        """Hits for ranked candidates, in rank order (chunks gone meanwhile are left out)."""
        found = {c.id: c for c in self.store.get_chunks_at([(c.id, c.row_id) for c, _ in ranked])}
        return [to_hit(found[c.id], score, names) for c, score in ranked if c.id in found]

    # ---- document granularity ----------------------------------------------------------
    def _document_search(
        self, opts: SearchOptions, flt: ChunkFilter, names: dict[str, str]
    ) -> SearchResponse:
        need = opts.offset + opts.file_limit
        k = min(600, max(60, need * 6))
        calls = {
            f"chunk_{n}": c
            for n, c in self.candidate_calls("chunks", opts.mode, opts.query, flt, k * 4).items()
        }
        if not flt.has_chunk_conditions:
            doc_calls = self.candidate_calls("documents", opts.mode, opts.query, flt, k)
            calls.update({f"document_{n}": c for n, c in doc_calls.items()})
        found = self.gather(calls)
        chunk_ranked = fuse_chunks(opts.query, {n[6:]: v for n, v in found.items() if n.startswith("chunk_")})
        best_files = list(dict.fromkeys(c.file_id for c, _ in chunk_ranked))
        lists = {"chunks": Ranked(best_files)}
        for name in ("document_semantic", "document_lexical"):
            if name in found:
                lists[name] = Ranked([c.id for c in found[name]], _DOC_SIGNAL_WEIGHT)
        ranked = fuse(lists)
        page = ranked[opts.offset : need]
        docs, per_file = self._page_documents(opts, flt, [i for i, _ in page], chunk_ranked, names)
        hits = tuple(
            DocumentHit(
                id=doc_id,
                file_path=docs[doc_id].file_path,
                project_id=docs[doc_id].project_id,
                project=names.get(docs[doc_id].project_id, ""),
                relevance_score=round(score, 6),
                chunk_count=docs[doc_id].chunk_count,
                languages=docs[doc_id].languages,
                primary_language=docs[doc_id].primary_language,
                chunks=tuple(per_file.get(doc_id, ())),
            )
            for doc_id, score in page
            if doc_id in docs
        )
        return SearchResponse(
            query=opts.query,
            mode=opts.mode,
            granularity="document",
            offset=opts.offset,
            limit=opts.file_limit,
            total=len(ranked),
            has_more=len(ranked) > need,
            documents=hits,
        )

    def _page_documents(
        self,
        opts: SearchOptions,
        flt: ChunkFilter,
        page: list[str],
        chunk_ranked: list[tuple[Candidate, float]],
        names: dict[str, str],
    ) -> tuple[dict[str, Document], dict[str, list[ChunkHit]]]:
        """The page's documents and each one's top chunks: its best entries in the fused chunk
        ranking; a file with fewer there than ``chunks_per_file`` (and more chunks) is ranked
        within the file by vector similarity and term overlap instead."""
        want = opts.chunks_per_file
        pooled: dict[str, list[tuple[Candidate, float]]] = {fid: [] for fid in page}
        for cand, score in chunk_ranked:
            if cand.file_id in pooled and len(pooled[cand.file_id]) < want:
                pooled[cand.file_id].append((cand, score))
        found = self.gather(
            {
                "docs": lambda: self.store.get_documents(page),
                "hits": lambda: self.fetch_hits([item for items in pooled.values() for item in items], names),
            }
        )
        docs = {d.id: d for d in found["docs"]}
        hits = {h.id: h for h in found["hits"]}
        per_file = {fid: [hits[c.id] for c, _ in items if c.id in hits] for fid, items in pooled.items()}
        short = [fid for fid in docs if len(pooled[fid]) < min(want, docs[fid].chunk_count)]
        if short:
            per_file.update(self._rank_files(opts, flt, short, names))
        return docs, per_file

    def _rank_files(
        self, opts: SearchOptions, flt: ChunkFilter, file_ids: list[str], names: dict[str, str]
    ) -> dict[str, list[ChunkHit]]:
        """The top chunks of each file, ranked within the file (every admitted chunk read)."""
        rows = self.store.chunks_with_vectors(replace(flt, file_ids=tuple(file_ids)))
        qvec = self.query_vector(opts.query) if opts.mode != "lexical" else None
        terms = set(_WORD.findall(fts_query(opts.query).lower()))
        by_file: dict[str, list[tuple[StoredChunk, np.ndarray | None]]] = {}
        for chunk, vec in rows:
            by_file.setdefault(chunk.file_id, []).append((chunk, vec))
        return {
            fid: [to_hit(c, s, names) for c, s in _rank_within_file(items, qvec, terms, opts.mode)][
                : opts.chunks_per_file
            ]
            for fid, items in by_file.items()
        }


def _aggregate(chunks: list[ChunkHit]) -> float:
    """A file's relevance in chunk results: its best chunk, plus a tenth of the others'
    scores, so the file of the best hit leads unless another has many strong hits."""
    scores = sorted((c.relevance_score for c in chunks), reverse=True)
    return round(scores[0] + 0.1 * sum(scores[1:]), 6)


#: Weights of the chunk candidate lists, tuned on the quality benchmark's corpora.
WEIGHTS = {"semantic": 0.7, "lexical": 0.4, "name": 0.2}
#: Weight of the exact-identifier list: strong for a query made of identifiers only
#: (``parseDocument``), light when a sentence merely mentions one.
IDENTIFIER_WEIGHT = (1.0, 0.1)


def fuse_chunks(query: str, found: dict[str, list[Candidate]]) -> list[tuple[Candidate, float]]:
    """Fuse the chunk candidate lists (semantic, lexical, name) and the exact-identifier list."""
    lists: dict[str, Scored] = {}
    pool: dict[str, Candidate] = {}
    for name, candidates in found.items():
        lists[name] = Scored([(c.id, c.score) for c in candidates], WEIGHTS.get(name, 0.5))
        for c in candidates:
            pool.setdefault(c.id, c)
    idents, only_identifiers = exact_identifiers(query), is_identifier_query(query)
    ident = _identifier_list(idents, list(pool.values()), include_definitions=only_identifiers)
    if ident:
        weight = IDENTIFIER_WEIGHT[0] if only_identifiers else IDENTIFIER_WEIGHT[1]
        lists["identifier"] = Scored(ident, weight)
    return [(pool[i], score) for i, score in fuse_scores(lists)]


def _rank_within_file(
    items: list[tuple[StoredChunk, np.ndarray | None]], qvec: np.ndarray | None, terms: set[str], mode: str
) -> list[tuple[StoredChunk, float]]:
    lists: dict[str, Ranked] = {}
    by_id = {c.id: c for c, _ in items}
    embedded = [(c, v) for c, v in items if v is not None]
    if qvec is not None and embedded:
        sims = np.stack([v for _, v in embedded]) @ qvec
        order = sorted(
            range(len(embedded)), key=lambda i: (-float(sims[i]), embedded[i][0].chunk.chunk_index)
        )
        lists["semantic"] = Ranked([embedded[i][0].id for i in order])
    if mode != "semantic":
        overlap = {c.id: len(terms & set(_WORD.findall(c.chunk.content.lower()))) for c, _ in items}
        matching = sorted(
            (c for c, _ in items if overlap[c.id] > 0), key=lambda c: (-overlap[c.id], c.chunk.chunk_index)
        )
        lists["lexical"] = Ranked([c.id for c in matching])
    fused = fuse(lists)
    ranked_ids = {i for i, _ in fused}
    rest = sorted((c for c, _ in items if c.id not in ranked_ids), key=lambda c: c.chunk.chunk_index)
    return [(by_id[i], s) for i, s in fused] + [(c, 0.0) for c in rest]


def _identifier_list(
    idents: tuple[str, ...], pool: list[Candidate], include_definitions: bool
) -> list[tuple[str, float]]:
    """Candidates named exactly like an identifier of the query (score 1), and, for an
    identifier-only query, candidates defining one (score 0.5)."""
    if not idents:
        return []
    wanted = set(idents)
    out: list[tuple[str, float]] = []
    for c in pool:
        if c.node_name in wanted:
            out.append((c.id, 1.0))
        elif include_definitions and wanted & set(c.definitions):
            out.append((c.id, 0.5))
    return out


def to_hit(stored: StoredChunk, score: float, names: dict[str, str]) -> ChunkHit:
    """A search hit from a stored chunk and its score."""
    c = stored.chunk
    return ChunkHit(
        id=stored.id,
        file_id=stored.file_id,
        file_path=stored.file_path,
        project_id=stored.project_id,
        project=names.get(stored.project_id, ""),
        chunk_index=c.chunk_index,
        content=c.content,
        start_line=c.start_line,
        end_line=c.end_line,
        language=c.language,
        node_type=c.node_type,
        node_name=c.node_name,
        parent_context=c.parent_context,
        scope_path=c.scope_path,
        relevance_score=round(score, 6),
    )
