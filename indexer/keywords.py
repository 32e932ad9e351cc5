"""Key phrases and a one-paragraph summary per document, computed at index time.

Both are lexical and cheap (phase 1 runs no model): a few regex passes over text the
chunker already cut.

**Keywords** (``document_keywords``, 5 to 7 phrases when the file has that much to say).
Candidates are what a file names and says: the names of the units it defines (classes,
functions, methods…) split into words (``parseRequest`` → ``parse request``), Markdown
headings, other compound names the file defines, the words of the file name, and the
file's most frequent words and adjacent word pairs. Words that say nothing about a file
(English stop words, language keywords, ``self``, ``init``, ``get``…) are dropped. A
candidate scores ``weight × (1 + ln(1 + occurrences))``: unit names and headings weigh 3
(types 3.5), other compound names and the file name 2, frequent word pairs 1.2, frequent
words 1; occurrences count the phrase's words across the whole file, so a name used
often outranks one defined and forgotten. Picking is diverse (maximal marginal relevance
with word-overlap similarity): each next phrase maximises ``0.7 × score − 0.3 × overlap
with the phrases already picked``, and a phrase whose words all lie in one already picked
is skipped. The cost is a few passes over the text (word pairs: over its first 5,000
words).

**Summary** (``document_summary``, at most about 300 characters): the module docstring
or leading doc comment (a licence header is skipped), the first paragraph under the first
Markdown heading, else the first doc comment of a unit; failing all of those, the names
the file defines (``Defines Cart, add_item, …``).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Final

from indexer.lexicon import split_identifier
from indexer.models import Chunk

__all__ = ["MAX_KEYWORDS", "MAX_SUMMARY_CHARS", "TEXT_SUFFIXES", "document_keywords", "document_summary"]

MAX_KEYWORDS: Final = 7
MIN_KEYWORDS: Final = 5
MAX_SUMMARY_CHARS: Final = 300

# Runs of letters, then the identifier parts of ``indexer.lexicon`` within a mixed-case run.
_LETTERS = re.compile(r"[A-Za-z]+")
_MMR_POOL = 60
_BIGRAM_WORDS = 5000
_UNIT_WEIGHT = {"class": 3.5, "struct": 3.5, "interface": 3.5, "trait": 3.5, "enum": 3.5, "type": 3.0}
#: Suffixes of prose documents (summarised by their first paragraph, embedded first).
TEXT_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
_STOP: Final = frozenset(
    """a about above after again all also an and any are as at be because been before being below between
    both but by can could did do does doing down during each else few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then there
    these they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours one two use used using may must make makes like new
    abstract args arg as assert async await bool boolean break byte case catch char class const continue def
    default del delete elif enum err error except export extends false final finally float fn for func
    function go if impl implements import in instance int interface isinstance kwargs lambda len let long
    mod mut nil none not null object override package pass private protected pub public raise return
    self static str string struct super switch this throw throws true try type typeof unsafe use var void
    while with yield init main get set value values data item items test tests tmp temp foo bar baz obj
    val res ret result results x y z i j k n s t v e f p q r ok todo fixme xxx http https www com org
    """.split()
)


def _words(text: str) -> list[str]:
    """Lower-case words of ``text``, identifiers split into their parts (``parseHTTP`` → parse, http)."""
    out: list[str] = []
    for token in _LETTERS.findall(text):
        if token.islower():
            out.append(token)
        elif token[1:].islower() or len(token) == 1:
            out.append(token.lower())
        else:
            out.extend(split_identifier(token))
    return out


def _informative(word: str) -> bool:
    return len(word) > 2 and word not in _STOP


@functools.lru_cache(maxsize=8192)
def _phrase(text: str) -> str:
    """A candidate phrase: the informative words of a name or heading, at most four."""
    words = [w for w in _words(text) if len(w) > 1 and w not in _STOP]
    return " ".join(words[:4])


def _candidates(path: str, chunks: Sequence[Chunk], counts: Counter[str]) -> dict[str, float]:
    weights: dict[str, float] = {}

    def add(phrase: str, weight: float) -> None:
        if phrase:
            weights[phrase] = max(weights.get(phrase, 0.0), weight)

    for chunk in chunks:
        if chunk.node_name and chunk.node_type not in ("block", "text"):
            add(_phrase(chunk.node_name), _UNIT_WEIGHT.get(chunk.node_type, 3.0))
        for name in chunk.definitions:
            phrase = _phrase(name)
            if " " in phrase:  # compound names only: parameters and locals are mostly single words
                add(phrase, 2.0)
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    add(_phrase(stem), 2.0)
    for word, _ in counts.most_common(12):
        add(word, 1.0)
    return {
        phrase: weight * (1.0 + math.log1p(sum(counts[w] for w in phrase.split()) / len(phrase.split())))
        for phrase, weight in weights.items()
    }


def _bigrams(words: list[str]) -> Counter[str]:
    """Adjacent pairs of informative words seen at least twice (in the first words of a long file)."""
    pairs = Counter(itertools.pairwise(words[:_BIGRAM_WORDS]))
    return Counter(
        {
            f"{left} {right}": n
            for (left, right), n in pairs.items()
            if n >= 2 and left != right and _informative(left) and _informative(right)
        }
    )


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _diverse(scored: dict[str, float], limit: int) -> tuple[str, ...]:
    """Maximal marginal relevance over word-overlap similarity."""
    if not scored:
        return ()
    top = max(scored.values())
    best_first = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:_MMR_POOL]
    left = {p: (s / top, frozenset(p.split())) for p, s in best_first}
    chosen: list[tuple[str, frozenset[str]]] = []
    # each candidate's largest overlap with a chosen phrase, updated as phrases are chosen
    penalty = dict.fromkeys(left, 0.0)
    while left and len(chosen) < limit:
        best = max(left, key=lambda p: (left[p][0] - 0.3 / 0.7 * penalty[p], p))
        words = left.pop(best)[1]
        if not any(words <= c for _, c in chosen):
            chosen.append((best, words))
            for p, (_, other) in left.items():
                penalty[p] = max(penalty[p], _overlap(other, words))
    return tuple(p for p, _ in chosen)


def document_keywords(
    path: str, content: str, chunks: Sequence[Chunk], limit: int = MAX_KEYWORDS
) -> tuple[str, ...]:
    """5 to ``limit`` diverse key phrases of a document (fewer when it has little to say)."""
    words = _words(content)
    counts = Counter({w: n for w, n in Counter(words).items() if _informative(w)})
    scored = _candidates(path, chunks, counts)
    for pair, n in _bigrams(words).most_common(6):
        scored.setdefault(pair, 1.2 * (1.0 + math.log1p(n)))
    picked = _diverse(scored, limit)
    if len(picked) < MIN_KEYWORDS:
        extra = {w: float(n) for w, n in counts.most_common(limit * 2) if w not in picked}
        picked = (*picked, *_diverse(extra, MIN_KEYWORDS - len(picked)))
    return picked[:limit]


# ---- summary ------------------------------------------------------------------------------
_DOC_OPEN = re.compile(r'[ \t]*[rRbBuU]?("""|\'\'\')')
_BLOCK_COMMENT = re.compile(r"\A\s*/\*\*?(.*?)\*/", re.S)
_LINE_COMMENT = re.compile(r"^\s*(?:///?|#(?![!\[]|include|define|pragma)|--|;;+)\s?(.*)$")
_LICENSE = re.compile(r"copyright|licen[cs]e|spdx|all rights reserved", re.I)
_UNIT_TYPES = frozenset(
    {"function", "method", "class", "struct", "interface", "trait", "enum", "module", "impl"}
)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def _first_paragraph(text: str) -> str:
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.strip(" \t*") for ln in block.splitlines()]
        cleaned = " ".join(ln for ln in lines if ln and not ln.startswith("@"))
        if cleaned:
            return cleaned
    return ""


