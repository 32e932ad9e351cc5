"""Server-side highlighting: Pygments tokens as one HTML string per line, and the lines a
query matches."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from markupsafe import Markup
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

__all__ = ["code_block", "highlight_lines", "matching_lines", "query_terms", "token_css"]

# lode language names that Pygments spells differently (the rest are Pygments aliases).
_ALIASES = {"hcl": "terraform", "gomod": "text", "gosum": "text", "starlark": "python", "make": "make"}
_WORD = re.compile(r"[A-Za-z0-9_]{2,}")


@functools.lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer:
    name = _ALIASES.get(language, language) or "text"
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return get_lexer_by_name("text", stripnl=False, ensurenl=False)


@functools.cache
def _styled() -> frozenset[str]:
    """Token classes some style colours (whitespace never needs a span)."""
    return frozenset(re.findall(r"^\.hl \.(\w+) ", token_css(), re.MULTILINE)) - {"w"}


def _css_class(ttype: Any) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    cls = str(STANDARD_TYPES[ttype])
    return cls if cls in _styled() else ""


def highlight_lines(code: str, language: str) -> list[Markup]:
    """``code`` as one HTML string per line, tokens in Pygments' short CSS classes."""
    lines: list[list[str]] = [[]]
    for ttype, value in _lexer(language).get_tokens(code):
        cls = _css_class(ttype)
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if part:
                text = html.escape(part, quote=False)
                lines[-1].append(f'<span class="{cls}">{text}</span>' if cls else text)
    if len(lines) > 1 and not lines[-1] and code.endswith("\n"):
        lines.pop()
    return [Markup("".join(parts)) for parts in lines]


def query_terms(query: str) -> list[str]:
    """The words of a query (two characters or more, lower case) used to mark lines."""
    return sorted({w.lower() for w in _WORD.findall(query)})


def matching_lines(lines: Sequence[str], terms: Iterable[str]) -> set[int]:
    """0-based indexes of the lines that contain any of ``terms`` (case-insensitive)."""
    words = list(terms)
    return {i for i, line in enumerate(lines) if any(w in line.lower() for w in words)}


def code_block(
    lines: Sequence[Markup], first_line: int, marked: set[int], chunk: range | None = None
) -> Markup:
    """A ``<pre>`` of highlighted lines numbered from ``first_line``.

    ``marked`` holds 0-based indexes of lines a query matched; ``chunk`` the line
    numbers of the chunk shown in a whole file (given an ``id`` each for anchors).
    """
    out = []
    for i, line in enumerate(lines):
        number = first_line + i
        classes = "ln"
        if i in marked:
            classes += " mk"
        if chunk is not None and number in chunk:
            classes += " ck"
        anchor = f' id="L{number}"' if chunk is not None else ""
        out.append(f'<span class="{classes}"{anchor} data-n="{number}">{line}</span>')
    return Markup(f'<pre class="code hl">{"".join(out)}</pre>')


@functools.cache
def token_css() -> str:
    """Token colours for light and dark schemes (Pygments ``default`` and ``github-dark``)."""

    def rules(style: str) -> str:
        defs = HtmlFormatter(style=style).get_style_defs(".hl")
        keep = [
            line.split(" /*")[0]
            for line in defs.splitlines()
            if line.startswith(".hl .") and not line.startswith(".hl .hll")
        ]
        return "\n".join(keep)

    return f"{rules('default')}\n@media (prefers-color-scheme: dark) {{\n{rules('github-dark')}\n}}\n"
