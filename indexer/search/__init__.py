"""Search: hybrid document- and chunk-granularity search with metadata filters, and the
agent endpoints ``search_content`` / ``find_documents`` (``indexer.search.content``)."""

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
