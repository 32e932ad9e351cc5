"""One project's outline at one index version and its operations: ``ls``, ``cat`` and
``find`` here, ``grep``, ``locate`` and ``plan`` in their own modules. The BM25 index and
the topic tags are built on first use."""

from __future__ import annotations

import fnmatch
import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

from indexer.errors import NotFoundError, ValidationError
from indexer.limits import MAX_TITLE_CHARS, check_text, quote
from indexer.outline import _grep, _locate, _plan
from indexer.outline._bm25 import Bm25Index
from indexer.outline._gc import paused_gc
from indexer.outline._limits import LIMITS, MAX_LISTED, check_range
from indexer.outline._model import (
    DIR_KIND,
    FindResult,
    GrepResult,
    ListedNode,
    Listing,
    LocateResult,
    NodeInfo,
    NodeText,
    OutlineNode,
    PlanPrompt,
)
from indexer.outline._tags import TagBook
from indexer.outline._tree import ROOT_ID

__all__ = ["Outline", "TextSource"]


class TextSource(Protocol):
    """Where the outline reads file texts (the store's documents)."""

    def contents(self, ids: Sequence[str]) -> dict[str, str]:
        """Full texts of documents by id (unknown ids left out)."""
        ...


class Outline:
    """A project's outline tree and the operations over it (safe to share between threads)."""

    def __init__(
        self,
        project: str,
        root: OutlineNode,
        nodes: dict[str, OutlineNode],
        documents: dict[str, str],
        source: TextSource,
        version: int,
    ) -> None:
        self.project = project
        self.root = root
        self.nodes = nodes
        self.version = version
        self._documents = documents
        self._source = source
        self._lock = threading.Lock()
        self._index: Bm25Index | None = None
        self._tags: TagBook | None = None
        self._texts: OrderedDict[str, list[str]] = OrderedDict()

    # ---- lookups ----------------------------------------------------------------------
    def node(self, node_id: str | None) -> OutlineNode:
        """The node with this id (the root for None or ""), or a NotFoundError."""
        key = node_id or ROOT_ID
        found = self.nodes.get(key)
        if found is None:
            raise NotFoundError(f"no outline node {quote(key)} in project {quote(self.project)}")
        return found

    @functools.cached_property
    def overview(self) -> OutlineNode | None:
        """The README at the root, else the shallowest introduction/overview section or document."""
        return _locate.overview_node(self)

    @property
    def index(self) -> Bm25Index:
        """The BM25 index of every node but the root (built on first use)."""
        with self._lock:
            if self._index is None:
                with paused_gc():
                    self._index = Bm25Index([n for n in self.root.walk() if n is not self.root])
            return self._index

    def tags(self, node: OutlineNode) -> tuple[str, ...]:
        """The node's topic tags."""
        if self._tags is None:
            self._tags = TagBook(self.index.idf)
        return self._tags.tags(node)

    def ancestors(self, node: OutlineNode) -> list[OutlineNode]:
        """The node's ancestors, root first."""
        out: list[OutlineNode] = []
        current = self.nodes.get(node.parent) if node.parent else None
        while current is not None:
            out.append(current)
            current = self.nodes.get(current.parent) if current.parent else None
        return out[::-1]

    def breadcrumb(self, node: OutlineNode) -> str:
        """Titles from the root to the node, joined by ``/``."""
        return "/".join([*(a.title for a in self.ancestors(node)), node.title])

    def info(self, node: OutlineNode) -> NodeInfo:
        """The node as the operations return it."""
        return NodeInfo(
            id=node.id, title=node.title, kind=node.kind, depth=node.depth, path=node.path,
            parent=node.parent or None, breadcrumb=self.breadcrumb(node), start_line=node.start_line,
            end_line=node.end_line, summary=node.summary, topic_tags=self.tags(node),
            leaf_count=node.leaf_count, child_count=len(node.children),
        )  # fmt: skip

    def lines_of(self, path: str) -> list[str]:
        """The lines of an indexed file (the last few files read are kept)."""
        with self._lock:
            cached = self._texts.get(path)
            if cached is not None:
                self._texts.move_to_end(path)
                return cached
        doc_id = self._documents.get(path)
        text = self._source.contents([doc_id]).get(doc_id, "") if doc_id else ""
        lines = text.splitlines()
        with self._lock:
            self._texts[path] = lines
            while len(self._texts) > 16:
                self._texts.popitem(last=False)
        return lines

    def document_ids(self, paths: Sequence[str]) -> dict[str, str]:
        """Document id by path, for the given file paths that are indexed."""
        return {p: self._documents[p] for p in paths if p in self._documents}

    def read_files(self, paths: Sequence[str]) -> dict[str, str]:
        """Texts of several files by path (one store read)."""
        ids = self.document_ids(paths)
        texts = self._source.contents(list(ids.values()))
        return {path: texts.get(doc_id, "") for path, doc_id in ids.items()}

    # ---- ls ---------------------------------------------------------------------------
    def ls(self, node: str | None = None, depth: int = 1, limit: int = 100) -> Listing:
        """A node and its children, ``depth`` levels down, at most ``limit`` per level."""
        check_range("depth", depth, 1, LIMITS["depth"][1])
        check_range("limit", limit, 1, LIMITS["limit"][1])
        target = self.node(node)
        budget = [MAX_LISTED]
        children, truncated = self._listed(target, depth, limit, budget)
        return Listing(self.info(target), children, len(target.children), truncated)

    def _listed(
        self, node: OutlineNode, depth: int, limit: int, budget: list[int]
    ) -> tuple[tuple[ListedNode, ...], bool]:
        out: list[ListedNode] = []
        truncated = len(node.children) > limit
        for child in node.children[:limit]:
            if budget[0] <= 0:
                return tuple(out), True
            budget[0] -= 1
            below: tuple[ListedNode, ...] = ()
            if depth > 1 and child.children:
                below, cut = self._listed(child, depth - 1, limit, budget)
                truncated = truncated or cut
            out.append(
                ListedNode(child.id, child.title, child.kind, child.summary, child.leaf_count,
                           bool(child.children), child.start_line, child.end_line, below)
            )  # fmt: skip
        return tuple(out), truncated

    # ---- cat --------------------------------------------------------------------------
    def cat(self, node: str | None = None, max_chars: int = 20_000) -> NodeText:
        """A node's text, line-numbered (a folder's: its outline), cut at ``max_chars``."""
        check_range("max_chars", max_chars, 100, LIMITS["max_chars"][1])
        target = self.node(node)
        if not target.is_text:
            text, truncated = self._render(target, max_chars)
            return NodeText(self.info(target), text, 0, 0, truncated)
        lines = self.lines_of(target.path)
        first, last = max(1, target.start_line), min(target.end_line or len(lines), len(lines))
        out: list[str] = []
        used = 0
        clipped = False
        for number in range(first, last + 1):
            line = f"{number:>5}  {lines[number - 1]}"
            if len(line) > max_chars:
                line, clipped = line[:max_chars] + "…", True
            if out and used + len(line) + 1 > max_chars:
                out.append(f"… cut at line {number - 1} of {first}-{last} to fit max_chars={max_chars}")
                return NodeText(self.info(target), "\n".join(out), first, number - 1, True)
            out.append(line)
            used += len(line) + 1
        return NodeText(self.info(target), "\n".join(out), first, last, clipped)

    def _render(self, node: OutlineNode, max_chars: int) -> tuple[str, bool]:
        out: list[str] = []
        used = 0
        for item in node.walk():
            suffix = "/" if item.kind == DIR_KIND else ""
            note = f" — {item.summary}" if item.summary else ""
            line = f"{'  ' * (item.depth - node.depth)}{item.title}{suffix} [{item.kind}] {item.id}{note}"
            if out and used + len(line) + 1 > max_chars:
                out.append(f"… cut to fit max_chars={max_chars}; list deeper nodes with ls")
                return "\n".join(out), True
            out.append(line)
            used += len(line) + 1
        return "\n".join(out), False

    # ---- find -------------------------------------------------------------------------
    def find(
        self, title: str, kind: str | None = None, node: str | None = None, limit: int = 50
    ) -> FindResult:
        """Nodes under ``node`` whose title matches a glob (case-insensitive), in document order."""
        if not title.strip():
            raise ValidationError("title", "is empty")
        check_text("title", title, MAX_TITLE_CHARS)
        if kind is not None:
            check_text("kind", kind, blank=True)
        check_range("limit", limit, 1, LIMITS["find_limit"][1])
        matcher = re.compile(fnmatch.translate(title.strip()), re.IGNORECASE | re.DOTALL)
        start = self.node(node)
        found = [
            n
            for n in start.walk()
            if n is not self.root and matcher.match(n.title) and (not kind or n.kind == kind)
        ]
        picked = tuple(self.info(n) for n in found[:limit])
        return FindResult(title, picked, len(found), len(found) > limit)

    # ---- grep, locate, plan ---------------------------------------------------------
    def grep(
        self, pattern: str, node: str | None = None, limit: int = 50, ignore_case: bool = False
    ) -> GrepResult:
        """Lines matching a regular expression under a node (capped)."""
        return _grep.grep(self, pattern, node, limit, ignore_case)

    def locate(self, question: str, max_branches: int = 3) -> LocateResult:
        """The best branches to read for a question (BM25; overview and root fallbacks)."""
        return _locate.locate(self, question, max_branches)

    def plan(
        self,
        question: str,
        node: str | None = None,
        visited: Sequence[str] = (),
        evidence: Sequence[str] = (),
        missing: str | None = None,
    ) -> PlanPrompt:
        """A navigation-planning prompt for the caller's own LLM."""
        return _plan.plan(self, question, node, visited, evidence, missing)
