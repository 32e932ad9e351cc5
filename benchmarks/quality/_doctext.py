"""From a raw doc comment to a query: markers and markup stripped, first sentence kept."""

from __future__ import annotations

import html
import inspect
import re

__all__ = ["first_sentence", "is_boilerplate", "plain_doc", "word_count"]

_STRING_PREFIX = re.compile(r"^[rRbBuUfF]{0,2}('''|\"\"\"|'|\")")
_COMMENT_OPEN = re.compile(r"^\s*(/\*\*|/\*!|/\*|///|//!|//)")
_COMMENT_CLOSE = re.compile(r"\s*\*/\s*$")
_STAR = re.compile(r"^\s*\*(?!/) ?")
#: A line where the summary ends: tags, argument sections, headings, code fences.
_SECTION = re.compile(
    r"^\s*(@\w+|:(param|parameter|arg|type|return|returns|rtype|raises)\b|"
    r"(Args|Arguments|Parameters|Returns|Raises|Yields|Example|Examples|Note|Notes)\s*:\s*$|"
    r"#+\s|```|\.\. \w+::|>>>|[-*+]\s)"
)
_JAVADOC_INLINE = re.compile(r"\{@(?:code|link|linkplain|literal|value)\s+([^}]*)\}")
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_MD_REF = re.compile(r"\[([^\]]+)\](?!\()")
_RST_ROLE = re.compile(r":[\w:]+:`([^`]*)`")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "resp", "no"})
_BOILERPLATE = re.compile(
    r"^(deprecated|@deprecated|see\b|todo\b|fixme\b|xxx\b|copyright|licensed|"
    r"inheritdoc|\{@inheritdoc|internal use only|for internal use)",
    re.IGNORECASE,
)


def _strip_markers(doc: str) -> str:
    """The doc's text without quotes or comment markers, dedented."""
    match = _STRING_PREFIX.match(doc)
    if match:
        quote = match.group(1)
        body = doc[match.end() :]
        body = body.removesuffix(quote)
        return inspect.cleandoc(body)
    lines = []
    for raw in doc.splitlines():
        line = _COMMENT_OPEN.sub("", raw, count=1)
        line = _COMMENT_CLOSE.sub("", line)
        lines.append(_STAR.sub("", line, count=1))
    return inspect.cleandoc("\n".join(lines))


def _link_text(match: re.Match[str]) -> str:
    target, _, label = match.group(1).strip().partition(" ")
    return label.strip() or target.lstrip("#").replace("#", ".")


def plain_doc(doc: str) -> str:
    """The summary paragraph of a doc comment as plain text (markup removed, one line)."""
    text = _strip_markers(doc)
    text = re.sub(r"<p>|<br\s*/?>|<pre>", "\n\n", text, flags=re.IGNORECASE)
    kept: list[str] = []
    for line in text.splitlines():
        if _SECTION.match(line) or (not line.strip() and kept):
            break
        kept.append(line)
    text = " ".join(line.strip() for line in kept)
    text = _JAVADOC_INLINE.sub(_link_text, text)
    text = _MD_LINK.sub(r"\1", text)
    text = _RST_ROLE.sub(r"\1", text)
    text = _MD_REF.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = html.unescape(text).replace("`", "").replace("**", "")
    return re.sub(r"\s+", " ", text).strip()


def first_sentence(doc: str) -> str:
    """The first sentence of a doc comment's summary (abbreviations such as "e.g." do not end it)."""
    text = plain_doc(doc)
    for match in _SENTENCE_END.finditer(text):
        word = text[: match.start()].rsplit(" ", 1)[-1].lower().lstrip("(")
        if word in _ABBREVIATIONS or re.fullmatch(r"[a-z]", word):
            continue
        return text[: match.end()].strip()
    return text


def word_count(query: str) -> int:
    """Words in a query: whitespace-separated tokens holding a letter."""
    return sum(1 for token in query.split() if re.search(r"[^\W\d_]", token))


def is_boilerplate(query: str) -> bool:
    """True for summaries that say nothing about the code ("Deprecated…", "See …", "TODO")."""
    return bool(_BOILERPLATE.match(query.strip()))
