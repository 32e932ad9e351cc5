"""HTTP types of the agent endpoints: search_content, find_documents and document access.

Fields mirror the dataclasses of ``indexer.search`` and ``indexer.documents`` one for one
(``to_wire`` converts any of them), so the CLI prints the same JSON in-process and through
a server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from indexer.limits import MAX_QUERY_CHARS, MAX_TEXT_CHARS
from server.http.schemas._fields import (
    NO_NUL,
    NOT_BLANK,
    ChunkCount,
    ChunkId,
    ChunkIndex,
    ChunkLanguage,
    ChunkText,
    EndLine,
    FilePath,
    FileSize,
    Languages,
    NodeName,
    NodeType,
    PrimaryLanguage,
    ProjectId,
    ProjectName,
    StartLine,
)
from server.http.schemas._fields import describe as _d
from server.http.schemas._positions import FileUri, Matches

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
]

Item = Annotated[str, Meta(min_length=1, max_length=500, pattern=NOT_BLANK)]
#: Results per page of search_content and find_documents.
PageSize = Annotated[int, Meta(ge=1, le=50)]
#: A continuation token: the opaque next_token of a previous page.
Token = Annotated[str, Meta(min_length=1)]
#: A project name or id: not blank, without NUL.
ProjectRef = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, pattern=NOT_BLANK)]
Items = Annotated[list[Item], Meta(max_length=20)]


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
    project: Annotated[ProjectRef | None, _d("Project name or id (default: every project)")] = None
    min_score: Annotated[
        Annotated[float, Meta(ge=0, le=1)] | None,
        _d("Lowest relevance_score returned, 0-1 (default 0.35); part of the query"),
    ] = None
    limit: Annotated[PageSize, _d("Results per page, 1-50")] = 10
    continuation_token: Annotated[Token | None, _d("next_token of the previous page")] = None


class ContentResultOut(msgspec.Struct):
    """A retrieved chunk with its full text."""

    chunk_id: ChunkId
    document_id: Annotated[str, _d("Path relative to the project root; use it with get_document_*")]
    project: ProjectName
    project_id: ProjectId
    content: Annotated[str, _d("The chunk's full text")]
    relevance_score: Annotated[float, _d("0-1; the same scale on every page of a query")]
    chunk_index: ChunkIndex
    start_line: StartLine
    end_line: EndLine
    language: ChunkLanguage
    node_type: NodeType
    node_name: NodeName
    matched_terms: Annotated[list[str], _d("The exact_terms this chunk contains")]
    document_keywords: Annotated[list[str], _d("Key phrases of the whole file")]
    uri: FileUri
    matches: Matches


class ContentStatisticsOut(msgspec.Struct):
    """Facts about the whole result set (the same on every page)."""

    total_results: Annotated[int, _d("Results at or above min_score, over all pages")]
    files_covered: Annotated[list[str], _d("Files of the results, best first (at most 20)")]
    total_files: Annotated[int, _d("Files holding those results")]
    avg_relevance: Annotated[float, _d("Mean relevance_score of all results, 0-1 (0 when none)")]
    search_interpretation: Annotated[str, _d("How the query was understood and scored")]
    took_ms: Annotated[float, _d("Time to answer this page on the server, in milliseconds")]


class ResponseStatusOut(msgspec.Struct):
    """The outcome in words."""

    success: Annotated[bool, _d("Always true: failures are HTTP errors with an ErrorOut body")]
    code: Annotated[int, _d("Always 200: failures are HTTP errors with an ErrorOut body")]
    message: Annotated[str, _d("Result count in words, e.g. 'Found 47 result(s) in 2 file(s)'")]
    warnings: Annotated[
        list[str], _d("Notes on how the results were found, e.g. an incomplete semantic index")
    ]


class ContinuationOut(msgspec.Struct):
    """Whether more results exist and how to fetch them."""

    has_more: Annotated[bool, _d("True when another page exists (next_token is then set)")]
    next_token: Annotated[
        str | None, _d("Opaque; send as continuation_token (expires with a 409 if the index changed)")
    ] = None


class NavigationHintsOut(msgspec.Struct):
    """Suggested next calls and related queries (from the results' document keywords)."""

    next_actions: Annotated[list[str], _d("Suggested next calls, written as tool calls")]
    related_queries: Annotated[
        list[str], _d("Up to 5 key phrases or names from the results, not already in the query")
    ]


class ContentDataOut(msgspec.Struct):
    """A page of results and the statistics of all of them."""

    results: Annotated[list[ContentResultOut], _d("This page's chunks, best first")]
    statistics: Annotated[ContentStatisticsOut, _d("Facts about all results of the query")]


class SearchContentOut(msgspec.Struct):
    """One page of search_content."""

    data: Annotated[ContentDataOut, _d("The page of results and statistics")]
    status: Annotated[ResponseStatusOut, _d("The outcome in words")]
    continuation: Annotated[ContinuationOut, _d("Whether more results exist and the token for them")]
    navigation_hints: Annotated[NavigationHintsOut, _d("Suggested next calls and related queries")]


class FindDocumentsIn(msgspec.Struct, forbid_unknown_fields=True):
    """Discover the files that matter for a question (summaries, not text)."""

    query: Annotated[
        str,
        _d("What the files should be about (needed unless continuation_token is given)"),
        Meta(max_length=MAX_QUERY_CHARS, pattern=NO_NUL),
    ] = ""
    project: Annotated[ProjectRef | None, _d("Project name or id (default: every project)")] = None
    limit: Annotated[PageSize, _d("Files per page, 1-50")] = 10
    continuation_token: Annotated[Token | None, _d("next_token of the previous page")] = None


class DocumentResultOut(msgspec.Struct):
    """A discovered file."""

    document_id: FilePath
    project: ProjectName
    project_id: ProjectId
    relevance_score: Annotated[float, _d("0-1, fused from the file's best chunks, vector and words")]
    summary: Annotated[str, _d("First doc comment or heading paragraph, at most ~300 characters")]
    document_keywords: Annotated[list[str], _d("Up to 7 key phrases of the file")]
    languages: Languages
    primary_language: PrimaryLanguage
    chunk_count: ChunkCount
    file_size: FileSize
    uri: FileUri


class DocumentsStatisticsOut(msgspec.Struct):
    """Facts about the whole ranking."""

    total_results: Annotated[int, _d("Files in the whole ranking")]
    avg_relevance: Annotated[float, _d("Mean relevance_score over the whole ranking, 0-1 (0 when empty)")]
    search_interpretation: Annotated[str, _d("How the query was understood and ranked")]
    took_ms: Annotated[float, _d("Time to answer this page on the server, in milliseconds")]


class DocumentsDataOut(msgspec.Struct):
    """A page of files and the statistics of the whole ranking."""

    documents: Annotated[list[DocumentResultOut], _d("This page's files, best first")]
    statistics: Annotated[DocumentsStatisticsOut, _d("Facts about the whole ranking")]


class FindDocumentsOut(msgspec.Struct):
    """One page of find_documents."""

    data: Annotated[DocumentsDataOut, _d("The page of files and statistics")]
    status: Annotated[ResponseStatusOut, _d("The outcome in words")]
    continuation: Annotated[ContinuationOut, _d("Whether more files exist and the token for them")]
    navigation_hints: Annotated[NavigationHintsOut, _d("Suggested next calls and related queries")]


class DocumentChunkOut(msgspec.Struct):
    """A chunk of a document, in file order."""

    chunk_id: ChunkId
    chunk_index: ChunkIndex
    start_line: StartLine
    end_line: EndLine
    node_type: NodeType
    node_name: NodeName
    content: ChunkText


class DocumentTextOut(msgspec.Struct):
    """Lines of a document as indexed (1-based, inclusive)."""

    document_id: FilePath
    project: ProjectName
    project_id: ProjectId
    start_line: Annotated[int, _d("First line returned (1-based)")]
    end_line: Annotated[int, _d("Last line returned (inclusive; 0 for an empty file)")]
    total_lines: Annotated[int, _d("Lines in the whole document")]
    text: Annotated[str, _d("The lines as indexed, with their line endings")]


class DocumentDataOut(msgspec.Struct):
    """A document by path: metadata and every chunk, or (for ``…/text``) its lines in ``text``."""

    document_id: FilePath
    project: ProjectName
    project_id: ProjectId
    languages: Annotated[list[str], _d("Languages of its chunks, sorted (empty in a …/text answer)")] = []
    primary_language: Annotated[str, _d("Language with the most chunk tokens ('' in a …/text answer)")] = ""
    chunk_count: Annotated[int, _d("Chunks of the file (0 in a …/text answer)")] = 0
    file_size: Annotated[int, _d("Size in bytes (0 in a …/text answer)")] = 0
    last_modified: Annotated[float, _d("File modification time, Unix seconds (0 in a …/text answer)")] = 0.0
    indexed_at: Annotated[
        datetime | None, _d("When the file was last indexed, UTC (null in a …/text answer)")
    ] = None
    keywords: Annotated[list[str], _d("Up to 7 key phrases of the file (empty in a …/text answer)")] = []
    summary: Annotated[
        str, _d("First doc comment or heading paragraph ('' if none or in a …/text answer)")
    ] = ""
    chunks: Annotated[list[DocumentChunkOut] | None, _d("Every chunk (metadata request)")] = None
    text: Annotated[DocumentTextOut | None, _d("The requested lines (…/text request)")] = None
