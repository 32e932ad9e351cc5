"""Where a search's hits are: each hit's ``file://`` URI, and the ranges of the query's
terms in each chunk (LSP positions: 0-based lines, UTF-16 columns), for an editor to
open the file and highlight them.

A term is a word of the query (any case, at the start of a word or of an identifier's
part; a few very common English words are left out) or an exact term (identifier-like
ones in their exact case, as ``exact_terms`` matches them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from indexer.lexicon import expand_identifiers, is_identifier_like
from indexer.locations import file_uri
from indexer.positions import term_ranges
from indexer.search._options import SearchOptions
from indexer.search._ranking import query_terms
from indexer.search._results import ChunkHit, SearchResponse

__all__ = ["locate_hits", "match_terms"]

_COMMON = frozenset(
    "a an and are as at be by do does for from how i in is it of on or that the this to was what when "
    "where which who why with".split()
)


def match_terms(opts: SearchOptions) -> tuple[set[str], set[str]]:
    """(words matched in any case, terms matched in their exact case) of a search."""
    words = {w for w in query_terms(expand_identifiers(opts.query)) if len(w) > 1 and w not in _COMMON}
    exact = {t for t in opts.exact_terms if is_identifier_like(t)}
    words |= {t.lower() for t in opts.exact_terms if t not in exact}
    return words, exact


def locate_hits(response: SearchResponse, roots: Mapping[str, str], opts: SearchOptions) -> SearchResponse:
    """``response`` with every hit's URI (its project's root joined with its path) and every
    chunk's term ranges."""
    words, exact = match_terms(opts)
    done: dict[str, ChunkHit] = {}

    def uri(project_id: str, file_path: str) -> str:
        root = roots.get(project_id)
        return file_uri(root, file_path) if root else ""

    def located(hit: ChunkHit) -> ChunkHit:
        known = done.get(hit.id)
        if known is None or known.relevance_score != hit.relevance_score:
            matches = term_ranges(hit.content, hit.start_line - 1, words, exact)
            known = done[hit.id] = replace(hit, uri=uri(hit.project_id, hit.file_path), matches=matches)
        return known

    return replace(
        response,
        documents=tuple(
            replace(d, uri=uri(d.project_id, d.file_path), chunks=tuple(located(c) for c in d.chunks))
            for d in response.documents
        ),
        groups=tuple(
            replace(g, uri=uri(g.project_id, g.file_path), chunks=tuple(located(c) for c in g.chunks))
            for g in response.groups
        ),
        hits=tuple(located(c) for c in response.hits),
    )
