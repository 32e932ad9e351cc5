"""Search: hybrid document- and chunk-granularity search with metadata filters and exact
terms, and the agent endpoints ``search_content`` / ``find_documents`` run by it."""

from typing import TYPE_CHECKING, Any

from indexer._lazy import load_export

if TYPE_CHECKING:
    from indexer.search._cancel import cancellable, raise_if_cancelled
    from indexer.search._content import find_documents, search_content
    from indexer.search._content_io import (
        ContentRequest,
        ContentResponse,
        FindDocumentsRequest,
        FindDocumentsResponse,
    )
    from indexer.search._engine import Searcher
    from indexer.search._options import GRANULARITIES, MAX_LIMIT, MODES, SearchOptions, validate_options
    from indexer.search._results import ChunkHit, DocumentHit, FileGroup, SearchResponse

__all__ = [
    "ENGINE_ONLY",
    "GRANULARITIES",
    "MAX_LIMIT",
    "MODES",
    "ChunkHit",
    "ContentRequest",
    "ContentResponse",
    "DocumentHit",
    "FileGroup",
    "FindDocumentsRequest",
    "FindDocumentsResponse",
    "SearchOptions",
    "SearchResponse",
    "Searcher",
    "cancellable",
    "find_documents",
    "raise_if_cancelled",
    "search_content",
    "validate_options",
]

#: Where each public name lives; imported on first use (``lode --help`` stays light).
_EXPORTS = {
    "ChunkHit": "indexer.search._results",
    "ContentRequest": "indexer.search._content_io",
    "ContentResponse": "indexer.search._content_io",
    "DocumentHit": "indexer.search._results",
    "FileGroup": "indexer.search._results",
    "FindDocumentsRequest": "indexer.search._content_io",
    "FindDocumentsResponse": "indexer.search._content_io",
    "ENGINE_ONLY": "indexer.search._options",
    "GRANULARITIES": "indexer.search._options",
    "MAX_LIMIT": "indexer.search._options",
    "MODES": "indexer.search._options",
    "SearchOptions": "indexer.search._options",
    "SearchResponse": "indexer.search._results",
    "Searcher": "indexer.search._engine",
    "cancellable": "indexer.search._cancel",
    "raise_if_cancelled": "indexer.search._cancel",
    "find_documents": "indexer.search._content",
    "search_content": "indexer.search._content",
    "validate_options": "indexer.search._options",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first use."""
    return load_export(__name__, _EXPORTS, name)
