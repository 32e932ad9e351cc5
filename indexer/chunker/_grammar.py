"""Grammar loading: the only module that imports ``tree_sitter_language_pack``.

Swap the grammar source here and nothing else changes. Parsers are not thread-safe,
so one ``Parser`` is cached per (thread, language); ``Language`` and ``Query`` objects
are immutable and shared.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, cast

from tree_sitter import Language, Parser, Query

__all__ = ["compile_query", "get_language", "get_parser", "has_node_kind"]

_local = threading.local()


@functools.cache
def get_language(name: str) -> Language | None:
    """The tree-sitter ``Language`` for ``name``, or ``None`` when no grammar is bundled."""
    try:
        import tree_sitter_language_pack as pack

        return pack.get_language(cast(Any, name))
    except (LookupError, ImportError, OSError, ValueError):
        return None


def get_parser(name: str) -> Parser | None:
    """A parser for ``name`` owned by the calling thread, or ``None`` without a grammar."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(name)
    if parser is None:
        language = get_language(name)
        if language is None:
            return None
        parser = Parser(language)
        parsers[name] = parser
    return parser


def has_node_kind(language: Language, kind: str) -> bool:
    """True when the grammar has a named node kind ``kind``."""
    return language.id_for_node_kind(kind, True) is not None


@functools.cache
def compile_query(name: str, source: str) -> Query | None:
    """A compiled (and cached) query for language ``name``; ``None`` if it cannot compile."""
    language = get_language(name)
    if language is None:
        return None
    try:
        return Query(language, source)
    except Exception:  # a grammar upgrade renamed a node kind: degrade, never crash
        return None
