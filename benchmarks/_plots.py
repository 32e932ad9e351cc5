"""PNG plots of benchmark results (matplotlib, Agg backend): MRR per corpus and mode, latencies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["plot_latencies", "plot_quality"]

_MODE_COLOURS = {"lexical": "#4c72b0", "semantic": "#dd8452", "hybrid": "#55a868"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_quality(result: Mapping[str, Any], target: Path) -> Path:
    """Grouped bars of MRR@10 per corpus (and macro) and mode, with 95% intervals."""
    plt = _pyplot()
    modes = list(result["modes"])
    rows = [(c["name"], c["modes"]) for c in result["corpora"]] + [("macro", result["macro"])]
    width = 0.8 / max(1, len(modes))
    fig, ax = plt.subplots(figsize=(1.6 * len(rows) + 2, 4.2))
    for i, mode in enumerate(modes):
        means = [r[mode]["mrr@10"]["mean"] for _, r in rows]
        low = [m - r[mode]["mrr@10"]["low"] for m, (_, r) in zip(means, rows, strict=True)]
        high = [r[mode]["mrr@10"]["high"] - m for m, (_, r) in zip(means, rows, strict=True)]
        xs = [j + (i - (len(modes) - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, means, width, yerr=[low, high], capsize=3, label=mode, color=_MODE_COLOURS.get(mode))
    ax.set_xticks(range(len(rows)), [name for name, _ in rows])
    ax.set_ylim(0, 1)
    ax.set_ylabel("MRR@10")
    ax.set_title(f"Retrieval quality ({result.get('profile', '')}, model {result.get('model', '?')})")
    ax.axhline(0.6, color="grey", linestyle=":", linewidth=1)
    ax.legend(loc="upper right", ncols=len(modes))
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target


def plot_latencies(series: Sequence[tuple[str, Sequence[float]]], target: Path) -> Path:
    """Box plots (log scale) of latency samples in milliseconds, one per labelled series."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(series) + 2), 4.2))
    ax.boxplot([list(values) for _, values in series], whis=(5, 95), showfliers=True)
    ax.set_xticks(range(1, len(series) + 1), [label for label, _ in series], rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("milliseconds (whiskers: p5–p95)")
    ax.set_title("Latency distributions")
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target


def plot_scale(rows: Mapping[str, Mapping[str, Any]], target: Path) -> Path:
    """How search latency, a search process's memory and disk per chunk grow with the
    number of chunks (``bench_scale``'s size part): one panel each, log-scaled chunks."""
    plt = _pyplot()
    ordered = sorted(rows.values(), key=lambda r: int(r["chunks"]))
    chunks = [int(r["chunks"]) for r in ordered]
    fig, (latency, memory, disk) = plt.subplots(1, 3, figsize=(13, 4.2))
    for key, label in (("hybrid_chunk", "hybrid, chunks"), ("hybrid_document", "hybrid, documents")):
        latency.plot(chunks, [r[key]["p50_ms"] for r in ordered], marker="o", label=f"{label} p50")
        latency.plot(
            chunks, [r[key]["p95_ms"] for r in ordered], marker="x", linestyle="--", label=f"{label} p95"
        )
    latency.set_ylabel("milliseconds")
    latency.set_title("Search latency")
    latency.legend(fontsize=8)
    memory.plot(chunks, [r["rss_mb"] for r in ordered], marker="o", label="RSS after the queries")
    memory.plot(chunks, [r["peak_rss_mb"] for r in ordered], marker="x", linestyle="--", label="peak RSS")
    memory.set_ylabel("MB")
    memory.set_title("A search process's memory")
    memory.legend(fontsize=8)
    disk.plot(chunks, [r["disk_bytes_per_chunk"] for r in ordered], marker="o")
    disk.set_ylabel("bytes per chunk")
    disk.set_title("Index on disk")
    for ax in (latency, memory, disk):
        ax.set_xscale("log")
        ax.set_xlabel("chunks")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
