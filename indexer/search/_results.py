"""What a search returns (plain data; the server converts these to HTTP schemas)."""

from __future__ import annotations

from dataclasses import dataclass, field

from indexer.positions import Range

__all__ = ["ChunkHit", "DocumentHit", "FileGroup", "SearchResponse"]


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One ranked chunk."""

    id: str
    file_id: str
    file_path: str
    project_id: str
    project: str
    chunk_index: int
    content: str
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    parent_context: str
    scope_path: tuple[str, ...]
    relevance_score: float
    role: str = "implementation"
    unit_start_line: int = 0
    """First line of the unit this chunk is (a piece of); its own start when whole."""
    unit_end_line: int = 0
    """Last line of the unit."""
    folded_pieces: int = 0
    """Other pieces of the same unit folded into this hit (they take no other slot)."""
    uri: str = ""
    """The ``file://`` URI of its file."""
    matches: tuple[Range, ...] = ()
    """Where the query's terms stand in ``content``, as positions in the file (LSP: 0-based
    lines, UTF-16 columns)."""


@dataclass(frozen=True, slots=True)
class DocumentHit:
    """One ranked file with its best chunks."""

    id: str
    file_path: str
    project_id: str
    project: str
    relevance_score: float
    chunk_count: int
    languages: tuple[str, ...]
    primary_language: str
    chunks: tuple[ChunkHit, ...]
    role: str = "implementation"
    summary: str = ""
    """The file's first doc comment or heading paragraph."""
    keywords: tuple[str, ...] = ()
    """The file's key phrases."""
    file_size: int = 0
    uri: str = ""
    """The ``file://`` URI of the file."""


@dataclass(frozen=True, slots=True)
class FileGroup:
    """Chunk-granularity results of one file; ``total_relevance`` is its best chunk's score
    (groups are in the order of their best chunks)."""

    file_id: str
    file_path: str
    project_id: str
    project: str
    total_relevance: float
    chunks: tuple[ChunkHit, ...]
    uri: str = ""
    """The ``file://`` URI of the file."""


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """The answer to one search: documents or groups, paging facts and index coverage."""

    query: str
    mode: str
    granularity: str
    offset: int
    limit: int
    total: int
    has_more: bool
    documents: tuple[DocumentHit, ...] = ()
    groups: tuple[FileGroup, ...] = ()
    semantic_coverage: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    took_ms: float = 0.0
    hits: tuple[ChunkHit, ...] = ()
    """This page's chunks in rank order (chunk granularity; ``groups`` holds them by file)."""
    files: tuple[str, ...] = ()
    """The ids of the files of every result (all pages), in the order of their best one."""
    mean_relevance: float = 0.0
    """The mean score of every result (all pages; files at document granularity)."""
