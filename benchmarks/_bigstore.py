"""A ≥ 100k-chunk store of real code with real vectors, built once and reused.

Real Python sources of installed packages (pinned by ``constraints.txt``) are copied
``copies`` times into one project (``copy_00/…``, ``copy_01/…``); the first copy is
embedded with the real model, the others reuse every vector through lode's embedding
cache (same chunk text → same vector), so building costs one corpus's embedding time.
The store is cached under ``$LODE_BENCH_CACHE/bigstore-<profile>`` and rebuilt when the
profile or lode's chunker version changes (an older schema is migrated).
"""

from __future__ import annotations

import json
import shutil
import sys
import sysconfig
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from benchmarks.quality.corpora import cache_dir
from indexer.api import Lode
from indexer.chunker import CHUNKER_VERSION
from indexer.config import load_config
from indexer.embed import Embedder
from indexer.errors import StoreVersionError
from indexer.store import SCHEMA_VERSION

__all__ = ["PROFILES", "BigStore", "open_big_store", "refresh_store", "sample_queries"]

#: profile → (packages whose .py files form one copy, number of copies)
PROFILES: dict[str, tuple[tuple[str, ...], int]] = {
    "quick": (("rich", "click", "starlette", "jinja2", "msgspec", "pathspec"), 18),
    "full": (("rich", "click", "starlette", "jinja2", "litestar", "hypothesis", "pygments"), 8),
}
PROJECT = "bigstore"


@dataclass(frozen=True, slots=True)
class BigStore:
    """Where the big store is and what it holds."""

    db: Path
    root: Path
    project: str
    chunks: int
    files: int
    build_seconds: float
    fresh: bool = False
    """Built by this call (its first searches are the first after an index run)."""


def _site() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _copy_sources(root: Path, packages: tuple[str, ...], copies: int) -> int:
    site = _site()
    sources = [p for pkg in packages for p in sorted((site / pkg).glob("**/*.py")) if p.is_file()]
    for index in range(copies):
        for path in sources:
            target = root / f"copy_{index:02d}" / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return len(sources) * copies


def open_big_store(
    profile: str, embedder: Embedder | None = None, log: bool = True, rebuild: bool = False
) -> BigStore:
    """Build (first time, or with ``rebuild``) or reuse the big store of ``profile``."""
    packages, copies = PROFILES[profile]
    base = cache_dir() / f"bigstore-{profile}"
    marker = base / "built.json"
    # rebuilt when the chunker cuts the same files differently (or fills the symbol index)
    wanted = {"packages": list(packages), "copies": copies, "lode_header": 2, "chunker": CHUNKER_VERSION}
    if marker.exists() and not rebuild:
        facts = json.loads(marker.read_text())
        built = dict(facts.get("wanted", {}))
        schema = built.pop("schema", None)
        if built == wanted and refresh_store(base / "db", embedder):  # (migrated if older)
            if schema != SCHEMA_VERSION:
                facts["wanted"] = {**wanted, "schema": SCHEMA_VERSION}
                marker.write_text(json.dumps(facts))
            return BigStore(
                base / "db", base / "src", PROJECT, facts["chunks"], facts["files"], facts["seconds"]
            )
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    files = _copy_sources(base / "src", packages, copies)
    started = time.perf_counter()
    lode = Lode(load_config(overrides={"db": base / "db"}), embedder=embedder)
    try:
        if log:
            print(f"bigstore: indexing {files} files ({copies} copies)…", file=sys.stderr, flush=True)
        report = lode.index(base / "src", name=PROJECT)
        chunks = lode.store.chunks.count()
    finally:
        lode.close()
    seconds = round(time.perf_counter() - started, 1)
    marker.write_text(
        json.dumps(
            {
                "wanted": {**wanted, "schema": SCHEMA_VERSION},
                "chunks": chunks,
                "files": report.files_indexed,
                "seconds": seconds,
            }
        )
    )
    return BigStore(base / "db", base / "src", PROJECT, chunks, report.files_indexed, seconds, fresh=True)


def refresh_store(db: Path, embedder: Embedder | None) -> bool:
    """Bring a cached store to what this lode builds (its schema, a changed vector index);
    False when this lode cannot open it (a schema it does not migrate)."""
    lode = Lode(load_config(overrides={"db": db}), embedder=embedder)
    try:
        try:
            lode.hold_writer("bench refresh")  # its writer upgrades an older schema
            lode.store.indexes.ensure()
        except StoreVersionError:
            return False
        if lode.store.indexes.unindexed_rows():
            # something wrote into the shared store (an interrupted older bench_http, which
            # used to index into it) and left rows outside the indexes: fold them in
            lode.store.maintenance.optimize()
        # keep only the current version (migrations and index rebuilds leave the old
        # files behind: 13 GB instead of ~1 GB, which bench_http copies every run)
        lode.store.versions.prune(keep=timedelta(0))
    finally:
        lode.close()
    return True


def sample_queries(store: BigStore, count: int) -> list[str]:
    """Realistic queries: first docstring lines and split names of the corpus's functions."""
    import re

    from indexer.lexicon import identifier_words

    docs: list[str] = []
    names: list[str] = []
    pattern = re.compile(r'def (\w+)\([^)]*\)[^:]*:\s*\n\s+"""([^\n"]{12,100})')
    for path in sorted((store.root / "copy_00").glob("**/*.py")):
        text = path.read_text(errors="replace")
        for name, doc in pattern.findall(text):
            docs.append(doc.strip().rstrip("."))
            names.append(identifier_words(name))
    mixed = [q for pair in zip(docs, names, strict=False) for q in pair]
    step = max(1, len(mixed) // count)
    return mixed[::step][:count]
