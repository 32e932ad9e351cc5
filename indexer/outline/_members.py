"""Members of a class kept whole in one chunk, in an index made before every unit had a chunk
of its own (chunker version 1 split only large classes): a small class's methods are found
here by reading its text. Chunks of the current chunker never need it.

A member is a line at the class body's first indentation level that defines a name the
chunker already lists in the chunk's ``definitions`` (so a call or a field is never taken
for a method): ``def``/``fn``/``func``/``fun``/``function`` lines, nested type
declarations, and C-family signatures ``name(…)`` not ending in ``;``. Its lines run to
the next line at the same or a lower indentation (a closing brace at that level included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CONTAINER_KINDS", "Member", "find_members"]

#: Unit kinds whose single-chunk bodies are searched for members.
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "module", "namespace"})

_KEYWORD = re.compile(
    r"\b(def|fn|func|fun|function|sub|class|struct|interface|enum|trait|object)\s+([A-Za-z_$][\w$]*)"
)
_SIGNATURE = re.compile(r"([A-Za-z_$~][\w$]*)\s*(?:<[^()]*>)?\s*\(")
_NOT_MEMBER = re.compile(r"\s*(?:return|if|for|while|switch|catch|new|throw|else|case|await|yield)\b")
_PREFIX = re.compile(r"\s*(?:@|//|/\*|\*|#\[|#(?!\w)|///)")
_CLOSER = re.compile(r"\s*(?:[}\])]+;?|end)\s*$")
_TYPE_KINDS = {"class": "class", "object": "class", "struct": "struct", "interface": "interface",
               "enum": "enum", "trait": "trait"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Member:
    """A member found in a class's text: its name, kind and 0-based line span in that text
    (from its decorators or doc comment to its last line)."""

    name: str
    kind: str
    first: int
    last: int


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _member_indent(lines: list[str]) -> int | None:
    header = next((i for i, line in enumerate(lines) if line.strip() and not _PREFIX.match(line)), None)
    if header is None:
        return None
    base = _indent(lines[header])
    deeper = [_indent(line) for line in lines[header + 1 :] if line.strip() and _indent(line) > base]
    return min(deeper) if deeper else None


def _member_at(line: str, names: frozenset[str], owner: str) -> tuple[str, str] | None:
    """``(name, kind)`` when ``line`` defines a member, else None."""
    keyword = _KEYWORD.search(line)
    if keyword is not None and keyword.group(2) in names:
        kind = _TYPE_KINDS.get(keyword.group(1), "method")
        return keyword.group(2), _method_kind(keyword.group(2), owner) if kind == "method" else kind
    text = line.split("//", maxsplit=1)[0].rstrip()
    if not text or text.endswith(",") or _NOT_MEMBER.match(text) or _PREFIX.match(text):
        return None
    signature = _SIGNATURE.search(text)
    if signature is None or signature.group(1) not in names:
        return None
    before = text[: signature.start()]
    if any(ch in before for ch in "=.(:"):
        return None
    return signature.group(1), _method_kind(signature.group(1), owner)


def _method_kind(name: str, owner: str) -> str:
    return "constructor" if name in ("__init__", "constructor", "new", "initialize", owner) else "method"


def _span_end(lines: list[str], header: int, indent: int) -> int:
    last = header
    for i in range(header + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        if _indent(line) > indent:
            last = i
            continue
        if _indent(line) == indent and _CLOSER.match(line):
            return i
        break
    return last


def _span_start(lines: list[str], header: int, indent: int, floor: int) -> int:
    first = header
    while first - 1 > floor and lines[first - 1].strip() and _indent(lines[first - 1]) == indent:
        if not _PREFIX.match(lines[first - 1]):
            break
        first -= 1
    return first


def find_members(text: str, definitions: tuple[str, ...], owner: str) -> list[Member]:
    """The members defined directly in a class's text (empty when none is recognised)."""
    lines = text.split("\n")
    indent = _member_indent(lines)
    if indent is None:
        return []
    names = frozenset(definitions)
    members: list[Member] = []
    i, floor = 0, 0
    while i < len(lines):
        line = lines[i]
        found = _member_at(line, names, owner) if line.strip() and _indent(line) == indent else None
        if found is None:
            i += 1
            continue
        end = _span_end(lines, i, indent)
        members.append(Member(found[0], found[1], _span_start(lines, i, indent, floor), end))
        floor = end
        i = end + 1
    return members
