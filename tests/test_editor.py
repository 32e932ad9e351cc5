"""Editor routes (issue 41): positions as LSP counts them (0-based lines, UTF-16 columns), a
read route of its own, paths taken the same way everywhere (relative, absolute inside a
project, ``file://`` URIs; outside every project a 400 naming the field), and every hit
carrying its file's ``file://`` URI; in-process and over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from blake3 import blake3
from live import serve_in_thread, wait_task

from indexer.api import Lode
from indexer.config import load_config
from indexer.editor import PositionQuery, TextQuery
from indexer.embed import FakeEmbedder
from indexer.errors import NotFoundError, PathError, ValidationError
from indexer.locations import file_uri, locate_path
from indexer.models import Project
from indexer.positions import from_utf16, identifier_at, to_utf16, utf16_length
from indexer.search import SearchOptions
from indexer.symbols import ReferenceQuery, SymbolQuery

GEO = (
    '"""Géométrie: tiny helpers (中文 comment)."""\n'
    "\n"
    "\n"
    "def área(x):\n"
    "    return x * 2\n"
    "\n"
    "\n"
    "def emoji_total(items):\n"
    '    label = "😀😀"; return área(len(items)) + área(1)\n'
)
CART = "from pkg.geo import área\n\n\ndef total(items):\n    return área(sum(items))\n"
#: 0-based line of the two calls of ``área`` after the astral-plane characters.
CALLS = 8
#: 40 lines, for a range read.
LONG = "".join(f"line_{i} = {i}  # ü 😀\n" for i in range(120))


def _units(text: str) -> int:
    """UTF-16 code units of ``text``, counted by the codec (not by lode's code)."""
    return len(text.encode("utf-16-le")) // 2


def _slice16(line: str, start: int, end: int) -> str:
    """Columns ``start``..``end`` (UTF-16) of ``line``."""
    return line.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


def _calls() -> list[tuple[int, int]]:
    """(start, end) UTF-16 columns of each ``área`` on the line of the calls."""
    line = GEO.split("\n")[CALLS]
    out, at = [], 0
    while (at := line.find("área", at)) >= 0:
        out.append((_units(line[:at]), _units(line[:at]) + _units("área")))
        at += 1
    return out


def _make_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "geo.py").write_text(GEO, encoding="utf-8")
    (root / "pkg" / "cart.py").write_text(CART, encoding="utf-8")
    (root / "long.py").write_text(LONG, encoding="utf-8")
    return root.resolve()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lode, Path]]:
    tmp = tmp_path_factory.mktemp("editor")
    root = _make_repo(tmp / "my répo")
    api = Lode(load_config(env={}, overrides={"db": tmp / "db"}), embedder=FakeEmbedder())
    api.index(root, name="geo")
    yield api, root
    api.close()


# ---- positions and paths --------------------------------------------------------------------
def test_utf16_columns_count_astral_characters_twice() -> None:
    line = 'x = "é中😀"; y'
    for index in range(len(line) + 1):
        column = to_utf16(line, index)
        assert column == _units(line[:index])
        assert from_utf16(line, column) == index
    assert utf16_length("😀") == 2
    assert from_utf16(line, 1000) == len(line)  # past the end: the line's end, as LSP says
    assert identifier_at("foo.bar_baz(1)", 7) == (4, 11)
    assert identifier_at("foo.bar_baz(1)", 11) == (4, 11)  # just after the name: on it
    assert identifier_at("foo(12)", 5) is None  # a number
    assert identifier_at("a + b", 2) is None


def test_a_path_is_read_the_same_way_in_every_form(tmp_path: Path) -> None:
    root = tmp_path / "a b"
    (root / "src").mkdir(parents=True)
    inner = root / "src" / "vendor"
    projects = [Project("p1", "outer", str(root)), Project("p2", "inner", str(inner))]
    for value in ("src/x.py", "./src//x.py", str(root / "src" / "x.py"), (root / "src" / "x.py").as_uri()):
        found = locate_path(value, projects)
        assert found.path == "src/x.py", value
    assert locate_path("src/x.py", projects).project is None  # relative: names no project
    assert locate_path(str(root / "src/x.py"), projects).project == projects[0]
    assert locate_path(str(inner / "lib.py"), projects).project == projects[1]  # the innermost root
    assert file_uri(str(root), "src/x.py") == (root / "src" / "x.py").as_uri()
    for bad in (
        str(tmp_path / "elsewhere.py"),
        (tmp_path / "elsewhere.py").as_uri(),
        "../x.py",
        f"{root}/../x.py",
        "https://example.com/x.py",
        "file://server/share/x.py",
        (root / "x.py").as_uri() + "#L3",
        str(root),
    ):
        with pytest.raises(PathError) as err:
            locate_path(bad, projects, "from_path")
        assert err.value.field == "from_path", bad
        assert "^" not in str(err.value), bad  # words, not a regular expression


