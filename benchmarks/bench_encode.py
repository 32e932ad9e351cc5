"""Phase 2's document encoder, old against new, in one process on one corpus (issue 44).

1. Raw encode: the same sample of chunk texts through each document encoder (``torch``,
   today's; ``onnx``, the float graph; ``onnx-int8`` when asked), length-sorted model
   calls of 64 as phase 2 makes them: chunks/s, CPU seconds per chunk, and each encoder's
   cosine to torch's vectors (min and mean).
2. Phase 2: phase 1 runs once (lexical index, no vector); each variant embeds a fresh
   copy of that index: chunks/s of phase 2 (``EmbedStats``), seconds until every
   implementation chunk's text was embedded, and until every chunk's. Variants:
   ``torch, old order`` (today: every chunk's role read as implementation, which gives
   the order before issue 44: newest run, README/docs, then write order), ``torch`` and
   each new encoder in the new order (implementation code first).

The default corpus is salt 3007.1 (its package, tests and topic docs, as ``bench_index``
uses it). Timings need a quiet machine: on a shared one they measure the neighbours.

Writes ``benchmarks/results/encode.json`` (or ``--out``).

Example:
    .venv/bin/python -m benchmarks.bench_encode --corpus . --max-files 40 --sample 64 --out /tmp/encode.json
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indexer.api import Lode
from indexer.chunker import embedding_input, text_hash
from indexer.config import DOCUMENT_ENCODERS, LodeConfig, load_config
from indexer.embed import Embedder, load_embedder
from indexer.vectorizer import embed_backlog

RESULTS = Path(__file__).parent / "results"
_CALL = 64


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class _Timed:
    """An embedder that notes when each implementation text came back from the model."""

    def __init__(self, model: Embedder, implementation: set[str]) -> None:
        self._model = model
        self.model_id, self.dimension = model.model_id, model.dimension
        self._implementation = implementation
        self._lock = threading.Lock()
        self.started = time.perf_counter()
        self.seen: set[str] = set()
        self.implementation_done_at: float | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The model's vectors; records progress on implementation texts."""
        vectors = self._model.embed(texts)
        with self._lock:
            self.seen.update(h for h in map(text_hash, texts) if h in self._implementation)
            if self.implementation_done_at is None and self.seen >= self._implementation:
                self.implementation_done_at = time.perf_counter() - self.started
        return np.asarray(vectors)

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Queries as the model embeds them."""
        return np.asarray(self._model.embed_queries(queries))

    def count_tokens(self, text: str) -> int:
        """The model's word-pieces."""
        return self._model.count_tokens(text)


def _config(db: Path, encoder: str, args: argparse.Namespace) -> LodeConfig:
    overrides = {
        "db": db,
        "document_encoder": encoder,
        "batch_size": args.batch_size,
        "threads": args.threads,
        "document_threads": args.document_threads,
    }
    return load_config(env={}, overrides=overrides)


