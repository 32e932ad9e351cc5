"""Search: hybrid document- and chunk-granularity search with metadata filters, and the
agent endpoints ``search_content`` / ``find_documents`` (``indexer.search.content``)."""

from typing import TYPE_CHECKING, Any

from indexer._lazy import load_export

if TYPE_CHECKING:
    from indexer.search._engine import Searcher
    from indexer.search._options import GRANULARITIES, MAX_LIMIT, MODES, SearchOptions, validate_options
    from indexer.search._results import ChunkHit, DocumentHit, FileGroup, SearchResponse
    from indexer.search.content import (
        ContentRequest,
        ContentResponse,
        ContentSearcher,
        FindDocumentsRequest,
        FindDocumentsResponse,
    )

__all__ = [
    "GRANULARITIES",
    "MAX_LIMIT",
    "MODES",
    "ChunkHit",
    "ContentRequest",
    "ContentResponse",
    "ContentSearcher",
    "DocumentHit",
    "FileGroup",
    "FindDocumentsRequest",
    "FindDocumentsResponse",
    "SearchOptions",
    "SearchResponse",
    "Searcher",
    "validate_options",
]

#: Where each public name lives; imported on first use (``lode --help`` stays light).
_EXPORTS = {
    "ChunkHit": "indexer.search._results",
    "ContentRequest": "indexer.search.content",
    "ContentResponse": "indexer.search.content",
    "ContentSearcher": "indexer.search.content",
    "DocumentHit": "indexer.search._results",
    "FileGroup": "indexer.search._results",
    "FindDocumentsRequest": "indexer.search.content",
    "FindDocumentsResponse": "indexer.search.content",
    "GRANULARITIES": "indexer.search._options",
    "MAX_LIMIT": "indexer.search._options",
    "MODES": "indexer.search._options",
    "SearchOptions": "indexer.search._options",
    "SearchResponse": "indexer.search._results",
    "Searcher": "indexer.search._engine",
    "validate_options": "indexer.search._options",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first use."""
    return load_export(__name__, _EXPORTS, name)
