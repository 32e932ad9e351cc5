"""One page of a search at each granularity, over the ranking ``Searcher`` builds.

Chunk granularity: the whole candidate pool ranked (``Searcher.rank_chunks``), one page of
it read and grouped by file in the order of each file's best chunk.

Document granularity: files in the order of their best chunk in that ranking (the
whole-document lists join only when ``RankingConfig.document_signal_weight`` is set);
each returned file carries its best chunks in that chunk ranking (a file short of them
there is ranked within itself by vector similarity and term overlap).

Without an identifier in the query, chunks are keyed by row id in one pinned version of
the chunk table (a commit can move or delete rows, so row ids from two versions cannot be
fused or read), else by id.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from indexer.models import Document, FileChunk
from indexer.search._fusion import Ranked, fuse
from indexer.search._lexical import exact_identifiers, fts_query
from indexer.search._ranking import Ranking, query_terms, rank_within_file, to_hit
from indexer.search._results import ChunkHit, DocumentHit, FileGroup, SearchResponse
from indexer.store import Candidate, Detail

if TYPE_CHECKING:
    from indexer.search._engine import Scope, Searcher

__all__ = ["chunk_page", "document_page"]

#: Candidates taken from each list (min-max normalisation runs over these).
CANDIDATES = 100
#: The first chunks of a page, shown in rank order: a file's weaker chunks never come
#: before another file's better ones there (one lucky chunk would pull its whole file up).
HEAD = 3
#: What reading a row id of an older version of the chunk table can raise (LanceDB reports
#: a row id in a fragment a compaction removed as one of these).
_MOVED_ROWS = (OSError, RuntimeError, ValueError)


def _facts(ranking: Ranking) -> tuple[tuple[str, ...], float]:
    """The files of a whole ranking in the order of their best result, and its mean score."""
    files = tuple(dict.fromkeys(f for c, _ in ranking.ranked if (f := ranking.file_of.get(c.key))))
    scores = [s for _, s in ranking.ranked]
    return files, (sum(scores) / len(scores) if scores else 0.0)


# ---- chunk granularity -------------------------------------------------------------
def chunk_page(searcher: Searcher, scope: Scope) -> SearchResponse:
    """One page of chunks, grouped by file in the order of each file's best chunk."""
    opts = scope.opts
    k = opts.candidates or min(1000, max(CANDIDATES, (opts.offset + opts.limit) * 3))
    if scope.terms is not None:  # every chunk holding a term is ranked
        k = max(k, len(scope.terms))
    # an identifier's (a name filter's, the exact terms') candidates carry ids and names,
    # the rest row ids only; both are ranked in one version of the chunk table
    by_id = exact_identifiers(opts.query) or not opts.query.strip() or scope.terms is not None
    pinned = _rank_page_by_rows(searcher, scope, k, detail=None if by_id else "row")
    if pinned is not None:
        ranking, hits = pinned
    else:
        ranking = searcher.rank_chunks(scope, k)
        page = ranking.ranked[opts.offset : opts.offset + opts.limit]
        hits = searcher.fetch_hits(page, scope.names, folded=ranking.folded)
    file_groups = [
        FileGroup(
            file_id=chunks[0].file_id,
            file_path=chunks[0].file_path,
            project_id=chunks[0].project_id,
            project=chunks[0].project,
            total_relevance=_aggregate(chunks),
            chunks=tuple(chunks),
        )
        for chunks in group_hits(hits, head=HEAD if opts.offset == 0 else 0)
    ]
    total = len(ranking.ranked)
    files, mean = _facts(ranking)
    return SearchResponse(
        query=opts.query,
        mode=opts.mode,
        granularity="chunk",
        offset=opts.offset,
        limit=opts.limit,
        total=total,
        has_more=total > opts.offset + opts.limit,
        groups=tuple(file_groups),
        hits=tuple(hits),
        files=files,
        mean_relevance=mean,
    )


