"""Fitting MCP answers to a budget (real tokenizer, no index), the tools' compact schemas,
and the recall benchmark's counting helpers."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks._mcp_recall import grep_read_found, listed_and_shown, query_words
from benchmarks.quality.pairs import Pair
from indexer.embed import TokenCounter, load_token_counter
from server.mcp._answer import Block, Fitted, fit_blocks, fit_json, numbered, span
from server.mcp._params import compact_schema


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_token_counter()


def _block(name: str, lines: int, first: int = 1) -> Block:
    body = numbered(
        [f"    total = compute_{name}(value_{i}, other_{i})  # step {i}" for i in range(lines)], first
    )
    return Block(f"src/{name}.py:{first}-{first + lines - 1}  function {name}  (0.50)", tuple(body),
                 lambda kept: f"… {lines - kept} more lines")  # fmt: skip


def _footer(fitted: Fitted) -> str:
    return f"[{fitted.left_out} more left out]" if fitted.left_out else ""


def test_the_model_tokenizer_is_named_and_counts_additively(counter: TokenCounter) -> None:
    assert counter.name == "all-MiniLM-L6-v2 word-piece"
    parts = ["def parse_request(raw: bytes) -> Request:", "    return Request.from_bytes(raw)"]
    assert counter.count("\n".join(parts)) == sum(counter.count_many(parts))
    assert counter.count("") == 0


@pytest.mark.parametrize("budget", [60, 200, 500, 1_000, 4_000])
def test_an_answer_never_costs_more_than_its_budget(counter: TokenCounter, budget: int) -> None:
    blocks = [_block(f"unit{i}", lines) for i, lines in enumerate([3, 40, 2, 8, 25, 1, 12, 60, 5, 9])]
    fitted = fit_blocks(counter, "", blocks, budget, _footer)
    assert fitted.tokens == counter.count(fitted.text) <= budget
    shown = [b.header for b in blocks if b.header in fitted.text]
    assert len(shown) == fitted.shown
    assert fitted.left_out == len(blocks) - fitted.shown
    if fitted.left_out:
        assert fitted.text.endswith(f"[{fitted.left_out} more left out]")
        assert fitted.tokens >= 0.8 * budget


def test_a_block_that_does_not_fit_keeps_its_header_and_the_first_is_clipped(counter: TokenCounter) -> None:
    small, big, tiny = _block("small", 2), _block("big", 80), _block("tiny", 1)
    fitted = fit_blocks(counter, "", [small, big, tiny], 150, _footer)
    lines = fitted.text.splitlines()
    assert big.header in lines
    assert lines[lines.index(big.header) + 1] == tiny.header  # no code of big
    assert tiny.body[0] in lines  # the later small block still shows its code
    assert fitted.headers_only == 1
    clipped = fit_blocks(counter, "", [big], 120, _footer)
    assert clipped.clipped
    assert clipped.text.splitlines()[0] == big.header
    assert clipped.text.splitlines()[-1].startswith("… ")
    assert clipped.tokens <= 120


def test_room_kept_for_the_longest_footer_goes_to_headers_when_the_real_one_is_short(
    counter: TokenCounter,
) -> None:
    """The first pass reserves room for a footer quoting the largest counts there could be;
    the real one is shorter, and what it leaves shows more headers (an MCP answer at 200
    tokens used 148 with a 12-token header left out)."""

    def wordy(fitted: Fitted) -> str:
        return f"[{fitted.left_out} more results left out: search again with offset={fitted.shown}]"

    first = _block("first", 9)
    rest = [_block(f"later{i}", 30) for i in range(3)]
    need = counter.count(wordy(Fitted("", 0, shown=99_999, left_out=99_999))) + 2
    budget = counter.count("\n".join([first.header, *first.body, wordy(Fitted("", 0, shown=1, left_out=3))]))
    budget += counter.count(rest[0].header) + 1  # room for one more header with the real footer
    assert counter.count(wordy(Fitted("", 0, shown=2, left_out=2))) < need
    fitted = fit_blocks(counter, "", [first, *rest], budget, wordy)
    assert fitted.tokens <= budget
    assert (fitted.shown, fitted.headers_only) == (2, 1), fitted.text


def test_json_answers_keep_whole_items(counter: TokenCounter) -> None:
    items = [{"path": f"src/f{i}.py", "code": "x = 1\n" * 20} for i in range(30)]

    def wrap(kept: list[Any], left: int) -> dict[str, Any]:
        return {"results": kept, "left_out": left}

    text, kept = fit_json(counter, items, 300, wrap)
    assert counter.count(text) <= 300
    assert 0 < kept < 30
    assert f'"left_out":{30 - kept}' in text


def test_numbered_lines_and_spans() -> None:
    assert numbered(["a", "b"], 9) == [" 9  a", "10  b"]
    assert numbered(["x" * 1000], 1)[0].endswith("…")
    assert span("a.py", 3, 7) == "a.py:3-7"
    assert span("a.py", 3, 3) == "a.py:3"
    assert span("a.py", 0, 0) == "a.py"


def test_compact_schema_drops_what_tells_nothing() -> None:
    schema = {
        "properties": {
            "query": {"title": "Query", "type": "string"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Limit"},
            "paths": {"items": {"type": "string"}, "type": "array", "default": [], "description": ""},
        },
        "required": ["query"],
        "title": "searchArguments",
        "type": "object",
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "paths": {"items": {"type": "string"}, "type": "array"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def _pair(path: str, line: int) -> Pair:
    return Pair("c", "Return the shelves whose stock is low", path, "low", "function", line, line + 2)


def test_recall_counts_a_listed_target_and_its_code() -> None:
    answer = "a.py:10-14  function low  (0.90)\n10  def low():\nb.py:1-3  function x  (0.20)"
    assert listed_and_shown(answer, _pair("a.py", 10)) == (True, True)
    assert listed_and_shown(answer, _pair("b.py", 2)) == (True, False)
    assert listed_and_shown(answer, _pair("b.py", 9)) == (False, False)


def test_grep_then_read_reads_the_files_with_most_matching_lines(counter: TokenCounter) -> None:
    assert query_words("Return the shelves whose stock is low") == ["low", "shelves", "stock", "whose"]
    files = {"a.py": ["x = 1"] * 50 + ["stock"], "b.py": ["stock low", "shelves", "def low():", "pass"]}
    costs = {path: counter.count_many(lines) for path, lines in files.items()}
    found, spent = grep_read_found(files, costs, _pair("b.py", 3), 1_000)
    assert found
    assert spent == sum(costs["b.py"]) + sum(costs["a.py"])
    found, spent = grep_read_found(files, costs, _pair("a.py", 40), 20)
    assert not found
    assert spent <= 20
