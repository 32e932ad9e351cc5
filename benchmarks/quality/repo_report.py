"""The whole-repository result: JSON (per set, corpus, mode; macro; paired; per query) and tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchmarks.quality.metrics import bootstrap, macro_bootstrap, paired_bootstrap
from benchmarks.quality.repo_evaluate import BASELINE, RepoRun
from benchmarks.quality.repo_metrics import FILE_METRICS, REPO_METRICS
from benchmarks.quality.repo_sets import SETS
from benchmarks.quality.roles import ROLES

__all__ = ["build_repo_result", "compare_repo_runs", "dump_result", "query_figures", "repo_markdown"]

#: Paired comparisons within a run (A − B): the modes, and each mode against BM25.
_PAIRS = (
    ("hybrid", "semantic"),
    ("hybrid", "lexical"),
    ("semantic", "lexical"),
    ("hybrid", BASELINE),
    ("semantic", BASELINE),
    ("lexical", BASELINE),
)
#: Metrics shown per set (``nonimpl`` shares matter for sets a and b, Acc@5 for b).
_SHOWN = {
    "doc": ("chunk_mrr", "file_mrr", "best_file_mrr", "any@5", "nonimpl@5", "nonimpl_chunks@5"),
    "change": ("chunk_mrr", "file_mrr", "best_file_mrr", "acc@5", "any@5", "nonimpl@5", "nonimpl_chunks@5"),
    "identifier": ("chunk_mrr", "file_mrr", "best_file_mrr", "any@5"),
    "question": ("chunk_mrr", "file_mrr", "best_file_mrr", "any@5", "nonimpl@5", "nonimpl_chunks@5"),
    "bug": ("file_mrr", "best_file_mrr", "acc@5", "any@5", "nonimpl@5", "nonimpl_chunks@5"),
    "bug_src": ("file_mrr", "best_file_mrr", "acc@5", "any@5", "nonimpl@5", "nonimpl_chunks@5"),
}
_LABELS = {
    "chunk_mrr": "chunk MRR@10",
    "file_mrr": "file MRR@10",
    "best_file_mrr": "best-chunk file MRR@10",
    "acc@5": "Acc@5",
    "any@5": "any@5",
    "nonimpl@5": "non-impl@5 files",
    "nonimpl_chunks@5": "non-impl@5 chunks",
}
_SET_TITLES = {
    "doc": "(a) doc comment → unit (blanked tree)",
    "change": "(b) change description → files (original tree)",
    "identifier": "(c) identifier → defining unit (original tree)",
    "question": "(d) plain-English question → function or method (blanked tree)",
    "bug": "(e) bug report → files its fix changed (original tree)",
    "bug_src": "(e') the same bug reports, restricted by hand to implementation files (reference)",
}


def _metrics_of(mode: str) -> tuple[str, ...]:
    return FILE_METRICS if mode == BASELINE else REPO_METRICS


def _column(run: RepoRun, set_name: str, mode: str, metric: str) -> list[float]:
    return [v[mode][metric] for v in run.values.get(set_name, []) if mode in v]


def _set_entry(runs: Sequence[RepoRun], set_name: str, modes: Sequence[str], seed: int) -> dict[str, Any]:
    runs = [r for r in runs if r.values.get(set_name)]
    corpora = {
        run.corpus.name: {
            "queries": len(run.values[set_name]),
            "available": run.available.get(set_name, 0),
            "modes": {
                mode: {
                    m: bootstrap(_column(run, set_name, mode, m), seed=seed).as_dict()
                    for m in _metrics_of(mode)
                }
                for mode in modes
            },
        }
        for run in runs
    }
    macro = {
        mode: {
            m: macro_bootstrap([_column(r, set_name, mode, m) for r in runs], seed=seed).as_dict()
            for m in _metrics_of(mode)
        }
        for mode in modes
    }
    paired: dict[str, Any] = {}
    for a, b in _PAIRS:
        if a in modes and b in modes:
            shared = [m for m in _metrics_of(a) if m in _metrics_of(b)]
            paired[f"{a}-{b}"] = {
                m: paired_bootstrap(
                    [_column(r, set_name, a, m) for r in runs],
                    [_column(r, set_name, b, m) for r in runs],
                    seed=seed,
                ).as_dict()
                for m in shared
            }
    paired["document-best_chunk"] = {
        mode: paired_bootstrap(
            [_column(r, set_name, mode, "file_mrr") for r in runs],
            [_column(r, set_name, mode, "best_file_mrr") for r in runs],
            seed=seed,
        ).as_dict()
        for mode in modes
        if mode != BASELINE
    }
    return {
        "corpora": corpora,
        "macro": macro,
        "paired": paired,
        "top5_roles": _role_shares(runs, set_name, modes),
    }


def _role_shares(runs: Sequence[RepoRun], set_name: str, modes: Sequence[str]) -> dict[str, Any]:
    """Share of each role among the first 5 files (document page), per corpus and macro."""
    corpora: dict[str, dict[str, dict[str, float]]] = {}
    for run in runs:
        per_mode = run.top_roles.get(set_name, {})
        corpora[run.corpus.name] = {
            mode: {role: round(per_mode[mode][role] / total, 4) for role in ROLES if per_mode[mode][role]}
            for mode in modes
            if mode in per_mode and (total := sum(per_mode[mode].values()))
        }
    macro = {
        mode: {
            role: round(sum(c.get(mode, {}).get(role, 0.0) for c in corpora.values()) / len(corpora), 4)
            for role in ROLES
        }
        for mode in modes
    }
    return {"corpora": corpora, "macro": macro}


def _corpus_facts(run: RepoRun) -> dict[str, Any]:
    spec = run.corpus.spec
    return {
        "name": spec.name,
        "language": spec.language,
        "registry": spec.registry,
        "package": spec.package,
        "version": spec.version,
        "url": spec.url,
        "sha256": spec.sha256,
        "repository": run.corpus.repository,
        "tag": run.corpus.tag,
        "files": run.files,
        "roles": run.roles,
        "trees": {
            name: {
                "files": t.files,
                "chunks": t.chunks,
                "index_seconds": t.index_seconds,
                "skipped": t.skipped,
                "semantic_coverage": t.coverage,
            }
            for name, t in run.trees.items()
        },
        "available": run.available,
        "asked": {s: len(v) for s, v in run.values.items()},
        "doc_pairs_dropped": run.dropped,
        "broken_files": run.broken_files,
        "seconds": run.seconds,
    }


def _queries(runs: Sequence[RepoRun]) -> list[dict[str, Any]]:
    """One row per query; each mode's figures as a list in ``query_metrics`` order."""
    return [
        {
            "id": query.id,
            "query": query.text,
            "targets": [t.path if t.line is None else f"{t.path}:{t.line}" for t in query.targets],
            "values": {
                mode: [round(figures[m], 4) for m in _metrics_of(mode)] for mode, figures in values.items()
            },
        }
        for run in runs
        for set_name in SETS
        for query, values in zip(run.queries.get(set_name, []), run.values.get(set_name, []), strict=True)
    ]