# ---- read ------------------------------------------------------------------------------------
def test_a_range_is_read_by_relative_path_absolute_path_or_uri(repo: tuple[Lode, Path]) -> None:
    api, root = repo
    path = root / "long.py"
    for value in ("long.py", str(path), path.as_uri()):
        text = api.read_text(TextQuery(value, start_line=10, end_line=50))
        assert text.text == "".join(LONG.splitlines(keepends=True)[10:50]), value
        assert (text.start_line, text.end_line, text.total_lines) == (10, 50, 120)
        assert text.uri == path.as_uri()
        assert (text.project, text.path) == ("geo", "long.py")
        assert text.content_hash == blake3(path.read_bytes()).hexdigest()
    whole = api.read_text(TextQuery("pkg/geo.py", project="geo"))
    assert whole.text == GEO
    assert (whole.start_line, whole.end_line, whole.total_lines) == (0, 9, 9)
    last = api.read_text(TextQuery("pkg/geo.py", start_line=8, end_line=500))
    assert last.text == GEO.split("\n")[8] + "\n"
    assert api.read_text(TextQuery("pkg/geo.py", start_line=9)).text == ""


@pytest.mark.parametrize(
    ("query", "error", "field"),
    [
        (TextQuery("/etc/passwd"), PathError, "path"),
        (TextQuery("file:///etc/passwd"), PathError, "path"),
        (TextQuery("../secret.py"), PathError, "path"),
        (TextQuery("nope.py"), NotFoundError, "path"),
        (TextQuery("long.py", project="nope"), NotFoundError, "project"),
        (TextQuery("long.py", start_line=121), ValidationError, "start_line"),
        (TextQuery("long.py", start_line=5, end_line=4), ValidationError, "end_line"),
        (TextQuery("long.py", start_line=-1), ValidationError, "start_line"),
    ],
)
def test_a_bad_read_names_its_field(
    repo: tuple[Lode, Path], query: TextQuery, error: type[Exception], field: str
) -> None:
    api, _ = repo
    with pytest.raises(error) as err:
        api.read_text(query)
    assert getattr(err.value, "field", None) == field


# ---- the symbol at a position ------------------------------------------------------------------
def test_the_symbol_at_a_position_counts_utf16_columns(repo: tuple[Lode, Path]) -> None:
    api, root = repo
    (first, end), (second, _) = _calls()
    line = GEO.split("\n")[CALLS]
    assert first != line.find("área")  # the line's code points and its UTF-16 columns differ
    for column in (first, first + 2, end, second):
        found = api.symbol_at(PositionQuery((root / "pkg" / "geo.py").as_uri(), CALLS, column))
        assert found.name == "área", column
        assert found.range is not None
        assert _slice16(line, found.range.start.character, found.range.end.character) == "área"
        assert found.range.start.line == found.range.end.line == CALLS
        best = found.definitions[0]
        assert (best.symbol.file_path, best.symbol.start_line, best.proximity) == (
            "pkg/geo.py",
            4,
            "same_file",
        )
        assert best.uri == (root / "pkg" / "geo.py").as_uri()
        assert found.enclosing is not None
        assert found.enclosing.symbol.qualified_name == "emoji_total"
        assert found.chunk is not None
        assert found.chunk.start_line <= CALLS + 1 <= found.chunk.end_line
    assert found.range.start.character == second
    blank = api.symbol_at(PositionQuery("pkg/geo.py", 1, 0))
    assert (blank.name, blank.range, blank.definitions, blank.enclosing) == ("", None, (), None)
    past = api.symbol_at(PositionQuery("pkg/geo.py", 500, 3))
    assert past.name == ""
    with pytest.raises(PathError) as err:
        api.symbol_at(PositionQuery(str(root.parent / "outside.py"), 0, 0))
    assert err.value.field == "path"
    with pytest.raises(ValidationError) as bad:
        api.symbol_at(PositionQuery("pkg/geo.py", 0, -1))
    assert bad.value.field == "column"


def test_references_carry_ranges_and_uris(repo: tuple[Lode, Path]) -> None:
    api, root = repo
    refs = api.references(ReferenceQuery("área", from_path=str(root / "pkg" / "geo.py")))
    by_file = {c.file_path: c for c in refs.callers}
    assert set(by_file) == {"pkg/geo.py", "pkg/cart.py"}
    geo = by_file["pkg/geo.py"]
    assert geo.proximity == "same_file"
    assert geo.uri == (root / "pkg" / "geo.py").as_uri()
    site = next(s for s in geo.sites if s.line == CALLS + 1)
    assert [(r.start.character, r.end.character) for r in site.ranges] == _calls()
    assert {r.start.line for r in site.ranges} == {CALLS}
    cart = by_file["pkg/cart.py"].sites[-1]
    assert [(r.start.line, r.start.character) for r in cart.ranges] == [(4, 11)]


def test_from_path_may_be_absolute_or_a_uri(repo: tuple[Lode, Path]) -> None:
    api, root = repo
    relative = api.symbols(SymbolQuery("área", from_path="pkg/cart.py"))
    for value in (str(root / "pkg" / "cart.py"), (root / "pkg" / "cart.py").as_uri()):
        found = api.symbols(SymbolQuery("área", from_path=value))
        assert [(r.symbol.id, r.proximity, r.uri) for r in found.symbols] == [
            (r.symbol.id, r.proximity, r.uri) for r in relative.symbols
        ]
    assert relative.symbols[0].proximity == "same_module"
    with pytest.raises(PathError) as err:
        api.symbols(SymbolQuery("área", from_path=str(root.parent / "elsewhere" / "x.py")))
    assert err.value.field == "from_path"


