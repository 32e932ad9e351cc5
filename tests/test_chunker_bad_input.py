"""Bad input never raises: invalid UTF-8, broken syntax, empty, minified, binary."""

from __future__ import annotations

import time
from pathlib import Path

from test_chunker_property import check_invariants

from indexer.chunker import chunk_file
from indexer.config import ChunkerConfig
from indexer.models import Chunk, ChunkedFile

FIXTURES = Path(__file__).parent / "data" / "chunker"


def _named(result: ChunkedFile, name: str) -> Chunk:
    return next(c for c in result.chunks if c.node_name == name)


def test_empty_and_whitespace_only_files_have_no_chunks() -> None:
    for data in (b"", b"   \n\t\n\r\n", b"\n" * 1000):
        result = chunk_file("src/empty.py", data)
        assert result.chunks == ()
        assert result.skipped_reason is None
        assert result.language == "python"


def test_binary_files_are_refused_with_a_reason() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    result = chunk_file("assets/logo.png", png)
    assert result.chunks == ()
    assert result.skipped_reason == "binary file (NUL bytes)"
    noise = bytes((i * 37 + 11) % 256 for i in range(4096)).replace(b"\x00", b"\x01")
    refused = chunk_file("data/blob.py", noise)
    assert refused.chunks == ()
    assert refused.skipped_reason is not None
    assert refused.skipped_reason.startswith("binary file")


def test_invalid_utf8_keeps_exact_byte_offsets() -> None:
    data = b'def caf\xe9():\n    return "\xff\xfe ok"\n\n\ndef other():\n    return 1\n'
    result = chunk_file("src/latin.py", data)
    check_invariants(data, result)
    assert any("invalid UTF-8 at byte 7" in w for w in result.warnings)
    first = result.chunks[0]
    assert first.content.startswith("def caf\ufffd()")
    assert data[first.start_byte : first.end_byte].startswith(b"def caf\xe9")
    assert [c.node_name for c in result.chunks if c.node_type == "function"][-1] == "other"


def test_localised_syntax_errors_still_give_units() -> None:
    data = b"def good():\n    return 1\n\n\ndef broken(:\n    x = = 2\n\n\nclass Fine:\n    pass\n"
    result = chunk_file("src/broken.py", data)
    check_invariants(data, result)
    assert not result.used_fallback
    assert any("syntax errors" in w for w in result.warnings)
    assert _named(result, "good").node_type == "function"


def test_syntax_errors_everywhere_fall_back_to_windows() -> None:
    data = b"}}}} ((( fn fn fn ]]] <<<>>> @@@ ;;; \n" * 200
    result = chunk_file("src/garbage.rs", data)
    check_invariants(data, result)
    assert result.used_fallback
    assert {c.node_type for c in result.chunks} == {"text"}


def test_minified_five_megabyte_line_is_cut_quickly() -> None:
    statement = b"var a%d=function(b,c){return b+c*%d};"
    data = b"".join(statement % (i, i) for i in range(150_000))[: 5 * 1024 * 1024]
    config = ChunkerConfig()
    started = time.perf_counter()
    result = chunk_file("dist/app.min.js", data, config)
    elapsed = time.perf_counter() - started
    assert elapsed < 3.0
    assert result.used_fallback
    assert any("minified" in w for w in result.warnings)
    assert max(c.end_byte - c.start_byte for c in result.chunks) <= config.max_line_bytes
    assert result.chunks[0].start_byte == 0
    assert result.chunks[-1].end_byte == len(data)
    for a, b in zip(result.chunks, result.chunks[1:], strict=False):
        assert not data[a.end_byte : b.start_byte].strip()


def test_long_line_inside_normal_code_is_cut_on_character_boundaries() -> None:
    normal = b"".join(b"def helper_%d(value):\n    return value + %d\n\n\n" % (i, i) for i in range(300))
    data = normal + b"def f():\n    return '" + "é".encode() * 5000 + b"'\n\n\ndef g():\n    return 2\n"
    config = ChunkerConfig(max_line_bytes=1000)
    result = chunk_file("src/long.py", data, config)
    check_invariants(data, result)
    assert "\ufffd" not in "".join(c.content for c in result.chunks)
    assert max(c.end_byte - c.start_byte for c in result.chunks) <= 1000
    assert not result.used_fallback
    assert result.chunks[-1].node_name == "g"
    assert {c.node_name for c in result.chunks if c.start_line == 1202} == {"f"}


def test_unknown_and_text_files_get_windows() -> None:
    data = b"".join(b"line %d of notes\n" % i for i in range(100))
    result = chunk_file("notes/todo.txt", data, ChunkerConfig(fallback_window_lines=40))
    check_invariants(data, result)
    assert result.language == "text"
    assert not result.used_fallback
    assert [(c.start_line, c.end_line) for c in result.chunks] == [(1, 40), (41, 80), (81, 100)]
    assert {(c.node_type, c.node_name, c.scope_path) for c in result.chunks} == {("text", "", ())}


def test_crlf_and_missing_final_newline() -> None:
    data = b"def a():\r\n    return 1\r\n\r\n\r\ndef b():\r\n    return 2"
    result = chunk_file("src/crlf.py", data)
    check_invariants(data, result)
    assert all(not c.content.endswith(("\r", "\n")) for c in result.chunks)


def test_deeply_nested_code_does_not_explode() -> None:
    data = b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n"
    result = chunk_file("src/deep.py", data)
    check_invariants(data, result)


def test_every_fixture_parses_as_the_wrong_language_without_error() -> None:
    for path in sorted(FIXTURES.iterdir()):
        data = path.read_bytes()
        for language in ("python", "rust", "markdown", "bash"):
            check_invariants(data, chunk_file(path.name, data, language=language))
