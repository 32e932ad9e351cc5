"""Agent endpoints: ``search_content`` (retrieval of exact passages, eager, paged by
continuation tokens), ``find_documents`` (discovery of files, with summaries and key
phrases) and document access by project-relative path."""

from indexer.search.content._access import check_document_id, document_data, document_text
from indexer.search.content._engine import ContentSearcher
from indexer.search.content._request import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    ContentRequest,
    FindDocumentsRequest,
)
from indexer.search.content._results import (
    ContentData,
    ContentResponse,
    ContentResult,
    ContentStatistics,
    Continuation,
    DocumentChunk,
    DocumentData,
    DocumentResult,
    DocumentsData,
    DocumentsStatistics,
    DocumentText,
    FindDocumentsResponse,
    NavigationHints,
    ResponseStatus,
)
from indexer.search.content._scoring import DEFAULT_MIN_SCORE, to_relevance
from indexer.search.content._terms import contains_term, is_case_sensitive

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_MIN_SCORE",
    "MAX_LIMIT",
    "ContentData",
    "ContentRequest",
    "ContentResponse",
    "ContentResult",
    "ContentSearcher",
    "ContentStatistics",
    "Continuation",
    "DocumentChunk",
    "DocumentData",
    "DocumentResult",
    "DocumentText",
    "DocumentsData",
    "DocumentsStatistics",
    "FindDocumentsRequest",
    "FindDocumentsResponse",
    "NavigationHints",
    "ResponseStatus",
    "check_document_id",
    "contains_term",
    "document_data",
    "document_text",
    "is_case_sensitive",
    "to_relevance",
]
