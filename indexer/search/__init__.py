"""Search: hybrid document- and chunk-granularity search with metadata filters."""

from indexer.search._engine import Searcher
from indexer.search._options import GRANULARITIES, MAX_LIMIT, MODES, SearchOptions, validate_options
from indexer.search._results import ChunkHit, DocumentHit, FileGroup, SearchResponse

__all__ = [
    "GRANULARITIES",
    "MAX_LIMIT",
    "MODES",
    "ChunkHit",
    "DocumentHit",
    "FileGroup",
    "SearchOptions",
    "SearchResponse",
    "Searcher",
    "validate_options",
]
