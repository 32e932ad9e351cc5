"""Calibrate ``search_content``'s relevance map and default ``min_score`` on real code.

For every query/target pair of the quality corpora (doc-comment first sentence → the
unit it documents; doc comments blanked in the indexed text), this embeds the query
with the default model and records the cosine similarity of:

- ``target``: the best chunk covering the target's first line (a relevant chunk),
- ``top1`` / ``top10``: the best and the tenth best chunk of the corpus,
- ``random``: every chunk of another file (irrelevant chunks).

It prints percentiles of each and, for candidate ``min_score`` values, the share of
targets kept and of irrelevant chunks let through under the shipped relevance map.

    .venv/bin/python -m benchmarks.calibrate_content [--corpora click,commander] [--limit 100]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.quality.corpora import CORPORA
from benchmarks.quality.evaluate import prepare_corpus
from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import Embedder, load_embedder
from indexer.models import ChunkFilter
from indexer.search.content import to_relevance

_PCTS = (5, 10, 25, 50, 75, 90, 95)
_REPO = Path(__file__).resolve().parent.parent
#: Short concepts an agent would send, and the file of lode's own source that answers each.
_CONCEPTS = {
    "continuation token": "indexer/search/content/_tokens.py",
    "embedding cache": "indexer/store/_vectors.py",
    "debounce file events": "indexer/watch/_debouncer.py",
    "reciprocal rank fusion": "indexer/search/_fusion.py",
    "gitignore rules": "indexer/walker.py",
    "split identifiers into words": "indexer/lexicon.py",
    "map errors to HTTP status codes": "server/errors.py",
    "API key authentication": "server/app.py",
    "durable task queue": "indexer/tasks.py",
    "settings from environment variables": "indexer/config.py",
    "markdown sections": "indexer/chunker/_markdown.py",
    "table schemas": "indexer/store/_schema.py",
    "progress bar": "indexer/cli/_progress.py",
    "key phrases of a document": "indexer/keywords.py",
    "exact term matching": "indexer/search/content/_terms.py",
    "crash recovery of half-written files": "indexer/store/_files.py",
}


def _corpus_sims(name: str, embedder: Embedder, limit: int) -> dict[str, list[float]]:
    spec = next(s for s in CORPORA if s.name == name)
    out: dict[str, list[float]] = {"target": [], "top1": [], "top10": [], "random": []}
    with tempfile.TemporaryDirectory(prefix="lode-calibrate-") as tmp:
        root = Path(tmp) / name
        _, pairs, _ = prepare_corpus(spec, root, full=False, limit=limit)
        lode = Lode(load_config(env={}, overrides={"db": Path(tmp) / "db"}), embedder=embedder)
        try:
            project = lode.index(root, name=name).project_id
            items = lode.store.chunks.with_vectors(ChunkFilter(project_ids=(project,)))
        finally:
            lode.close()
    chunks = [c for c, v in items if v is not None]
    matrix = np.stack([v for _, v in items if v is not None])
    rng = np.random.default_rng(0)
    for pair in pairs:
        sims = matrix @ embedder.embed_queries([pair.query])[0]
        covering = [
            i for i, c in enumerate(chunks)
            if c.file_path == pair.path and c.chunk.start_line <= pair.start_line <= c.chunk.end_line
        ]  # fmt: skip
        if not covering:
            continue
        out["target"].append(float(max(sims[i] for i in covering)))
        ordered = np.sort(sims)[::-1]
        out["top1"].append(float(ordered[0]))
        out["top10"].append(float(ordered[min(9, len(ordered) - 1)]))
        others = [i for i, c in enumerate(chunks) if c.file_path != pair.path]
        picked = rng.choice(others, size=min(20, len(others)), replace=False)
        out["random"].extend(float(sims[i]) for i in picked)
    return out


def _concept_sims(embedder: Embedder) -> dict[str, list[float]]:
    """Short concepts against lode's own source: best chunk of the answering file, and the rest."""
    out: dict[str, list[float]] = {"concept_target": [], "concept_other": []}
    with tempfile.TemporaryDirectory(prefix="lode-calibrate-") as tmp:
        root = Path(tmp) / "lode"
        for folder in ("indexer", "server"):
            shutil.copytree(_REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
        lode = Lode(load_config(env={}, overrides={"db": Path(tmp) / "db"}), embedder=embedder)
        try:
            project = lode.index(root, name="lode").project_id
            items = [
                (c, v)
                for c, v in lode.store.chunks.with_vectors(ChunkFilter(project_ids=(project,)))
                if v is not None
            ]
        finally:
            lode.close()
    matrix = np.stack([v for _, v in items])
    for concept, path in _CONCEPTS.items():
        sims = matrix @ embedder.embed_queries([concept])[0]
        mine = [float(s) for (c, _), s in zip(items, sims, strict=True) if c.file_path == path]
        if mine:
            out["concept_target"].append(max(mine))
            out["concept_other"].extend(
                float(s) for (c, _), s in zip(items, sims, strict=True) if c.file_path != path
            )
    return out


def main() -> None:
    """Print the similarity percentiles and what each min_score keeps."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="click,commander,cobra")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--sims", type=Path, default=None, help="Cache of the similarities (JSON).")
    args = parser.parse_args()
    if args.sims is not None and args.sims.exists():
        sims: dict[str, list[float]] = json.loads(args.sims.read_text())
    else:
        embedder = load_embedder()
        sims = {"target": [], "top1": [], "top10": [], "random": []}
        for name in args.corpora.split(","):
            for key, values in _corpus_sims(name, embedder, args.limit).items():
                sims[key].extend(values)
        sims.update(_concept_sims(embedder))
        if args.sims is not None:
            args.sims.write_text(json.dumps(sims))
    report: dict[str, object] = {
        key: {f"p{p}": round(float(np.percentile(v, p)), 3) for p in _PCTS} for key, v in sims.items()
    }
    kept = {key: np.array([to_relevance(s) for s in values]) for key, values in sims.items()}
    report["min_score"] = {
        str(m): {f"{key}_kept": round(float(np.mean(v >= m)), 3) for key, v in kept.items()}
        for m in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8)
    }
    report["pairs"] = len(sims["target"])
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