def test_search_hits_carry_uris_and_match_ranges(repo: tuple[Lode, Path]) -> None:
    api, root = repo
    for granularity in ("chunk", "document"):
        answer = api.search(SearchOptions(query="emoji total", mode="lexical", granularity=granularity))
        hits = [c for g in answer.groups for c in g.chunks] or [c for d in answer.documents for c in d.chunks]
        hit = next(h for h in hits if h.node_name == "emoji_total")
        assert hit.uri == (root / "pkg" / "geo.py").as_uri()
        lines = GEO.split("\n")
        words = [_slice16(lines[r.start.line], r.start.character, r.end.character) for r in hit.matches]
        assert words[:2] == ["emoji", "total"], hit.matches
        assert all(g.uri for g in answer.groups)
        assert all(d.uri for d in answer.documents)


# ---- HTTP ------------------------------------------------------------------------------------
def _error_keys(answer: httpx.Response) -> list[str]:
    body: dict[str, Any] = answer.json()
    return [e["key"] for e in body["extra"]]


def test_editor_routes_over_http(tmp_path: Path) -> None:
    root = _make_repo(tmp_path / "my répo")
    geo = root / "pkg" / "geo.py"
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(root), "name": "geo"}).json()
        wait_task(base, created["task_id"])
        text = httpx.get(
            f"{base}/api/v1/files/text",
            params={"path": (root / "long.py").as_uri(), "start_line": 0, "end_line": 40},
        )
        assert text.status_code == 200, text.text
        body = text.json()
        assert body["text"] == "".join(LONG.splitlines(keepends=True)[:40])
        assert body["content_hash"] == blake3((root / "long.py").read_bytes()).hexdigest()
        assert body["uri"] == (root / "long.py").as_uri()

        (first, end), _ = _calls()
        at = httpx.get(
            f"{base}/api/v1/symbols/at", params={"path": geo.as_uri(), "line": CALLS, "column": first}
        )
        assert at.status_code == 200, at.text
        found = at.json()
        assert found["name"] == "área"
        assert found["range"] == {
            "start": {"line": CALLS, "character": first},
            "end": {"line": CALLS, "character": end},
        }
        assert found["definitions"][0]["uri"] == geo.as_uri()
        assert found["definitions"][0]["proximity"] == "same_file"
        assert found["enclosing"]["name"] == "emoji_total"

        refs = httpx.get(
            f"{base}/api/v1/symbols/references", params={"name": "área", "from_path": geo.as_uri()}
        )
        assert refs.status_code == 200, refs.text
        sites = [s for c in refs.json()["callers"] if c["uri"] == geo.as_uri() for s in c["sites"]]
        assert [(r["start"]["character"], r["end"]["character"]) for r in sites[-1]["ranges"]] == _calls()

        hits = httpx.post(
            f"{base}/api/v1/search", json={"query": "emoji total", "mode": "lexical", "granularity": "chunk"}
        ).json()
        assert hits["groups"][0]["uri"].startswith("file://")
        assert all(c["uri"] and "matches" in c for g in hits["groups"] for c in g["chunks"])

        outside = str(tmp_path / "elsewhere.py")
        for route, params, field in [
            ("/api/v1/files/text", {"path": outside}, "path"),
            ("/api/v1/files/text", {"path": "file:///etc/passwd"}, "path"),
            ("/api/v1/symbols/at", {"path": outside, "line": 0, "column": 0}, "path"),
            ("/api/v1/symbols", {"name": "área", "from_path": outside}, "from_path"),
            ("/api/v1/symbols/references", {"name": "área", "from_path": outside}, "from_path"),
            ("/api/v1/files/text", {"path": "long.py", "start_line": -1}, "start_line"),
            ("/api/v1/symbols/at", {"path": "long.py", "line": 0, "column": -1}, "column"),
        ]:
            answer = httpx.get(base + route, params=params)
            assert answer.status_code == 400, (route, params, answer.text)
            assert _error_keys(answer) == [field], answer.text
            assert "^" not in answer.json()["detail"], answer.text  # words, not a regular expression
        assert httpx.get(f"{base}/api/v1/files/text", params={"path": "nope.py"}).status_code == 404
        reindex = f"{base}/api/v1/projects/geo/index"
        again = httpx.post(
            reindex, json={"paths": [str(geo), (root / "pkg" / "cart.py").as_uri(), "long.py"]}
        )
        assert again.status_code == 202, again.text
        wait_task(base, again.json()["id"])
        refused = httpx.post(reindex, json={"paths": [outside]})
        assert refused.status_code == 400, refused.text
        assert _error_keys(refused) == ["paths"]
        by_abs = httpx.get(f"{base}/api/v1/projects/geo/documents/{geo}")
        assert by_abs.status_code == 200, by_abs.text
        assert by_abs.json()["document_id"] == "pkg/geo.py"
