"""Exact terms: when a chunk holds a term, and which chunks of the index hold some.

**Case.** A term that looks like an identifier (``indexer.lexicon``: camelCase,
PascalCase, snake_case, or holding ``_`` or a digit: ``useState``, ``parse_document``,
``v4.2``) matches case-sensitively; any other term (``websocket``, ``TMOAT``, ``a->b``) in
any case (per-character case folding, as ``re.IGNORECASE``).

**Presence.** A term is present where it occurs as a substring, as grep finds it:
``cart`` is in ``discarted``, ``Socket`` in ``WebSocketServer``, ``v4`` in ``v40``.

**Finding.** Each alphanumeric run of a term (cut by the store vocabulary's word rule)
lies inside a word of a chunk holding it, so the vocabulary's words that qualify make a
full-text query finding a superset of those chunks, which the store narrows by the
substring test (``indexer.store._vocabulary``). A term the index cannot answer (no ASCII
letter or digit, non-ASCII, a run in too many words or in a word the index drops, such as
a stop word) is found by scanning every chunk's text instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from indexer.lexicon import is_identifier_like, iter_identifiers
from indexer.models import ChunkFilter
from indexer.store import WORD, Store, TermRun

__all__ = ["TermMatches", "contains_term", "find_terms", "is_case_sensitive", "term_runs"]


def is_case_sensitive(term: str) -> bool:
    """True for identifier-looking terms (camelCase, PascalCase, snake_case, ``_`` or digits)."""
    if "_" in term or any(c.isdigit() for c in term):
        return True
    return any(is_identifier_like(word) for word in iter_identifiers(term))


@lru_cache(maxsize=512)
def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(re.escape(term), 0 if is_case_sensitive(term) else re.IGNORECASE)


def contains_term(text: str, term: str) -> bool:
    """True when ``term`` occurs in ``text`` (a substring, with the case rule above)."""
    return _pattern(term).search(text) is not None


def term_runs(term: str) -> tuple[TermRun, ...] | None:
    """The alphanumeric runs of ``term`` in lower case, each open where it ends the term;
    None when the full-text index cannot find the term (non-ASCII, or no run)."""
    runs = list(WORD.finditer(term))
    if not term.isascii() or not runs:
        return None
    return tuple(
        TermRun(m.group().lower(), open_left=m.start() == 0, open_right=m.end() == len(term)) for m in runs
    )


@dataclass(frozen=True, slots=True)
class TermMatches:
    """The chunks holding some of the terms, and how they were found."""

    counts: dict[str, int]
    """Chunk id → how many distinct terms it holds (at least one)."""
    scanned: tuple[str, ...] = ()
    """The terms found by scanning every chunk's text (the index could not answer them)."""


def _chunks_holding(store: Store, term: str, flt: ChunkFilter) -> tuple[set[str], bool]:
    """The ids of the chunks ``flt`` admits that hold ``term``, and whether a scan found them."""
    sensitive = is_case_sensitive(term)
    runs = term_runs(term)
    ids = None if runs is None else store.content.term_chunk_ids(term, runs, sensitive, flt)
    if ids is not None:
        return ids, False
    return store.content.scan_chunk_ids(term, sensitive, flt), True


def find_terms(
    store: Store,
    terms: Sequence[str],
    flt: ChunkFilter,
    gather: Callable[[dict[str, Callable[[], Any]]], dict[str, Any]],
) -> TermMatches:
    """Every chunk ``flt`` admits holding at least one of ``terms`` (one query per term,
    run at once by ``gather``)."""
    found = gather({term: partial(_chunks_holding, store, term, flt) for term in terms})
    counts: dict[str, int] = {}
    for ids, _ in found.values():
        for chunk_id in ids:
            counts[chunk_id] = counts.get(chunk_id, 0) + 1
    return TermMatches(counts, tuple(term for term, (_, scanned) in found.items() if scanned))
