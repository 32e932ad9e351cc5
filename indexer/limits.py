"""The limits of lode's requests, one set for every front end, and how an error shows a
bad value.

The HTTP request schemas take their ``max_length`` from these numbers; the indexer checks
them where each operation's request is validated (search options, symbol queries, the
outline's calls, discovery, registering and re-indexing a project), so the MCP tools and
the CLI meet the same limits before anything reaches the store. An error quotes at most
``QUOTE_CHARS`` characters of a value (``quote``) and ``QUOTE_ITEMS`` items of a list
(``quote_items``): a message, and the log line that repeats it, stays short whatever was
sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from indexer.errors import MAX_MESSAGE_CHARS, QUOTE_CHARS, ValidationError, clip

__all__ = [
    "MAX_FIELD_ERRORS",
    "MAX_GLOBS",
    "MAX_MESSAGE_CHARS",
    "MAX_NAMES",
    "MAX_PATHS",
    "MAX_QUERY_CHARS",
    "MAX_REGEX_CHARS",
    "MAX_SYMBOL_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TITLE_CHARS",
    "QUOTE_CHARS",
    "QUOTE_ITEMS",
    "check_items",
    "check_relative_path",
    "check_text",
    "clip",
    "items_problem",
    "quote",
    "quote_items",
    "relative_path_problem",
    "text_problem",
]

MAX_GLOBS: Final = 100
"""Globs in one list: ``path_include``, ``path_exclude``, a project's ``include`` and
``exclude``, discovery's project globs."""
MAX_NAMES: Final = 1_000
"""Items in one list of names: ``projects``, ``languages``, ``node_types``,
``has_definitions``, ``has_references``, a symbol query's kinds and languages."""
MAX_PATHS: Final = 1_000
"""Paths in one re-index request."""
MAX_TEXT_CHARS: Final = 4_096
"""Characters of one name, glob, path, node or id."""
MAX_QUERY_CHARS: Final = 2_000
"""Characters of a search query or a question."""
MAX_SYMBOL_CHARS: Final = 500
"""Characters of a symbol name (``Stack.push``)."""
MAX_TITLE_CHARS: Final = 500
"""Characters of an outline ``find`` glob on titles."""
MAX_REGEX_CHARS: Final = 1_000
"""Characters of an outline ``grep`` regular expression."""
QUOTE_ITEMS: Final = 5
"""Most items of a list an error message quotes."""
MAX_FIELD_ERRORS: Final = 20
"""Most offending fields an HTTP error's ``extra`` lists (a request may name thousands)."""


def quote(value: object, chars: int = QUOTE_CHARS) -> str:
    """``repr(value)`` of at most about ``chars`` characters of it (a string is cut before
    it is quoted, so the quote stays valid Python; ``…`` after it marks a cut)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= chars else repr(value[:chars]) + "…"
    return clip(repr(value), chars)


def quote_items(values: Iterable[object], items: int = QUOTE_ITEMS) -> str:
    """``['a', 'b', … (N more)]``: the first ``items`` values quoted, and how many more."""
    listed = list(values)
    shown = ", ".join(quote(v) for v in listed[:items])
    more = len(listed) - items
    return f"[{shown}, … ({more} more)]" if more > 0 else f"[{shown}]"


def text_problem(value: str, max_chars: int = MAX_TEXT_CHARS, *, blank: bool = False) -> str | None:
    """What is wrong with one text value (None when nothing is): NUL, too long, or blank
    (empty or only spaces; allowed with ``blank``)."""
    if "\x00" in value:
        return "must not contain NUL characters"
    if len(value) > max_chars:
        return f"must be at most {max_chars} characters (got {len(value)})"
    if not blank and not value.strip():
        return "must not be empty"
    return None


def check_text(field: str, value: str, max_chars: int = MAX_TEXT_CHARS, *, blank: bool = False) -> str:
    """``value``, or a ValidationError naming ``field`` (see ``text_problem``)."""
    problem = text_problem(value, max_chars, blank=blank)
    if problem is not None:
        raise ValidationError(field, problem)
    return value


def items_problem(values: Sequence[str], max_items: int, max_chars: int = MAX_TEXT_CHARS) -> str | None:
    """What is wrong with a list of texts (None when nothing is): too many items (counted
    before any is looked at), or the first bad item."""
    if len(values) > max_items:
        return f"must hold at most {max_items} items (got {len(values)})"
    for value in values:
        if not isinstance(value, str):
            return f"items must be text (got {quote(value)})"
        problem = text_problem(value, max_chars)
        if problem is not None:
            return f"items {problem}" if problem.startswith("must") else problem
    return None


def check_items(field: str, values: Sequence[str], max_items: int, max_chars: int = MAX_TEXT_CHARS) -> None:
    """A ValidationError naming ``field`` when ``values`` has a problem (``items_problem``)."""
    problem = items_problem(values, max_items, max_chars)
    if problem is not None:
        raise ValidationError(field, problem)


def relative_path_problem(value: str) -> str | None:
    """What keeps ``value`` from being a path relative to a project root (None when nothing
    does): NUL, too long, absolute, or a ``..`` segment (what HTTP's ``RELATIVE`` pattern
    admits, no more and no less)."""
    problem = text_problem(value, blank=True)
    if problem is not None:
        return problem
    if not value:
        return "must not be empty"
    if value.startswith(("/", "\\")) or ".." in value.split("/"):
        return f"must be a path relative to the project root, without '..' (got {quote(value)})"
    return None


def check_relative_path(field: str, value: str) -> str:
    """``value``, or a ValidationError naming ``field`` (see ``relative_path_problem``)."""
    problem = relative_path_problem(value)
    if problem is not None:
        raise ValidationError(field, problem)
    return value
