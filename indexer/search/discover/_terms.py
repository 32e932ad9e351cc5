"""Words of a question: stop words out, identifiers split, light stemming for matching."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Final

from indexer.lexicon import split_identifier

__all__ = ["ENGLISH_STOPWORDS", "PORTUGUESE_STOPWORDS", "extract_terms", "match_words", "term_overlap"]

#: Common English function words plus question words (``what``, ``how``, ``explain``…).
ENGLISH_STOPWORDS: Final[frozenset[str]] = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each either etc few
    for from further get gets had has have having he her here hers him his how i if in into is it
    its itself just let me more most my no nor not of off on once only or other our ours out over
    own please same she should show so some such tell than that the their theirs them then there
    these they this those through to too under until up us very was we were what when where which
    while who whom whose why will with would you your yours describe explain give""".split()
)
#: The Portuguese stop words of the design (``O que é o vectorizer``).
PORTUGUESE_STOPWORDS: Final[frozenset[str]] = frozenset({"o", "que", "é"})

_WORD = re.compile(r"[^\W_][\w.+#-]*[^\W_]|[^\W_]", re.UNICODE)
_ALNUM = re.compile(r"[A-Za-z0-9]+")
_SUFFIXES: Final = ("ing", "ies", "es", "ed", "s")


def extract_terms(question: str, extra_stopwords: Iterable[str] = ()) -> list[str]:
    """The question's words without stop words, in order, as written (duplicates removed)."""
    stop = ENGLISH_STOPWORDS | PORTUGUESE_STOPWORDS | {w.lower() for w in extra_stopwords}
    out: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(question):
        low = word.lower()
        if low in stop or low in seen:
            continue
        seen.add(low)
        out.append(word)
    return out


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@functools.lru_cache(maxsize=65_536)
def _token_stems(token: str) -> frozenset[str]:
    return frozenset({_stem(token.lower()), *(_stem(part) for part in split_identifier(token))})


def match_words(text: str) -> set[str]:
    """Lower-case stems of the words and identifier parts of ``text`` (for overlap tests)."""
    out: set[str] = set()
    for token in set(_ALNUM.findall(text)):
        out |= _token_stems(token)
    return out


def term_overlap(terms: Iterable[str], words: set[str]) -> float:
    """Share of ``terms`` (each as its own word set) found in ``words``, in [0, 1]."""
    stems = [match_words(t) for t in terms]
    stems = [s for s in stems if s]
    if not stems:
        return 0.0
    return sum(1 for s in stems if s <= words) / len(stems)
