"""Recall against tokens spent: for the quality benchmark's queries (a doc comment's first
sentence → the unit it documents, doc comments blanked), the share whose target unit is in
an answer cut at a token budget.

Two ways to spend a budget, counted with the same tokenizer:

- ``search``: the MCP ``search`` tool at ``max_tokens`` = the budget. The target is
  *listed* when a result header (``path:start-end``) covers its first line, and *shown*
  when that result's code is in the answer too.
- ``grep+read``: the query's words (lowercased, stop words and words under 3 letters
  dropped) matched case-insensitively against every line of every file (what ``rg -i -c``
  does); files ranked by matching lines, then read whole, best first, until the budget is
  spent (the last one partly). The target is found when its first line was read.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.quality.corpora import CorpusSpec
from benchmarks.quality.evaluate import prepare_corpus
from benchmarks.quality.pairs import Pair
from indexer.embed import Embedder, TokenCounter

__all__ = ["BUDGETS", "RecallRun", "grep_read_found", "measure_recall"]

BUDGETS = (500, 1_000, 2_000, 4_000)
_HEADER = re.compile(r"^\s*(?P<path>[^\s:]+):(?P<start>\d+)(?:-(?P<end>\d+))?  ")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_STOP = frozenset(
    "the and for with that this from into are was were been have has had not but its their "
    "which when what where will would can could should returns return given use used using "
    "all any each other than then there these those also only such".split()
)


@dataclass(slots=True)
class RecallRun:
    """Hits per budget of one corpus, per method."""

    corpus: str
    pairs: int = 0
    found: dict[str, dict[int, int]] = field(default_factory=dict)
    tokens: dict[str, dict[int, list[int]]] = field(default_factory=dict)

    def add(self, method: str, budget: int, hit: bool, used: int) -> None:
        """Record one answer."""
        self.found.setdefault(method, {}).setdefault(budget, 0)
        self.found[method][budget] += int(hit)
        self.tokens.setdefault(method, {}).setdefault(budget, []).append(used)


def listed_and_shown(text: str, pair: Pair) -> tuple[bool, bool]:
    """Whether a search answer lists the target, and whether it shows its code."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _HEADER.match(line)
        if not match or match["path"] != pair.path:
            continue
        start, end = int(match["start"]), int(match["end"] or match["start"])
        if start <= pair.start_line <= end:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            return True, bool(re.match(rf"^\s*{start}  ", following))
    return False, False


def query_words(query: str) -> list[str]:
    """The words ``grep`` is given: lowercased, no stop words, at least 3 letters."""
    words = {w.lower() for w in _WORD.findall(query)}
    return sorted(w for w in words if w not in _STOP)


def grep_read_found(
    files: dict[str, list[str]], costs: dict[str, list[int]], pair: Pair, budget: int
) -> tuple[bool, int]:
    """(target read, tokens read) for grep-then-read of ``pair.query`` within ``budget``."""
    words = query_words(pair.query)
    if not words:
        return False, 0
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    ranked = sorted(
        ((sum(1 for line in lines if pattern.search(line)), path) for path, lines in files.items()),
        key=lambda item: (-item[0], item[1]),
    )
    spent, found = 0, False
    for matches, path in ranked:
        if not matches:
            break
        for number, cost in enumerate(costs[path], start=1):
            if spent + cost > budget:
                return found, spent
            spent += cost
            found = found or (path == pair.path and number == pair.start_line)
    return found, spent


async def _ask(
    client: Any, counter: TokenCounter, project: str, pairs: Sequence[Pair], run: RecallRun, root: Path
) -> None:
    files = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace").splitlines()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    costs = {path: counter.count_many(lines) for path, lines in files.items()}
    for pair in pairs:
        for budget in BUDGETS:
            answer = await client.call_tool(
                "search", {"query": pair.query, "projects": [project], "max_tokens": budget}
            )
            text = "".join(b.text for b in answer.content)
            used = counter.count(text)
            listed, shown = listed_and_shown(text, pair)
            run.add("search (listed)", budget, listed, used)
            run.add("search (with code)", budget, shown, used)
            hit, spent = grep_read_found(files, costs, pair, budget)
            run.add("grep+read", budget, hit, spent)


async def _session(
    mcp: Any, counter: TokenCounter, project: str, pairs: Sequence[Pair], run: RecallRun, root: Path
) -> None:
    from mcp import Client

    async with Client(mcp) as client:
        await _ask(client, counter, project, pairs, run, root)


def measure_recall(
    specs: Sequence[CorpusSpec], embedder: Embedder, *, limit: int | None, seed: int = 0
) -> list[RecallRun]:
    """Index each blanked corpus and ask its pairs through the MCP tools."""
    import anyio

    from indexer.api import Lode
    from indexer.config import load_config
    from server.context import open_context
    from server.mcp import build_mcp

    runs = []
    for spec in specs:
        with tempfile.TemporaryDirectory(prefix="lode-bench-mcp-") as tmp:
            root = Path(tmp) / spec.name
            _, pairs, _ = prepare_corpus(spec, root, full=False, limit=limit, seed=seed)
            config = load_config(overrides={"db": Path(tmp) / "db", "enabled": False})
            lode = Lode(config, embedder=embedder)
            lode.index(root, name=spec.name)
            lode.close()
            ctx = open_context(config, embedder=embedder, warm=False, command="bench_mcp")
            run = RecallRun(spec.name, len(pairs))
            try:
                anyio.run(_session, build_mcp(lambda: ctx), ctx.token_counter(), spec.name, pairs, run, root)  # noqa: B023
            finally:
                ctx.close()
            runs.append(run)
    return runs


def summarize(runs: Sequence[RecallRun]) -> dict[str, Any]:
    """Recall per method and budget over every corpus (and per corpus), with mean tokens spent."""
    total = sum(r.pairs for r in runs)
    methods = sorted({m for r in runs for m in r.found})
    out: dict[str, Any] = {
        "pairs": total,
        "budgets": list(BUDGETS),
        "recall": {},
        "mean_tokens": {},
        "corpora": {},
    }
    for method in methods:
        out["recall"][method] = {
            str(b): round(sum(r.found.get(method, {}).get(b, 0) for r in runs) / max(1, total), 4)
            for b in BUDGETS
        }
        out["mean_tokens"][method] = {
            str(b): round(sum(sum(r.tokens.get(method, {}).get(b, [])) for r in runs) / max(1, total), 1)
            for b in BUDGETS
        }
    for r in runs:
        out["corpora"][r.corpus] = {
            "pairs": r.pairs,
            **{m: {str(b): round(r.found[m][b] / max(1, r.pairs), 4) for b in BUDGETS} for m in r.found},
        }
    return out
