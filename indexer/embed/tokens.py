"""Counting tokens the way budgets are stated: the embedding model's own word-piece
tokenizer, loaded from the model's ``tokenizer.json`` with the ``tokenizers`` library only
(no torch, no transformers, nothing downloaded).

Word-piece counts are additive over text joined at whitespace (the tokenizer splits at
whitespace before anything else), so an answer built from blocks joined by newlines costs
exactly the sum of its blocks. When the configured model has no ``tokenizer.json``, the
chunker's estimate of the same count stands in (named so).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from indexer.config import EmbedConfig

__all__ = ["TokenCounter", "load_token_counter"]


@dataclass
class TokenCounter:
    """Counts tokens of texts with one named tokenizer (safe to share between threads)."""

    name: str
    """The tokenizer, as answers and docs name it (``all-MiniLM-L6-v2 word-piece``)."""
    _tokenizer: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, text: str) -> int:
        """Tokens of ``text`` (no special tokens, never truncated)."""
        if not text:
            return 0
        if self._tokenizer is None:
            from indexer.chunker import estimate_tokens

            return estimate_tokens(text)
        with self._lock:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text (one batch through the tokenizer)."""
        if self._tokenizer is None:
            return [self.count(text) for text in texts]
        with self._lock:
            encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]


def load_token_counter(config: EmbedConfig | None = None) -> TokenCounter:
    """The configured model's word-piece counter, or the chunker's estimate when the model
    folder has no ``tokenizer.json`` (or it cannot be read)."""
    from indexer.embed.sentence import model_dir

    config = config or EmbedConfig()
    short = config.model.rsplit("/", 1)[-1]
    try:
        path = os.path.join(model_dir(config), "tokenizer.json")
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(path)
    except Exception:
        return TokenCounter(f"lode's estimate of {short} word-pieces")
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return TokenCounter(f"{short} word-piece", tokenizer)
