"""Exact terms: when a chunk contains a term, and how the full-text index finds such chunks.

**Case.** A term that looks like an identifier (camelCase, PascalCase, snake_case, or
containing ``_`` or a digit: ``useState``, ``parse_document``, ``v4.2``) matches
case-sensitively; any other term (``websocket``, ``TMOAT``, ``a->b``) case-insensitively
(per-character case folding, as ``re.IGNORECASE``).

**Boundaries.** A term is present where it occurs starting and ending at a word or
identifier-part boundary, the way lode's lexicon cuts code into words: ``Socket`` is in
``WebSocket``, ``parse`` in ``parse_document``, ``v4`` in ``v4.2``, ``HTTP`` in
``HTTPServer``; ``cart`` is not in ``discarted``, ``id`` not in ``valid``, ``v4`` not in
``v40``. Precisely: each outer alphanumeric run of the occurrence (the first and the last)
is either a whole alphanumeric run of the text or a whole sequence of parts of one
multi-part identifier (``_IDENT`` split by ``_PART``, as in ``indexer.lexicon``). A term
with no letter or digit (``->``, ``::``) matches anywhere.

This is the rule the full-text column ``search_text`` can answer without reading every
chunk: it holds every alphanumeric run and every part of every multi-part identifier, so
for each run of the term either the run itself or all of its identifier parts are
tokens of any chunk where the term is present. ``fts_runs`` gives those alternatives;
the store turns them into one boolean query, keeps the hits whose text contains the term
as a substring (a superset still), and ``contains_term`` checks each of those. Terms the
index cannot tokenize (no ASCII letter or digit, non-ASCII, stop words only) are found by
scanning every chunk's text instead. A plain substring rule would need that scan for
every term: 250 ms for 100k chunks (Lance ``strpos``), five times the latency budget;
Lance's FM index answers rare substrings in 5 ms but common ones in 35 s.
"""

from __future__ import annotations

import re
from functools import lru_cache

from indexer.lexicon import is_identifier_like, split_identifier
from indexer.store import TermRun

__all__ = ["contains_term", "count_terms", "fts_runs", "is_case_sensitive", "needs_scan"]

# The same patterns as ``indexer.lexicon`` (which builds the full-text column); a test pins them.
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ALNUM_RUN = re.compile(r"[^\W_]+")
_WORD_CHARS = re.compile(r"[A-Za-z0-9_$]+")


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
    """The alphanumeric runs of ``term`` with their identifier parts, distinct, in order."""
    out: dict[str, TermRun] = {}
    for run in _ALNUM_RUN.findall(term):
        parts = tuple(split_identifier(run))
        out.setdefault(run, TermRun(run, parts if len(parts) > 1 else ()))
    return tuple(out.values())


@lru_cache(maxsize=512)
def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(re.escape(term), 0 if is_case_sensitive(term) else re.IGNORECASE)


def contains_term(text: str, term: str) -> bool:
    """True when ``term`` occurs in ``text`` at word or identifier-part boundaries (see above)."""
    pattern = _pattern(term)
    spans = [(m.start(), m.end()) for m in _ALNUM_RUN.finditer(term)]
    match = pattern.search(text)
    while match is not None:
        start = match.start()
        if not spans or _aligned(text, start, spans):
            return True
        match = pattern.search(text, start + 1)
    return False


def count_terms(text: str, terms: tuple[str, ...]) -> int:
    """How many distinct ``terms`` ``text`` contains."""
    return sum(1 for term in terms if contains_term(text, term))


def _aligned(text: str, start: int, spans: list[tuple[int, int]]) -> bool:
    """Whether the occurrence at ``start`` has its first and last runs on boundaries."""
    first, last = spans[0], spans[-1]
    return _visible(text, start + first[0], start + first[1]) and _visible(
        text, start + last[0], start + last[1]
    )


def _visible(text: str, a: int, b: int) -> bool:
    """True when ``text[a:b]`` is a whole alphanumeric run, or whole parts of one identifier."""
    run_start = a == 0 or not _is_alnum(text[a - 1])
    run_end = b == len(text) or not _is_alnum(text[b])
    if run_start and run_end:
        return True
    lo, hi = a, b
    while lo > 0 and _WORD_CHARS.fullmatch(text[lo - 1]):
        lo -= 1
    while hi < len(text) and _WORD_CHARS.fullmatch(text[hi]):
        hi += 1
    for ident in _IDENT.finditer(text, lo, hi):
        if ident.start() <= a and b <= ident.end():
            return _on_part_boundaries(ident.group(), a - ident.start(), b - ident.start())
    return False


def _on_part_boundaries(ident: str, a: int, b: int) -> bool:
    parts = [(m.start(), m.end()) for m in _PART.finditer(ident)]
    if len(parts) < 2:
        return False
    starts = {s for s, _ in parts}
    ends = {e for _, e in parts}
    return a in starts and b in ends


def _is_alnum(ch: str) -> bool:
    return ch.isalnum()
