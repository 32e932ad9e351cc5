"""lode's index on disk (LanceDB). The only package that imports lancedb.

Tables: ``projects``, ``code_documents``, ``code_chunks``, ``code_symbols``,
``embedding_cache``, ``tasks``, ``file_errors``, ``write_intents``, ``chunk_vocabulary``
and ``meta`` (schema version, model id, dimension, embedding-text version). ``Store``
holds one object per table (``store.chunks.count()``, ``store.projects.get(ref)``…);
the LanceDB and Lance workarounds beneath them live in ``_lance``.
"""

from indexer.store._access import StoreAccess
from indexer.store._documents import IndexedText
from indexer.store._lance._maintenance import OPTIMIZE_AFTER_ROWS
from indexer.store._lance._versions import DiskUsage
from indexer.store._migrate import needs_upgrade, upgrade_due
from indexer.store._rows import ChunkWrite, DocState, FileWrite, chunk_search_text
from indexer.store._schema import SCHEMA_VERSION
from indexer.store._search import Candidate, ChunkFacts, Detail
from indexer.store._sql import glob_to_regex
from indexer.store._store import Store, open_store, read_store_info
from indexer.store._symbols import NameMatch
from indexer.store._vocabulary import WORD, TermRun, words_of

__all__ = [
    "OPTIMIZE_AFTER_ROWS",
    "SCHEMA_VERSION",
    "WORD",
    "Candidate",
    "ChunkFacts",
    "ChunkWrite",
    "Detail",
    "DiskUsage",
    "DocState",
    "FileWrite",
    "IndexedText",
    "NameMatch",
    "Store",
    "StoreAccess",
    "TermRun",
    "chunk_search_text",
    "glob_to_regex",
    "needs_upgrade",
    "open_store",
    "read_store_info",
    "upgrade_due",
    "words_of",
]
