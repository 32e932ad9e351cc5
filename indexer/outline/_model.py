"""The outline's data: tree nodes, and the answers of its operations.

Node ids are stable strings built from what the index knows, so an agent can reuse them
across calls and across re-indexing:

- the project root is ``.``;
- a directory or a file is its project-relative POSIX path (``src/shop``, ``src/shop/cart.py``);
- a code unit is ``path#Scope.Name`` (its scope path joined by ``.``: ``src/shop/cart.py#Cart.add_item``);
- a Markdown or reStructuredText section is ``path#Heading/Sub`` (its heading path joined by ``/``);
- when two nodes of a file would get the same id (overloads, repeated headings), the later
  ones get ``~2``, ``~3``… in document order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Cue",
    "FindResult",
    "GrepMatch",
    "GrepResult",
    "ListedNode",
    "Listing",
    "LocateResult",
    "NodeInfo",
    "NodeText",
    "OutlineNode",
    "PlanPrompt",
]

#: Node kinds above files; below them kinds are the chunker's node types (class, method, section…).
ROOT_KIND = "project"
DIR_KIND = "directory"
FILE_KIND = "file"


@dataclass(slots=True, eq=False)
class OutlineNode:
    """One node of a project's outline tree (built once, then only read)."""

    id: str
    title: str
    kind: str
    depth: int
    path: str
    parent: str
    start_line: int = 0
    end_line: int = 0
    summary: str = ""
    language: str = ""
    children: list[OutlineNode] = field(default_factory=list)
    leaf_count: int = 1
    terms: tuple[str, ...] = ()
    """Distinct index terms of the node's title, summary and own text (not its children's)."""
    tfs: bytes = b""
    """Their (title, summary, content) counts, three bytes per term in the order of ``terms``."""
    lengths: tuple[int, int, int] = (0, 0, 0)
    """Words in the title, the summary and the own text."""

    @property
    def is_text(self) -> bool:
        """True for nodes backed by lines of one file (files, units, sections)."""
        return self.kind not in (ROOT_KIND, DIR_KIND)

    def walk(self) -> list[OutlineNode]:
        """This node and every node below it, in document order."""
        out: list[OutlineNode] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A node as the operations return it (no children)."""

    id: str
    title: str
    kind: str
    depth: int
    path: str
    parent: str | None
    breadcrumb: str
    """Titles from the root down to this node, joined by ``/`` (``shop/docs/guide.md/Sessions``)."""
    start_line: int
    end_line: int
    summary: str
    topic_tags: tuple[str, ...]
    leaf_count: int
    child_count: int


@dataclass(frozen=True, slots=True)
class ListedNode:
    """A child in a listing (with its own children when listed deeper)."""

    id: str
    title: str
    kind: str
    summary: str
    leaf_count: int
    has_children: bool
    start_line: int
    end_line: int
    children: tuple[ListedNode, ...] = ()


@dataclass(frozen=True, slots=True)
class Listing:
    """``ls``: a node and its children (capped)."""

    node: NodeInfo
    children: tuple[ListedNode, ...]
    total_children: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class NodeText:
    """``cat``: a node's text, line-numbered, cut at a size cap (``truncated`` says so)."""

    node: NodeInfo
    text: str
    start_line: int
    end_line: int
    """Last line included in ``text`` (0 for a directory's rendered outline)."""
    truncated: bool


@dataclass(frozen=True, slots=True)
class FindResult:
    """``find``: nodes whose title matches a glob (capped)."""

    title: str
    nodes: tuple[NodeInfo, ...]
    total: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """One matching line: the innermost node holding it, its number and a preview."""

    node: str
    title: str
    path: str
    line: int
    preview: str


@dataclass(frozen=True, slots=True)
class GrepResult:
    """``grep``: matching lines under a node (capped)."""

    pattern: str
    node: str
    matches: tuple[GrepMatch, ...]
    files_searched: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class Cue:
    """``locate``: a node worth opening for a question, and how sure the locator is (0-1)."""

    node: str
    title: str
    kind: str
    path: str
    breadcrumb: str
    confidence: float
    reason: str


@dataclass(frozen=True, slots=True)
class LocateResult:
    """``locate``: the best branches for a question."""

    question: str
    cues: tuple[Cue, ...]
    fallback: str | None
    """``overview`` when the first cue is the overview node (an overview question, or no node
    matched the question's words), ``root`` when nothing matched and there is no overview
    node, else None."""


@dataclass(frozen=True, slots=True)
class PlanPrompt:
    """``plan``: a navigation-planning prompt for the caller's own LLM."""

    intent: str
    system: str
    user: str
