"""HTTP types of the agent endpoints: search_content, find_documents and document access.

Fields mirror ``indexer.search.content`` dataclasses one for one (``to_out`` converts any
of them), so the CLI prints the same JSON in-process and through a server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import Meta

__all__ = [
    "ContentDataOut",
    "ContentResultOut",
    "ContentStatisticsOut",
    "ContinuationOut",
    "DocumentChunkOut",
    "DocumentDataOut",
    "DocumentResultOut",
    "DocumentTextOut",
    "DocumentsDataOut",
    "DocumentsStatisticsOut",
    "FindDocumentsIn",
    "FindDocumentsOut",
    "NavigationHintsOut",
    "ResponseStatusOut",
    "SearchContentIn",
    "SearchContentOut",
    "to_out",
]

T = TypeVar("T")
Item = Annotated[str, Meta(min_length=1, max_length=500)]
Items = Annotated[list[Item], Meta(max_length=20)]


def _d(text: str) -> Meta:
    return Meta(description=text)


def to_out(value: Any, model: type[T]) -> T:
    """An HTTP schema from the indexer dataclass it mirrors."""
    return msgspec.convert(msgspec.to_builtins(value), model)


class SearchContentIn(msgspec.Struct, forbid_unknown_fields=True):
    """Retrieve passages: concepts by meaning and/or exact terms; at least one list is needed
    (or a continuation_token, which carries the query)."""

    semantic_concepts: Annotated[
        Items, _d("Ideas to match by meaning, e.g. ['authentication', 'state management']")
    ] = []
    exact_terms: Annotated[
        Items,
        _d(
            "Terms that must appear, e.g. ['useState', 'v4.2']; identifier-like terms (camelCase, "
            "snake_case, digits) match case-sensitively, others in any case; found anywhere in the text, "
            "as grep would"
        ),
    ] = []
    project: Annotated[str | None, _d("Project name or id (default: every project)")] = None
    min_score: Annotated[
        float | None, _d("Lowest relevance_score returned, 0-1 (default 0.35); part of the query")
    ] = None
    limit: Annotated[int, _d("Results per page, 1-50")] = 10
    continuation_token: Annotated[str | None, _d("next_token of the previous page")] = None


class ContentResultOut(msgspec.Struct):
    """A retrieved chunk with its full text."""

    chunk_id: str
    document_id: Annotated[str, _d("Path relative to the project root; use it with get_document_*")]
    project: str
    project_id: str
    content: str
    relevance_score: Annotated[float, _d("0-1; the same scale on every page of a query")]
    chunk_index: Annotated[int, _d("0-based position of the chunk in its file")]
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    matched_terms: Annotated[list[str], _d("The exact_terms this chunk contains")]
    document_keywords: Annotated[list[str], _d("Key phrases of the whole file")]


class ContentStatisticsOut(msgspec.Struct):
    """Facts about the whole result set (the same on every page)."""

    total_results: int
    files_covered: Annotated[list[str], _d("Files of the results, best first (at most 20)")]
    total_files: int
    avg_relevance: float
    search_interpretation: Annotated[str, _d("How the query was understood and scored")]
    took_ms: float


class ResponseStatusOut(msgspec.Struct):
    """The outcome in words."""

    success: bool
    code: int
    message: str
    warnings: list[str]


class ContinuationOut(msgspec.Struct):
    """Whether more results exist and how to fetch them."""

    has_more: bool
    next_token: Annotated[
        str | None, _d("Opaque; send as continuation_token (expires with a 409 if the index changed)")
    ] = None


class NavigationHintsOut(msgspec.Struct):
    """Suggested next calls and related queries (from the results' document keywords)."""

    next_actions: list[str]
    related_queries: list[str]


class ContentDataOut(msgspec.Struct):
    """A page of results and the statistics of all of them."""

    results: list[ContentResultOut]
    statistics: ContentStatisticsOut


class SearchContentOut(msgspec.Struct):
    """One page of search_content."""

    data: ContentDataOut
    status: ResponseStatusOut
    continuation: ContinuationOut
    navigation_hints: NavigationHintsOut


class FindDocumentsIn(msgspec.Struct, forbid_unknown_fields=True):
    """Discover the files that matter for a question (summaries, not text)."""

    query: Annotated[str, _d("What the files should be about"), Meta(max_length=2000)] = ""
    project: Annotated[str | None, _d("Project name or id (default: every project)")] = None
    limit: Annotated[int, _d("Files per page, 1-50")] = 10
    continuation_token: Annotated[str | None, _d("next_token of the previous page")] = None


class DocumentResultOut(msgspec.Struct):
    """A discovered file."""

    document_id: Annotated[str, _d("Path relative to the project root")]
    project: str
    project_id: str
    relevance_score: Annotated[float, _d("0-1, fused from the file's best chunks, vector and words")]
    summary: Annotated[str, _d("First doc comment or heading paragraph, at most ~300 characters")]
    document_keywords: list[str]
    languages: list[str]
    primary_language: str
    chunk_count: int
    file_size: int


class DocumentsStatisticsOut(msgspec.Struct):
    """Facts about the whole ranking."""

    total_results: int
    avg_relevance: float
    search_interpretation: str
    took_ms: float


class DocumentsDataOut(msgspec.Struct):
    """A page of files and the statistics of the whole ranking."""

    documents: list[DocumentResultOut]
    statistics: DocumentsStatisticsOut


class FindDocumentsOut(msgspec.Struct):
    """One page of find_documents."""

    data: DocumentsDataOut
    status: ResponseStatusOut
    continuation: ContinuationOut
    navigation_hints: NavigationHintsOut


class DocumentChunkOut(msgspec.Struct):
    """A chunk of a document, in file order."""

    chunk_id: str
    chunk_index: int
    start_line: int
    end_line: int
    node_type: str
    node_name: str
    content: str


class DocumentTextOut(msgspec.Struct):
    """Lines of a document as indexed (1-based, inclusive)."""

    document_id: str
    project: str
    project_id: str
    start_line: int
    end_line: int
    total_lines: int
    text: str


class DocumentDataOut(msgspec.Struct):
    """A document by path: metadata and every chunk, or (for ``…/text``) its lines in ``text``."""

    document_id: Annotated[str, _d("Path relative to the project root")]
    project: str
    project_id: str
    languages: list[str] = []
    primary_language: str = ""
    chunk_count: int = 0
    file_size: int = 0
    last_modified: float = 0.0
    indexed_at: datetime | None = None
    keywords: list[str] = []
    summary: str = ""
    chunks: Annotated[list[DocumentChunkOut] | None, _d("Every chunk (metadata request)")] = None
    text: Annotated[DocumentTextOut | None, _d("The requested lines (…/text request)")] = None
