"""Exact terms: when a chunk contains a term, and how the full-text index finds such chunks.

**Case.** A term that looks like an identifier (camelCase, PascalCase, snake_case, or
containing ``_`` or a digit: ``useState``, ``parse_document``, ``v4.2``) matches
case-sensitively; any other term (``websocket``, ``TMOAT``, ``a->b``) case-insensitively
(per-character case folding, as ``re.IGNORECASE``).

**Presence.** A term is present where it occurs as a substring, as grep finds it:
``cart`` is in ``discarted``, ``Socket`` in ``WebSocketServer``, ``v4`` in ``v40``.

The full-text index answers this without reading every chunk: each alphanumeric run of the
term lies inside a word of the chunk (equal to it when the run is inside the term, a
prefix or suffix of it at the term's ends), and the store keeps a vocabulary of every
word, so a query for the words that qualify finds a superset of the chunks, which a
substring test narrows (see ``indexer.store._vocabulary``). ``fts_runs`` gives the runs.
Terms the index cannot answer (no ASCII letter or digit, non-ASCII, a run found in too
many words or in a word the index drops, such as a stop word) are found by scanning every
chunk's text instead (about 250 ms for 100k chunks).
"""

from __future__ import annotations

import re
from functools import lru_cache

from indexer.lexicon import is_identifier_like
from indexer.store import WORD, TermRun

__all__ = ["contains_term", "count_terms", "fts_runs", "is_case_sensitive", "needs_scan"]

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")  # as ``indexer.lexicon``; a test pins it
_ALNUM_RUN = WORD  # runs of a term are cut exactly as the vocabulary cuts chunk text


def is_case_sensitive(term: str) -> bool:
    """True for identifier-looking terms (camelCase, PascalCase, snake_case, ``_`` or digits)."""
    if "_" in term or any(c.isdigit() for c in term):
        return True
    return any(is_identifier_like(word) for word in _IDENT.findall(term))


def needs_scan(term: str) -> bool:
    """True when the full-text index cannot find the term (no ASCII letter or digit run,
    or non-ASCII text): such terms are looked for by scanning chunk text."""
    return not term.isascii() or not _ALNUM_RUN.search(term)


def fts_runs(term: str) -> tuple[TermRun, ...]:
    """The alphanumeric runs of ``term`` in lower case, each open where it ends the term."""
    runs = list(_ALNUM_RUN.finditer(term))
    return tuple(
        TermRun(m.group().lower(), open_left=m.start() == 0, open_right=m.end() == len(term)) for m in runs
    )


@lru_cache(maxsize=512)
def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(re.escape(term), 0 if is_case_sensitive(term) else re.IGNORECASE)


def contains_term(text: str, term: str) -> bool:
    """True when ``term`` occurs in ``text`` (a substring, with the case rule above)."""
    return _pattern(term).search(text) is not None


def count_terms(text: str, terms: tuple[str, ...]) -> int:
    """How many distinct ``terms`` ``text`` contains."""
    return sum(1 for term in terms if contains_term(text, term))