def _phase1(corpus: Path, db: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Index the corpus lexically once; the texts phase 2 will embed, with their roles."""
    lode = Lode(_config(db, "torch", args))
    try:
        started = time.perf_counter()
        lode.index(corpus, name="corpus", embed=False)
        seconds = time.perf_counter() - started
        store = lode.store
        project = store.projects.get("corpus")
        ids = [cid for cid, _ in store.vectors.backlog(project.id)]
        chunks = store.chunks.get(ids)
    finally:
        lode.close()
    texts = {c.id: embedding_input(c.file_path, c.chunk) for c in chunks}
    roles: dict[str, int] = {}
    for c in chunks:
        roles[c.role] = roles.get(c.role, 0) + 1
    return {
        "seconds": round(seconds, 2),
        "chunks": len(chunks),
        "roles": dict(sorted(roles.items())),
        "texts": [texts[c.id][0] for c in chunks],
        "implementation": {texts[c.id][1] for c in chunks if c.role == "implementation"},
    }


def _raw(texts: list[str], encoders: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    """Each encoder over the same texts, length-sorted calls of ``_CALL``."""
    ordered = sorted(texts, key=len)
    out: dict[str, Any] = {}
    reference: np.ndarray | None = None
    for encoder in encoders:
        model = load_embedder(_config(Path("unused"), encoder, args).embed)
        model.embed(ordered[:8])  # export, quantize and first-run costs are not the rate
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = np.vstack([model.embed(ordered[i : i + _CALL]) for i in range(0, len(ordered), _CALL)])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        reference = vectors if reference is None else reference
        cosine = (vectors * reference).sum(axis=1)
        out[encoder] = {
            "chunks_per_s": round(len(texts) / wall, 1),
            "cpu_ms_per_chunk": round(1000 * cpu / len(texts), 2),
            "cosine_to_first_min": round(float(cosine.min()), 6),
            "cosine_to_first_mean": round(float(cosine.mean()), 6),
        }
        _log(f"raw {encoder}: {out[encoder]}")
    return out


def _phase2(
    base: Path, work: Path, variant: str, args: argparse.Namespace, facts: dict[str, Any]
) -> dict[str, Any]:
    """One variant's phase 2 on a fresh copy of the lexical index."""
    encoder, old_order = variant.removesuffix(":old-order"), variant.endswith(":old-order")
    db = work / variant.replace(":", "-")
    shutil.copytree(base, db)
    config = _config(db, encoder, args)
    timed = _Timed(load_embedder(config.embed), facts["implementation"])
    lode = Lode(config, embedder=timed)
    try:
        store = lode.store
        project = store.projects.get("corpus")
        if old_order:  # one role for all: the order phase 2 had before roles decided it
            store.db.table("code_chunks").update(where="true", values={"role": "implementation"})
        timed.started = time.perf_counter()
        stats = embed_backlog(store, timed, project.id)
        coverage = store.vectors.coverage(project.id)
    finally:
        lode.close()
    result = {
        "chunks_per_s": round(stats.embedded / stats.seconds, 1) if stats.seconds else 0.0,
        "model_share": round(stats.model_seconds / stats.seconds, 3) if stats.seconds else 0.0,
        "seconds_to_implementation_coverage": round(timed.implementation_done_at or stats.seconds, 1),
        "seconds_to_full_coverage": round(stats.seconds, 1),
        "semantic_coverage": round(coverage, 4),
    }
    _log(f"phase 2 {variant}: {result}")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write its results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, help="a folder to index (default: salt 3007.1, fetched once)")
    parser.add_argument("--max-files", type=int, default=0, help="index only this many files of it (0: all)")
    parser.add_argument("--sample", type=int, default=3000, help="texts for the raw encode section")
    parser.add_argument("--encoders", default="torch,onnx", help=f"of {', '.join(DOCUMENT_ENCODERS)}")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--document-threads", type=int)
    parser.add_argument("--out", type=Path, default=RESULTS / "encode.json")
    args = parser.parse_args(argv)
    encoders = [e for e in args.encoders.split(",") if e]
    if "torch" not in encoders or any(e not in DOCUMENT_ENCODERS for e in encoders):
        parser.error(f"--encoders: torch (the old one) and any of {', '.join(DOCUMENT_ENCODERS)}")
    encoders = ["torch", *(e for e in encoders if e != "torch")]
    with tempfile.TemporaryDirectory(prefix="lode-bench-encode-") as tmp:
        work = Path(tmp)
        corpus, name = _corpus(args, work)
        facts = _phase1(corpus, work / "phase1", args)
        _log(f"phase 1: {facts['chunks']} chunks {facts['roles']} in {facts['seconds']} s")
        sample = random.Random(44).sample(facts["texts"], min(args.sample, len(facts["texts"])))
        raw = _raw(sample, encoders, args)
        variants = ["torch:old-order", *encoders]
        phase2 = {v: _phase2(work / "phase1", work, v, args, facts) for v in variants}
    old = phase2["torch:old-order"]
    report = {
        "corpus": name,
        "chunks": facts["chunks"],
        "roles": facts["roles"],
        "settings": {
            "batch_size": args.batch_size,
            "threads": args.threads,
            "document_threads": args.document_threads,
        },
        "raw_encode": raw,
        "phase2": phase2,
        "speedup_vs_old": {
            v: {
                "chunks_per_s": round(r["chunks_per_s"] / old["chunks_per_s"], 2)
                if old["chunks_per_s"]
                else None,
                "implementation_coverage": round(
                    old["seconds_to_implementation_coverage"] / r["seconds_to_implementation_coverage"], 2
                )
                if r["seconds_to_implementation_coverage"]
                else None,
            }
            for v, r in phase2.items()
        },
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "note": "one process, every variant in turn: figures count only from a quiet machine",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    _log(f"wrote {args.out}")
    return 0


def _corpus(args: argparse.Namespace, work: Path) -> tuple[Path, str]:
    """The folder to index (``--max-files`` of it copied, in path order) and its name."""
    if args.corpus is None:
        from benchmarks.bench_index import SALT
        from benchmarks.quality.corpora import fetch_corpus

        root, name = fetch_corpus(SALT), "salt 3007.1: salt/**/*.py, tests/**/*.py, doc/topics/**/*.rst"
    else:
        root, name = args.corpus.resolve(), str(args.corpus)
    if not args.max_files:
        return root, name
    target = work / "corpus"
    picked = _pick(root, args.max_files)
    for path in picked:
        (target / path.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / path.relative_to(root))
    return target, f"{name} (first {len(picked)} files of each kind)"


def _pick(root: Path, count: int) -> list[Path]:
    """``count`` files spread over implementation, tests and docs by their role (so a small
    run still has each), in path order within each."""
    from indexer.roles import file_role

    kinds: dict[str, list[Path]] = {"implementation": [], "test": [], "docs": []}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or any(p.startswith(".") or p in _SKIP for p in path.relative_to(root).parts):
            continue
        if path.suffix not in _SUFFIXES:
            continue
        rel = path.relative_to(root).as_posix()
        kinds.setdefault(file_role(rel, path.read_text(errors="replace")), []).append(path)
    share = max(1, count // 3)
    picked = kinds["implementation"][: count - 2 * share] + kinds["test"][:share] + kinds["docs"][:share]
    return sorted(picked)


_SKIP = frozenset({"node_modules", "__pycache__", "test-artifacts"})
_SUFFIXES = frozenset({".py", ".rst", ".md", ".go", ".rs", ".js", ".ts", ".java"})


if __name__ == "__main__":
    raise SystemExit(main())
