"""Topic tags: the key words of a node, by TF-IDF within its project.

A unit's or section's tags come from its title (counted twice), its summary and its own
text, plus its children's titles; a file's title counts once. A directory or the root
takes the tags most common among its children, weighted by their size. Terms are ranked
by count × IDF and shown as readable words.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from indexer.outline._model import DIR_KIND, FILE_KIND, ROOT_KIND, OutlineNode
from indexer.outline._text import query_terms, surface

__all__ = ["TAG_COUNT", "TagBook"]

#: Tags kept per node.
TAG_COUNT = 5


class TagBook:
    """Topic tags of a project's nodes, computed on first request and remembered."""

    def __init__(self, idf: Callable[[str], float]) -> None:
        self._idf = idf
        self._tags: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def tags(self, node: OutlineNode) -> tuple[str, ...]:
        """The node's topic tags (at most ``TAG_COUNT``)."""
        found = self._tags.get(node.id)
        if found is None:
            found = self._folder_tags(node) if node.kind in (DIR_KIND, ROOT_KIND) else self._text_tags(node)
            with self._lock:
                self._tags[node.id] = found
        return found

    def _text_tags(self, node: OutlineNode) -> tuple[str, ...]:
        boost = 1 if node.kind == FILE_KIND else 2
        counts: dict[str, float] = {}
        for i, term in enumerate(node.terms):
            title, summary, content = node.tfs[3 * i : 3 * i + 3]
            counts[term] = boost * title + summary + content
        for child in node.children:
            for term in query_terms(child.title):
                counts[term] = counts.get(term, 0.0) + 1
        scored = [
            (count * self._idf(term), surface(term))
            for term, count in counts.items()
            if len(term) > 2 and not term.isdigit()
        ]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return tuple(dict.fromkeys(word for _, word in scored))[:TAG_COUNT]

    def _folder_tags(self, node: OutlineNode) -> tuple[str, ...]:
        votes: dict[str, float] = {}
        for child in node.children:
            weight = math.sqrt(child.leaf_count)
            for rank, tag in enumerate(self.tags(child)):
                votes[tag] = votes.get(tag, 0.0) + (TAG_COUNT - rank) * weight
        ranked = sorted(votes.items(), key=lambda item: (-item[1], item[0]))
        return tuple(tag for tag, _ in ranked[:TAG_COUNT])
