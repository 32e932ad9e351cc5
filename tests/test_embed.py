"""The real embedder's query path: ONNX Runtime gives torch's vectors, exported once and
cached; any model it cannot take stays on torch."""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import EmbedConfig, load_config
from indexer.embed import Embedder, FakeEmbedder, QueryGraphEmbedder, load_embedder, onnx_queries
from indexer.embed.onnx_queries import (
    KEEP_GRAPHS,
    OnnxQueryEncoder,
    cached_query_graph,
    int8_path,
    onnx_cache_dir,
    onnx_query_encoder,
    prune_onnx_cache,
)
from indexer.embed.sentence import SentenceTransformerEmbedder, _default_model_path
from indexer.errors import ConfigError

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_embedder_uses_onnx_for_queries_and_torch_when_told(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    fast = load_embedder(EmbedConfig(int8_queries=False, document_encoder="torch"))
    plain = load_embedder(EmbedConfig(onnx_queries=False))
    assert isinstance(fast, SentenceTransformerEmbedder)
    assert isinstance(plain, SentenceTransformerEmbedder)
    a, b = fast.embed_queries(QUERIES[:3]), plain.embed_queries(QUERIES[:3])
    assert fast._query_encode is not None
    assert plain._query_encode is None
    assert np.abs(a - b).max() < 1e-4
    documents = fast.embed(QUERIES[:3])  # documents stay on torch, in the same space
    assert (a * documents).sum(axis=1).min() > 0.99999


@pytest.mark.slow
def test_int8_queries_stay_close_to_torch_and_are_quantized_once(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    root = logging.getLogger()
    before = (root.level, list(root.handlers), list(root.filters))
    encode = onnx_query_encoder(torch_copy, _default_model_path(), int8=True)
    assert encode is not None
    assert (root.level, list(root.handlers), list(root.filters)) == before  # no logging set up
    expected = torch_copy.encode(QUERIES, normalize_embeddings=True, convert_to_numpy=True)  # type: ignore[attr-defined]
    got = np.vstack([encode([q]) for q in QUERIES])
    # each token's activations are scaled on their own: a text's vector does not depend on
    # its companions (or their padding)
    assert np.abs(encode(QUERIES) - got).max() < 1e-5
    assert not list(tmp_path.rglob("*inferred*"))
    assert got.dtype == np.float32
    cosines = (got * expected).sum(axis=1)
    assert cosines.min() > 0.99  # ~0.998 measured; the quality benchmark measures the ranking
    assert np.abs(np.linalg.norm(got, axis=1) - 1).max() < 1e-4
    assert np.abs(got - expected).max() > 1e-4  # it is really the quantized graph
    graphs = sorted(p.name for p in onnx_cache_dir().glob("query-*.onnx"))
    assert len(graphs) == 2
    [twin] = [onnx_cache_dir() / g for g in graphs if ".int8-" in g]
    inode = twin.stat().st_ino
    assert onnx_query_encoder(torch_copy, _default_model_path(), int8=True) is not None
    assert twin.stat().st_ino == inode  # reused, not quantized again


@pytest.mark.slow
def test_a_failed_quantization_keeps_the_float_graph(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))

    def broken(graph: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(onnx_queries, "_quantized", broken)
    encode = onnx_query_encoder(torch_copy, _default_model_path(), int8=True)
    assert encode is not None
    expected = torch_copy.encode(QUERIES[:3], normalize_embeddings=True, convert_to_numpy=True)  # type: ignore[attr-defined]
    assert np.abs(encode(QUERIES[:3]) - expected).max() < 1e-4
    assert "int8 quantization failed: disk full" in caplog.text


@pytest.mark.slow
def test_a_damaged_int8_graph_is_quantized_again(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    assert onnx_query_encoder(torch_copy, _default_model_path()) is not None  # the float graph
    [graph] = onnx_cache_dir().glob("query-*.onnx")
    int8_path(graph).write_bytes(b"not a graph")
    encode = onnx_query_encoder(torch_copy, _default_model_path(), int8=True)
    assert encode is not None
    assert int8_path(graph).stat().st_size > 1_000_000
    expected = torch_copy.encode(QUERIES[:1], normalize_embeddings=True, convert_to_numpy=True)  # type: ignore[attr-defined]
    assert float((encode(QUERIES[:1]) * expected).sum()) > 0.97


@pytest.mark.slow
def test_token_counting_first_still_sets_up_onnx_and_a_failing_runtime_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    # torch's documents and the float query graph: torch's vectors, to compare exactly
    embedder = load_embedder(EmbedConfig(int8_queries=False, document_encoder="torch"))
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

    graphs = [tmp_path / f"query-{i:024x}.onnx" for i in range(6)]
    for age, path in enumerate(graphs):  # graphs[0] is the most recently used
        path.write_bytes(b"graph")
        os.utime(path, (1_000_000 - age * 100, 1_000_000 - age * 100))
    current = graphs[4]  # just exported or loaded, though its file is old
    (tmp_path / "other.txt").write_text("not a graph")
    manifests = [g.with_suffix(".json") for g in graphs]  # each graph's tokenizer and length
    for manifest in manifests:
        manifest.write_text("{}")
    removed = prune_onnx_cache(tmp_path, keep=current)
    kept = [current, *graphs[: KEEP_GRAPHS - 1]]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(
        ["other.txt", *(g.name for g in kept), *(g.with_suffix(".json").name for g in kept)]
    )
    gone = set(graphs) - set(kept)
    assert sorted(removed) == sorted(gone | {g.with_suffix(".json") for g in gone})


def test_int8_twins_go_with_their_graphs(tmp_path: Path) -> None:
    graphs = [tmp_path / f"query-{i:024x}.onnx" for i in range(KEEP_GRAPHS + 1)]
    for age, path in enumerate(graphs):
        for file in (path, int8_path(path)):
            file.write_bytes(b"graph")
            os.utime(file, (1_000_000 - age * 100, 1_000_000 - age * 100))
    orphan = int8_path(tmp_path / f"query-{99:024x}.onnx")  # its graph is gone
    stale = graphs[0].with_name(graphs[0].stem + ".int8-00000000.onnx")  # another ONNX Runtime
    legacy = graphs[0].with_name(graphs[0].stem + ".int8.onnx")
    leftovers = [tmp_path / "query-x-inferred.onnx", tmp_path / "tmpold.tmp"]
    fresh_scratch = tmp_path / "tmpnew.tmp"  # an export running now
    for file in (orphan, stale, legacy, *leftovers, fresh_scratch):
        file.write_bytes(b"graph")
    os.utime(leftovers[1], (1_000_000, 1_000_000))
    removed = prune_onnx_cache(tmp_path, keep=graphs[0])
    gone = [graphs[-1], int8_path(graphs[-1]), orphan, stale, legacy, *leftovers]
    assert sorted(removed) == sorted(gone)
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {name for g in graphs[:-1] for name in (g.name, int8_path(g).name)} | {fresh_scratch.name}


def test_a_bad_int8_setting_names_the_variable(tmp_path: Path) -> None:
    assert load_config(env={"LODE_INT8_QUERIES": "off"}).embed.int8_queries is False
    with pytest.raises(ConfigError, match=r"LODE_INT8_QUERIES: cannot read 'maybe' as bool"):
        load_config(env={"LODE_INT8_QUERIES": "maybe"})
    env = {"LODE_INT8_QUERIES": "maybe", "LODE_DB": str(tmp_path / "db")}
    out = CliRunner().invoke(cli, ["search", "discount"], env=env)
    assert out.exit_code == 2
    assert "LODE_INT8_QUERIES" in out.output
    assert "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_query_graph_embeds_queries_like_the_model_without_torch(
    torch_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    assert cached_query_graph(_default_model_path(), int8=True) is None  # nothing exported yet
    encode = onnx_query_encoder(torch_copy, _default_model_path(), int8=True)
    assert isinstance(encode, OnnxQueryEncoder)
    graph = encode.graph
    assert graph is not None
    assert graph.max_length == 256
    assert Path(graph.graph).name.startswith("query-")
    assert ".int8-" in graph.graph
    # a process without the model finds the same graph (and the float one) in the cache
    assert cached_query_graph(_default_model_path(), int8=True) == graph
    floating = cached_query_graph(_default_model_path(), int8=False)
    assert floating is not None
    assert ".int8-" not in floating.graph
    assert (floating.tokenizer, floating.max_length) == (graph.tokenizer, graph.max_length)

    def no_model() -> Embedder:
        raise AssertionError("queries must not load the model")

    light = QueryGraphEmbedder(graph, "all-MiniLM-L6-v2", 384, no_model)
    queries = [*QUERIES, "", "naïve café — ünïcödé ∑ 函数", "  leading and trailing  "]
    expected = np.vstack([encode([q]) for q in queries])
    assert np.array_equal(light.embed_queries(queries), expected)  # same graph, same word-pieces
    tokenizer = torch_copy.tokenizer  # type: ignore[attr-defined]
    for text in queries:
        assert light.count_tokens(text) == len(tokenizer(text, add_special_tokens=False)["input_ids"])
    # in a fresh process the same vectors come without importing torch
    script = (
        "import pickle, sys\n"
        "import numpy as np\n"
        "from indexer.embed import QueryGraphEmbedder\n"
        "graph, queries = pickle.loads(sys.stdin.buffer.read())\n"
        "light = QueryGraphEmbedder(graph, 'm', 384, lambda: None)\n"
        "vectors = light.embed_queries(queries)\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "sys.stdout.buffer.write(pickle.dumps(vectors))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=pickle.dumps((graph, queries)), capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert np.array_equal(pickle.loads(done.stdout), expected)


@pytest.mark.slow
def test_document_texts_go_to_the_full_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    embedder = load_embedder(EmbedConfig())
    graph = embedder.query_graph()
    assert graph is not None
    loads: list[int] = []

    def load() -> Embedder:
        loads.append(1)
        return embedder

    light = QueryGraphEmbedder(graph, embedder.model_id, embedder.dimension, load)
    texts = ["def add(a, b):\n    return a + b", "class Cart: pass"]
    assert np.array_equal(light.embed(texts), embedder.embed(texts))
    light.embed(texts[:1])
    assert loads == [1]  # loaded once, on the first document text
    assert load_embedder(EmbedConfig(onnx_queries=False)).query_graph() is None  # queries stay on torch


def test_embedding_on_one_thread_gives_the_same_vectors_and_restores_torch(real_embedder: Embedder) -> None:
    """A writer yielding to searches embeds on one torch thread: the same vectors, and
    torch's thread count is as it was after."""
    import torch

    from indexer.embed import embed_on_one_thread

    texts = ["def parse(request): return request.body", "class Cart:\n    items = []", "word " * 300]
    before = torch.get_num_threads()
    one = embed_on_one_thread(real_embedder, texts)
    assert torch.get_num_threads() == before
    np.testing.assert_allclose(one, real_embedder.embed(texts), atol=1e-5)
    assert embed_on_one_thread(FakeEmbedder(), texts).shape == (3, FakeEmbedder().dimension)