def _rank_page_by_rows(
    searcher: Searcher, scope: Scope, k: int, attempts: int = 2, detail: Detail | None = "row"
) -> tuple[Ranking, list[ChunkHit]] | None:
    """Rank by row id (candidates of ``detail``, as ``rank_chunks`` takes it) and read only
    the page's rows, every query pinned to one version of the chunk table: (ranking, hits),
    or None when every attempt failed to read its version (its files removed meanwhile,
    which a cleanup does an hour after at most)."""
    opts = scope.opts
    for _ in range(attempts):
        version = searcher.store.search.chunk_table_version()
        embedded_only = searcher.needs_embedded_filter(opts, version)
        try:
            ranking = searcher.rank_chunks(scope, k, detail, embedded_only=embedded_only, version=version)
            page = ranking.ranked[opts.offset : opts.offset + opts.limit]
            hits = searcher.fetch_hits(page, scope.names, version, folded=ranking.folded)
        except _MOVED_ROWS:
            continue
        return ranking, hits
    return None


def group_hits(hits: list[ChunkHit], head: int = HEAD) -> list[list[ChunkHit]]:
    """``hits`` (in rank order) grouped by file: the first ``head`` in rank order (a file's
    consecutive hits together), the others with their file's other hits after the head,
    in the order of each file's best one there."""
    groups: list[list[ChunkHit]] = []
    later: dict[str, list[ChunkHit]] = {}
    for i, hit in enumerate(hits):
        if groups and groups[-1][0].file_id == hit.file_id:  # the file's run goes on
            group = groups[-1]
        elif i >= head and hit.file_id in later:
            group = later[hit.file_id]
        else:
            group = []
            groups.append(group)
        group.append(hit)
        if i >= head:
            later.setdefault(hit.file_id, group)
    return groups


def _aggregate(chunks: list[ChunkHit]) -> float:
    """A file's relevance in chunk results: its best chunk's, so the groups follow the
    chunk ranking and the best hit is always first (a sum would put a file of many
    middling hits above the best one)."""
    return max(c.relevance_score for c in chunks)


# ---- document granularity ----------------------------------------------------------
def document_page(searcher: Searcher, scope: Scope, attempts: int = 2) -> SearchResponse:
    """One page of files ranked by their chunks (and their document); without an
    identifier in the query (or exact terms), chunks keyed by row id in one pinned version
    of the chunk table (as in ``_rank_page_by_rows``), else by id."""
    opts = scope.opts
    if opts.query.strip() and not exact_identifiers(opts.query) and scope.terms is None:
        for _ in range(attempts):
            version = searcher.store.search.chunk_table_version()
            embedded_only = searcher.needs_embedded_filter(opts, version)
            try:
                return _rank_documents(searcher, scope, "file", embedded_only=embedded_only, version=version)
            except _MOVED_ROWS:  # as in ``_rank_page_by_rows``
                continue
    return _rank_documents(searcher, scope, "full")


def _rank_documents(
    searcher: Searcher,
    scope: Scope,
    detail: Detail,
    *,
    embedded_only: bool = True,
    version: int | None = None,
) -> SearchResponse:
    """One page of files; ``embedded_only`` and ``version`` as for
    ``Store.vector_candidates`` (chunks)."""
    opts, flt = scope.opts, scope.flt
    chunk_k = opts.candidates or min(600, max(60, (opts.offset + opts.file_limit) * 6)) * 4
    if scope.terms is not None:
        chunk_k = max(chunk_k, len(scope.terms))
    if not opts.query.strip():  # has_definitions / has_references / exact terms alone
        return _documents_page(searcher, scope, searcher.rank_chunks(scope, chunk_k), {}, version)
    chunk_calls = searcher.candidate_calls(
        "chunks",
        opts.mode,
        opts.query,
        flt,
        chunk_k,
        detail=detail,
        embedded_only=embedded_only,
        version=version,
    )
    calls = {f"chunk_{n}": c for n, c in chunk_calls.items()}
    if not flt.has_chunk_conditions and searcher.ranking.document_signal_weight > 0:
        doc_calls = searcher.candidate_calls(
            "documents", opts.mode, opts.query, flt, chunk_k // 4, detail="file"
        )
        calls.update({f"document_{n}": c for n, c in doc_calls.items()})
    found = searcher.gather(calls, embed=opts.query)
    chunk_lists = {n[6:]: v for n, v in found.items() if n.startswith("chunk_")}
    chunk_ranking = searcher.rank_pool(scope, chunk_lists, version)
    documents = {n[9:]: v for n, v in found.items() if n.startswith("document_")}
    return _documents_page(searcher, scope, chunk_ranking, documents, version)


