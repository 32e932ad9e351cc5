"""The real embedder's query path: ONNX Runtime gives torch's vectors, exported once and
cached; any model it cannot take stays on torch."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from indexer.config import EmbedConfig
from indexer.embed import load_embedder
from indexer.embed.onnx_queries import KEEP_GRAPHS, onnx_cache_dir, onnx_query_encoder, prune_onnx_cache
from indexer.embed.sentence import SentenceTransformerEmbedder, _default_model_path

QUERIES = [
    "parse document headers",
    "QuerySet filter exclude annotate",
    "how are database migrations applied when two apps depend on each other?",
    "x",
    "retry " * 400,  # longer than the model reads: truncated the same way
]


@pytest.fixture(scope="module")
def torch_copy() -> object:
    embedder = load_embedder(EmbedConfig(onnx_queries=False))
    assert embedder._load_copy is not None
    return embedder._load_copy()


def test_onnx_queries_equal_torch_vectors(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    encode = onnx_query_encoder(torch_copy, _default_model_path())
    assert encode is not None
    expected = torch_copy.encode(QUERIES, normalize_embeddings=True, convert_to_numpy=True)  # type: ignore[attr-defined]
    one_by_one = np.vstack([encode([q]) for q in QUERIES])
    batched = encode(QUERIES)  # padded to the longest: the mask keeps padding out of the mean
    for got in (one_by_one, batched):
        assert got.shape == expected.shape
        assert got.dtype == np.float32
        assert np.abs(got - expected).max() < 1e-4
        assert (got * expected).sum(axis=1).min() > 0.99999
    exported = list(onnx_cache_dir().glob("query-*.onnx"))
    assert len(exported) == 1
    inode = exported[0].stat().st_ino
    assert onnx_query_encoder(torch_copy, _default_model_path()) is not None
    assert exported[0].stat().st_ino == inode  # reused, not exported again (a new one is renamed in)


def test_the_embedder_uses_onnx_for_queries_and_torch_when_told(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    fast = load_embedder()
    plain = load_embedder(EmbedConfig(onnx_queries=False))
    assert isinstance(fast, SentenceTransformerEmbedder)
    assert isinstance(plain, SentenceTransformerEmbedder)
    a, b = fast.embed_queries(QUERIES[:3]), plain.embed_queries(QUERIES[:3])
    assert fast._query_encode is not None
    assert plain._query_encode is None
    assert np.abs(a - b).max() < 1e-4
    documents = fast.embed(QUERIES[:3])  # documents stay on torch, in the same space
    assert (a * documents).sum(axis=1).min() > 0.99999


def test_token_counting_first_still_sets_up_onnx_and_a_failing_runtime_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    embedder = load_embedder()
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.count_tokens("parse document headers") >= 3
    assert embedder._query_encode is not None  # counting tokens loaded the query copy and its encoder
    good = embedder.embed_queries(QUERIES[:2])

    def broken(texts: object) -> np.ndarray:
        raise RuntimeError("session died")

    embedder._query_encode = broken
    again = embedder.embed_queries(QUERIES[:2])  # torch now, same vectors
    assert embedder._query_encode is None
    assert np.abs(again - good).max() < 1e-4
    assert embedder.embed_queries([]).shape == (0, embedder.dimension)


def test_a_model_it_cannot_export_stays_on_torch() -> None:
    class Other:
        """A stand-in with another module layout (CLS pooling, no normalisation)."""

        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter([object(), object()])

    assert onnx_query_encoder(Other(), "/nonexistent") is None


def test_the_graph_cache_keeps_only_the_most_recently_used_graphs(tmp_path: Path) -> None:

    graphs = [tmp_path / f"query-{i}.onnx" for i in range(6)]
    for age, path in enumerate(graphs):  # graphs[0] is the most recently used
        path.write_bytes(b"graph")
        os.utime(path, (1_000_000 - age * 100, 1_000_000 - age * 100))
    current = graphs[4]  # just exported or loaded, though its file is old
    (tmp_path / "other.txt").write_text("not a graph")
    removed = prune_onnx_cache(tmp_path, keep=current)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([current.name, "other.txt", *(g.name for g in graphs[: KEEP_GRAPHS - 1])])
    assert sorted(removed) == sorted(set(graphs) - {current, *graphs[: KEEP_GRAPHS - 1]})
