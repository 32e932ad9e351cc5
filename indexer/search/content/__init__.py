"""Agent endpoints: ``search_content`` (retrieval of exact passages, eager, paged by
continuation tokens), ``find_documents`` (discovery of files, with summaries and key
phrases) and document access by project-relative path."""

from typing import TYPE_CHECKING, Any

from indexer._lazy import load_export

if TYPE_CHECKING:
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

#: Where each public name lives; imported on first use (``lode --help`` stays light).
_EXPORTS = {
    "ContentData": "indexer.search.content._results",
    "ContentRequest": "indexer.search.content._request",
    "ContentResponse": "indexer.search.content._results",
    "ContentResult": "indexer.search.content._results",
    "ContentSearcher": "indexer.search.content._engine",
    "ContentStatistics": "indexer.search.content._results",
    "Continuation": "indexer.search.content._results",
    "DEFAULT_LIMIT": "indexer.search.content._request",
    "DEFAULT_MIN_SCORE": "indexer.search.content._request",
    "DocumentChunk": "indexer.search.content._results",
    "DocumentData": "indexer.search.content._results",
    "DocumentResult": "indexer.search.content._results",
    "DocumentText": "indexer.search.content._results",
    "DocumentsData": "indexer.search.content._results",
    "DocumentsStatistics": "indexer.search.content._results",
    "FindDocumentsRequest": "indexer.search.content._request",
    "FindDocumentsResponse": "indexer.search.content._results",
    "MAX_LIMIT": "indexer.search.content._request",
    "NavigationHints": "indexer.search.content._results",
    "ResponseStatus": "indexer.search.content._results",
    "check_document_id": "indexer.search.content._access",
    "contains_term": "indexer.search.content._terms",
    "document_data": "indexer.search.content._access",
    "document_text": "indexer.search.content._access",
    "is_case_sensitive": "indexer.search.content._terms",
    "to_relevance": "indexer.search.content._scoring",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first use."""
    return load_export(__name__, _EXPORTS, name)
