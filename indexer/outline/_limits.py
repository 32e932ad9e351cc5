"""The caps of the outline's operations: defaults, maxima, and one range check."""

from __future__ import annotations

from indexer.errors import ValidationError
from indexer.limits import MAX_QUERY_CHARS

__all__ = ["LIMITS", "MAX_LISTED", "MAX_QUESTION_CHARS", "check_range", "check_text"]

#: (default, maximum) of each capped option.
LIMITS: dict[str, tuple[int, int]] = {
    "depth": (1, 5),
    "limit": (100, 1000),
    "max_chars": (20_000, 200_000),
    "find_limit": (50, 500),
    "grep_limit": (50, 500),
    "max_branches": (3, 10),
}
#: Most nodes one listing returns, whatever its depth and per-level limit.
MAX_LISTED = 2_000
#: Longest question ``locate`` and ``plan`` accept.
MAX_QUESTION_CHARS = MAX_QUERY_CHARS


def check_range(field: str, value: int, low: int, high: int) -> None:
    """A ValidationError naming ``field`` unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise ValidationError(field, f"must be between {low} and {high} (got {value})")


def check_text(field: str, value: str, limit: int = MAX_QUESTION_CHARS) -> str:
    """``value`` stripped, or a ValidationError naming ``field`` when empty, too long or holding NUL."""
    text = value.strip()
    if not text:
        raise ValidationError(field, "is empty")
    if len(text) > limit:
        raise ValidationError(field, f"is longer than {limit} characters")
    if "\x00" in text:
        raise ValidationError(field, "contains a NUL character")
    return text
