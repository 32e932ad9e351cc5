"""Hybrid search over chunks and documents.

Chunk granularity: nearest chunk vectors and BM25 chunk matches (both prefiltered by the
metadata filter), plus, for a query naming something, the chunks defining those names
(the symbol index's, under the same filter) in an identifier list, fused (``_ranking``); the pool is then
weighed by role and its split units folded (``_priors``), paged, and grouped by file in
the order of each file's best chunk.

Document granularity: files in the order of their best chunk in that ranking (the
whole-document lists join only when ``RankingConfig.document_signal_weight`` is set);
each returned file carries its best chunks in that chunk ranking (a file short of them
there is ranked within itself by vector similarity and term overlap).

Without a query text, ``has_definitions`` / ``has_references`` list what they name.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from indexer.embed import Embedder
from indexer.errors import NotFoundError
from indexer.limits import quote_items
from indexer.models import ChunkFilter, Document, FileChunk, Project
from indexer.search._fusion import Ranked, fuse
from indexer.search._lexical import exact_identifiers, fts_query, named_identifiers
from indexer.search._options import SearchOptions, relative_path_globs, to_filter, validate_options
from indexer.search._priors import Folded, apply_priors, wanted_roles
from indexer.search._ranking import (
    DEFINITION_LIST,
    Ranking,
    RankingConfig,
    definition_score,
    fuse_chunks,
    query_terms,
    rank_within_file,
    to_hit,
)
from indexer.search._results import ChunkHit, DocumentHit, FileGroup, SearchResponse
from indexer.store import Candidate, Detail, Store

__all__ = ["Searcher"]

#: Candidates taken from each list (min-max normalisation runs over these).
CANDIDATES = 100
#: Definitions of a query's names read from the symbol index (a name defined more often is cut).
_MAX_DEFINITIONS = 1000
#: What reading a row id of an older version of the chunk table can raise (LanceDB reports
#: a row id in a fragment a compaction removed as one of these).
_MOVED_ROWS = (OSError, RuntimeError, ValueError)


class Searcher:
    """Runs searches against one store with one model; safe to share between threads."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        known_languages: frozenset[str] | None = None,
        ranking: RankingConfig | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.known_languages = known_languages
        self.ranking = ranking or RankingConfig()
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
        """Projects named by id or name (all when ``refs`` is empty); an unknown one is a
        NotFoundError naming ``field``."""
        projects = self.store.projects.all()
        if not refs:
            return projects
        by_ref = {p.id: p for p in projects} | {p.name: p for p in projects}
        unknown = [r for r in refs if r not in by_ref]
        if unknown:
            raise NotFoundError(f"unknown project(s) {quote_items(unknown)}", field)
        return list({by_ref[r].id: by_ref[r] for r in refs}.values())

    def candidate_calls(
        self,
        kind: str,
        mode: str,
        query: str,
        flt: ChunkFilter,
        k: int,
        *,
        detail: Detail = "full",
        embedded_only: bool = True,
        version: int | None = None,
    ) -> dict[str, Callable[[], list[Candidate]]]:
        """The store queries ``mode`` needs: ``semantic`` (vectors) and/or ``lexical`` (BM25,
        and for chunks the unit names and the chunks defining a name the query asks for);
        ``detail``, ``embedded_only`` and ``version`` as for ``Search.vector_candidates``."""
        calls: dict[str, Callable[[], list[Candidate]]] = {}
        if mode in ("hybrid", "semantic"):
            # ``gather(..., embed=query)`` embeds it first; other callers embed it here
            calls["semantic"] = lambda: self.store.search.vector_candidates(
                kind,  # type: ignore[arg-type]
                self.query_vector(query),
                flt,
                k,
                detail=detail,
                embedded_only=embedded_only,
                version=version,
            )
        if mode in ("hybrid", "lexical"):
            text = fts_query(query)
            calls["lexical"] = lambda: self.store.search.text_candidates(
                kind,  # type: ignore[arg-type]
                text,
                flt,
                k,
                detail=detail,
                version=version,
            )
            if kind == "chunks":
                calls["name"] = lambda: self.store.search.text_candidates(
                    "chunks", text, flt, k, "name_text", detail=detail, version=version
                )
            names = named_identifiers(query) if kind == "chunks" else ()
            if names:
                calls[DEFINITION_LIST] = lambda: self.defining_chunks(names, flt, detail, version)
        return calls

    def defining_chunks(
        self, names: Sequence[str], flt: ChunkFilter, detail: Detail = "full", version: int | None = None
    ) -> list[Candidate]:
        """The chunks the symbol index says define one of ``names``, admitted by ``flt``,
        scored by ``definition_score``."""
        found = self.store.symbols.definitions(
            names, languages=flt.languages, project_ids=flt.project_ids, limit=_MAX_DEFINITIONS
        )
        scores: dict[str, float] = {}
        for symbol in found:
            if symbol.chunk_id:
                scores[symbol.chunk_id] = max(definition_score(symbol), scores.get(symbol.chunk_id, 0.0))
        return self.store.search.chunk_candidates(scores, flt, detail=detail, version=version)

    def project_scope(self, projects: Sequence[Project]) -> tuple[str, ...]:
        """The project ids a filter names: none when ``projects`` are all the store has
        (a condition that admits every row still costs every query its evaluation)."""
        ids = tuple(p.id for p in projects)
        every = {p.id for p in self.store.projects.all()}
        return () if every and every <= set(ids) else ids

    def gather(self, calls: dict[str, Callable[[], Any]], embed: str | None = None) -> dict[str, Any]:
        """Run independent store queries at once (LanceDB releases the GIL); never nested.

        With ``embed``, this thread embeds that query while the other calls run, and the
        calls named ``…semantic`` (which need its vector) start once it is done (a lexical
        search has none: nothing is embedded).
        """
        later = [name for name in calls if name.endswith("semantic")] if embed is not None else []
        futures = {name: self._pool.submit(call) for name, call in calls.items() if name not in later}
        if embed is not None and later:
            self.query_vector(embed)
            futures.update({name: self._pool.submit(calls[name]) for name in later})
        return {name: futures[name].result() for name in calls}

    # ---- entry point -------------------------------------------------------------------
    def search(self, opts: SearchOptions) -> SearchResponse:
        """Run one search; a ValidationError names the bad field."""
        started = time.perf_counter()
        validate_options(opts, self.known_languages)
        projects = self.resolve_projects(opts.projects)
        opts = relative_path_globs(opts, [p.root for p in projects])
        names = {p.id: p.name for p in projects}
        flt = to_filter(opts, self.project_scope(projects))
        if opts.granularity == "chunk":
            response = self._chunk_search(opts, flt, names)
        else:
            response = self._document_search(opts, flt, names)
        coverage = {pid: round(self.store.vectors.coverage(pid), 4) for pid in names}
        warnings = list(response.warnings)
        if opts.scope_depth is not None and opts.scope_depth[0] > opts.scope_depth[1]:
            warnings.append(f"scope_depth {list(opts.scope_depth)} is an empty range: no chunk matches it")
        if opts.mode != "lexical" and any(v < 1.0 for v in coverage.values()):
            warnings.append("semantic index incomplete: vector results cover only the embedded chunks")
        waiting = sum(self.store.documents.count_outdated(pid) for pid in names)
        if waiting:
            warnings.append(
                f"{waiting} files await re-chunking after an upgrade: their symbols and roles are "
                "incomplete until `lode upgrade` or the next `lode index` (a running `lode serve` "
                "does it)"
            )
        took = round((time.perf_counter() - started) * 1000, 2)
        return replace(response, semantic_coverage=coverage, warnings=tuple(warnings), took_ms=took)

    # ---- chunk granularity -----------------------------------------------------------
    def rank_chunks(
        self,
        opts: SearchOptions,
        flt: ChunkFilter,
        k: int,
        detail: Detail | None = None,
        *,
        embedded_only: bool = True,
        version: int | None = None,
    ) -> Ranking:
        """The ranking of the whole chunk candidate pool: (candidate, score in [0, 1]), the
        lists fused, the role prior applied and split units folded (``prioritize``).

        Candidates carry ids only (``detail`` unset) unless the query holds an identifier,
        whose list also matches each chunk's name and definitions (a one-word query's list
        is the symbol index's definitions alone, keyed like the other lists);
        ``embedded_only`` and ``version`` as for ``Search.vector_candidates``.
        """
        if not opts.query.strip():  # has_definitions / has_references alone
            return self.prioritize(opts, self._named(opts, flt, k, version), version)
        if detail is None:
            detail = "full" if exact_identifiers(opts.query) else "id"
        calls = self.candidate_calls(
            "chunks",
            opts.mode,
            opts.query,
            flt,
            k,
            detail=detail,
            embedded_only=embedded_only,
            version=version,
        )
        found = self.gather(calls, embed=opts.query)
        weights = self.ranking.weights_for(opts.query)
        return self.prioritize(opts, fuse_chunks(opts.query, found, weights), version)

    def _named(
        self, opts: SearchOptions, flt: ChunkFilter, k: int, version: int | None = None
    ) -> list[tuple[Candidate, float]]:
        """Without a query text, the chunks ``has_definitions`` / ``has_references`` name:
        the unit named so first (1.0), then chunks defining it (0.8), then those using it."""
        wanted = set(opts.has_definitions)
        scored = []
        for cand in self.store.search.admitted_chunks(flt, max(k, 1000), version):
            if cand.node_name in wanted:
                score = 1.0
            elif wanted & set(cand.definitions):
                score = 0.8
            else:
                score = 0.5
            scored.append((cand, score))
        scored.sort(key=lambda pair: (-pair[1], pair[0].key))
        return scored

    def prioritize(
        self, opts: SearchOptions, fused: list[tuple[Candidate, float]], version: int | None = None
    ) -> Ranking:
        """``fused`` with the role prior applied (unless the query asks for those roles) and
        the pieces of each split unit folded into its best one, best first."""
        config = self.ranking
        if not fused or (not config.fold_units and not config.role_prior):
            return Ranking(fused)
        facts = self.store.search.chunk_facts([c for c, _ in fused], version)
        if not config.fold_units:  # every chunk its own unit
            facts = {k: replace(f, unit=(k,)) for k, f in facts.items()}
        wanted = wanted_roles(opts.query, opts.roles, opts.path_include)
        ranked, folded = apply_priors(fused, facts, wanted, config.role_prior)
        return Ranking(ranked, folded)

    def _chunk_search(self, opts: SearchOptions, flt: ChunkFilter, names: dict[str, str]) -> SearchResponse:
        k = min(1000, max(CANDIDATES, (opts.offset + opts.limit) * 3))
        # an identifier's (or a name filter's) candidates carry ids and names, the rest row
        # ids only; both are ranked in one version of the chunk table
        by_id = exact_identifiers(opts.query) or not opts.query.strip()
        pinned = self._rank_page_by_rows(opts, flt, k, names, detail=None if by_id else "row")
        if pinned is not None:
            total, hits = pinned
        else:
            ranking = self.rank_chunks(opts, flt, k)
            total = len(ranking.ranked)
            page = ranking.ranked[opts.offset : opts.offset + opts.limit]
            hits = self.fetch_hits(page, names, folded=ranking.folded)
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
            total=total,
            has_more=total > opts.offset + opts.limit,
            groups=tuple(file_groups),
        )

    def _rank_page_by_rows(
        self,
        opts: SearchOptions,
        flt: ChunkFilter,
        k: int,
        names: dict[str, str],
        attempts: int = 2,
        detail: Detail | None = "row",
    ) -> tuple[int, list[ChunkHit]] | None:
        """Rank by row id (candidates of ``detail``, as ``rank_chunks`` takes it) and read
        only the page's rows, every query pinned to one version of the chunk table (a commit
        can move or delete rows, so row ids from two versions cannot be fused or read):
        (pool size, hits), or None when every attempt failed to read its version (its files
        removed meanwhile, which a cleanup does an hour after at most)."""
        for _ in range(attempts):
            version = self.store.search.chunk_table_version()
            embedded_only = self._needs_embedded_filter(opts, version)
            try:
                ranking = self.rank_chunks(
                    opts, flt, k, detail=detail, embedded_only=embedded_only, version=version
                )
                page = ranking.ranked[opts.offset : opts.offset + opts.limit]
                hits = self.fetch_hits(page, names, version, folded=ranking.folded)
            except _MOVED_ROWS:
                continue
            return len(ranking.ranked), hits
        return None

    def _needs_embedded_filter(self, opts: SearchOptions, version: int) -> bool:
        """Whether chunk vector lists of a search pinned to ``version`` of the chunk table
        need the ``embedded = true`` prefilter (not when that version is fully embedded)."""
        return opts.mode == "lexical" or not self.store.search.all_embedded_at(version)

    def fetch_hits(
        self,
        ranked: Sequence[tuple[Candidate, float]],
        names: dict[str, str],
        version: int | None = None,
        folded: Mapping[str, Folded] | None = None,
    ) -> list[ChunkHit]:
        """Hits for ranked candidates, in rank order (chunks gone meanwhile are left out),
        each with its unit's whole range when other pieces of it were ``folded`` into it.

        Candidates are read by row id in ``version`` of the chunk table, the version they
        were found in (those with an id by id where their row no longer holds them).
        """
        folded = folded or {}
        by_row = [c.row_id for c, _ in ranked if not c.id]
        at_rows = self.store.chunks.views_at_rows(by_row, version) if by_row else {}
        with_ids = [(c.id, c.row_id) for c, _ in ranked if c.id]
        by_id = {v.id: v for v in self.store.chunks.views(with_ids, version)} if with_ids else {}
        hits: list[ChunkHit] = []
        for c, score in ranked:
            view = by_id.get(c.id) if c.id else at_rows.get(c.row_id)
            if view is not None:
                hits.append(to_hit(view, score, names, folded.get(c.key)))
        return hits

    # ---- document granularity ----------------------------------------------------------
    def _document_search(
        self, opts: SearchOptions, flt: ChunkFilter, names: dict[str, str], attempts: int = 2
    ) -> SearchResponse:
        """Files ranked by their chunks and their document; without an identifier in the
        query, chunks are keyed by row id in one pinned version of the chunk table (as in
        ``_rank_page_by_rows``), else by id."""
        if opts.query.strip() and not exact_identifiers(opts.query):
            for _ in range(attempts):
                version = self.store.search.chunk_table_version()
                embedded_only = self._needs_embedded_filter(opts, version)
                try:
                    return self._rank_documents(
                        opts, flt, names, "file", embedded_only=embedded_only, version=version
                    )
                except _MOVED_ROWS:  # as in ``_rank_page_by_rows``
                    continue
        return self._rank_documents(opts, flt, names, "full")

    def _rank_documents(
        self,
        opts: SearchOptions,
        flt: ChunkFilter,
        names: dict[str, str],
        detail: Detail,
        *,
        embedded_only: bool = True,
        version: int | None = None,
    ) -> SearchResponse:
        """One page of files; ``embedded_only`` and ``version`` as for
        ``Search.vector_candidates`` (chunks)."""
        need = opts.offset + opts.file_limit
        k = min(600, max(60, need * 6))
        if not opts.query.strip():  # has_definitions / has_references alone
            return self._documents_page(opts, flt, names, self.rank_chunks(opts, flt, k * 4), {}, version)
        chunk_calls = self.candidate_calls(
            "chunks",
            opts.mode,
            opts.query,
            flt,
            k * 4,
            detail=detail,
            embedded_only=embedded_only,
            version=version,
        )
        calls = {f"chunk_{n}": c for n, c in chunk_calls.items()}
        if not flt.has_chunk_conditions and self.ranking.document_signal_weight > 0:
            doc_calls = self.candidate_calls("documents", opts.mode, opts.query, flt, k, detail="file")
            calls.update({f"document_{n}": c for n, c in doc_calls.items()})
        found = self.gather(calls, embed=opts.query)
        chunk_lists = {n[6:]: v for n, v in found.items() if n.startswith("chunk_")}
        fused = fuse_chunks(opts.query, chunk_lists, self.ranking.weights_for(opts.query))
        chunk_ranking = self.prioritize(opts, fused, version)
        documents = {n[9:]: v for n, v in found.items() if n.startswith("document_")}
        return self._documents_page(opts, flt, names, chunk_ranking, documents, version)

    def _documents_page(
        self,
        opts: SearchOptions,
        flt: ChunkFilter,
        names: dict[str, str],
        chunk_ranking: Ranking,
        documents: dict[str, list[Candidate]],
        version: int | None,
    ) -> SearchResponse:
        """Files in the order of their best chunk (its score theirs), or fused with the
        whole-document lists when those weigh anything; one page of them."""
        need = opts.offset + opts.file_limit
        best: dict[str, float] = {}
        for cand, score in chunk_ranking.ranked:
            best.setdefault(cand.file_id, score)
        weight = self.ranking.document_signal_weight
        if weight > 0 and documents:
            lists = {"chunks": Ranked(list(best))}
            lists.update({f"document_{n}": Ranked([c.id for c in v], weight) for n, v in documents.items()})
            ranked = fuse(lists)
        else:
            ranked = list(best.items())
        page = ranked[opts.offset : need]
        docs, per_file = self._page_documents(opts, flt, [i for i, _ in page], chunk_ranking, names, version)
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
                role=docs[doc_id].role,
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
        chunk_ranking: Ranking,
        names: dict[str, str],
        version: int | None = None,
    ) -> tuple[dict[str, Document], dict[str, list[ChunkHit]]]:
        """The page's documents and each one's top chunks: its best entries in the fused chunk
        ranking (found in ``version`` of the chunk table); a file with fewer there than
        ``chunks_per_file`` (and more chunks) is ranked within the file by vector similarity
        and term overlap instead."""
        want = opts.chunks_per_file
        pooled: dict[str, list[tuple[Candidate, float]]] = {fid: [] for fid in page}
        for cand, score in chunk_ranking.ranked:
            if cand.file_id in pooled and len(pooled[cand.file_id]) < want:
                pooled[cand.file_id].append((cand, score))
        found = self.gather(
            {
                "docs": lambda: self.store.documents.get(page),
                "hits": lambda: self.fetch_hits(
                    [item for items in pooled.values() for item in items],
                    names,
                    version,
                    chunk_ranking.folded,
                ),
            }
        )
        docs = {d.id: d for d in found["docs"]}
        per_file: dict[str, list[ChunkHit]] = {fid: [] for fid in pooled}
        for hit in found["hits"]:  # in pooled order
            if hit.file_id in per_file:
                per_file[hit.file_id].append(hit)
        short = [fid for fid in docs if len(pooled[fid]) < min(want, docs[fid].chunk_count)]
        if short:
            per_file.update(self._rank_files(opts, flt, short, names))
        return docs, per_file

    def _rank_files(
        self, opts: SearchOptions, flt: ChunkFilter, file_ids: list[str], names: dict[str, str]
    ) -> dict[str, list[ChunkHit]]:
        """The top chunks of each file, ranked within the file (every admitted chunk's text
        and vector read; the views of the top ones only)."""
        rows = self.store.chunks.for_ranking(replace(flt, file_ids=tuple(file_ids)))
        qvec = self.query_vector(opts.query) if opts.mode != "lexical" else None
        terms = query_terms(fts_query(opts.query))
        by_file: dict[str, list[FileChunk]] = {}
        for chunk in rows:
            by_file.setdefault(chunk.file_id, []).append(chunk)
        top = {
            fid: rank_within_file(items, qvec, terms, opts.mode)[: opts.chunks_per_file]
            for fid, items in by_file.items()
        }
        wanted = [(c.id, c.row_id) for ranked in top.values() for c, _ in ranked]
        views = {v.id: v for v in self.store.chunks.views(wanted)} if wanted else {}
        return {
            fid: [to_hit(views[c.id], s, names) for c, s in ranked if c.id in views]
            for fid, ranked in top.items()
        }


def _aggregate(chunks: list[ChunkHit]) -> float:
    """A file's relevance in chunk results: its best chunk's, so the groups follow the
    chunk ranking and the best hit is always first (summing a file's hits put a file of
    many middling hits above the best one: ~0.035 MRR@10 lost)."""
    return max(c.relevance_score for c in chunks)
