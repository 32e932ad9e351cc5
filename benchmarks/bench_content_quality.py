"""Retrieval quality of ``search_content`` and ``find_documents`` (scores, not timings).

It asks the query sets of the quality benchmarks through the two agent endpoints
(``Lode.search_content`` / ``Lode.find_documents``, as the HTTP routes call them):

- the source corpora of ``bench_quality`` (doc comments blanked; ≤150 pairs each in
  ``--quick``): the doc comment's first sentence as ``concept`` (``semantic_concepts``,
  default ``min_score``), ``concept_all`` (``min_score`` 0), ``hybrid`` (plus the unit's
  name as an exact term), ``exact`` (the name alone), and ``documents``
  (``find_documents``); a hit is a result of the target's file covering the target's
  first line (for ``documents``, the target's file);
- the whole repositories of ``bench_repo_quality`` (original trees; ≤100 queries per set
  in ``--quick``, ``--repos``): change descriptions through ``find_documents``
  (``change_documents``: any changed file is a hit), and identifiers through
  ``exact_terms`` (``identifier_exact``) and ``semantic_concepts``
  (``identifier_concept``): the defining unit.

Each run writes every query's rank (``--output``); ``--compare OLD NEW`` prints MRR@10,
Recall@1 and Recall@10 of both with bootstrap 95% intervals and the paired difference.
Vectors are cached as ``bench_quality`` caches them, so two runs embed the same vectors.

Example:
    .venv/bin/python -m benchmarks.bench_content_quality --quick --output new.json
    .venv/bin/python -m benchmarks.bench_content_quality --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality.corpora import CORPORA, cache_dir
from benchmarks.quality.evaluate import prepare_corpus
from benchmarks.quality.metrics import K, first_hit_rank, macro_bootstrap, metric_values, paired_bootstrap
from benchmarks.quality.repo_corpora import REPO_CORPORA
from benchmarks.quality.repo_evaluate import prepare_repo
from benchmarks.quality.repo_sets import Query

SHOWN = ("mrr@10", "recall@1", "recall@10")
Ask = Callable[[Any, str], list[tuple[str, int, int]]]


def _content(lode: Any, project: str, **fields: Any) -> list[tuple[str, int, int]]:
    from indexer.search import ContentRequest

    answer = lode.search_content(ContentRequest(project=project, limit=K, **fields))
    return [(r.document_id, r.start_line, r.end_line) for r in answer.data.results]


def _documents(lode: Any, project: str, query: str) -> list[tuple[str, int, int]]:
    from indexer.search import FindDocumentsRequest

    answer = lode.find_documents(FindDocumentsRequest(query=query, project=project, limit=K))
    return [(d.document_id, 0, 0) for d in answer.data.documents]


def _covers(path: str, line: int | None) -> Callable[[tuple[str, int, int]], bool]:
    return lambda hit: hit[0] == path and (line is None or hit[1] <= line <= hit[2])


def _rank(hits: Sequence[tuple[str, int, int]], targets: Sequence[tuple[str, int | None]]) -> int | None:
    tests = [_covers(path, line) for path, line in targets]
    return first_hit_rank([any(t(h) for t in tests) for h in hits], K)


def _index(root: Path, name: str, embedder: Any, db: Path) -> Any:
    from indexer.api import Lode
    from indexer.config import load_config

    lode = Lode(load_config(overrides={"db": db}), embedder=embedder)
    lode.index(root, name=name)
    return lode


def _source_corpus(spec: Any, embedder: Any, limit: int | None) -> dict[str, dict[str, int | None]]:
    ranks: dict[str, dict[str, int | None]] = {}
    with tempfile.TemporaryDirectory(prefix="lode-bench-content-") as tmp:
        root = Path(tmp) / spec.name
        _, pairs, _ = prepare_corpus(spec, root, full=False, limit=limit)
        lode = _index(root, spec.name, embedder, Path(tmp) / "db")
        try:
            asks: dict[str, Callable[[Any], list[tuple[str, int, int]]]] = {
                "concept": lambda p: _content(lode, spec.name, semantic_concepts=(p.query,)),
                "concept_all": lambda p: _content(
                    lode, spec.name, semantic_concepts=(p.query,), min_score=0.0
                ),
                "hybrid": lambda p: _content(
                    lode, spec.name, semantic_concepts=(p.query,), exact_terms=(p.name.split(".")[-1],)
                ),
                "exact": lambda p: _content(lode, spec.name, exact_terms=(p.name.split(".")[-1],)),
                "documents": lambda p: _documents(lode, spec.name, p.query),
            }
            for shape, ask in asks.items():
                ranks[shape] = {}
                for pair in pairs:
                    line = None if shape == "documents" else pair.start_line
                    ranks[shape][pair.id] = _rank(ask(pair), [(pair.path, line)])
        finally:
            lode.close()
    return ranks


def _repo_corpus(corpus: Any, embedder: Any, limit: int | None) -> dict[str, dict[str, int | None]]:
    run, files, _, _ = prepare_repo(corpus, limit=limit)
    changes: list[Query] = run.queries["change"]
    identifiers: list[Query] = run.queries["identifier"]
    ranks: dict[str, dict[str, int | None]] = {
        "change_documents": {},
        "identifier_exact": {},
        "identifier_concept": {},
    }
    with tempfile.TemporaryDirectory(prefix="lode-bench-content-repo-") as tmp:
        root = Path(tmp) / corpus.name
        for path, data in files.items():
            out = root / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        lode = _index(root, corpus.name, embedder, Path(tmp) / "db")
        try:
            for q in changes:
                hits = _documents(lode, corpus.name, q.text)
                ranks["change_documents"][q.id] = _rank(hits, [(t.path, None) for t in q.targets])
            for q in identifiers:
                targets = [(t.path, t.line) for t in q.targets]
                exact = _content(lode, corpus.name, exact_terms=(q.text,))
                ranks["identifier_exact"][q.id] = _rank(exact, targets)
                concept = _content(lode, corpus.name, semantic_concepts=(q.text,))
                ranks["identifier_concept"][q.id] = _rank(concept, targets)
        finally:
            lode.close()
    return ranks


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Ask every set; the ranks by corpus, shape and query id."""
    from benchmarks._vector_cache import CachedEmbedder
    from indexer.config import load_config
    from indexer.embed import load_embedder

    embedder = CachedEmbedder(load_embedder(load_config().embed), cache_dir() / "vectors" / "quality.sqlite")
    out: dict[str, Any] = {}
    for spec in [c for c in CORPORA if not args.corpus or c.name in args.corpus]:
        started = time.perf_counter()
        out[spec.name] = _source_corpus(spec, embedder, args.limit or (None if args.full else 150))
        print(f"{spec.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    if args.repos:
        for corpus in [c for c in REPO_CORPORA if not args.corpus or c.name in args.corpus]:
            started = time.perf_counter()
            out[corpus.name] = _repo_corpus(corpus, embedder, args.limit or (None if args.full else 100))
            print(f"{corpus.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return out


def _by_shape(ranks: dict[str, Any]) -> dict[str, dict[str, dict[str, int | None]]]:
    shapes: dict[str, dict[str, dict[str, int | None]]] = {}
    for corpus, by_shape in ranks.items():
        for shape, by_query in by_shape.items():
            shapes.setdefault(shape, {})[corpus] = by_query
    return shapes


def compare(old: dict[str, Any], new: dict[str, Any]) -> str:
    """A markdown table: each shape's metrics before and after, and the paired difference."""
    lines = [
        "| shape | metric | before (95% CI) | after (95% CI) | after − before (95% CI) | p |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    before, after = _by_shape(old), _by_shape(new)
    for shape in before:
        corpora = sorted(set(before[shape]) & set(after.get(shape, {})))
        ids = {c: sorted(set(before[shape][c]) & set(after[shape][c])) for c in corpora}
        for metric in SHOWN:
            a = [metric_values([before[shape][c][i] for i in ids[c]])[metric] for c in corpora]
            b = [metric_values([after[shape][c][i] for i in ids[c]])[metric] for c in corpora]
            ea, eb, d = macro_bootstrap(a), macro_bootstrap(b), paired_bootstrap(b, a)
            n = sum(len(v) for v in ids.values())
            lines.append(
                f"| {shape} (n={n}) | {metric} | {ea.mean:.3f} ({ea.low:.3f}–{ea.high:.3f}) | "
                f"{eb.mean:.3f} ({eb.low:.3f}–{eb.high:.3f}) | {d.delta:+.3f} ({d.low:+.3f}–{d.high:+.3f}) "
                f"| {d.p_value:.3f} |"
            )
    return "\n".join(lines)


def main() -> int:
    """Run the sets (or compare two runs) and print or write the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="≤150 pairs per source corpus (default)")
    parser.add_argument("--full", action="store_true", help="every pair")
    parser.add_argument("--repos", action="store_true", help="also the whole-repository sets")
    parser.add_argument("--corpus", action="append", help="only these corpora")
    parser.add_argument("--limit", type=int, help="queries per corpus and set")
    parser.add_argument("--output", type=Path, help="where to write the ranks (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"), help="compare two runs")
    args = parser.parse_args()
    if args.compare:
        old, new = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        print(compare(old, new))
        return 0
    ranks = run(args)
    text = json.dumps(ranks, indent=1, sort_keys=True) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
