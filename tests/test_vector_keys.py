"""Vectors keyed by the text they embed (issue 39): a chunk's vector is made from its
embedding text (a caption with its name, kind, scope and path words, then its content), so
the embedding cache and the chunk rows are keyed by that text's hash, never by the content
alone: duplicate contents in two files, a renamed file and a changed caption each get the
vector of their own text; vectors made for another text are found by ``check`` and made
again by phase 2, progressively."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from indexer.api import Lode
from indexer.chunker import embedding_text
from indexer.config import LodeConfig
from indexer.embed import FakeEmbedder
from indexer.models import ChunkFilter, StoredChunk

_BODY = '''def apply(amount, rate):
    """Apply the rate to an amount, rounded to cents."""
    total = amount * (1 + rate)
    return round(total, 2)
'''


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _chunks(api: Lode, path: str) -> list[StoredChunk]:
    store = api.store
    project = store.projects.all()[0]
    doc = store.documents.states(project.id)[path]
    return store.chunks.of_files([doc.id])


def _vectors(api: Lode, chunks: list[StoredChunk]) -> np.ndarray:
    found = {c.id: vector for c, vector in api.store.chunks.with_vectors(ChunkFilter())}
    assert all(found[c.id] is not None for c in chunks)
    return np.stack([found[c.id] for c in chunks])


def _fresh(chunks: list[StoredChunk]) -> np.ndarray:
    texts = [embedding_text(c.file_path, c.chunk) for c in chunks]
    return np.asarray(FakeEmbedder().embed(texts), dtype=np.float32)


def test_duplicate_contents_in_two_files_get_the_vectors_of_their_own_texts(
    tmp_path: Path, config: LodeConfig
) -> None:
    repo = _write(
        tmp_path / "repo",
        {"payments/refund_policy.py": _BODY, "graphics/shader_cache.py": _BODY},
    )
    api = Lode(config, embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        refund = _chunks(api, "payments/refund_policy.py")
        shader = _chunks(api, "graphics/shader_cache.py")
        assert [c.chunk.content for c in refund] == [c.chunk.content for c in shader]
        np.testing.assert_allclose(_vectors(api, refund), _fresh(refund), atol=1e-6)
        np.testing.assert_allclose(_vectors(api, shader), _fresh(shader), atol=1e-6)
        assert not np.allclose(_vectors(api, refund), _vectors(api, shader))
        assert api.check().ok
    finally:
        api.close()


def test_a_renamed_file_gets_vectors_of_its_new_path(tmp_path: Path, config: LodeConfig) -> None:
    repo = _write(tmp_path / "repo", {"payments/refund_policy.py": _BODY})
    api = Lode(config, embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        (repo / "billing").mkdir()
        shutil.move(repo / "payments" / "refund_policy.py", repo / "billing" / "credit_notes.py")
        api.index(repo, name="shop")
        moved = _chunks(api, "billing/credit_notes.py")
        np.testing.assert_allclose(_vectors(api, moved), _fresh(moved), atol=1e-6)
        assert api.check().ok
    finally:
        api.close()


def test_the_same_text_is_embedded_once_and_then_found_in_the_cache(
    tmp_path: Path, config: LodeConfig
) -> None:
    """The cache still spares the model a text it has seen: a file deleted and restored
    under the same path is not embedded again."""
    repo = _write(tmp_path / "repo", {"payments/refund_policy.py": _BODY, "other.py": "x = 1\n"})
    embedder = FakeEmbedder()
    api = Lode(config, embedder=embedder)
    try:
        api.index(repo, name="shop")
        (repo / "payments" / "refund_policy.py").unlink()
        api.index(repo, name="shop")
        seen = embedder.texts_embedded
        _write(repo, {"payments/refund_policy.py": _BODY})
        report = api.index(repo, name="shop")
        assert embedder.texts_embedded == seen
        assert report.embedding_cache_hits > 0
        chunks = _chunks(api, "payments/refund_policy.py")
        np.testing.assert_allclose(_vectors(api, chunks), _fresh(chunks), atol=1e-6)
    finally:
        api.close()


def test_vectors_made_for_another_caption_are_reported_and_made_again(
    tmp_path: Path, config: LodeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lode whose caption differs (an upgrade that changed ``embedding_text``): ``check``
    reports the vectors made for the old texts, and phase 2 embeds them again."""
    import indexer.chunker._embedding as captions

    repo = _write(tmp_path / "repo", {"payments/refund_policy.py": _BODY, "graphics/shader.py": _BODY})
    api = Lode(config, embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
    finally:
        api.close()

    original = captions.embedding_text

    def changed(path: str, chunk: object) -> str:
        return "changed caption\n" + original(path, chunk)  # type: ignore[arg-type]

    monkeypatch.setattr(captions, "embedding_text", changed)
    monkeypatch.setattr(captions, "EMBEDDING_TEXT_VERSION", captions.EMBEDDING_TEXT_VERSION + 1)
    reader = Lode(config, embedder=FakeEmbedder())
    try:
        found = reader.check()
        assert not found.ok
        assert any("made for another text" in p.detail for p in found.problems)
    finally:
        reader.close()

    api = Lode(config, embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        chunks = _chunks(api, "payments/refund_policy.py")
        expected = np.asarray(
            FakeEmbedder().embed([changed(c.file_path, c.chunk) for c in chunks]), dtype=np.float32
        )
        np.testing.assert_allclose(_vectors(api, chunks), expected, atol=1e-6)
        assert api.check().ok
    finally:
        api.close()
