"""What ``search_content``, ``find_documents`` and document access return (plain data; the
server's schemas mirror these field for field)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "ContentData",
    "ContentResponse",
    "ContentResult",
    "ContentStatistics",
    "Continuation",
    "DocumentChunk",
    "DocumentData",
    "DocumentResult",
    "DocumentText",
    "DocumentsData",
    "DocumentsStatistics",
    "FindDocumentsResponse",
    "NavigationHints",
    "ResponseStatus",
]


@dataclass(frozen=True, slots=True)
class ContentResult:
    """One retrieved chunk with its full text."""

    chunk_id: str
    document_id: str
    """The file's path relative to its project root (reusable in document access)."""
    project: str
    project_id: str
    content: str
    relevance_score: float
    chunk_index: int
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    matched_terms: tuple[str, ...]
    """The exact terms this chunk contains."""
    document_keywords: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContentStatistics:
    """Facts about the whole result set (the same on every page of one query)."""

    total_results: int
    files_covered: tuple[str, ...]
    """Files of the results, best first (at most 20; ``total_files`` counts them all)."""
    total_files: int
    avg_relevance: float
    search_interpretation: str
    took_ms: float


@dataclass(frozen=True, slots=True)
class ResponseStatus:
    """Outcome in words, for agents that read the body rather than the HTTP status."""

    success: bool
    code: int
    message: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Continuation:
    """Whether more results exist and the token that fetches them."""

    has_more: bool
    next_token: str | None = None


@dataclass(frozen=True, slots=True)
class NavigationHints:
    """Suggested next calls and queries worth trying."""

    next_actions: tuple[str, ...]
    related_queries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContentData:
    """A page of retrieved chunks and the statistics of the whole result set."""

    results: tuple[ContentResult, ...]
    statistics: ContentStatistics


@dataclass(frozen=True, slots=True)
class ContentResponse:
    """The answer to one ``search_content`` call."""

    data: ContentData
    status: ResponseStatus
    continuation: Continuation
    navigation_hints: NavigationHints


@dataclass(frozen=True, slots=True)
class DocumentResult:
    """One discovered file: what it is about, not its text."""

    document_id: str
    project: str
    project_id: str
    relevance_score: float
    summary: str
    document_keywords: tuple[str, ...]
    languages: tuple[str, ...]
    primary_language: str
    chunk_count: int
    file_size: int


@dataclass(frozen=True, slots=True)
class DocumentsStatistics:
    """Facts about the whole ranking of one ``find_documents`` query."""

    total_results: int
    avg_relevance: float
    search_interpretation: str
    took_ms: float


@dataclass(frozen=True, slots=True)
class DocumentsData:
    """A page of discovered files and the statistics of the whole ranking."""

    documents: tuple[DocumentResult, ...]
    statistics: DocumentsStatistics


@dataclass(frozen=True, slots=True)
class FindDocumentsResponse:
    """The answer to one ``find_documents`` call."""

    data: DocumentsData
    status: ResponseStatus
    continuation: Continuation
    navigation_hints: NavigationHints


@dataclass(frozen=True, slots=True)
class DocumentChunk:
    """One chunk of a document, in file order."""

    chunk_id: str
    chunk_index: int
    start_line: int
    end_line: int
    node_type: str
    node_name: str
    content: str


@dataclass(frozen=True, slots=True)
class DocumentData:
    """A document's metadata and every chunk of it."""

    document_id: str
    project: str
    project_id: str
    languages: tuple[str, ...]
    primary_language: str
    chunk_count: int
    file_size: int
    last_modified: float
    indexed_at: datetime | None
    keywords: tuple[str, ...]
    summary: str
    chunks: tuple[DocumentChunk, ...]


@dataclass(frozen=True, slots=True)
class DocumentText:
    """Lines of a document as indexed (1-based, inclusive)."""

    document_id: str
    project: str
    project_id: str
    start_line: int
    end_line: int
    total_lines: int
    text: str
