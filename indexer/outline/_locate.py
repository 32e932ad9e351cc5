"""``locate``: where in the outline to start reading for a question.

Every node but the root is scored with BM25 (title above summary above own text, IDF from
the project's nodes); the best ones become cues, at most one per branch (a node is left
out when an ancestor or a descendant of it was already picked). An overview question
("what is this project about", "overview", "introduction"…) starts at the README (or an
introduction/overview node); when no node matches the question's words at all, the cue
is that overview node with a low confidence, else the root.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from indexer.outline._bm25 import Hit
from indexer.outline._limits import LIMITS, check_range, check_text
from indexer.outline._model import FILE_KIND, Cue, LocateResult, OutlineNode
from indexer.outline._text import query_terms, stem
from indexer.outline._tree import summary_source

if TYPE_CHECKING:
    from indexer.outline._outline import Outline

__all__ = ["is_overview_question", "locate", "overview_node"]

_OVERVIEW = re.compile(
    r"\b(overview|intro(duction)?|about|summary|summari[sz]e|purpose|readme|getting started|"
    r"what (is|does) (this|the) (project|repo|repository|library|package|codebase|code|app)|"
    r"high[- ]level|big picture|describe (this|the) (project|repo|library))\b",
    re.IGNORECASE,
)
_OVERVIEW_WORDS = frozenset(
    stem(w)
    for w in """overview introduction intro summary summarize summarise purpose readme project repo
    repository library package codebase code app application describe explain tell general high level
    getting started main idea goal big picture point whole give show want know please quick short
    brief""".split()
)
_SCAN = 500
_PROSE = frozenset({"markdown", "rst", "text"})
_OVERVIEW_TITLES = ("readme", "introduction", "overview", "about", "intro", "getting started", "index")


def is_overview_question(question: str) -> bool:
    """True when the question asks what the project is, rather than about one thing in it."""
    if _OVERVIEW.search(question) is None:
        return False
    return all(term in _OVERVIEW_WORDS for term in query_terms(question))


def overview_node(outline: Outline) -> OutlineNode | None:
    """The README of the root, else the shallowest introduction/overview section or document."""
    source = summary_source(outline.root)
    if source is not None and source.title.lower().startswith("readme"):
        return source
    best: tuple[int, int, int] | None = None
    found: OutlineNode | None = None
    for position, node in enumerate(outline.root.walk()):
        if not (node.kind == "section" or (node.kind == FILE_KIND and node.language in _PROSE)):
            continue
        title = node.title.lower().rsplit(".", 1)[0] if node.kind == FILE_KIND else node.title.lower()
        if title in _OVERVIEW_TITLES:
            key = (node.depth, _OVERVIEW_TITLES.index(title), position)
            if best is None or key < best:
                best, found = key, node
    return found


def _cue(outline: Outline, node: OutlineNode, confidence: float, reason: str) -> Cue:
    crumb = outline.breadcrumb(node)
    return Cue(node.id, node.title, node.kind, node.path, crumb, round(confidence, 3), reason)


def _related(outline: Outline, node: OutlineNode, picked: list[OutlineNode]) -> bool:
    """True when ``node`` is an ancestor or a descendant of a picked node (or is one)."""
    mine = {a.id for a in outline.ancestors(node)}
    for other in picked:
        if other.id == node.id or other.id in mine:
            return True
        if node.id in {a.id for a in outline.ancestors(other)}:
            return True
    return False


def _scored_cues(outline: Outline, terms: list[str], room: int, taken: list[OutlineNode]) -> list[Cue]:
    index = outline.index
    hits = index.search(terms, _SCAN) if room > 0 else []
    if not hits:
        return []
    total_idf = sum(index.idf(t) for t in terms) or 1.0
    cues: list[Cue] = []
    for hit in hits:
        if len(cues) == room:
            break
        node = index.nodes[hit.number]
        if _related(outline, node, taken):
            continue
        taken.append(node)
        reason = f"BM25 {hit.score:.2f}; matched: {', '.join(index.terms_of(hit.number, terms))}"
        cues.append(_cue(outline, node, _confidence(hit, hits[0].score, total_idf), reason))
    return cues


def _confidence(hit: Hit, top: float, total_idf: float) -> float:
    coverage = min(1.0, hit.matched_idf / total_idf)
    return coverage * (0.5 + 0.5 * hit.score / top)


def locate(outline: Outline, question: str, max_branches: int = 3) -> LocateResult:
    """Cues for a question: the best-scoring branches, or the overview / root fallback."""
    text = check_text("question", question)
    check_range("max_branches", max_branches, 1, LIMITS["max_branches"][1])
    terms = query_terms(text)
    overview = outline.overview if is_overview_question(text) else None
    taken: list[OutlineNode] = [overview] if overview is not None else []
    cues = [_cue(outline, overview, 0.9, "overview question")] if overview is not None else []
    cues += _scored_cues(outline, terms, max_branches - len(cues), taken)
    if cues:
        return LocateResult(text, tuple(cues), "overview" if overview is not None else None)
    fallback = outline.overview
    if fallback is not None:
        cue = _cue(outline, fallback, 0.2, "no node matched the question's words; start at the overview")
        return LocateResult(text, (cue,), "overview")
    cue = _cue(outline, outline.root, 0.1, "no node matched the question's words; start at the root")
    return LocateResult(text, (cue,), "root")
