"""Document texts on ONNX Runtime: the float graph gives torch's vectors on real code, the
int8 graph is chosen only when asked (and keeps queries with it, close to torch's
vectors), the float graph is the default (without torch in the process) and torch its
fallback."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexer.api import Lode
from indexer.chunker import chunk_file, embedding_text
from indexer.config import ChunkerConfig, EmbedConfig, load_config
from indexer.embed import FakeEmbedder, QueryGraph, load_embedder, onnx_embedder
from indexer.embed._export import export_in_child
from indexer.embed.onnx_documents import length_buckets, onnx_document_encoder
from indexer.embed.onnx_embedder import GraphEmbedder
from indexer.embed.onnx_queries import cannot_export_marker
from indexer.embed.sentence import SentenceTransformerEmbedder
from indexer.errors import ConfigError, EmbedError
from indexer.store import open_store, read_store_info

ROOT = Path(__file__).resolve().parent.parent


def code_texts(limit: int) -> list[str]:
    """Embedding texts of this repository's own chunks (real code, docstrings, tests)."""
    texts: list[str] = []
    for path in ["indexer/vectorizer.py", "indexer/roles.py", "tests/test_embed.py", "docs/configuration.md"]:
        chunked = chunk_file(path, (ROOT / path).read_bytes(), ChunkerConfig())
        texts += [embedding_text(path, c) for c in chunked.chunks]
    return texts[:limit]


def test_length_buckets_sort_by_length_and_cut_at_the_batch_size() -> None:
    buckets = length_buckets([5, 200, 7, 199, 6, 3, 201], 3)
    assert buckets == [[6, 1, 3], [2, 4, 0], [5]]
    assert length_buckets([], 4) == []
    assert sorted(i for b in length_buckets([1] * 10, 4) for i in b) == list(range(10))
    # a run holds at most ``tokens`` word-pieces once padded: long texts go fewer at a time
    assert [len(b) for b in length_buckets([256] * 10 + [64] * 40, 32, tokens=2048)] == [8, 8, 32, 2]
    assert length_buckets([3000, 10], 4, tokens=2048) == [[0], [1]]  # longer than the budget: alone


def test_the_document_encoder_setting_is_checked_and_named() -> None:
    # the float graph by default: torch's vectors, so an index embedded by torch stays
    assert (EmbedConfig().document_encoder, EmbedConfig().documents_by) == ("onnx", "onnx")
    assert EmbedConfig().vector_encoder == "float"  # int8 not by default: docs/performance.md
    # auto: the packaged model embeds documents with the int8 graph its queries use
    auto = EmbedConfig(document_encoder="auto")
    assert (auto.documents_by, auto.vector_encoder) == ("onnx-int8", "int8-rows-2")
    # another model (its layout may not export), or queries off the int8 graph: torch
    assert EmbedConfig(document_encoder="auto", model="my-model").documents_by == "torch"
    assert EmbedConfig(document_encoder="auto", model_path="/models/mini").vector_encoder == "float"
    assert EmbedConfig(document_encoder="auto", int8_queries=False).documents_by == "torch"
    assert EmbedConfig(document_encoder="auto", onnx_queries=False).vector_encoder == "float"
    assert EmbedConfig(document_encoder="onnx").vector_encoder == "float"
    assert EmbedConfig(document_encoder="torch").vector_encoder == "float"
    assert EmbedConfig(document_encoder="onnx-int8").vector_encoder == "int8-rows-2"
    env = {"LODE_DOCUMENT_ENCODER": "onnx", "LODE_DOCUMENT_THREADS": "3"}
    embed = load_config(env=env).embed
    assert (embed.document_encoder, embed.document_threads) == ("onnx", 3)
    with pytest.raises(ConfigError, match="document_encoder must be one of auto, onnx, onnx-int8, torch"):
        EmbedConfig(document_encoder="gpu")
    with pytest.raises(ConfigError, match="document_threads must be > 0"):
        EmbedConfig(document_threads=0)
    with pytest.raises(ConfigError, match="onnx-int8 needs onnx_queries and int8_queries"):
        EmbedConfig(document_encoder="onnx-int8", int8_queries=False)


def test_a_shorter_document_window_is_other_vectors() -> None:
    """Vectors of a text's first N word-pieces are not the full text's: keyed apart, so an
    index made with another window is embedded again (as for another encoder)."""
    assert EmbedConfig(document_max_tokens=128).vector_encoder == "float-128"
    assert (
        EmbedConfig(document_encoder="onnx-int8", document_max_tokens=96).vector_encoder == "int8-rows-2-96"
    )
    assert load_config(env={"LODE_DOCUMENT_MAX_TOKENS": "128"}).embed.document_max_tokens == 128
    with pytest.raises(ConfigError, match="document_max_tokens must be > 0"):
        EmbedConfig(document_max_tokens=0)


