"""What phase 2 spends on each role of file (issue 44, item 3): do generated and vendored
files, lock files and big data tables need vectors at all?

For each whole-repository corpus (``REPO_CORPORA``, as ``bench_repo_quality`` indexes them)
and salt (``bench_index``'s corpus), phase 1 runs once (lexical index, no vector); then,
for the texts phase 2 would embed (the backlog, one model call per distinct text), per
role: chunks, distinct texts and the word-pieces the model reads (each text's count with
the model's tokenizer, capped at its window: the encoder's work grows with them). No
timing: the counts are the cost, so the figures hold on a busy machine too.

Writes ``benchmarks/results/embed_roles.json`` (or ``--out``).

Example:
    .venv/bin/python -m benchmarks.bench_embed_roles --corpus mocha --out /tmp/embed_roles.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality.corpora import fetch_corpus
from benchmarks.quality.repo_corpora import REPO_CORPORA
from indexer.api import Lode
from indexer.chunker import embedding_input
from indexer.config import load_config
from indexer.embed import load_embedder

RESULTS = Path(__file__).parent / "results"
#: Roles that lexical search might serve alone (the question of item 3).
CANDIDATES = ("generated", "vendored")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _backlog(root: Path, db: Path) -> list[tuple[str, str, str]]:
    """(role, embedding text hash, embedding text) of every chunk phase 2 would embed."""
    lode = Lode(load_config(env={}, overrides={"db": db}))
    try:
        lode.index(root, name="corpus", embed=False)
        store = lode.store
        project = store.projects.get("corpus")
        chunks = store.chunks.get([cid for cid, _ in store.vectors.backlog(project.id)])
    finally:
        lode.close()
    out = []
    for c in chunks:
        text, digest = embedding_input(c.file_path, c.chunk)
        out.append((c.role, digest, text))
    return out


def _by_role(rows: list[tuple[str, str, str]], tokens: dict[str, int]) -> dict[str, dict[str, int]]:
    """Chunks, distinct texts and word-pieces per role (a text counted once, for the role of
    its first chunk, as phase 2 embeds it once)."""
    roles: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    for role, digest, _ in rows:
        entry = roles.setdefault(role, {"chunks": 0, "texts": 0, "word_pieces": 0})
        entry["chunks"] += 1
        if digest not in seen:
            seen.add(digest)
            entry["texts"] += 1
            entry["word_pieces"] += tokens[digest]
    return dict(sorted(roles.items()))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the count and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [c.name for c in REPO_CORPORA] + ["salt"]
    parser.add_argument("--corpus", action="append", choices=names, help="only these (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS / "embed_roles.json")
    parser.add_argument("--window", type=int, default=256, help="the model's window in word-pieces")
    args = parser.parse_args(argv)
    embedder = load_embedder(load_config(env={}).embed)
    window = args.window
    report: dict[str, Any] = {"window": window, "candidates": list(CANDIDATES), "corpora": {}}
    for name in args.corpus or names:
        if name == "salt":
            from benchmarks.bench_index import SALT

            root = fetch_corpus(SALT)
        else:
            root = fetch_corpus(next(c for c in REPO_CORPORA if c.name == name).spec)
        with tempfile.TemporaryDirectory(prefix="lode-roles-") as tmp:
            rows = _backlog(root, Path(tmp) / "db")
        texts = {digest: text for _, digest, text in rows}
        tokens = {d: min(embedder.count_tokens(t) + 2, window) for d, t in texts.items()}
        roles = _by_role(rows, tokens)
        total = sum(r["word_pieces"] for r in roles.values())
        share = sum(roles.get(r, {}).get("word_pieces", 0) for r in CANDIDATES) / max(total, 1)
        report["corpora"][name] = {"roles": roles, "word_pieces": total, "candidate_share": round(share, 4)}
        _log(f"{name}: {len(rows)} chunks, {len(texts)} texts, {total} word-pieces; "
             f"generated+vendored {share:.1%}: {roles}")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
