"""SQL text for LanceDB filters, built from data: every value is quoted here and only here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "and_all",
    "equals",
    "glob_prefix",
    "glob_to_regex",
    "in_list",
    "list_literal",
    "literal_regex",
    "quote",
    "starts_with",
]


def quote(value: str) -> str:
    """A SQL string literal for ``value`` (single quotes doubled; NUL refused)."""
    if "\x00" in value:
        raise ValueError("NUL character in a filter value")
    return "'" + value.replace("'", "''") + "'"


def equals(column: str, value: str | None) -> str | None:
    """``column = 'value'``, or None (no condition) without a value."""
    return f"{column} = {quote(value)}" if value else None


def in_list(column: str, values: Iterable[str]) -> str:
    """``column IN ('a', 'b')`` — or a false predicate for an empty list. A value with a NUL
    character is left out: no stored value holds one (an id from a URL can)."""
    items = [quote(v) for v in values if "\x00" not in v]
    if not items:
        return "false"
    return f"{column} IN ({', '.join(items)})"


def list_literal(values: Sequence[str]) -> str:
    """An array literal ``['a', 'b']`` for ``array_has_any``."""
    return "[" + ", ".join(quote(v) for v in values) + "]"


def and_all(clauses: Iterable[str | None]) -> str | None:
    """Join the non-empty clauses with AND (None when there are none)."""
    parts = [f"({c})" for c in clauses if c]
    return " AND ".join(parts) if parts else None


def glob_prefix(pattern: str) -> tuple[str, str]:
    """A path glob split into its literal start and the rest (from the first ``*``, ``?``
    or ``[``), as ``glob_to_regex(path=True)`` reads it; ("", pattern) for a glob without
    ``/``, which matches a name in any folder."""
    pattern = pattern.rstrip("/") or pattern
    if "/" not in pattern:
        return "", pattern
    pattern = pattern.lstrip("/")
    cut = min((i for i in (pattern.find(c) for c in "*?[") if i >= 0), default=len(pattern))
    return pattern[:cut], pattern[cut:]


def starts_with(column: str, prefix: str) -> str:
    """``column`` begins with ``prefix``, as a range a sorted (BTREE) index answers."""
    head = prefix.rstrip("\U0010ffff")  # the last character that has a successor
    if not head:
        return f"{column} >= {quote(prefix)}"
    last = ord(head[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # no string holds a surrogate: the next character is U+E000
        last = 0xE000
    return f"{column} >= {quote(prefix)} AND {column} < {quote(head[:-1] + chr(last))}"


def literal_regex(text: str) -> str:
    """A Rust-regex literal matching ``text`` exactly (every non-alphanumeric hex-escaped)."""
    return "".join(ch if ch.isalnum() and ch.isascii() else f"\\x{{{ord(ch):x}}}" for ch in text)


def glob_to_regex(pattern: str, *, path: bool = False) -> str:
    """Translate a glob to an anchored Rust-regex (every literal hex-escaped).

    ``*`` matches any run of characters (for paths: within one segment, ``**`` across
    segments), ``?`` one character, ``[abc]``/``[!abc]`` a class. For paths, a pattern
    without ``/`` matches the file name in any folder (as ripgrep's ``-g`` does).
    A class with a reversed range (``[z-a]``) raises ValueError.
    """
    if path:
        pattern = pattern.rstrip("/") or pattern
    if path and "/" not in pattern:
        prefix = "(?:.*/)?"
    else:
        prefix = ""
        pattern = pattern.lstrip("/") if path else pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        piece, i = _glob_piece(pattern, i, path)
        out.append(piece)
    suffix = "(?:/.*)?" if path else ""
    return f"^{prefix}{''.join(out)}{suffix}$"


def _glob_piece(pattern: str, i: int, path: bool) -> tuple[str, int]:
    """The regex for the glob element at ``i`` and the index after it."""
    ch = pattern[i]
    if ch == "*":
        if path and pattern.startswith("**", i):
            if pattern.startswith("**/", i):
                return "(?:.*/)?", i + 3
            return ".*", i + 2
        return ("[^/]*" if path else ".*"), i + 1
    if ch == "?":
        return ("[^/]" if path else "."), i + 1
    if ch == "[":
        end, cls = _char_class(pattern, i)
        if cls is not None:
            return cls, end + 1
    return literal_regex(ch), i + 1


def _char_class(pattern: str, start: int) -> tuple[int, str | None]:
    j = start + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return start, None
    body = pattern[start + 1 + (1 if negate else 0) : j]
    parts: list[str] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            if body[k] > body[k + 2]:
                raise ValueError(f"reversed range {body[k]}-{body[k + 2]}")
            parts.append(f"{literal_regex(body[k])}-{literal_regex(body[k + 2])}")
            k += 3
        else:
            parts.append(literal_regex(body[k]))
            k += 1
    return j, "[" + ("^" if negate else "") + "".join(parts) + "]"
