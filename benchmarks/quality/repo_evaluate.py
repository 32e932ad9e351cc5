"""Run lode on a whole-repository corpus: two trees, its query sets, three modes, and BM25.

The blanked tree (every doc comment emptied, lines kept) answers sets (a) and (d); the
original tree answers sets (b), (c) and (e) (and ``bug_src``, set (e) restricted to
implementation files). Each tree is written to a temporary folder and indexed
as a user would index it (``Lode.index`` on the folder: default ignore rules, no include
globs) into its own temporary store, so BM25 statistics are the tree's own. Per query
and mode three searches run, all as the API serves them: a chunk page (``limit`` 10), a
deeper page of the same chunk ranking (``limit`` ``DEEP``: the candidate pool stays
the same, so its first 10 are the first page's chunks) for the files in order of their
best chunk, and a document page (``file_limit`` 10). The BM25 baseline ranks the files
lode indexed (their text as indexed) for the same queries.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.quality.bm25 import BM25Index
from benchmarks.quality.bugs import load_bug_reports
from benchmarks.quality.changes import load_change_pairs
from benchmarks.quality.corpora import fetch_corpus, read_corpus
from benchmarks.quality.evaluate import MODES, ranked_chunks, shown_lines
from benchmarks.quality.pairs import extract_pairs
from benchmarks.quality.repo_corpora import RepoCorpus
from benchmarks.quality.repo_metrics import TOP, Answer, ChunkRef, K, file_values, query_values
from benchmarks.quality.repo_sets import (
    SETS,
    SOURCE_ONLY,
    Query,
    bug_queries,
    change_queries,
    doc_queries,
    identifier_queries,
    question_queries,
    sample_queries,
)
from benchmarks.quality.roles import IMPLEMENTATION, file_role
from indexer.api import Lode, known_languages
from indexer.chunker import detect_language
from indexer.config import load_config
from indexer.embed import Embedder
from indexer.search import Searcher, SearchOptions

__all__ = ["BASELINE", "DEEP", "RepoRun", "TreeFacts", "ask_tree", "evaluate_repo", "prepare_repo"]

#: The name of the BM25-over-files reference in results.
BASELINE = "bm25"
#: Chunks read for the best-chunk file order (``limit`` ≤ 33 keeps the first page's pool).
DEEP = 30


@dataclass(slots=True)
class TreeFacts:
    """What indexing one tree gave."""

    files: int = 0
    chunks: int = 0
    index_seconds: float = 0.0
    skipped: int = 0
    coverage: float = 0.0
    """Share of the tree's chunks with a vector when the queries ran (1.0 expected)."""


@dataclass(slots=True)
class RepoRun:
    """One corpus's run: its queries per set, and per query the figures of each mode."""

    corpus: RepoCorpus
    files: int
    roles: dict[str, int]
    """Files per role in the tree."""
    available: dict[str, int]
    """Queries each set could ask before sampling."""
    queries: dict[str, list[Query]]
    values: dict[str, list[dict[str, dict[str, float]]]] = field(default_factory=dict)
    """Set → per query (in ``queries`` order) → mode (or ``bm25``) → figure → value."""
    top_roles: dict[str, dict[str, Counter[str]]] = field(default_factory=dict)
    """Set → mode (or ``bm25``) → how many of the first 5 files (document page) had each role."""
    trees: dict[str, TreeFacts] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    broken_files: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare_repo(
    corpus: RepoCorpus, *, limit: int | None, seed: int = 0
) -> tuple[RepoRun, dict[str, bytes], dict[str, bytes], dict[str, str]]:
    """The run skeleton (queries sampled), the original and blanked trees, and file roles."""
    files = read_corpus(fetch_corpus(corpus.spec), corpus.spec, True)
    languages = {path: detect_language(path, data[:8192]) for path, data in files.items()}
    roles = {path: file_role(path, data[:4096], corpus.roles) for path, data in files.items()}
    pair_set = extract_pairs(corpus.name, files, languages)
    reports = load_bug_reports(corpus.name)
    every = {
        "doc": doc_queries(corpus.name, pair_set, roles),
        "change": change_queries(load_change_pairs(corpus.name)),
        "identifier": identifier_queries(corpus.name, files, languages, roles),
        "question": question_queries(corpus.name, pair_set, roles),
        "bug": bug_queries(reports),
        "bug_src": bug_queries(reports, "bug_src"),
    }
    role_counts: dict[str, int] = {}
    for role in roles.values():
        role_counts[role] = role_counts.get(role, 0) + 1
    run = RepoRun(
        corpus=corpus,
        files=len(files),
        roles=dict(sorted(role_counts.items())),
        available={name: len(qs) for name, qs in every.items()},
        queries={name: sample_queries(qs, limit, seed) for name, qs in every.items()},
        dropped=dict(sorted(pair_set.dropped.items())),
        broken_files=pair_set.broken_files,
    )
    return run, files, pair_set.blanked, roles


def _write_tree(files: Mapping[str, bytes], target: Path) -> None:
    for path, data in files.items():
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)


