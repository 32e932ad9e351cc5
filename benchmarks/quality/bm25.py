"""The reference ranking: plain BM25 over whole files, written here, independent of lode.

Every indexed file is one document. Text is cut into words (runs of letters and digits);
each word counts once as written (lower-cased) and once per part when it is a compound
identifier (``parseDocument`` → ``parse``, ``document``; ``read_lines`` → ``read``,
``lines``). Okapi BM25 with ``k1 = 1.2``, ``b = 0.75`` and the non-negative IDF
``ln(1 + (N − df + 0.5) / (df + 0.5))``; ties are broken by path.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping

__all__ = ["BM25Index", "tokenize"]

_WORD = re.compile(r"[^\W_]+(?:_[^\W_]+)*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words of ``text``, each compound identifier followed by its parts."""
    tokens: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        tokens.append(word.lower())
        parts = [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]
        if len(parts) > 1:
            tokens += parts
    return tokens


class BM25Index:
    """BM25 over a fixed set of documents (path → text)."""

    def __init__(self, documents: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._postings: dict[str, list[tuple[str, int]]] = {}
        self._lengths: dict[str, int] = {}
        for path, text in documents.items():
            counts = Counter(tokenize(text))
            self._lengths[path] = sum(counts.values())
            for term, count in counts.items():
                self._postings.setdefault(term, []).append((path, count))
        total = sum(self._lengths.values())
        self._average = total / len(self._lengths) if self._lengths else 0.0

    def __len__(self) -> int:
        return len(self._lengths)

    def idf(self, term: str) -> float:
        """The inverse document frequency of ``term`` (0 when no document holds it)."""
        df = len(self._postings.get(term, ()))
        if df == 0:
            return 0.0
        return math.log(1 + (len(self._lengths) - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> dict[str, float]:
        """The BM25 score of every document that holds a query term."""
        out: dict[str, float] = {}
        for term, weight in Counter(tokenize(query)).items():
            idf = self.idf(term)
            for path, count in self._postings.get(term, ()):
                norm = self.k1 * (1 - self.b + self.b * self._lengths[path] / (self._average or 1.0))
                out[path] = out.get(path, 0.0) + weight * idf * count * (self.k1 + 1) / (count + norm)
        return out

    def rank(self, query: str, limit: int = 10) -> list[str]:
        """The ``limit`` best documents for ``query``, best first."""
        scored = self.scores(query)
        return sorted(scored, key=lambda path: (-scored[path], path))[:limit]
