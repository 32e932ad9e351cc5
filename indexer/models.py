"""Plain data that flows between lode's parts: no lancedb, no litestar, no HTTP.

The store converts its rows to these at its boundary; the server converts these to its
HTTP schemas. Every type is a frozen dataclass so it can be shared across threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from indexer._runs import (
    FINISHED_STATUSES,
    LIVE_STATUSES,
    TASK_STATUSES,
    IndexProgress,
    IndexReport,
    SkippedFile,
    StoreCheck,
    StoreProblem,
    Task,
    UpgradeReport,
)

__all__ = [
    "FINISHED_STATUSES",
    "LIVE_STATUSES",
    "NODE_TYPES",
    "SYMBOL_ROLES",
    "TASK_STATUSES",
    "Chunk",
    "ChunkFilter",
    "ChunkView",
    "ChunkedFile",
    "Document",
    "FileChunk",
    "IndexProgress",
    "IndexReport",
    "Project",
    "SkippedFile",
    "StoreCheck",
    "StoreProblem",
    "StoredChunk",
    "Symbol",
    "SymbolSite",
    "Task",
    "UpgradeReport",
]

#: The normalised node-type vocabulary shared by every language (see ARCHITECTURE.md).
NODE_TYPES: Final[frozenset[str]] = frozenset(
    (
        "function method constructor class struct enum interface trait impl module namespace type constant "
        "variable macro test section block text"
    ).split()
)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One semantic unit of a file as the chunker cuts it (no ids yet)."""

    chunk_index: int
    content: str
    chunk_hash: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    parent_context: str
    scope_path: tuple[str, ...]
    definitions: tuple[str, ...]
    references: tuple[str, ...]
    unit_start_line: int = 0
    """First line of the unit this chunk is a piece of (a function cut in pieces, a split
    class's skeleton); the chunk's own ``start_line`` when it is not part of a larger unit
    (0 when the store predates it)."""
    unit_end_line: int = 0
    """Last line of that unit (inclusive); the chunk's own ``end_line`` when not a piece."""
    signature: str = ""
    """The unit's header (``def parse(self, data: bytes) -> Request``); '' for top-level code."""


#: The roles of a row of the symbol index.
SYMBOL_ROLES: Final[tuple[str, ...]] = ("definition", "reference")


@dataclass(frozen=True, slots=True)
class SymbolSite:
    """A definition or a reference site in one file, as the chunker finds it."""

    role: str
    """``definition`` or ``reference``."""
    name: str
    kind: str
    """A definition's node type (function, method, class…); ``reference`` for a reference."""
    container: str
    """Definition: its enclosing unit's scope joined by ``.`` (``Util.Stack``); reference:
    the scope of the unit the reference is in ('' at file level)."""
    container_kind: str
    """The node type of that enclosing unit ('' when none)."""
    scope_path: tuple[str, ...]
    """Definition: its own scope path (ending with its name); reference: the enclosing unit's."""
    signature: str
    """Definition: its header; reference: the enclosing unit's header."""
    text: str
    """Reference: the line it is on (trimmed); definition: ''."""
    start_line: int
    end_line: int
    chunk_index: int
    """The chunk holding the definition's first line or the reference's line."""


@dataclass(frozen=True, slots=True)
class Symbol:
    """A row of the symbol index: a definition or a reference site of a stored file."""

    id: str
    project_id: str
    file_id: str
    file_path: str
    language: str
    role: str
    name: str
    kind: str
    container: str
    container_kind: str
    scope_path: tuple[str, ...]
    signature: str
    text: str
    start_line: int
    end_line: int
    chunk_id: str

    @property
    def qualified_name(self) -> str:
        """A definition's scope joined by ``.`` (``Util.Stack.push``)."""
        return ".".join(self.scope_path) if self.role == "definition" else self.name


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """The chunker's answer for one file: its chunks, or why it has none."""

    path: str
    language: str
    chunks: tuple[Chunk, ...]
    skipped_reason: str | None = None
    used_fallback: bool = False
    warnings: tuple[str, ...] = ()
    symbols: tuple[SymbolSite, ...] = ()
    """Definitions (in file order) then reference sites, for the symbol index."""


@dataclass(frozen=True, slots=True)
class Project:
    """A registered folder whose files lode indexes."""

    id: str
    name: str
    root: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_indexed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """One indexed file of a project (a row of ``code_documents`` without its vector)."""

    id: str
    project_id: str
    file_path: str
    content_hash: str
    file_size: int
    last_modified: float
    indexed_at: datetime | None
    languages: tuple[str, ...]
    primary_language: str
    chunk_count: int
    keywords: tuple[str, ...] = ()
    summary: str = ""
    role: str = "implementation"
    """What the file is for (``indexer.roles``): implementation, test, docs, example…"""


@dataclass(frozen=True, slots=True)
class FileChunk:
    """What ranking a file's chunks within the file reads of each: where it is, its text
    and its vector (None until phase 2 fills it)."""

    id: str
    row_id: int
    file_id: str
    chunk_index: int
    content: str
    vector: Any = None


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as stored: the chunker's fields plus ids and bookkeeping."""

    id: str
    file_id: str
    project_id: str
    file_path: str
    chunk: Chunk
    embedded: bool = False
    indexed_at: datetime | None = None
    role: str = "implementation"
    """The chunk's role (``indexer.roles``)."""


@dataclass(frozen=True, slots=True)
class ChunkView:
    """What a search hit shows of a stored chunk (a page reads only these columns)."""

    id: str
    file_id: str
    project_id: str
    file_path: str
    chunk_index: int
    content: str
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    parent_context: str
    scope_path: tuple[str, ...]
    role: str = "implementation"
    """The chunk's role (``indexer.roles``): its file's, or ``test`` for an inline test."""
    unit_start_line: int = 0
    """First line of the unit the chunk is a piece of (its own start when not a piece)."""
    unit_end_line: int = 0
    """Last line of that unit."""
    signature: str = ""
    """The unit's header, for a piece that starts mid-unit."""

    @classmethod
    def of(cls, stored: StoredChunk) -> ChunkView:
        """The view of a whole stored chunk."""
        c = stored.chunk
        return cls(
            stored.id, stored.file_id, stored.project_id, stored.file_path, c.chunk_index, c.content,
            c.start_line, c.end_line, c.language, c.node_type, c.node_name, c.parent_context, c.scope_path,
            stored.role,
            c.unit_start_line, c.unit_end_line, c.signature,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Metadata conditions on chunks (and, where they apply, on documents); all are ANDed."""

    project_ids: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    path_include: tuple[str, ...] = ()
    path_exclude: tuple[str, ...] = ()
    node_types: tuple[str, ...] = ()
    node_name_pattern: str | None = None
    parent_context_pattern: str | None = None
    scope_depth: tuple[int, int] | None = None
    has_definitions: tuple[str, ...] = ()
    has_references: tuple[str, ...] = ()
    file_ids: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    """Only chunks of these roles (a chunk's role: its file's, or ``test`` inline)."""
    exclude_roles: tuple[str, ...] = ()
    """No chunk of these roles."""
    chunk_ids: tuple[str, ...] | None = None
    """Only these chunks (None: any; the chunks holding a search's exact terms)."""

    @property
    def has_chunk_conditions(self) -> bool:
        """True if a condition applies only to chunks (not to whole documents)."""
        return bool(
            self.roles
            or self.chunk_ids is not None
            or self.exclude_roles
            or self.node_types
            or self.node_name_pattern is not None
            or self.parent_context_pattern is not None
            or self.scope_depth is not None
            or self.has_definitions
            or self.has_references
        )