def _documents_page(
    searcher: Searcher,
    scope: Scope,
    chunk_ranking: Ranking,
    documents: dict[str, list[Candidate]],
    version: int | None,
) -> SearchResponse:
    """Files in the order of their best chunk (its score theirs), or fused with the
    whole-document lists when those weigh anything; one page of them."""
    opts = scope.opts
    need = opts.offset + opts.file_limit
    best: dict[str, float] = {}
    for cand, score in chunk_ranking.ranked:
        file_id = cand.file_id or chunk_ranking.file_of.get(cand.key, "")
        if file_id:
            best.setdefault(file_id, score)
    weight = searcher.ranking.document_signal_weight
    if weight > 0 and documents:
        lists = {"chunks": Ranked(list(best))}
        lists.update({f"document_{n}": Ranked([c.id for c in v], weight) for n, v in documents.items()})
        ranked = fuse(lists)
    else:
        ranked = list(best.items())
    page = ranked[opts.offset : need]
    docs, per_file = _page_documents(searcher, scope, [i for i, _ in page], chunk_ranking, version)
    hits = tuple(
        _document_hit(docs[doc_id], score, scope.names, per_file) for doc_id, score in page if doc_id in docs
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
        files=tuple(i for i, _ in ranked),
        mean_relevance=sum(s for _, s in ranked) / len(ranked) if ranked else 0.0,
    )


def _document_hit(
    doc: Document, score: float, names: dict[str, str], per_file: dict[str, list[ChunkHit]]
) -> DocumentHit:
    return DocumentHit(
        id=doc.id,
        file_path=doc.file_path,
        project_id=doc.project_id,
        project=names.get(doc.project_id, ""),
        relevance_score=round(score, 6),
        chunk_count=doc.chunk_count,
        languages=doc.languages,
        primary_language=doc.primary_language,
        role=doc.role,
        chunks=tuple(per_file.get(doc.id, ())),
        summary=doc.summary,
        keywords=doc.keywords,
        file_size=doc.file_size,
    )


def _page_documents(
    searcher: Searcher, scope: Scope, page: list[str], chunk_ranking: Ranking, version: int | None = None
) -> tuple[dict[str, Document], dict[str, list[ChunkHit]]]:
    """The page's documents and each one's top chunks: its best entries in the fused chunk
    ranking (found in ``version`` of the chunk table); a file with fewer there than
    ``chunks_per_file`` (and more chunks) is ranked within the file by vector similarity
    and term overlap instead."""
    want = scope.opts.chunks_per_file
    pooled: dict[str, list[tuple[Candidate, float]]] = {fid: [] for fid in page}
    for cand, score in chunk_ranking.ranked:
        file_id = cand.file_id or chunk_ranking.file_of.get(cand.key, "")
        if file_id in pooled and len(pooled[file_id]) < want:
            pooled[file_id].append((cand, score))
    found = searcher.gather(
        {
            "docs": lambda: searcher.store.documents.get(page),
            "hits": lambda: searcher.fetch_hits(
                [item for items in pooled.values() for item in items],
                scope.names,
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
        per_file.update(_rank_files(searcher, scope, short))
    return docs, per_file


def _rank_files(searcher: Searcher, scope: Scope, file_ids: list[str]) -> dict[str, list[ChunkHit]]:
    """The top chunks of each file, ranked within the file (every admitted chunk's text
    and vector read; the views of the top ones only)."""
    opts = scope.opts
    rows = searcher.store.chunks.for_ranking(replace(scope.flt, file_ids=tuple(file_ids)))
    qvec = searcher.query_vector(opts.query) if opts.mode != "lexical" else None
    terms = query_terms(fts_query(opts.query))
    by_file: dict[str, list[FileChunk]] = {}
    for chunk in rows:
        by_file.setdefault(chunk.file_id, []).append(chunk)
    top = {
        fid: rank_within_file(items, qvec, terms, opts.mode)[: opts.chunks_per_file]
        for fid, items in by_file.items()
    }
    wanted = [(c.id, c.row_id) for ranked in top.values() for c, _ in ranked]
    views = {v.id: v for v in searcher.store.chunks.views(wanted)} if wanted else {}
    return {
        fid: [to_hit(views[c.id], s, scope.names) for c, s in ranked if c.id in views]
        for fid, ranked in top.items()
    }
