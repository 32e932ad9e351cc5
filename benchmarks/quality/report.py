"""The quality result: JSON document (per corpus, macro, paired, per query) and markdown tables."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.quality.evaluate import CorpusRun
from benchmarks.quality.metrics import (
    METRICS,
    bootstrap,
    macro_bootstrap,
    metric_values,
    paired_bootstrap,
)

__all__ = ["build_result", "compare_runs", "to_markdown"]

#: Paired comparisons reported in every run (A − B).
_PAIRS = (("hybrid", "lexical"), ("hybrid", "semantic"), ("semantic", "lexical"))


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else ordered * 99
    return {
        "p50_ms": round(cuts[49], 2),
        "p95_ms": round(cuts[94], 2),
        "p99_ms": round(cuts[98], 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
    }


def _corpus_entry(run: CorpusRun, seed: int) -> dict[str, Any]:
    spec = run.spec
    modes = {}
    for mode, ranks in run.ranks.items():
        values = metric_values(ranks)
        modes[mode] = {m: bootstrap(values[m], seed=seed).as_dict() for m in METRICS}
        modes[mode]["latency"] = _percentiles(run.latency_ms.get(mode, []))
    return {
        "name": spec.name,
        "language": spec.language,
        "registry": spec.registry,
        "package": spec.package,
        "version": spec.version,
        "url": spec.url,
        "sha256": spec.sha256,
        "files": run.files,
        "chunks": run.chunks,
        "index_seconds": run.index_seconds,
        "documented_units": run.pair_set.documented_units,
        "pairs_total": len(run.pair_set.pairs),
        "pairs_asked": len(run.pairs),
        "dropped": dict(sorted(run.pair_set.dropped.items())),
        "broken_files": run.pair_set.broken_files,
        "modes": modes,
    }


def _grouped(runs: Sequence[CorpusRun], mode: str, metric: str) -> list[list[float]]:
    return [metric_values(run.ranks[mode])[metric] for run in runs if mode in run.ranks]


def build_result(runs: Sequence[CorpusRun], *, seed: int, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document of a run (``meta`` adds profile, machine, timing…)."""
    modes = [m for m in ("lexical", "semantic", "hybrid") if runs and all(m in r.ranks for r in runs)]
    macro = {
        mode: {m: macro_bootstrap(_grouped(runs, mode, m), seed=seed).as_dict() for m in METRICS}
        for mode in modes
    }
    paired = {
        f"{a}-{b}": {
            m: paired_bootstrap(_grouped(runs, a, m), _grouped(runs, b, m), seed=seed).as_dict()
            for m in METRICS
        }
        for a, b in _PAIRS
        if a in modes and b in modes
    }
    samples = {mode: [x for r in runs for x in r.latency_ms.get(mode, [])] for mode in modes}
    latency = {mode: _percentiles(values) for mode, values in samples.items()}
    queries = [
        {
            "id": pair.id,
            "query": pair.query,
            "target": f"{pair.path}:{pair.start_line}-{pair.end_line}",
            "name": pair.name,
            "ranks": {mode: run.ranks[mode][i] for mode in modes},
        }
        for run in runs
        for i, pair in enumerate(run.pairs)
    ]
    return {
        "benchmark": "quality",
        **meta,
        "k": 10,
        "bootstrap": {"samples": 2000, "seed": seed, "interval": 0.95},
        "modes": modes,
        "corpora": [_corpus_entry(run, seed) for run in runs],
        "macro": macro,
        "paired": paired,
        "latency": latency,
        "latency_samples_ms": samples,
        "queries": queries,
    }


def compare_runs(new: Mapping[str, Any], old: Mapping[str, Any], *, seed: int = 0) -> dict[str, Any]:
    """Paired bootstrap of ``new`` − ``old`` per mode and metric, over the queries both asked."""
    old_ranks = {q["id"]: q["ranks"] for q in old.get("queries", [])}
    out: dict[str, Any] = {}
    for mode in new.get("modes", []):
        by_corpus: dict[str, tuple[list[int | None], list[int | None]]] = {}
        for q in new.get("queries", []):
            before = old_ranks.get(q["id"], {})
            if mode in before:
                a, b = by_corpus.setdefault(q["id"].split(":", 1)[0], ([], []))
                a.append(q["ranks"][mode])
                b.append(before[mode])
        if not by_corpus:
            continue
        groups = list(by_corpus.values())
        out[mode] = {
            m: paired_bootstrap(
                [metric_values(a)[m] for a, _ in groups], [metric_values(b)[m] for _, b in groups], seed=seed
            ).as_dict()
            for m in METRICS
        }
        out[mode]["queries"] = sum(len(a) for a, _ in groups)
    return out


def _ci(entry: Mapping[str, float]) -> str:
    return f"{entry['mean']:.3f} [{entry['low']:.2f}, {entry['high']:.2f}]"


def _delta(entry: Mapping[str, float]) -> str:
    return f"{entry['delta']:+.3f} [{entry['low']:+.2f}, {entry['high']:+.2f}] p={entry['p_value']:.3f}"


def to_markdown(result: Mapping[str, Any]) -> str:
    """Markdown tables: MRR@10 per corpus and mode, macro metrics per mode, paired deltas."""
    modes = result["modes"]
    lines = [
        "| corpus | language | pairs | " + " | ".join(f"{m} MRR@10" for m in modes) + " |",
        "|---|---|---:|" + "---:|" * len(modes),
    ]
    for c in result["corpora"]:
        cells = " | ".join(_ci(c["modes"][m]["mrr@10"]) for m in modes)
        lines.append(f"| {c['name']} {c['version']} | {c['language']} | {c['pairs_asked']} | {cells} |")
    total = sum(c["pairs_asked"] for c in result["corpora"])
    cells = " | ".join(f"**{_ci(result['macro'][m]['mrr@10'])}**" for m in modes)
    lines += [f"| **macro** | | {total} | {cells} |", ""]
    lines += [
        "| mode | " + " | ".join(METRICS) + " | p50 ms | p95 ms |",
        "|---|" + "---:|" * (len(METRICS) + 2),
    ]
    for mode in modes:
        cells = " | ".join(_ci(result["macro"][mode][m]) for m in METRICS)
        lat = result["latency"].get(mode, {})
        lines.append(f"| {mode} | {cells} | {lat.get('p50_ms', '')} | {lat.get('p95_ms', '')} |")
    if result.get("paired"):
        lines += ["", "| paired (macro) | MRR@10 Δ | Recall@10 Δ |", "|---|---:|---:|"]
        for name, entry in result["paired"].items():
            lines.append(
                f"| {name.replace('-', ' − ')} | {_delta(entry['mrr@10'])} | {_delta(entry['recall@10'])} |"
            )
    if result.get("baseline"):
        base = result["baseline"]
        lines += [
            "",
            f"| vs baseline ({base['path']}) | queries | MRR@10 Δ | Recall@10 Δ |",
            "|---|---:|---:|---:|",
        ]
        for mode, entry in base["modes"].items():
            lines.append(
                f"| {mode} | {entry['queries']} | {_delta(entry['mrr@10'])} | {_delta(entry['recall@10'])} |"
            )
    return "\n".join(lines) + "\n"
