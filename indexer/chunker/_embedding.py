"""The text a chunk is embedded as: a one-line natural-language header, then the content.

The header reads like a caption: the unit's name split into words, what kind of unit it
is in which language and inside what, and the file's path as words, e.g.
``parse http request (python method of http parser) in src web request py``: it ranks
better than a ``key: value`` header (figures: docs/performance.md).
"""

from __future__ import annotations

from blake3 import blake3

from indexer.lexicon import identifier_words
from indexer.models import Chunk

__all__ = [
    "EMBEDDING_TEXT_VERSION",
    "embedding_input",
    "embedding_text",
    "embedding_text_version",
    "text_hash",
]

#: Bumped with every change of what ``embedding_text`` makes of a chunk: a writer that opens
#: an index embedded under another version compares every vector's text hash with its
#: chunk's text now and embeds again those that differ (``Vectors.refresh_keys``).
EMBEDDING_TEXT_VERSION = 1

_MAX_SCOPE = 4
_MAX_HEADER = 300
_KIND = {"impl": "implementation", "block": "code", "text": "text", "section": "section"}


def _path_words(path: str) -> str:
    return " ".join(identifier_words(part) for part in path.replace(".", "/").split("/") if part)


def embedding_text(path: str, chunk: Chunk) -> str:
    """Caption line (name words, kind, language, enclosing scope, path words), newline, content.

    A later piece of a unit cut in pieces (it starts after the unit's first line) gets the
    unit's signature on a line of its own before its content, so a piece starting mid-body
    (``} else {``) still says what it belongs to."""
    name = identifier_words(chunk.node_name) if chunk.node_name else ""
    outer = " ".join(identifier_words(s) for s in chunk.scope_path[:-1][-_MAX_SCOPE:])
    kind = f"{chunk.language} {_KIND.get(chunk.node_type, chunk.node_type)}"
    where = f" of {outer}" if outer else ""
    header = f"{name} ({kind}{where}) in {_path_words(path)}".strip()[:_MAX_HEADER]
    if chunk.signature and chunk.unit_start_line and chunk.start_line > chunk.unit_start_line:
        header = f"{header}\n{chunk.signature}"
    return f"{header}\n{chunk.content}"


def text_hash(text: str) -> str:
    """The hash a vector of ``text`` is known by (blake3 of the exact text, hex)."""
    return blake3(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def embedding_input(path: str, chunk: Chunk) -> tuple[str, str]:
    """What the model reads for a chunk of the file at ``path``, and that text's hash."""
    text = embedding_text(path, chunk)
    return text, text_hash(text)


def embedding_text_version() -> int:
    """The ``EMBEDDING_TEXT_VERSION`` of this lode (read when called)."""
    return EMBEDDING_TEXT_VERSION
