"""Embedding models behind one protocol: the real sentence-transformers model and a
deterministic fake for fast unit tests."""

from indexer.embed._protocol import Embedder, Vectors, embed_on_one_thread
from indexer.embed.fake import FakeEmbedder
from indexer.embed.lazy import LazyEmbedder
from indexer.embed.onnx_queries import cached_query_graph
from indexer.embed.query_graph import QueryGraph, QueryGraphEmbedder, query_graph_of
from indexer.embed.sentence import SentenceTransformerEmbedder, load_embedder, model_dimension, model_dir
from indexer.embed.tokens import TokenCounter, load_token_counter

__all__ = [
    "Embedder",
    "FakeEmbedder",
    "LazyEmbedder",
    "QueryGraph",
    "QueryGraphEmbedder",
    "SentenceTransformerEmbedder",
    "TokenCounter",
    "Vectors",
    "cached_query_graph",
    "embed_on_one_thread",
    "load_embedder",
    "load_token_counter",
    "model_dimension",
    "model_dir",
    "query_graph_of",
]
