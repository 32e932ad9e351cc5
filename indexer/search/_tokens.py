"""Continuation tokens: opaque, stateless, bound to their query and to the index.

A token is the URL-safe base64 (no padding) of ``payload ‖ tag``. The payload is compact
JSON: ``{"v": 1, "k": kind, "q": query, "o": offset, "iv": index version, "d": digest}``,
where ``digest`` fingerprints the ranking up to ``offset``: the set of (id, score) of every
result already handed out (``head_digest`` adds a page to it; the order of results of
equal score and the size of the pages do not change it). ``tag`` is 16 bytes of keyed
BLAKE3 over the payload, keyed per store (its path and model), so an edited, truncated or
foreign token is refused (a 400). The tag is an integrity check, not a secret: a token grants nothing its
query does not already allow.

When the index changed since the token was made, the search is run again and its first
``offset`` results fingerprinted: the same digest means the pages already seen are
still exactly the head of the ranking, so paging goes on without a repeat or a gap;
another digest raises ``TokenExpiredError`` (a 409) instead of silently mixing rankings.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import blake3

from indexer.errors import ValidationError

__all__ = ["MAX_TOKEN_CHARS", "PageToken", "decode_token", "encode_token", "head_digest", "token_key"]

MAX_TOKEN_CHARS = 8192
_TAG_BYTES = 16
_VERSION = 1
_FIELD = "continuation_token"


@dataclass(frozen=True, slots=True)
class PageToken:
    """Where a paged query stands: its kind, its query, the next offset and what it saw."""

    kind: str
    query: dict[str, Any]
    offset: int
    index_version: int
    digest: str


def token_key(store_path: str, model_id: str) -> bytes:
    """The 32-byte key that tags tokens of one store."""
    return blake3.blake3(f"lode continuation token\x00{store_path}\x00{model_id}".encode()).digest()


def head_digest(digest: str, ranked: Iterable[tuple[str, float]]) -> str:
    """``digest`` (``""`` at the start) with (id, score) pairs added: the sum of their
    16-byte hashes modulo 2^128, in hex (so it is the same in any order)."""
    total = int(digest or "0", 16)
    for item_id, score in ranked:
        total += int.from_bytes(blake3.blake3(f"{item_id}:{score:.9g}".encode()).digest(length=16), "big")
    return f"{total % (1 << 128):032x}"


def encode_token(token: PageToken, key: bytes) -> str:
    """The opaque text of a token."""
    payload = json.dumps(
        {
            "v": _VERSION,
            "k": token.kind,
            "q": token.query,
            "o": token.offset,
            "iv": token.index_version,
            "d": token.digest,
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    tag = blake3.blake3(payload, key=key).digest(length=_TAG_BYTES)
    return base64.urlsafe_b64encode(payload + tag).decode().rstrip("=")


def decode_token(text: str, key: bytes, kind: str) -> PageToken:
    """The token in ``text``; a ValidationError on ``continuation_token`` when it is not one."""
    if not text or len(text) > MAX_TOKEN_CHARS:
        raise ValidationError(_FIELD, f"must be 1 to {MAX_TOKEN_CHARS} characters")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(_FIELD, "is not a continuation token (not base64url)") from None
    payload, tag = raw[:-_TAG_BYTES], raw[-_TAG_BYTES:]
    if len(raw) <= _TAG_BYTES or blake3.blake3(payload, key=key).digest(length=_TAG_BYTES) != tag:
        raise ValidationError(_FIELD, "is not a valid continuation token (altered, or from another index)")
    data = json.loads(payload)
    if data.get("v") != _VERSION or data.get("k") != kind:
        raise ValidationError(_FIELD, f"was not made by {kind}")
    return PageToken(kind, dict(data["q"]), int(data["o"]), int(data["iv"]), str(data["d"]))