@pytest.mark.slow
def test_a_document_window_cuts_documents_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``document_max_tokens`` a long text's document vector is its first N word-pieces'
    (what the full model makes of them); a query keeps the model's whole window."""
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    long_text = " ".join(f"parse_field_{i} reads the header line {i}" for i in range(80))
    full = load_embedder(EmbedConfig(onnx_queries=False))
    short = load_embedder(EmbedConfig(onnx_queries=False, document_max_tokens=32))
    tokenizer = short._tokenizer
    ids = tokenizer(long_text, add_special_tokens=False)["input_ids"]
    head = tokenizer.decode(ids[:30])  # 30 word-pieces and the two special tokens
    windowed = short.embed([long_text])[0]
    assert float(np.dot(windowed, full.embed([head])[0])) > 0.99
    assert float(np.dot(windowed, full.embed([long_text])[0])) < 0.98
    assert np.allclose(short.embed_queries([long_text]), full.embed_queries([long_text]), atol=1e-5)


def test_a_model_it_cannot_export_embeds_documents_with_torch() -> None:
    class Other:
        """A stand-in with another module layout (CLS pooling, no normalisation)."""

        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter([object(), object()])

    assert onnx_document_encoder(Other(), "/nonexistent", batch_size=8, threads=1) is None


@pytest.mark.slow
def test_onnx_documents_equal_torch_vectors_on_real_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Float ONNX and torch are one vector space (cosine ≥ 0.9999 on every text): the index
    keys their vectors alike."""
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    texts = code_texts(100)
    assert len(texts) == 100
    torch_side = load_embedder(EmbedConfig(document_encoder="torch", onnx_queries=False))
    onnx_side = load_embedder(EmbedConfig(document_encoder="onnx", onnx_queries=False, batch_size=16))
    expected = torch_side.embed(texts)
    got = onnx_side.embed(texts)
    assert onnx_side.document_encoder == "onnx"
    assert torch_side.document_encoder == "torch"
    assert got.shape == expected.shape
    assert got.dtype == np.float32
    assert (got * expected).sum(axis=1).min() >= 0.9999
    assert onnx_side._model is None  # the graph replaced the torch document model
    # ONNX Runtime's arena, not a malloc per operator output (which the indexing process
    # maps and unmaps: 2.8x slower)
    session = onnx_side._document_encode._session  # type: ignore[union-attr]
    assert session.get_session_options().enable_cpu_mem_arena
    one = onnx_side.embed_on_one_thread(texts[:20])
    assert (one * expected[:20]).sum(axis=1).min() >= 0.9999
    assert onnx_side.embed([]).shape == (0, onnx_side.dimension)


@pytest.mark.slow
def test_int8_documents_are_asked_for_and_a_failing_float_graph_falls_back_to_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    texts = code_texts(24)
    int8 = load_embedder(EmbedConfig(document_encoder="onnx-int8"))
    vectors = int8.embed(texts)
    assert int8.document_encoder == "onnx-int8"
    assert isinstance(int8, GraphEmbedder)
    plain = load_embedder(EmbedConfig(document_encoder="onnx", onnx_queries=False))
    assert isinstance(plain, SentenceTransformerEmbedder)
    good = plain.embed(texts)
    cosine = (vectors * good).sum(axis=1)
    assert 0.99 < cosine.min() < 0.9999  # close, but other vectors
    assert cosine.mean() > 0.996  # each token's activations scaled on their own (indexer.embed._int8)
    alone = np.vstack([int8.embed([text]) for text in texts[:6]])
    assert np.abs(alone - vectors[:6]).max() < 1e-5  # a text's vector does not depend on its batch

    def broken(texts: object, *, one_thread: bool = False) -> np.ndarray:
        raise RuntimeError("session died")

    plain._document_encode = broken  # type: ignore[assignment]
    again = plain.embed(texts)  # torch from now on (loaded again), the same space
    assert plain.document_encoder == "torch"
    assert (again * good).sum(axis=1).min() >= 0.9999
    int8._documents = broken  # type: ignore[assignment]
    with pytest.raises(EmbedError, match="int8 document graph failed"):
        int8.embed(texts)  # never torch's vectors under the int8 key


def test_an_index_embedded_by_another_encoder_is_embedded_again_progressively(
    tmp_path: Path, repo: Path
) -> None:
    """int8 vectors are other vectors: a writer of the other kind forgets every vector's key
    (the old vectors answer searches until phase 2 made each again), and the embedding cache
    keeps the kinds apart, so going back costs no model call. An index of the int8 scheme
    before per-row scaling (``int8``) is embedded again by today's default too."""
    db = tmp_path / "db"
    float_config = load_config(env={}, overrides={"db": db})
    int8_config = load_config(env={"LODE_DOCUMENT_ENCODER": "auto"}, overrides={"db": db})
    assert int8_config.embed.vector_encoder == "int8-rows-2"
    first = FakeEmbedder()
    with closing(Lode(float_config, embedder=first)) as api:
        api.index(repo, name="shop")
        total = api.store.chunks.count()
        assert api.store.vectors.coverage() == 1.0
    assert read_store_info(db)["vector_encoder"] == "float"

    store = open_store(db, first.model_id, first.dimension, upgrade=True, vector_encoder="int8")
    try:
        assert len(store.vectors.backlog()) == total  # every chunk is to be embedded again
        assert store.vectors.coverage() == 0.0
        assert store.chunks.count(embedded=True) == 0
        # the old vectors answer meanwhile
        assert store.db.table("code_chunks").count_rows("embedded = true") == total
        assert store.vectors.cached(["any"]) == {}
    finally:
        store.close()
    assert read_store_info(db)["vector_encoder"] == "int8"  # the scheme before this one

    again = FakeEmbedder()
    with closing(Lode(int8_config, embedder=again)) as api:
        api.index(repo, name="shop")
        assert again.texts_embedded > 0  # no float vector was taken from the cache
        assert api.store.vectors.coverage() == 1.0
    assert read_store_info(db)["vector_encoder"] == "int8-rows-2"

    back = FakeEmbedder()
    with closing(Lode(float_config, embedder=back)) as api:
        api.index(repo, name="shop")
        assert api.store.vectors.coverage() == 1.0
    assert back.texts_embedded == 0  # the float vectors were still in the cache
    assert read_store_info(db)["vector_encoder"] == "float"


