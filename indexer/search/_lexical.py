"""Lexical side of search: the full-text query text and exact-identifier matching."""

from __future__ import annotations

import re

from indexer.lexicon import expand_identifiers, is_identifier_like

__all__ = ["exact_identifiers", "fts_query", "is_identifier_query", "is_name_query", "named_identifiers"]

_TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+")


def fts_query(query: str) -> str:
    """The query as the full-text index sees documents: identifiers joined and split."""
    return expand_identifiers(query)


def exact_identifiers(query: str) -> tuple[str, ...]:
    """Identifier-shaped words of the query (``parseDocument``, ``parse_document``), in order."""
    seen: list[str] = []
    for token in _TOKEN.findall(query):
        if is_identifier_like(token) and token not in seen:
            seen.append(token)
    return tuple(seen)


def is_name_query(query: str) -> bool:
    """True when the query names something: identifiers only, or one word (``render``)."""
    return is_identifier_query(query) or len(query.split()) == 1


def named_identifiers(query: str) -> tuple[str, ...]:
    """The names a query may ask for the definition of: its identifier-shaped words, else
    the words of a one-word query (``render``, ``Stack.push``)."""
    found = exact_identifiers(query)
    if found or len(query.split()) != 1:
        return found
    return tuple(dict.fromkeys(t for t in _TOKEN.findall(query) if not t.isdigit()))


def is_identifier_query(query: str) -> bool:
    """True when every word of the query is identifier-shaped (``parseDocument``, ``a.b_c``)."""
    tokens = _TOKEN.findall(query)
    return bool(tokens) and all(is_identifier_like(t) for t in tokens)
