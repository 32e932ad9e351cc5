"""Hybrid search over chunks and documents: the candidate lists and their ranking.

A search's candidate lists are the nearest chunk vectors and the BM25 chunk matches (both
prefiltered by the metadata filter), plus, for a query naming something, the chunks
defining those names (the symbol index's, under the same filter) in an identifier list,
fused (``_ranking``); the pool is then weighed by role and its split units folded
(``_priors``); ``_pages`` pages it at chunk or document granularity.

Exact terms (``SearchOptions.exact_terms``) narrow the filter to the chunks holding one of
them (``_terms``); every such chunk is in the pool, scaled by ``TERM_BOOST`` per term it
lacks, and none is folded. Without a query text, ``has_definitions`` / ``has_references``
(and exact terms) list what they admit.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np

from indexer.embed import Embedder
from indexer.errors import NotFoundError
from indexer.limits import quote_items
from indexer.models import ChunkFilter, Project
from indexer.search._cancel import raise_if_cancelled
from indexer.search._lexical import exact_identifiers, fts_query, named_identifiers
from indexer.search._matches import locate_hits
from indexer.search._options import (
    MAX_OFFSET,
    SearchOptions,
    relative_path_globs,
    to_filter,
    validate_options,
)
from indexer.search._pages import chunk_page, document_page
from indexer.search._priors import Folded, apply_priors, role_prior_for, wanted_roles
from indexer.search._ranking import (
    DEFINITION_LIST,
    Ranking,
    RankingConfig,
    definition_score,
    fuse_chunks,
    to_hit,
)
from indexer.search._results import ChunkHit, SearchResponse
from indexer.search._terms import find_terms
from indexer.store import Candidate, Detail, Store

__all__ = ["MAX_MATCHES", "TERM_BOOST", "Scope", "Searcher", "resolve_projects"]

#: Definitions of a query's names read from the symbol index (a name defined more often is cut).
_MAX_DEFINITIONS = 1000
#: A chunk's score is scaled by this per exact term it holds, over this per term asked for.
TERM_BOOST: Final = 1.5
#: Chunks holding exact terms that one search ranks (those holding the most of them).
MAX_MATCHES: Final = MAX_OFFSET


@dataclass(frozen=True, slots=True)
class Scope:
    """One search: its options, its metadata filter (projects resolved; narrowed to the
    chunks holding its exact terms), its projects' names, and the exact terms each of
    those chunks holds."""

    opts: SearchOptions
    flt: ChunkFilter
    names: dict[str, str]
    terms: dict[str, int] | None = None
    """Chunk id → how many distinct exact terms it holds (None without exact terms)."""


def resolve_projects(store: Store, refs: Sequence[str], field: str = "projects") -> list[Project]:
    """Projects named by id or name (all when ``refs`` is empty); an unknown one is a
    NotFoundError naming ``field``."""
    projects = store.projects.all()
    if not refs:
        return projects
    by_ref = {p.id: p for p in projects} | {p.name: p for p in projects}
    unknown = [r for r in refs if r not in by_ref]
    if unknown:
        raise NotFoundError(f"unknown project(s) {quote_items(unknown)}", field)
    return list({by_ref[r].id: by_ref[r] for r in refs}.values())


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
        raise_if_cancelled()
        later = [name for name in calls if name.endswith("semantic")] if embed is not None else []
        futures = {name: self._pool.submit(call) for name, call in calls.items() if name not in later}
        if embed is not None and later:
            self.query_vector(embed)
            raise_if_cancelled()  # the calls under way end on their own; their answers are dropped
            futures.update({name: self._pool.submit(calls[name]) for name in later})
        results = {name: futures[name].result() for name in calls}
        raise_if_cancelled()
        return results

    # ---- entry point -------------------------------------------------------------------
    def search(self, opts: SearchOptions) -> SearchResponse:
        """Run one search; a ValidationError names the bad field."""
        started = time.perf_counter()
        raise_if_cancelled()
        validate_options(opts, self.known_languages)
        projects = resolve_projects(self.store, opts.projects)
        opts = relative_path_globs(opts, [p.root for p in projects])
        names = {p.id: p.name for p in projects}
        scope = Scope(opts, to_filter(opts, self.project_scope(projects)), names)
        warnings: list[str] = []
        if opts.exact_terms:
            scope, warnings = self._term_scope(scope)
        response = (chunk_page if opts.granularity == "chunk" else document_page)(self, scope)
        response = locate_hits(response, {p.id: p.root for p in projects}, opts)
        coverage = {pid: round(self.store.vectors.coverage(pid), 4) for pid in names}
        warnings += response.warnings
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

    def _term_scope(self, scope: Scope) -> tuple[Scope, list[str]]:
        """``scope`` narrowed to the chunks holding its exact terms (the ``MAX_MATCHES``
        holding the most of them), and notes on how they were found."""
        matches = find_terms(self.store, scope.opts.exact_terms, scope.flt, self.gather)
        counts = matches.counts
        warnings = []
        if len(counts) > MAX_MATCHES:
            warnings.append(
                f"{len(counts)} chunks hold the exact terms: the {MAX_MATCHES} holding the most are ranked"
            )
            counts = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:MAX_MATCHES])
        if matches.scanned:
            warnings.append(
                f"exact term(s) {list(matches.scanned)} searched by scanning every chunk's text (slower)"
            )
        return replace(scope, flt=replace(scope.flt, chunk_ids=tuple(counts)), terms=counts), warnings

    # ---- ranking ---------------------------------------------------------------------
    def rank_chunks(
        self,
        scope: Scope,
        k: int,
        detail: Detail | None = None,
        *,
        embedded_only: bool = True,
        version: int | None = None,
    ) -> Ranking:
        """The ranking of the whole chunk candidate pool: (candidate, score in [0, 1]), the
        lists fused and ``prioritize``d.

        Candidates carry ids only (``detail`` unset) unless the query holds an identifier,
        whose list also matches each chunk's name and definitions (a one-word query's list
        is the symbol index's definitions alone, keyed like the other lists);
        ``embedded_only`` and ``version`` as for ``Search.vector_candidates``.
        """
        opts = scope.opts
        if not opts.query.strip():  # has_definitions / has_references / exact terms alone
            return self.prioritize(scope, self._named(scope, k, version), version)
        if detail is None:
            detail = "full" if exact_identifiers(opts.query) else "id"
        calls = self.candidate_calls(
            "chunks",
            opts.mode,
            opts.query,
            scope.flt,
            k,
            detail=detail,
            embedded_only=embedded_only,
            version=version,
        )
        return self.rank_pool(scope, self.gather(calls, embed=opts.query), version)

    def rank_pool(
        self, scope: Scope, found: dict[str, list[Candidate]], version: int | None = None
    ) -> Ranking:
        """The chunk candidate lists of ``scope``'s query fused and ``prioritize``d."""
        query = scope.opts.query
        return self.prioritize(scope, fuse_chunks(query, found, self.ranking.weights_for(query)), version)

    def _named(self, scope: Scope, k: int, version: int | None = None) -> list[tuple[Candidate, float]]:
        """Without a query text, the chunks the filter admits, those ``has_definitions``
        names first: the unit named so (1.0), then chunks defining it (0.8), then the others."""
        wanted = set(scope.opts.has_definitions)
        scored = []
        for cand in self.store.search.admitted_chunks(scope.flt, max(k, 1000), version):
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
        self, scope: Scope, fused: list[tuple[Candidate, float]], version: int | None = None
    ) -> Ranking:
        """``fused`` with the role prior applied (unless the query asks for those roles) and
        the pieces of each split unit folded into its best one, best first; with exact
        terms, every chunk holding one (``_with_terms``), none folded; then ``min_score``."""
        opts, config = scope.opts, self.ranking
        if scope.terms is not None:
            fused = self._with_terms(scope, fused, version)
        if not fused:
            return Ranking(fused)
        facts = self.store.search.chunk_facts([c for c, _ in fused], version)
        if not config.fold_units or scope.terms is not None:  # every chunk its own unit
            facts = {k: replace(f, unit=(k,)) for k, f in facts.items()}
        wanted = wanted_roles(opts.query, opts.roles, opts.path_include)
        # a header gives way to its members for a question, not for exact terms or no query
        header = config.header_prior if scope.terms is None and opts.query.strip() else 1.0
        prior = role_prior_for(opts.query, config.role_prior, config.report_prior)
        ranked, folded = apply_priors(fused, facts, wanted, prior, opts.query, header)
        if opts.min_score > 0:
            ranked = [(c, s) for c, s in ranked if s >= opts.min_score]
        return Ranking(ranked, folded, {k: f.file_id for k, f in facts.items()})

    def _with_terms(
        self, scope: Scope, fused: list[tuple[Candidate, float]], version: int | None
    ) -> list[tuple[Candidate, float]]:
        """``fused`` and every other chunk holding an exact term (score 0), each score scaled
        by ``TERM_BOOST`` per term the chunk holds over ``TERM_BOOST`` per term asked for."""
        terms = scope.terms or {}
        seen = {c.key for c, _ in fused}
        missing = {i: 0.0 for i in terms if i not in seen}
        if missing:
            fused = fused + [
                (c, 0.0) for c in self.store.search.chunk_candidates(missing, scope.flt, version=version)
            ]
        given = len(scope.opts.exact_terms)
        return [(c, s * TERM_BOOST ** (terms.get(c.key, given) - given)) for c, s in fused]

    def needs_embedded_filter(self, opts: SearchOptions, version: int) -> bool:
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