def test_int8_documents_never_fall_back_to_torch() -> None:
    """An int8 index must not get torch's vectors: when the int8 graph fails, every
    document call fails (phase 2 records it); a query may fall back (its vector stays
    within cosine 0.999 of the graph's), the float graph's documents too (torch's vectors)."""
    loaded: list[str] = []

    class Torch:
        """The torch model, loaded only to fall back."""

        def embed(self, texts: object) -> np.ndarray:
            loaded.append("documents")
            return np.ones((1, 4), dtype=np.float32)

        def embed_queries(self, queries: object) -> np.ndarray:
            loaded.append("queries")
            return np.ones((1, 4), dtype=np.float32)

        def embed_on_one_thread(self, texts: object) -> np.ndarray:
            loaded.append("documents on one thread")
            return np.ones((1, 4), dtype=np.float32)

    class Broken:
        """A graph whose session died."""

        model_id, dimension, quantized = "m", 4, True

        def __call__(self, *args: object, **kwargs: object) -> np.ndarray:
            raise RuntimeError("session died")

        embed_queries = __call__

    spec = QueryGraph("g.onnx", "{}", 8)
    int8 = GraphEmbedder(Broken(), Broken(), spec, Torch)  # type: ignore[arg-type]
    for call in (int8.embed, int8.embed_on_one_thread, int8.embed):
        with pytest.raises(EmbedError, match="int8 document graph failed"):
            call(["def a(): pass"])
    assert loaded == []
    assert int8.document_encoder == "onnx-int8"
    assert int8.query_graph() == spec
    int8.embed_queries(["a query"])
    assert loaded == ["queries"]
    assert int8.query_graph() is None
    plain_documents = Broken()
    plain_documents.quantized = False
    plain = GraphEmbedder(plain_documents, Broken(), spec, Torch)  # type: ignore[arg-type]
    plain.embed_on_one_thread(["def a(): pass"])
    assert loaded[-1] == "documents on one thread"  # a writer yielding to searches still does
    plain.embed(["def a(): pass"])
    assert plain.document_encoder == "torch"
    assert loaded[-1] == "documents"


