"""Chunker invariants on arbitrary text and on mutated fixtures (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from blake3 import blake3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.chunker import chunk_file, supported_languages
from indexer.config import ChunkerConfig
from indexer.models import NODE_TYPES, ChunkedFile

FIXTURES = Path(__file__).parent / "data" / "chunker"
#: Fixtures of idioms the samples lack (functions assigned, IIFEs), mutated as well.
MUTATED_UNITS = [Path(__file__).parent / "data" / "units" / n for n in ("runner.js", "legacy.ts")]
EXTENSIONS = {
    "python": "py", "javascript": "js", "typescript": "ts", "tsx": "tsx", "go": "go", "rust": "rs",
    "java": "java", "c": "c", "cpp": "cpp", "csharp": "cs", "ruby": "rb", "php": "php",
    "kotlin": "kt", "scala": "scala", "swift": "swift", "bash": "sh", "markdown": "md",
}  # fmt: skip
CONFIGS = [ChunkerConfig(), ChunkerConfig(max_chunk_tokens=24, min_chunk_tokens=4, max_line_bytes=64)]
VOCAB = [
    "def ", "class ", "fn ", "func ", "function ", "impl ", "struct ", "public ", "return ", "if ", "end",
    "{", "}", "(", ")", "[", "]", ":", ";", "=", "=>", "->", "\n", "\n\n", "    ", "\t", "#", "//", "/*",
    "*/", '"', "'", "`", "@decorator\n", "#[test]\n", "x", "Foo", "parse_request", "é", "日本", "\r\n",
    "<T>", "namespace ", "module ", "interface ", "enum ", "trait ", "val ", "let ", "const ", "# Title\n",
    "X.prototype.m = function ", "exports.", "this.", "(function () {\n", "})();\n",
]  # fmt: skip


def check_invariants(data: bytes, result: ChunkedFile) -> None:
    """Every structural promise of ``chunk_file`` on one result."""
    chunks = result.chunks
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert [c.start_byte for c in chunks] == sorted(c.start_byte for c in chunks)
    covered: set[int] = set()
    for chunk in chunks:
        assert 0 <= chunk.start_byte < chunk.end_byte <= len(data)
        raw = data[chunk.start_byte : chunk.end_byte]
        assert chunk.content == raw.decode("utf-8", errors="replace")
        assert raw.strip(), "a chunk holds text"
        assert chunk.chunk_hash == blake3(chunk.content.encode("utf-8")).hexdigest()
        assert chunk.start_line == data.count(b"\n", 0, chunk.start_byte) + 1
        assert chunk.end_line == data.count(b"\n", 0, chunk.end_byte - 1) + 1
        assert chunk.node_type in NODE_TYPES
        assert chunk.language == result.language
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    if result.skipped_reason is None:
        for number, line in enumerate(data.split(b"\n"), 1):
            assert not line.strip() or number in covered, f"line {number} not covered: {line[:60]!r}"


def _mutate(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    for position, length, insert in edits:
        at = position % (len(data) + 1)
        data = data[:at] + insert + data[at + length :]
    return data


@pytest.mark.slow  # 150 random texts: seconds (the mutated fixtures below are the fast check)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    language=st.sampled_from(supported_languages()),
    parts=st.lists(st.one_of(st.sampled_from(VOCAB), st.text(max_size=8)), max_size=120),
    config=st.sampled_from(CONFIGS),
)
def test_arbitrary_text_keeps_invariants(language: str, parts: list[str], config: ChunkerConfig) -> None:
    data = "".join(parts).encode("utf-8", errors="surrogatepass")
    result = chunk_file(f"src/file.{EXTENSIONS[language]}", data, config, language=language)
    check_invariants(data, result)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from([*sorted(FIXTURES.iterdir()), *MUTATED_UNITS]),
    edits=st.lists(
        st.tuples(
            st.integers(0, 5000),
            st.integers(0, 40),
            st.binary(max_size=12) | st.sampled_from(VOCAB).map(str.encode),
        ),
        min_size=1,
        max_size=6,
    ),
    config=st.sampled_from(CONFIGS),
)
def test_mutated_fixtures_keep_invariants(
    path: Path, edits: list[tuple[int, int, bytes]], config: ChunkerConfig
) -> None:
    data = _mutate(path.read_bytes(), edits)
    check_invariants(data, chunk_file(f"src/{path.name}", data, config))
