"""``plan``: a navigation-planning prompt for the caller's own LLM, built without one.

The prompt is deterministic: the question's intent (from its wording), the structure at
the current node, keyword matches under it with their ancestor paths, BM25 hints over the
children's titles, summaries and topic tags and, for a re-plan, what was found, what is
missing and which branches are still unvisited. Every section has a fixed character
budget; a cut section says so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from indexer.errors import ValidationError
from indexer.outline._limits import check_text
from indexer.outline._model import OutlineNode, PlanPrompt
from indexer.outline._text import query_terms, stem, word_counts

if TYPE_CHECKING:
    from indexer.outline._outline import Outline

__all__ = ["INTENTS", "MAX_HISTORY", "SECTION_CHARS", "classify_intent", "plan"]

#: Characters each section of the user prompt may use.
SECTION_CHARS = 1_500
#: Most visited nodes or evidence items a re-plan takes.
MAX_HISTORY = 200
#: Query intents, in the order they are tested (factual is the default).
INTENTS = ("summary", "navigational", "analytical", "factual")

_PATTERNS = (
    ("summary", r"\b(overview|summar|introduc|about|describe|purpose|high[- ]level|big picture|"
                r"what (is|does) (this|the) (project|repo|repository|library|package|codebase))"),
    ("navigational", r"\b(where|which (file|module|class|function|method|section|folder|directory|page)|"
                     r"find|locate|show me|go to|open|defined|declared|implemented in|lives?)\b"),
    ("analytical", r"\b(why|compare|comparison|differen|versus|vs\b|trade[- ]?offs?|impact|affect|"
                   r"implication|design|relationship|interact|should|pros|cons|analy[sz]|evaluate|"
                   r"how (does|do|is|are) .+ (work|handle|interact|relate))"),
)  # fmt: skip
_HINTS = "Hints (BM25 over the children's titles, summaries and topic tags)"
_COMPILED = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _PATTERNS)

_GUIDANCE = {
    "factual": "A factual question has a specific answer in one place: pick the most specific section "
    "or unit, cat it, and grep for exact names or values when titles do not say enough.",
    "summary": "A summary question is answered near the top of the tree: cat the README or overview "
    "node and read the summaries of the top-level children; do not read code bodies.",
    "navigational": "A navigational question asks where something is: find or grep for the names, then "
    "ls the enclosing node to confirm; answer with node ids and line ranges.",
    "analytical": "An analytical question needs several places: choose 2-4 branches to read and compare, "
    "and say what each should contribute.",
}

_SYSTEM = """You plan how to navigate the outline of the project {project!r} to answer a question.
The outline is a tree: project → directories → files → classes, functions and methods (code)
or headings and sections (docs). Node ids are stable: a path, path#Scope.Name or path#Heading/Sub.
Moves: ls <node> (children with summaries), cat <node> (the node's text, line-numbered),
grep <regex> [node] (matching lines), find <title glob> (nodes by title), locate <question>.
Open as little as possible, use only node ids shown to you, and stop once the evidence suffices.
{guidance}
Reply with JSON only: {{"steps": [{{"action": "ls|cat|grep|find|answer", "node": "<node id>",
"argument": "<pattern or glob, if any>", "why": "<one line>"}}]}}"""


def classify_intent(question: str) -> str:
    """factual, summary, navigational or analytical, from the question's wording."""
    for name, pattern in _COMPILED:
        if pattern.search(question):
            return name
    return "factual"


def _budget(title: str, lines: Sequence[str], limit: int = SECTION_CHARS) -> str:
    out: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        if used + len(line) + 1 > limit:
            clipped = line[: max(0, limit - used - 40)]
            if clipped and not out:
                out.append(clipped + "…")
            out.append(f"… [truncated: {len(lines) - index} more line(s)]")
            break
        out.append(line)
        used += len(line) + 1
    return f"## {title}\n" + ("\n".join(out) if out else "(none)")


def _line(node: OutlineNode, indent: int = 0) -> str:
    note = f" — {node.summary}" if node.summary else ""
    return f"{'  ' * indent}- {node.title} [{node.kind}] id={node.id} leaves={node.leaf_count}{note}"


def _structure(node: OutlineNode) -> list[str]:
    lines: list[str] = []
    for child in node.children:
        lines.append(_line(child))
        lines.extend(_line(grandchild, 1) for grandchild in child.children[:8])
    return lines


def _keyword_matches(outline: Outline, node: OutlineNode, terms: list[str]) -> list[str]:
    index = outline.index
    allowed = None if node is outline.root else index.mask(node.walk())
    lines = []
    for hit in index.search(terms, 15, allowed, weights=(3.0, 2.0, 0.0)):
        found = index.nodes[hit.number]
        matched = ", ".join(index.terms_of(hit.number, terms))
        lines.append(f"- {outline.breadcrumb(found)} (id={found.id}) — matched: {matched}")
    return lines


def _child_hints(outline: Outline, node: OutlineNode, terms: list[str]) -> list[str]:
    """BM25 of the children over their titles, summaries and topic tags (project IDF)."""
    fields = [
        (c, (word_counts(c.title), word_counts(c.summary), Counter(outline.tags(c)))) for c in node.children
    ]
    if not fields or not terms:
        return []
    averages = [max(1.0, sum(sum(f[i].values()) for _, f in fields) / len(fields)) for i in range(3)]
    scored: list[tuple[float, OutlineNode]] = []
    for child, counts in fields:
        stems = [Counter({stem(w): n for w, n in c.items()}) for c in counts]
        score = 0.0
        for term in terms:
            weight = sum(
                w * stems[i][term] / (0.5 + 0.5 * sum(counts[i].values()) / averages[i])
                for i, w in enumerate((3.0, 2.0, 1.5))
            )
            score += outline.index.idf(term) * weight / (1.2 + weight) if weight else 0.0
        if score > 0:
            scored.append((score, child))
    scored.sort(key=lambda item: (-item[0], item[1].id))
    return [
        f"{rank}. {c.title} (id={c.id}) score {s:.2f} — tags: {', '.join(outline.tags(c)) or '-'}"
        for rank, (s, c) in enumerate(scored[:10], 1)
    ]


def _unvisited(outline: Outline, current: OutlineNode, visited: list[OutlineNode]) -> list[str]:
    """Siblings of each visited node and of its ancestors up to the current node's parent
    (nearest levels first), then the current node's siblings; none visited or on a visited path."""
    seen = {v.id for v in visited} | {a.id for v in visited for a in outline.ancestors(v)} | {current.id}
    levels: list[OutlineNode] = []
    for anchor in visited:
        for node in [anchor, *reversed(outline.ancestors(anchor))]:
            if node.depth <= current.depth:
                break
            levels.append(node)
    levels.append(current)
    lines: list[str] = []
    for node in levels:
        parent = outline.nodes.get(node.parent)
        for sibling in parent.children if parent is not None else ():
            if sibling.id not in seen:
                seen.add(sibling.id)
                lines.append(_line(sibling))
    return lines


def _current(outline: Outline, node: OutlineNode) -> list[str]:
    span = f", lines {node.start_line}-{node.end_line}" if node.is_text else ""
    tags = ", ".join(outline.tags(node)) or "-"
    return [f"{outline.breadcrumb(node)} (id={node.id}, {node.kind}{span}, {node.leaf_count} leaves)",
            f"summary: {node.summary or '-'}", f"topic tags: {tags}"]  # fmt: skip


def plan(
    outline: Outline,
    question: str,
    node: str | None = None,
    visited: Sequence[str] = (),
    evidence: Sequence[str] = (),
    missing: str | None = None,
) -> PlanPrompt:
    """The navigation-planning prompt for a question at a node (a re-plan when given history)."""
    text = check_text("question", question)
    if len(visited) > MAX_HISTORY or len(evidence) > MAX_HISTORY:
        field = "visited" if len(visited) > MAX_HISTORY else "evidence"
        raise ValidationError(field, f"holds more than {MAX_HISTORY} items")
    current = outline.node(node)
    seen = [outline.node(v) for v in visited]
    terms = query_terms(text)
    intent = classify_intent(text)
    sections = [
        _budget("Question", [text]),
        _budget("Intent", [f"{intent}: {_GUIDANCE[intent]}"]),
        _budget("Current node", _current(outline, current)),
        _budget("Structure", _structure(current)),
        _budget("Keyword matches", _keyword_matches(outline, current, terms)),
        _budget(_HINTS, _child_hints(outline, current, terms)),
    ]
    if seen or evidence or missing:
        sections += [
            _budget("Visited", [f"- {outline.breadcrumb(v)} (id={v.id})" for v in seen]),
            _budget("Found so far", [f"- {e.strip()}" for e in evidence if e.strip()]),
            _budget("Still missing", [missing.strip()] if missing and missing.strip() else []),
            _budget("Unvisited branches", _unvisited(outline, current, seen)),
        ]
    system = _SYSTEM.format(project=outline.project, guidance=_GUIDANCE[intent])
    return PlanPrompt(intent, system, "\n\n".join(sections))