def _answer(searcher: Searcher, project: str, text: str, mode: str, source_only: bool = False) -> Answer:
    roles = (IMPLEMENTATION,) if source_only else ()

    def options(granularity: str, limit: int) -> SearchOptions:
        return SearchOptions(
            query=text,
            projects=(project,),
            granularity=granularity,
            mode=mode,
            limit=limit,
            file_limit=K,
            roles=roles,
        )

    page = searcher.search(options("chunk", K))
    # a piece of a split function is shown as its unit (its other pieces fold into it)
    chunks = tuple(ChunkRef(h.file_path, *shown_lines(h)) for g in page.groups for h in g.chunks)
    deep = ranked_chunks(searcher.search(options("chunk", DEEP)))
    best_files = tuple(dict.fromkeys(h.file_path for h in deep))
    documents = searcher.search(options("document", K)).documents
    return Answer(chunks, best_files, tuple(d.file_path for d in documents))


def ask_tree(
    name: str,
    tree: Path,
    texts: Mapping[str, bytes],
    queries: Sequence[Query],
    embedder: Embedder,
    role_of: Callable[[str], str],
    modes: Sequence[str] = MODES,
) -> tuple[TreeFacts, list[dict[str, dict[str, float]]], list[dict[str, tuple[str, ...]]]]:
    """Index ``tree`` as project ``name`` in a temporary store and answer ``queries`` in
    every mode and with BM25 over the indexed files (``texts``: their content).

    Returns the tree's facts, per query each mode's figures, and per query each mode's
    roles (``role_of``) of the first 5 files of the document page.
    """
    values: list[dict[str, dict[str, float]]] = [{} for _ in queries]
    roles: list[dict[str, tuple[str, ...]]] = [{} for _ in queries]

    def is_impl(path: str) -> bool:
        return role_of(path) == IMPLEMENTATION

    with tempfile.TemporaryDirectory(prefix="lode-bench-repo-index-") as tmp:
        lode = Lode(load_config(overrides={"db": Path(tmp)}), embedder=embedder)
        try:
            report = lode.index(tree, name=name)
            indexed, _ = lode.store.documents.page(report.project_id, limit=1_000_000)
            facts = TreeFacts(
                len(indexed),
                report.chunks_written,
                round(report.seconds, 2),
                len(report.files_skipped),
                round(lode.store.vectors.coverage(report.project_id), 4),
            )
            bm25 = BM25Index(
                {
                    d.file_path: texts[d.file_path].decode("utf-8", "replace")
                    for d in indexed
                    if d.file_path in texts
                }
            )
            for i, query in enumerate(queries):
                ranked = bm25.rank(query.text, K)
                if query.set in SOURCE_ONLY:
                    ranked = [p for p in bm25.rank(query.text, len(indexed)) if is_impl(p)][:K]
                values[i][BASELINE] = file_values(query, ranked, is_impl)
                roles[i][BASELINE] = tuple(role_of(p) for p in ranked[:TOP])
            for mode in modes:
                searcher = Searcher(lode.store, embedder, known_languages())
                try:
                    for i, query in enumerate(queries):
                        answer = _answer(searcher, name, query.text, mode, query.set in SOURCE_ONLY)
                        values[i][mode] = query_values(query, answer, is_impl)
                        roles[i][mode] = tuple(role_of(p) for p in answer.files[:TOP])
                finally:
                    searcher.close()
        finally:
            lode.close()
    return facts, values, roles


def evaluate_repo(
    corpus: RepoCorpus,
    embedder: Embedder,
    *,
    limit: int | None,
    seed: int = 0,
    modes: Sequence[str] = MODES,
    sets: Sequence[str] = SETS,
) -> RepoRun:
    """Build the corpus's query sets, index its two trees and ask every set in every mode."""
    started = time.perf_counter()
    run, files, blanked, roles = prepare_repo(corpus, limit=limit, seed=seed)

    def role_of(path: str) -> str:
        return roles.get(path) or file_role(path, b"", corpus.roles)

    plan = (
        ("blanked", blanked, ("doc", "question")),
        ("original", files, ("change", "identifier", "bug", "bug_src")),
    )
    with tempfile.TemporaryDirectory(prefix="lode-bench-repo-") as tmp:
        for tree_name, texts, tree_sets in plan:
            wanted = [s for s in tree_sets if s in sets]
            if not wanted:
                continue
            target = Path(tmp) / tree_name / corpus.name
            _write_tree(texts, target)
            queries = [q for s in wanted for q in run.queries[s]]
            facts, values, top = ask_tree(corpus.name, target, texts, queries, embedder, role_of, modes)
            run.trees[tree_name] = facts
            for s in wanted:
                run.values[s] = [v for q, v in zip(queries, values, strict=True) if q.set == s]
                counts: dict[str, Counter[str]] = {}
                for q, per_mode in zip(queries, top, strict=True):
                    for mode, found in per_mode.items():
                        if q.set == s:
                            counts.setdefault(mode, Counter()).update(found)
                run.top_roles[s] = counts
            _log(
                f"{corpus.name} ({tree_name}): {facts.files} files, {facts.chunks} chunks indexed in "
                f"{facts.index_seconds:.1f} s; {len(queries)} queries × {len(modes)} modes"
            )
    run.queries = {s: qs for s, qs in run.queries.items() if s in run.values}
    run.seconds = round(time.perf_counter() - started, 1)
    return run