def _comment_block(lines: list[str]) -> str:
    """The text of the leading comment lines (``//``, ``#``, ``--``), or ''."""
    out: list[str] = []
    for line in lines:
        match = _LINE_COMMENT.match(line)
        if match is None:
            if out or line.strip():
                break
            continue
        out.append(match.group(1))
    return "\n".join(out)


def _python_docstring(head: str) -> tuple[str, int] | None:
    """A triple-quoted string after leading blank and ``#`` lines: (its text, where it ends).

    A plain scan, not one regex: on runs of blank lines a nested-quantifier pattern
    backtracked exponentially (a file of blanked comments hung the indexer).
    """
    pos, size = 0, len(head)
    while pos < size:
        eol = head.find("\n", pos)
        line = head[pos : size if eol < 0 else eol].strip()
        if line and not line.startswith("#"):
            break
        if eol < 0:
            return None
        pos = eol + 1
    match = _DOC_OPEN.match(head, pos)
    if match is None:
        return None
    close = head.find(match.group(1), match.end())
    if close < 0:
        return None
    return head[match.end() : close], close + 3


def _leading_doc(content: str) -> str:
    """Module docstring, or the first non-licence comment at the top of the file."""
    head = content.lstrip("\ufeff")
    if head.startswith("#!"):
        head = head.split("\n", 1)[1] if "\n" in head else ""
    found = _python_docstring(head)
    if found is not None:
        text = _first_paragraph(found[0])
        if text and not _LICENSE.search(text):
            return text
        head = head[found[1] :]
    match = _BLOCK_COMMENT.match(head)
    if match is not None:
        text = _first_paragraph(match.group(1))
        if text and not _LICENSE.search(text):
            return text
        head = head[match.end() :]
    text = _first_paragraph(_comment_block(head.splitlines()))
    return "" if _LICENSE.search(text) else text


def _markdown_paragraph(content: str) -> str:
    in_fence = False
    paragraph: list[str] = []
    for line in content.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        skip = in_fence or stripped.startswith(("#", "![", "[![", "<", "|", "---", "===")) or not stripped
        if skip:
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    return " ".join(paragraph)


def _unit_doc(chunks: Sequence[Chunk]) -> str:
    for chunk in chunks:
        if chunk.node_type not in _UNIT_TYPES:
            continue
        body = chunk.content.split("\n", 1)[1] if "\n" in chunk.content else ""
        text = _leading_doc(body) or _leading_doc(chunk.content)
        if text:
            return text
    return ""


def document_summary(path: str, content: str, chunks: Sequence[Chunk], limit: int = MAX_SUMMARY_CHARS) -> str:
    """A short description of a document: its first doc comment or heading paragraph."""
    if path.lower().endswith(TEXT_SUFFIXES):
        text = _markdown_paragraph(content)
    else:
        text = _leading_doc(content) or _unit_doc(chunks)
    if not text:
        names = [c.node_name for c in chunks if c.node_name and c.node_type in _UNIT_TYPES]
        names = list(dict.fromkeys(names))
        text = f"Defines {', '.join(names[:8])}{', …' if len(names) > 8 else ''}." if names else ""
    return _clip(text, limit)
