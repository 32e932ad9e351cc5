"""What the symbol operations take and return (plain frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass

from indexer.models import Symbol
from indexer.positions import Range

__all__ = [
    "MATCHES",
    "PROXIMITIES",
    "Caller",
    "RankedSymbol",
    "ReferenceQuery",
    "ReferenceSite",
    "References",
    "SymbolDetail",
    "SymbolList",
    "SymbolQuery",
]

#: How ``SymbolQuery.name`` is matched against defined names.
MATCHES = ("exact", "prefix", "glob", "fuzzy")
#: How near a candidate is to the file a name is read in, nearest first.
PROXIMITIES = ("same_file", "same_module", "imported", "elsewhere")


@dataclass(frozen=True, slots=True)
class SymbolQuery:
    """Find definitions by name (``lode symbols``, ``GET /api/v1/symbols``)."""

    name: str
    """A name (``push``) or a qualified one (``Stack.push``, ``Stack::push``)."""
    match: str = "exact"
    """``exact``, ``prefix``, ``glob`` (``*``, ``?``, ``[…]``; case-sensitive) or ``fuzzy``
    (case and ``_`` ignored, the letters in order)."""
    kinds: tuple[str, ...] = ()
    """Only these node types (function, method, class…)."""
    languages: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    """Project names or ids (all when empty)."""
    from_path: str | None = None
    """The file the name is read in (relative to its project's root, absolute inside a
    project's root, or a ``file://`` URI): candidates are ranked by proximity to it (same
    file, same folder, imported by it)."""
    limit: int = 50


@dataclass(frozen=True, slots=True)
class ReferenceQuery:
    """Find where a name is used (``lode refs``, ``GET /api/v1/symbols/references``)."""

    name: str
    languages: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    from_path: str | None = None
    """Rank the callers (and the candidate definitions) by proximity to this file (as
    ``SymbolQuery.from_path``)."""
    limit: int = 100
    """Callers (enclosing units) returned."""


@dataclass(frozen=True, slots=True)
class RankedSymbol:
    """A candidate definition and how near it is to ``from_path``."""

    symbol: Symbol
    project: str
    """The project's name."""
    proximity: str
    """One of ``PROXIMITIES`` (``elsewhere`` when no ``from_path`` was given)."""
    uri: str = ""
    """The ``file://`` URI of its file."""


@dataclass(frozen=True, slots=True)
class SymbolList:
    """Definitions matching a query, nearest and most exact first."""

    name: str
    match: str
    symbols: tuple[RankedSymbol, ...]
    total: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class SymbolDetail:
    """One symbol with its code (the lines of the definition, or of the reference)."""

    symbol: Symbol
    project: str
    code: str
    """Lines ``start_line..end_line`` of the file as indexed (cut at a size cap)."""
    truncated: bool
    uri: str = ""
    """The ``file://`` URI of its file."""


@dataclass(frozen=True, slots=True)
class ReferenceSite:
    """A line where the name is used."""

    id: str
    line: int
    """1-based."""
    text: str
    chunk_id: str
    ranges: tuple[Range, ...] = ()
    """Where the name stands on the line as a whole identifier (LSP: 0-based line, UTF-16
    columns); one per use."""


@dataclass(frozen=True, slots=True)
class Caller:
    """The sites of a name inside one unit (the caller), or at a file's top level."""

    project: str
    file_path: str
    language: str
    container: str
    """The unit's scope joined by ``.`` ('' at file level)."""
    container_kind: str
    """Its node type ('' at file level)."""
    signature: str
    proximity: str
    sites: tuple[ReferenceSite, ...]
    uri: str = ""
    """The ``file://`` URI of its file."""


@dataclass(frozen=True, slots=True)
class References:
    """Every use of a name, grouped by the unit it is used in, with its candidate definitions."""

    name: str
    definitions: tuple[RankedSymbol, ...]
    """Where the name may be defined (several when ambiguous), nearest first."""
    callers: tuple[Caller, ...]
    total_sites: int
    total_callers: int
    truncated: bool