def query_figures(result: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """A query row's figures of a result as mode → figure → value."""
    names = result["query_metrics"]
    return {mode: dict(zip(names[mode], values, strict=True)) for mode, values in row["values"].items()}


def build_repo_result(
    runs: Sequence[RepoRun], *, modes: Sequence[str], seed: int, meta: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON document of a run (``meta`` adds profile, machine, timing…)."""
    all_modes = [*modes, BASELINE]
    sets = [s for s in SETS if any(r.values.get(s) for r in runs)]
    return {
        "benchmark": "repo_quality",
        **meta,
        "k": 10,
        "bootstrap": {"samples": 2000, "seed": seed, "interval": 0.95},
        "modes": all_modes,
        "query_metrics": {mode: list(_metrics_of(mode)) for mode in all_modes},
        "sets": {s: _set_entry(runs, s, all_modes, seed) for s in sets},
        "corpora": [_corpus_facts(run) for run in runs],
        "queries": _queries(runs),
    }


def compare_repo_runs(new: Mapping[str, Any], old: Mapping[str, Any], *, seed: int = 0) -> dict[str, Any]:
    """Paired bootstrap of ``new`` − ``old`` per set, mode and figure, over the queries both asked."""
    before = {q["id"]: query_figures(old, q) for q in old.get("queries", [])}
    out: dict[str, Any] = {}
    for set_name in new.get("sets", {}):
        per_mode: dict[str, Any] = {}
        for mode in new.get("modes", []):
            groups: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = {}
            for q in new.get("queries", []):
                corpus, q_set, _ = q["id"].split(":", 2)
                old_values = before.get(q["id"], {}).get(mode)
                figures = query_figures(new, q)
                if q_set == set_name and mode in figures and old_values:
                    groups.setdefault(corpus, []).append((figures[mode], old_values))
            if not groups:
                continue
            pairs = list(groups.values())
            shared = [m for m in _metrics_of(mode) if all(m in a and m in b for g in pairs for a, b in g)]
            per_mode[mode] = {
                m: paired_bootstrap(
                    [[a[m] for a, _ in g] for g in pairs], [[b[m] for _, b in g] for g in pairs], seed=seed
                ).as_dict()
                for m in shared
            }
            per_mode[mode]["queries"] = sum(len(g) for g in pairs)
        out[set_name] = per_mode
    return out


def _compact(value: Any, indent: int = 0) -> str:
    """JSON with every list or dict of scalars (an estimate, a list of modes) on one line."""
    pad = "  " * (indent + 1)
    if isinstance(value, Mapping) and not _scalars(value.values()):
        items = [f"{pad}{json.dumps(k)}: {_compact(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(value, list) and not _scalars(value):
        items = [f"{pad}{_compact(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(value, ensure_ascii=False)


def _scalars(values: Iterable[Any]) -> bool:
    return all(not isinstance(v, Mapping | list) for v in values)


def dump_result(result: Mapping[str, Any]) -> str:
    """The result as JSON text: indented, each estimate and each query on one line."""
    head = _compact({k: v for k, v in result.items() if k != "queries"})
    rows = ",\n".join("    " + json.dumps(q, ensure_ascii=False) for q in result.get("queries", []))
    return head[:-2] + ',\n  "queries": [\n' + rows + "\n  ]\n}\n"


def _ci(entry: Mapping[str, float]) -> str:
    return f"{entry['mean']:.3f} [{entry['low']:.2f}, {entry['high']:.2f}]"


def _delta(entry: Mapping[str, float]) -> str:
    return f"{entry['delta']:+.3f} [{entry['low']:+.2f}, {entry['high']:+.2f}]"


def _set_tables(set_name: str, entry: Mapping[str, Any], modes: Sequence[str]) -> list[str]:
    shown = _SHOWN[set_name]
    total = sum(c["queries"] for c in entry["corpora"].values())
    lines = [
        f"### {_SET_TITLES[set_name]}: {total} queries, {len(entry['corpora'])} corpora",
        "",
        "| mode (macro) | " + " | ".join(_LABELS[m] for m in shown) + " |",
        "|---|" + "---:|" * len(shown),
    ]
    for mode in modes:
        cells = [_ci(entry["macro"][mode][m]) if m in entry["macro"][mode] else "–" for m in shown]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| corpus | queries | mode | " + " | ".join(_LABELS[m] for m in shown) + " |",
        "|---|---:|---|" + "---:|" * len(shown),
    ]
    for name, corpus in entry["corpora"].items():
        for mode in modes:
            figures = corpus["modes"][mode]
            cells = [f"{figures[m]['mean']:.3f}" if m in figures else "–" for m in shown]
            lines.append(f"| {name} | {corpus['queries']} | {mode} | " + " | ".join(cells) + " |")
    paired = entry["paired"]
    lines += ["", "| paired (macro) | chunk MRR@10 Δ | file MRR@10 Δ |", "|---|---:|---:|"]
    for pair, figures in paired.items():
        if pair == "document-best_chunk":
            continue
        chunk = _delta(figures["chunk_mrr"]) if "chunk_mrr" in figures else "–"
        lines.append(f"| {pair.replace('-', ' − ')} | {chunk} | {_delta(figures['file_mrr'])} |")
    for mode, delta in paired["document-best_chunk"].items():
        lines.append(f"| {mode}: document − best-chunk files | – | {_delta(delta)} |")
    shares = entry.get("top5_roles", {}).get("macro", {})
    if set_name != "identifier" and shares:
        roles = [r for r in ROLES if any(shares[m].get(r) for m in shares)]
        lines += [
            "",
            "| first 5 files by role (macro) | " + " | ".join(roles) + " |",
            "|---|" + "---:|" * len(roles),
        ]
        for mode, by_role in shares.items():
            lines.append(f"| {mode} | " + " | ".join(f"{by_role.get(r, 0.0):.3f}" for r in roles) + " |")
    return [*lines, ""]


def repo_markdown(result: Mapping[str, Any]) -> str:
    """Markdown tables per set: macro figures per mode, per-corpus means, paired deltas."""
    modes = result["modes"]
    lines: list[str] = []
    for set_name, entry in result["sets"].items():
        lines += _set_tables(set_name, entry, modes)
    base = result.get("baseline")
    if base:
        lines += [f"### vs baseline ({base['path']})", ""]
        for set_name, per_mode in base["sets"].items():
            shown = _SHOWN[set_name]
            lines += [
                f"| {set_name} | queries | " + " | ".join(f"{_LABELS[m]} Δ" for m in shown) + " |",
                "|---|---:|" + "---:|" * len(shown),
            ]
            for mode, figures in per_mode.items():
                cells = [_delta(figures[m]) if m in figures else "–" for m in shown]
                lines.append(f"| {mode} | {figures['queries']} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)
