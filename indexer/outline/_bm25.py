"""BM25 over outline nodes, with real corpus statistics and three weighted fields.

Each node is a document with a title, a summary and its own text (content). A term's
weight in a node is the BM25F sum of its per-field frequencies, each normalised by the
field's length against the project's average for that field and weighted (title above
summary above content); ``idf`` comes from how many nodes of the project hold the term.
Postings live in a few numpy arrays sorted by term (node numbers, packed counts and the
precomputed saturated weight), so building is one sort and scoring is vector arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from indexer.outline._model import OutlineNode

__all__ = ["FIELD_WEIGHTS", "Bm25Index", "Hit"]

#: (title, summary, content) weights.
FIELD_WEIGHTS = (3.0, 2.0, 1.0)
_B = np.array([0.3, 0.5, 0.75])
_K1 = 1.2


@dataclass(frozen=True, slots=True)
class Hit:
    """A node (by position in the index) with its score and the IDF sum of the terms it matched."""

    number: int
    score: float
    matched_idf: float


class Bm25Index:
    """An inverted index of a project's nodes."""

    def __init__(self, nodes: Sequence[OutlineNode]) -> None:
        self.nodes = list(nodes)
        self.position = {node.id: number for number, node in enumerate(self.nodes)}
        counts = np.fromiter((len(n.terms) for n in self.nodes), dtype=np.int64, count=len(self.nodes))
        vocab: dict[str, int] = {}
        ids = np.fromiter(
            (vocab.setdefault(t, len(vocab)) for n in self.nodes for t in n.terms),
            dtype=np.int64,
            count=int(counts.sum()),
        )
        order = np.argsort(ids, kind="stable")
        self._docs = np.repeat(np.arange(len(self.nodes), dtype=np.int64), counts)[order]
        packed = np.frombuffer(b"".join(n.tfs for n in self.nodes), dtype=np.uint8).reshape(-1, 3)
        self._tfs = packed[order].astype(np.float64)
        bounds = np.searchsorted(ids[order], np.arange(len(vocab) + 1))
        self._spans = {term: (int(bounds[i]), int(bounds[i + 1])) for term, i in vocab.items()}
        lengths = np.array([n.lengths for n in self.nodes], dtype=np.float64).reshape(-1, 3)
        self._lengths = lengths
        self._avg = np.maximum(1.0, lengths.mean(axis=0)) if len(self.nodes) else np.ones(3)
        self._sat = self._saturate(self._docs, self._tfs, FIELD_WEIGHTS)

    def _saturate(self, docs: np.ndarray, tfs: np.ndarray, weights: tuple[float, float, float]) -> np.ndarray:
        norm = 1.0 - _B + _B * self._lengths[docs] / self._avg
        weight = (tfs * np.asarray(weights) / norm).sum(axis=1)
        saturated: np.ndarray = weight / (_K1 + weight)
        return saturated

    def idf(self, term: str) -> float:
        """Inverse document frequency of an index term over the project's nodes (0 if absent)."""
        span = self._spans.get(term)
        if span is None:
            return 0.0
        df = span[1] - span[0]
        return math.log(1.0 + (len(self.nodes) - df + 0.5) / (df + 0.5))

    def search(
        self,
        terms: Iterable[str],
        limit: int,
        allowed: np.ndarray | None = None,
        weights: tuple[float, float, float] = FIELD_WEIGHTS,
    ) -> list[Hit]:
        """The ``limit`` best nodes for ``terms`` (only where the ``allowed`` mask is true), best first."""
        scores = np.zeros(len(self.nodes))
        matched = np.zeros(len(self.nodes))
        for term in dict.fromkeys(terms):
            span = self._spans.get(term)
            if span is None:
                continue
            docs = self._docs[span[0] : span[1]]
            if weights == FIELD_WEIGHTS:
                sat = self._sat[span[0] : span[1]]
            else:
                sat = self._saturate(docs, self._tfs[span[0] : span[1]], weights)
            idf = self.idf(term)
            scores[docs] += idf * sat
            matched[docs] += idf * (sat > 0)
        if allowed is not None:
            scores[~allowed] = 0.0
        found = np.flatnonzero(scores > 0)
        if len(found) > limit:
            found = found[np.argpartition(-scores[found], limit - 1)[:limit]]
        ranked = sorted(found.tolist(), key=lambda n: (-scores[n], self.nodes[n].depth, n))
        return [Hit(n, float(scores[n]), float(matched[n])) for n in ranked]

    def terms_of(self, number: int, terms: Iterable[str]) -> list[str]:
        """Which of ``terms`` node ``number`` holds."""
        out: list[str] = []
        for term in dict.fromkeys(terms):
            span = self._spans.get(term)
            if span is None:
                continue
            docs = self._docs[span[0] : span[1]]
            at = int(np.searchsorted(docs, number))
            if at < len(docs) and docs[at] == number:
                out.append(term)
        return out

    def mask(self, nodes: Iterable[OutlineNode]) -> np.ndarray:
        """A boolean mask of these nodes, for ``search(allowed=…)``."""
        allowed = np.zeros(len(self.nodes), dtype=bool)
        allowed[[self.position[n.id] for n in nodes if n.id in self.position]] = True
        return allowed