_ON_THE_GRAPH = """
import json, sys
from indexer.config import EmbedConfig
from indexer.embed import load_embedder
embedder = load_embedder(EmbedConfig(document_encoder=sys.argv[1]))
texts = json.loads(sys.stdin.read())
print(json.dumps({
    "kind": type(embedder).__name__,
    "encoder": embedder.document_encoder,
    "documents": embedder.embed(texts).tolist(),
    "one_thread": embedder.embed_on_one_thread(texts[:3]).tolist(),
    "queries": embedder.embed_queries(["read the header line"]).tolist(),
    "tokens": [embedder.count_tokens(text) for text in texts[:5]],
    "graph": embedder.query_graph().graph,
    "torch": sorted({"torch", "sentence_transformers", "transformers"} & set(sys.modules)),
}))
"""


def _on_the_graph(encoder: str, texts: list[str]) -> dict[str, Any]:
    """What ``load_embedder`` makes of ``texts`` in a fresh process (``_ON_THE_GRAPH``)."""
    done = subprocess.run(
        [sys.executable, "-c", _ON_THE_GRAPH, encoder],
        input=json.dumps(texts), capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_documents_on_the_graph_never_import_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``onnx-int8`` or ``onnx`` the process embeds documents, queries and token counts
    on the exported graphs and never imports torch (a child exported them into the empty
    cache); the vectors are the graphs' (int8: close to torch's; float: torch's); a damaged
    cached graph is exported again."""
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    texts = code_texts(24)
    int8 = _on_the_graph("onnx-int8", texts)
    assert (int8["kind"], int8["encoder"], int8["torch"]) == ("GraphEmbedder", "onnx-int8", [])
    graphs = sorted(p.name for p in (tmp_path / "onnx").glob("*.onnx"))
    assert len(graphs) == 2
    assert Path(int8["graph"]).name in graphs
    reference = load_embedder(EmbedConfig(document_encoder="torch", onnx_queries=False))
    expected = reference.embed(texts)
    documents = np.asarray(int8["documents"], dtype=np.float32)
    cosine = (documents * expected).sum(axis=1)
    assert cosine.mean() > 0.996
    assert cosine.min() > 0.99
    assert np.abs(np.asarray(int8["one_thread"]) - documents[:3]).max() < 1e-5
    assert int8["tokens"] == [reference.count_tokens(text) for text in texts[:5]]
    query = np.asarray(int8["queries"])[0]
    assert float(query @ reference.embed_queries(["read the header line"])[0]) > 0.99

    plain = _on_the_graph("onnx", texts)
    assert (plain["encoder"], plain["torch"]) == ("onnx", [])
    assert (np.asarray(plain["documents"]) * expected).sum(axis=1).min() >= 0.9999
    assert sorted(p.name for p in (tmp_path / "onnx").glob("*.onnx")) == graphs  # exported once

    Path(int8["graph"]).write_bytes(b"not a graph")
    again = load_embedder(EmbedConfig(document_encoder="onnx-int8"))
    assert isinstance(again, GraphEmbedder)
    assert np.abs(again.embed(texts[:3]) - documents[:3]).max() < 1e-5
    assert again.embed([]).shape == (0, again.dimension)


def test_a_model_that_cannot_be_exported_is_not_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once an export said the model's layout cannot be exported, later loads go to torch
    at once instead of starting a child that loads torch to say it again."""
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path))
    model = tmp_path / "model"
    model.mkdir()
    cannot_export_marker(str(model)).parent.mkdir(parents=True)
    cannot_export_marker(str(model)).write_text("no\n", encoding="utf-8")

    def export(*args: object, **kwargs: object) -> bool:
        raise AssertionError("a child was started")

    monkeypatch.setattr(onnx_embedder, "export_in_child", export)
    config = EmbedConfig(model_path=str(model))
    assert onnx_embedder.load_graph_embedder(config, str(model), FakeEmbedder) is None


@pytest.mark.slow
def test_the_export_child_never_imports_the_indexed_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child runs with the cache as its folder and ``-P``: a project with a top-level
    ``indexer/`` of its own, indexed from its root, does not run its code."""
    monkeypatch.setenv("LODE_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    (project / "indexer" / "embed").mkdir(parents=True)
    for init in (project / "indexer" / "__init__.py", project / "indexer" / "embed" / "__init__.py"):
        init.write_text("raise SystemExit('the project ran')\n", encoding="utf-8")
    monkeypatch.chdir(project)
    with pytest.raises(EmbedError) as failed:
        export_in_child(str(tmp_path / "no-model"), int8="wanted")
    assert "the project ran" not in str(failed.value)
    assert not cannot_export_marker(str(tmp_path / "no-model")).exists()
