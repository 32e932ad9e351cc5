"""Tree-sitter chunker: one source file in, ordered semantic chunks out.

``chunk_file`` never raises (``CHUNKER_VERSION`` names what it makes of the same bytes);
``detect_language`` names a file's language; ``embedding_text`` is what the embedder reads
for a chunk (``embedding_input`` with its hash, the key of its vector); ``estimate_tokens``
is the cheap word-piece estimate used for the size limit.
"""

from __future__ import annotations

from indexer.chunker._chunk import CHUNKER_VERSION, chunk_file
from indexer.chunker._detect import KNOWN_LANGUAGES, SEMANTIC_LANGUAGES, detect_language
from indexer.chunker._embedding import (
    embedding_input,
    embedding_text,
    embedding_text_version,
    text_hash,
)
from indexer.chunker._tokens import estimate_tokens

__all__ = [
    "CHUNKER_VERSION",
    "KNOWN_LANGUAGES",
    "SEMANTIC_LANGUAGES",
    "chunk_file",
    "detect_language",
    "embedding_input",
    "embedding_text",
    "embedding_text_version",
    "estimate_tokens",
    "supported_languages",
    "text_hash",
]


def supported_languages() -> tuple[str, ...]:
    """Languages with semantic chunking (markdown included), sorted."""
    return SEMANTIC_LANGUAGES
