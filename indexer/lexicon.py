"""Words of code: identifier splitting shared by the chunker (embedding headers) and
lexical search (the derived full-text column and query expansion).

``parseHTTPRequest`` → ``parse http request``; ``parse_document`` → ``parse document``.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "expand_identifiers",
    "identifier_words",
    "is_identifier_like",
    "iter_identifiers",
    "split_identifier",
]

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@functools.lru_cache(maxsize=1 << 16)
def _parts(name: str) -> tuple[str, ...]:
    return tuple(p.lower() for p in _PART.findall(name))


@functools.lru_cache(maxsize=1 << 16)
def _expansion(ident: str) -> str:
    """The joined form and the parts of a compound identifier ('' for a plain word)."""
    parts = _parts(ident)
    return f"{''.join(parts)} {' '.join(parts)}" if len(parts) > 1 else ""


def split_identifier(name: str) -> list[str]:
    """Split an identifier into lower-case words at case changes, digits and underscores."""
    return list(_parts(name))


def identifier_words(name: str) -> str:
    """An identifier as space-separated lower-case words (``parseHTTPRequest`` → ``parse http request``)."""
    return " ".join(split_identifier(name))


def is_identifier_like(term: str) -> bool:
    """True for camelCase, PascalCase, snake_case or digit-bearing terms (matched case-sensitively)."""
    if not _IDENT.fullmatch(term):
        return False
    if "_" in term or any(c.isdigit() for c in term):
        return True
    has_lower = any(c.islower() for c in term)
    inner_upper = any(c.isupper() for c in term[1:])
    return has_lower and inner_upper


def iter_identifiers(text: str) -> list[str]:
    """Identifier-shaped words of ``text`` in order of appearance (with repeats)."""
    return _IDENT.findall(text)


def expand_identifiers(text: str) -> str:
    """Text for the full-text index: the words of ``text`` plus, for every compound
    identifier, its joined form and its parts, so ``parse document``, ``parseDocument``
    and ``parse_document`` meet on the same tokens."""
    extra = [e for e in map(_expansion, dict.fromkeys(_IDENT.findall(text))) if e]
    if not extra:
        return text
    return f"{text}\n{' '.join(extra)}"
