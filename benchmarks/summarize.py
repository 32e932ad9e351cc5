"""Summarize every ``benchmarks/results/*.json`` into ``SUMMARY.md`` and PNG plots, and print it.

Any result renders: its top-level facts as a list, each dict of dicts as a table, every
dict holding ``p50_ms``/``p95_ms`` in one latency table, and every list of numbers under a
key ending in ``_ms`` in the latency plot. ``quality.json`` also gets its own tables and
the MRR plot; a whole-repository result (``repo_quality*.json``) gets its own tables.

Example:
    .venv/bin/python -m benchmarks.summarize
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from benchmarks._plots import plot_latencies, plot_quality
from benchmarks.quality.repo_report import repo_markdown
from benchmarks.quality.report import to_markdown

RESULTS = Path(__file__).parent / "results"
_PERCENTILES = ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "max_ms")
_SKIP = frozenset({"queries", "latency_samples_ms"})
_MIN_SAMPLES = 5


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _table(rows: Mapping[str, Mapping[str, Any]], first: str) -> list[str]:
    columns: list[str] = []
    for row in rows.values():
        columns += [k for k, v in row.items() if _scalar(v) and k not in columns]
    out = [f"| {first} | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    out += [
        f"| {name} | " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for name, row in rows.items()
    ]
    return [*out, ""]


def _latency_rows(data: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(data, Mapping):
        if any(key in data for key in _PERCENTILES):
            yield path or "(top)", data
        for key, value in data.items():
            if key not in _SKIP:
                yield from _latency_rows(value, f"{path}.{key}" if path else str(key))


def _samples(data: Any, path: str = "", in_ms: bool = False) -> Iterator[tuple[str, list[float]]]:
    if isinstance(data, Mapping):
        for key, value in data.items():
            if key != "queries":
                label = f"{path}.{key}" if path else str(key)
                yield from _samples(value, label, in_ms or str(key).endswith("_ms"))
    elif isinstance(data, list) and in_ms and len(data) >= _MIN_SAMPLES and _numbers(data):
        yield path, [float(x) for x in data]


def _numbers(values: list[Any]) -> bool:
    return all(isinstance(x, int | float) and not isinstance(x, bool) for x in values)


def _short(label: str) -> str:
    """``latency_samples_ms.hybrid`` → ``hybrid``: the ``_ms`` containers say nothing."""
    parts = [p for p in label.split(".") if not p.endswith("_ms")]
    return ".".join(parts) or label


def render_generic(name: str, data: Mapping[str, Any]) -> list[str]:
    """Markdown for any result: facts, tables of dicts of dicts, latency percentiles."""
    lines = [f"## {name}", ""]
    facts = {k: v for k, v in data.items() if _scalar(v) and k not in _SKIP}
    lines += [f"- {k}: {_cell(v)}" for k, v in facts.items()] + ([""] if facts else [])
    for key, value in data.items():
        if key in _SKIP or not isinstance(value, Mapping) or not value:
            continue
        if all(isinstance(v, Mapping) for v in value.values()):
            lines += [f"### {key}", "", *_table(value, key)]
        elif all(_scalar(v) for v in value.values()):
            lines += [f"### {key}", "", *_table({key: value}, "")]
    latency = dict(_latency_rows(data))
    if latency:
        rows = {p: {k: v for k, v in row.items() if k in _PERCENTILES} for p, row in latency.items()}
        lines += ["### latency", "", *_table(rows, "where")]
    return lines


def render_quality(data: Mapping[str, Any]) -> list[str]:
    """Markdown for ``quality.json``: the benchmark's own tables plus corpus facts."""
    corpora = {
        c["name"]: {
            "language": c["language"],
            "source": f"{c['registry']}:{c['package']}={c['version']}",
            "files": c["files"],
            "chunks": c["chunks"],
            "pairs": c["pairs_total"],
            "asked": c["pairs_asked"],
            "index s": c["index_seconds"],
        }
        for c in data["corpora"]
    }
    head = (
        f"profile {data.get('profile')}, model {data.get('model')}, lode {data.get('lode_commit')}, "
        f"{data.get('seconds')} s in all"
    )
    lines = ["## quality", "", head, "", to_markdown(data), *_table(corpora, "corpus")]
    if data.get("missing_corpora"):
        lines += [f"**Missing corpora:** {', '.join(data['missing_corpora'])}", ""]
    return lines


def render_repo_quality(name: str, data: Mapping[str, Any]) -> list[str]:
    """Markdown for a whole-repository result: its own tables plus corpus facts."""
    corpora = {
        c["name"]: {
            "language": c["language"],
            "source": f"{c['registry']}:{c['package']}={c['version']}",
            "files": c["files"],
            **{f"{tree} chunks": t["chunks"] for tree, t in c["trees"].items()},
            **{f"{s} asked": n for s, n in c["asked"].items()},
        }
        for c in data["corpora"]
    }
    head = (
        f"profile {data.get('profile')}, model {data.get('model')}, lode {data.get('lode_commit')}, "
        f"{data.get('seconds')} s in all"
    )
    return [f"## {name}", "", head, "", repo_markdown(data), *_table(corpora, "corpus")]


def summarize(results: Path) -> str:
    """Write ``SUMMARY.md`` and the plots for every result JSON in ``results``; return the markdown."""
    results.mkdir(parents=True, exist_ok=True)
    lines = ["# Benchmark summary", ""]
    series: list[tuple[str, list[float]]] = []
    for path in sorted(results.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, Mapping):
            continue
        if data.get("benchmark") == "quality" and data.get("corpora"):
            lines += render_quality(data)
            plot_quality(data, results / "quality_mrr.png")
            lines += ["![MRR@10 per corpus and mode](quality_mrr.png)", ""]
        elif data.get("benchmark") == "repo_quality" and data.get("corpora"):
            lines += render_repo_quality(path.stem, data)
        else:
            lines += render_generic(path.stem, data)
        series += [(f"{path.stem}: {_short(label)}", values) for label, values in _samples(data)]
    if series:
        plot_latencies(series, results / "latency.png")
        lines += ["## latency distributions", "", "![latency distributions](latency.png)", ""]
    text = "\n".join(lines).rstrip() + "\n"
    (results / "SUMMARY.md").write_text(text, encoding="utf-8")
    return text


def main() -> int:
    """Summarize the results folder and print the summary."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    sys.stdout.write(summarize(args.results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
