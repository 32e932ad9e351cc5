"""What ``search_content`` and ``find_documents`` accept (the HTTP/MCP/CLI contract), how a
request is checked (every invalid field named in one ValidationError), and what they
return (plain data; the server's schemas mirror these field for field)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from indexer.errors import FieldError
from indexer.positions import Range
from indexer.search._options import raise_errors

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_MIN_SCORE",
    "MAX_LIMIT",
    "ContentData",
    "ContentRequest",
    "ContentResponse",
    "ContentResult",
    "ContentStatistics",
    "Continuation",
    "DocumentResult",
    "DocumentsData",
    "DocumentsStatistics",
    "FindDocumentsRequest",
    "FindDocumentsResponse",
    "NavigationHints",
    "ResponseStatus",
    "clean_list",
    "validate_content_request",
    "validate_find_request",
]

DEFAULT_LIMIT: Final = 10
#: ``min_score`` when the request gives none.
DEFAULT_MIN_SCORE: Final = 0.35
MAX_LIMIT: Final = 50
MAX_ITEMS: Final = 20
MAX_TEXT_CHARS: Final = 500


@dataclass(frozen=True, slots=True)
class ContentRequest:
    """Retrieval: chunks matching concepts (by meaning) and/or exact terms, with full text.

    ``min_score`` and ``project`` left as None take the token's values (or the defaults);
    given next to a token they must equal the token's.
    """

    semantic_concepts: tuple[str, ...] = ()
    exact_terms: tuple[str, ...] = ()
    project: str | None = None
    min_score: float | None = None
    limit: int = DEFAULT_LIMIT
    continuation_token: str | None = None


@dataclass(frozen=True, slots=True)
class FindDocumentsRequest:
    """Discovery: files ranked by relevance to ``query``, with summaries and keywords."""

    query: str = ""
    project: str | None = None
    limit: int = DEFAULT_LIMIT
    continuation_token: str | None = None


def _encodable(text: str) -> bool:
    """False for strings holding lone surrogates (valid JSON, not valid UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_list(values: tuple[str, ...]) -> tuple[str, ...]:
    """Stripped, distinct items in their first order."""
    return tuple(dict.fromkeys(v.strip() for v in values))


def _check_items(errors: list[FieldError], name: str, values: tuple[str, ...]) -> None:
    if len(values) > MAX_ITEMS:
        errors.append(FieldError(name, f"must hold at most {MAX_ITEMS} items (got {len(values)})"))
    for value in values:
        if not value.strip():
            errors.append(FieldError(name, "must not contain empty strings"))
            return
        if "\x00" in value or len(value) > MAX_TEXT_CHARS or not _encodable(value):
            errors.append(
                FieldError(name, f"items must be at most {MAX_TEXT_CHARS} characters of text, without NUL")
            )
            return


def _check_common(errors: list[FieldError], project: str | None, limit: int, token: str | None) -> None:
    if project is not None and (not project.strip() or "\x00" in project or not _encodable(project)):
        errors.append(FieldError("project", "must be a project name or id"))
    if not 1 <= limit <= MAX_LIMIT:
        errors.append(FieldError("limit", f"must be between 1 and {MAX_LIMIT} (got {limit})"))
    if token is not None and not token:
        errors.append(FieldError("continuation_token", "must not be empty"))


def validate_content_request(request: ContentRequest) -> None:
    """Raise a ValidationError naming every invalid field of a search_content request."""
    errors: list[FieldError] = []
    _check_items(errors, "semantic_concepts", request.semantic_concepts)
    _check_items(errors, "exact_terms", request.exact_terms)
    if not (request.semantic_concepts or request.exact_terms or request.continuation_token):
        errors.append(FieldError("semantic_concepts", "give semantic_concepts and/or exact_terms"))
    if request.min_score is not None and not 0.0 <= request.min_score <= 1.0:
        errors.append(FieldError("min_score", f"must be between 0 and 1 (got {request.min_score})"))
    _check_common(errors, request.project, request.limit, request.continuation_token)
    raise_errors(errors)


def validate_find_request(request: FindDocumentsRequest) -> None:
    """Raise a ValidationError naming every invalid field of a find_documents request."""
    errors: list[FieldError] = []
    if not request.query.strip() and not request.continuation_token:
        errors.append(FieldError("query", "must not be empty"))
    elif len(request.query) > 2000 or "\x00" in request.query or not _encodable(request.query):
        errors.append(FieldError("query", "must be at most 2000 characters, without NUL"))
    _check_common(errors, request.project, request.limit, request.continuation_token)
    raise_errors(errors)


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
    uri: str = ""
    """The ``file://`` URI of its file."""
    matches: tuple[Range, ...] = ()
    """Where the concepts' words and the exact terms stand in ``content``, as positions in
    the file (LSP: 0-based lines, UTF-16 columns)."""


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
    uri: str = ""
    """The ``file://`` URI of the file."""


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
