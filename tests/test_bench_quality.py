"""The quality benchmark's parts: pair extraction and blanking per language, metrics, archives.

Nothing here touches the network; the corpora are hand-written snippets.
"""

from __future__ import annotations

import io
import json
import math
import tarfile
import textwrap
import zipfile
from dataclasses import asdict
from pathlib import Path

import pytest

from benchmarks.quality._doctext import first_sentence, is_boilerplate, plain_doc, word_count
from benchmarks.quality._fetch import DownloadError, download, iter_archive, sha256_of
from benchmarks.quality._units import parse_errors
from benchmarks.quality.corpora import CORPORA, CorpusSpec
from benchmarks.quality.evaluate import index_and_ask, rank_of, ranked_chunks
from benchmarks.quality.metrics import (
    bootstrap,
    first_hit_rank,
    macro_bootstrap,
    metric_values,
    paired_bootstrap,
)
from benchmarks.quality.pairs import Pair, PairSet, blank_source, extract_pairs, sample_pairs
from benchmarks.quality.report import build_result, compare_runs, to_markdown
from indexer.embed import FakeEmbedder
from indexer.search import ChunkHit, FileGroup, SearchResponse


def _src(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def _extract(path: str, language: str, text: str) -> PairSet:
    return extract_pairs("toy", {path: _src(text)}, {path: language})


def _check_blanked(language: str, original: bytes, blanked: bytes, queries: list[str]) -> None:
    """Same line count, still parses, no query text left, code lines unchanged."""
    assert blanked.count(b"\n") == original.count(b"\n")
    assert not parse_errors(language, blanked)
    for query in queries:
        assert query.encode() not in blanked
    kept = [
        (a, b)
        for a, b in zip(original.splitlines(), blanked.splitlines(), strict=True)
        if a.strip() == b.strip()
    ]
    assert len(kept) > original.count(b"\n") // 3


PYTHON = '''
"""Module docstring mentions frobnicate widgets."""


def frobnicate(widget, times=2):
    """Frobnicate the given widget several times.

    Longer explanation that is not part of the query.
    """
    for _ in range(times):
        widget.spin()
    return widget


class WidgetStore:
    """A store that keeps widgets by name."""

    def __init__(self):
        """Create an empty widget store."""
        self.items = {}

    def __repr__(self):
        """Return a printable representation of the store."""
        return f"WidgetStore({self.items!r})"

    @property
    def size(self):
        r"""Count the widgets currently kept in the store."""
        n = len(self.items)
        return n

    def tiny(self):
        """Return the tiny thing right now."""

    def short_doc(self):
        """Spin it."""
        x = 1
        return x

    def old(self):
        """Deprecated since version two, use the new API instead."""
        x = 2
        return x

    def copy_a(self):
        """Copy every widget into a new store instance."""
        x = 3
        return x

    def copy_b(self):
        """Copy every widget into a new store instance."""
        x = 4
        return x


def test_frobnicate_works():
    """Check that frobnicating a widget works as expected."""
    assert frobnicate(1) == 1
    assert True
'''


def test_python_pairs_blanking_and_filters() -> None:
    result = _extract("pkg/widgets.py", "python", PYTHON)
    pairs = {p.name: p for p in result.pairs}
    assert set(pairs) == {"frobnicate", "WidgetStore", "size"}
    assert pairs["frobnicate"].query == "Frobnicate the given widget several times."
    assert pairs["frobnicate"].start_line == 4
    assert pairs["size"].query == "Count the widgets currently kept in the store."
    assert pairs["size"].start_line == 26  # the def line, below the decorator
    assert result.dropped == {
        "constructor": 1,
        "dunder": 1,
        "short_unit": 1,
        "short_query": 1,
        "boilerplate": 1,
        "duplicate_doc": 2,
        "test": 1,
    }
    original, blanked = _src(PYTHON), result.blanked["pkg/widgets.py"]
    _check_blanked("python", original, blanked, [p.query for p in result.pairs])
    assert b"Module docstring" not in blanked
    assert b"Longer explanation" not in blanked
    assert blanked.splitlines()[4] == b'    """'  # a multi-line docstring keeps its lines


def test_test_files_give_no_pairs() -> None:
    result = _extract("tests/test_widgets.py", "python", PYTHON)
    assert result.pairs == []
    assert b"Frobnicate the given" not in result.blanked["tests/test_widgets.py"]


GO = """
// Package widgets keeps widgets.
package widgets

// Store keeps widgets by name
// and counts them.
type Store struct {
	// items maps names to widgets.
	items map[string]int
}

// NewStore makes an empty store for widgets.
func NewStore() *Store {
	return &Store{items: map[string]int{}}
}

// Add puts a widget into the store under its name.
func (s *Store) Add(name string, w int) {
	s.items[name] = w
	s.count()
}

// not a doc comment: a blank line follows

func helper() int {
	x := 1
	return x
}

func (s *Store) count() int {
	// Count the items: an inline comment stays.
	n := len(s.items)
	return n
}
"""


def test_go_pairs_and_blanking() -> None:
    result = _extract("store.go", "go", GO)
    pairs = {p.name: p for p in result.pairs}
    assert set(pairs) == {"Store", "Add"}
    assert pairs["Store"].query == "Store keeps widgets by name and counts them."
    assert pairs["Add"].start_line == 17
    assert result.dropped == {"constructor": 1}
    blanked = result.blanked["store.go"]
    _check_blanked("go", _src(GO), blanked, [])
    for gone in (b"Package widgets", b"items maps", b"puts a widget", b"NewStore makes"):
        assert gone not in blanked
    assert b"not a doc comment" in blanked
    assert b"an inline comment stays" in blanked


RUST = """
//! Crate docs about widget parsing.

/// Parse a widget from its textual form,
/// see [`Widget`] and [the guide](https://example.org).
///
/// # Examples
/// ```
/// let w = parse("x");
/// ```
#[inline]
pub fn parse(text: &str) -> Widget {
    let w = Widget::from(text);
    w
}

impl Widget {
    /// Creates a new widget with default settings.
    pub fn new() -> Widget {
        Widget { size: 0 }
    }

    /// Returns the size of the widget in bytes.
    pub fn size(&self) -> usize {
        let n = self.size;
        n
    }
}

#[cfg(test)]
mod tests {
    /// Checks that parsing a widget works fine.
    #[test]
    fn parses_widgets() {
        assert!(true);
    }
}
"""


def test_rust_pairs_and_blanking() -> None:
    result = _extract("src/lib.rs", "rust", RUST)
    pairs = {p.name: p for p in result.pairs}
    assert set(pairs) == {"parse", "size"}
    assert pairs["parse"].query == "Parse a widget from its textual form, see Widget and the guide."
    assert pairs["parse"].start_line == 11
    assert result.dropped == {"constructor": 1, "test": 1}
    blanked = result.blanked["src/lib.rs"]
    _check_blanked("rust", _src(RUST), blanked, [])
    for gone in (b"Crate docs", b"textual form", b"let w = parse", b"Creates a new"):
        assert gone not in blanked
    assert b"#[inline]" in blanked


JAVASCRIPT = """
/**
 * Widget registry used by the command line.
 */
class Registry {
  /**
   * Create a registry.
   */
  constructor() {
    this.items = new Map();
  }

  /**
   * Register a widget under the given name and return this.
   *
   * @param {string} name - the widget's name
   * @return {Registry}
   */
  register(name, widget) {
    this.items.set(name, widget);
    return this;
  }
}

/** Format the registry as a sorted table of names. */
export function formatTable(registry) {
  const names = [...registry.items.keys()];
  return names.sort().join('\\n');
}

/**
 * Count the widgets with a matching prefix.
 */
const countPrefix = (registry, prefix) => {
  let n = 0;
  for (const k of registry.items.keys()) if (k.startsWith(prefix)) n++;
  return n;
};

// A plain comment stays in place.
Registry.prototype.size = function () {
  return this.items.size;
};
"""


def test_javascript_pairs_and_blanking() -> None:
    result = _extract("lib/registry.js", "javascript", JAVASCRIPT)
    pairs = {p.name: p for p in result.pairs}
    assert set(pairs) == {"Registry", "register", "formatTable", "countPrefix"}
    assert pairs["register"].query == "Register a widget under the given name and return this."
    assert pairs["formatTable"].start_line == 25
    assert pairs["countPrefix"].start_line == 33
    assert result.dropped == {"constructor": 1}
    blanked = result.blanked["lib/registry.js"]
    _check_blanked("javascript", _src(JAVASCRIPT), blanked, [p.query for p in result.pairs])
    assert b"@param" not in blanked
    assert b"A plain comment stays" in blanked


JAVA = """
package demo;

/**
 * A bag of widgets, kept in insertion order.
 * <p>More details.
 */
public class Bag<T> {
    /** The widgets. */
    private final java.util.List<T> items = new java.util.ArrayList<>();

    /**
     * Constructs an empty bag of widgets.
     */
    public Bag() {
        super();
    }

    /**
     * Returns the number of widgets in this bag, e.g. zero when empty.
     *
     * @return the {@code int} count
     */
    @Override
    public int size() {
        int n = items.size();
        return n;
    }

    /**
     * {@inheritDoc}
     */
    public String toString() {
        String s = items.toString();
        return s;
    }

    /**
     * Adds the widget to the {@link Bag#items list} unless it is {@code null}.
     */
    public void add(T widget) {
        if (widget != null) {
            items.add(widget);
        }
    }
}
"""


def test_java_pairs_and_blanking() -> None:
    result = _extract("demo/Bag.java", "java", JAVA)
    pairs = {p.name: p for p in result.pairs}
    assert set(pairs) == {"Bag", "size", "add"}
    assert pairs["Bag"].query == "A bag of widgets, kept in insertion order."
    assert pairs["size"].query == "Returns the number of widgets in this bag, e.g. zero when empty."
    assert pairs["size"].start_line == 23  # the annotation opens the method
    assert pairs["add"].query == "Adds the widget to the list unless it is null."
    assert result.dropped == {"constructor": 1, "boilerplate": 1}  # {@inheritDoc}
    blanked = result.blanked["demo/Bag.java"]
    _check_blanked("java", _src(JAVA), blanked, [p.query for p in result.pairs])
    assert b"The widgets." not in blanked


def test_duplicate_docs_across_files_are_dropped() -> None:
    doc = '        """Return the number of items in this container."""\n'
    code = "class {0}:\n    def size(self):\n" + doc + "        n = 0\n        return n\n"
    files = {"a.py": code.format("A").encode(), "b.py": code.format("B").encode()}
    result = extract_pairs("toy", files, dict.fromkeys(files, "python"))
    assert result.pairs == []
    assert result.dropped["duplicate_doc"] == 2


def test_other_languages_are_kept_as_they_are() -> None:
    result = extract_pairs("toy", {"README.md": b"# Title\n"}, {"README.md": "markdown"})
    assert result.blanked == {"README.md": b"# Title\n"}
    assert result.pairs == []


@pytest.mark.parametrize(
    ("doc", "query"),
    [
        ('"""Spin the wheel, i.e. turn it. Then stop."""', "Spin the wheel, i.e. turn it."),
        ("/// Version 1.2 of the format is read.\n/// Next.", "Version 1.2 of the format is read."),
        (
            '"""Return the :class:`Widget` of ``name``.\n\n    :param name: x\n    """',
            "Return the Widget of name.",
        ),
        ("/**\n * Sets the size\n * @param n size\n */", "Sets the size"),
        ("/** Uses &lt;b&gt; and <b>bold</b> text. */", "Uses <b> and bold text."),
        ("// Walk:\n// - first\n// - second", "Walk:"),
    ],
)
def test_first_sentence(doc: str, query: str) -> None:
    assert first_sentence(doc) == query


def test_doc_text_helpers() -> None:
    assert plain_doc('"""\n    Two\n    lines.\n\n    Rest.\n    """') == "Two lines."
    assert word_count("Returns the `x` 42 value") == 4
    assert is_boilerplate("Deprecated: use Foo instead.")
    assert is_boilerplate("See the manual for details.")
    assert not is_boilerplate("Seek to the given offset.")


def test_blank_source_keeps_lines_and_offsets() -> None:
    data = b'x = 1  # keep\n"""doc\nmore"""\n/* c */ y\n'
    first = data.index(b'"""')
    second = data.index(b"/*")
    out = blank_source(data, [(second, second + 7, "comment"), (first, data.index(b"y") - 9, "docstring")])
    assert out == b'x = 1  # keep\n"""\n"""\n y\n'
    with pytest.raises(ValueError, match="overlapping"):
        blank_source(data, [(0, 5, "comment"), (3, 8, "comment")])


def test_sample_pairs_is_deterministic() -> None:
    pairs = [
        Pair("c", f"query {i} words", "a.py", f"f{i}", "function", i * 10, i * 10 + 3) for i in range(40)
    ]
    first = sample_pairs(pairs, 10, seed=3)
    assert first == sample_pairs(pairs, 10, seed=3)
    assert len(first) == 10
    assert first != sample_pairs(pairs, 10, seed=4)
    assert sample_pairs(pairs, None) == pairs


# ---- metrics ------------------------------------------------------------------------


def test_metrics_on_a_toy_ranking() -> None:
    # first hits at ranks 1, 3, none, 2 and 11 (outside the top 10)
    values = metric_values([1, 3, None, 2, 11])
    mrr = sum(values["mrr@10"]) / 5
    assert mrr == pytest.approx((1 + 1 / 3 + 0 + 1 / 2 + 0) / 5)
    assert mrr == pytest.approx(0.366667, abs=1e-6)
    assert sum(values["recall@1"]) / 5 == pytest.approx(0.2)
    assert sum(values["recall@10"]) / 5 == pytest.approx(0.6)
    ndcg = (1 + 1 / math.log2(4) + 1 / math.log2(3)) / 5
    assert sum(values["ndcg@10"]) / 5 == pytest.approx(ndcg)
    assert ndcg == pytest.approx(0.426186, abs=1e-6)


def test_first_hit_rank() -> None:
    assert first_hit_rank([False, False, True, True]) == 3
    assert first_hit_rank([False] * 10 + [True]) is None
    assert first_hit_rank([]) is None


def test_bootstrap_is_deterministic_and_brackets_the_mean() -> None:
    values = [1.0, 0.0, 0.5, 0.25, 1.0, 0.0, 0.2, 1.0]
    a, b = bootstrap(values, seed=7), bootstrap(values, seed=7)
    assert a == b
    assert a.low <= a.mean <= a.high
    assert a.mean == pytest.approx(sum(values) / len(values))
    assert bootstrap([0.5] * 5).as_dict() == {"mean": 0.5, "low": 0.5, "high": 0.5}
    assert math.isnan(bootstrap([]).mean)


def test_macro_bootstrap_averages_corpus_means() -> None:
    estimate = macro_bootstrap([[1.0, 1.0], [0.0, 0.0, 0.0, 1.0]], seed=1)
    assert estimate.mean == pytest.approx((1.0 + 0.25) / 2)
    assert estimate.low <= estimate.mean <= estimate.high


def test_paired_bootstrap() -> None:
    same = paired_bootstrap([[0.5, 1.0, 0.0]], [[0.5, 1.0, 0.0]])
    assert (same.delta, same.p_value) == (0.0, 1.0)
    better = paired_bootstrap([[1.0] * 30, [1.0] * 20], [[0.0] * 30, [0.5] * 20], seed=2)
    assert better.delta == pytest.approx(0.75)
    assert better.p_value == 0.0
    assert better.low > 0
    with pytest.raises(ValueError, match="same queries"):
        paired_bootstrap([[1.0]], [[1.0, 0.0]])


# ---- hits and ranking ----------------------------------------------------------------


def _hit(path: str, start: int, end: int, score: float, hid: str) -> ChunkHit:
    return ChunkHit(
        id=hid,
        file_id=path,
        file_path=path,
        project_id="p",
        project="toy",
        chunk_index=0,
        content="",
        start_line=start,
        end_line=end,
        language="python",
        node_type="function",
        node_name="",
        parent_context="",
        scope_path=(),
        relevance_score=score,
        unit_start_line=start,
        unit_end_line=end,
    )


def test_ranked_chunks_and_rank_of() -> None:
    a1, a2 = _hit("a.py", 1, 9, 0.5, "1"), _hit("a.py", 10, 20, 0.9, "2")
    b1 = _hit("b.py", 1, 30, 0.7, "0")
    b2 = _hit("b.py", 40, 50, 0.5, "0b")
    response = SearchResponse(
        query="q",
        mode="hybrid",
        granularity="chunk",
        offset=0,
        limit=10,
        total=4,
        has_more=False,
        groups=(
            FileGroup("b.py", "b.py", "p", "toy", 1.2, (b1, b2)),
            FileGroup("a.py", "a.py", "p", "toy", 1.4, (a2, a1)),
        ),
    )
    ranked = ranked_chunks(response)
    assert [h.id for h in ranked] == ["2", "0", "0b", "1"]  # score, then id
    pair = Pair("toy", "q w e", "a.py", "f", "function", 5, 9)
    assert rank_of(pair, ranked) == 4
    assert rank_of(Pair("toy", "q w e", "b.py", "g", "function", 30, 35), ranked) == 2
    assert rank_of(Pair("toy", "q w e", "c.py", "h", "function", 5, 9), ranked) is None
    # a piece of a long unit stands for the whole unit (its other pieces are folded into it)
    piece = ChunkHit(**{**asdict(_hit("c.py", 40, 60, 0.8, "p")), "unit_start_line": 1, "unit_end_line": 90})
    assert rank_of(Pair("toy", "q w e", "c.py", "h", "function", 3, 90), [piece]) == 1
    # a class's skeleton does not stand for the methods inside it
    skeleton = ChunkHit(**{**asdict(piece), "node_type": "class", "start_line": 1, "end_line": 6})
    assert rank_of(Pair("toy", "q w e", "c.py", "m", "method", 20, 30), [skeleton]) is None
    assert rank_of(Pair("toy", "q w e", "c.py", "C", "class", 1, 90), [skeleton]) == 1


def test_index_and_ask_end_to_end(tmp_path: Path) -> None:
    """A blanked toy corpus indexed by lode (fake embedder): lexical search finds the targets."""
    result = _extract("pkg/widgets.py", "python", PYTHON)
    corpus = tmp_path / "toy"
    (corpus / "pkg").mkdir(parents=True)
    (corpus / "pkg" / "widgets.py").write_bytes(result.blanked["pkg/widgets.py"])
    answers = index_and_ask("toy", corpus, result.pairs, FakeEmbedder(), ("lexical", "hybrid"))
    assert answers.chunks > 0
    assert set(answers.ranks) == {"lexical", "hybrid"}
    assert all(len(r) == len(result.pairs) for r in answers.ranks.values())
    assert all(ms > 0 for ms in answers.latency_ms["lexical"])
    assert any(rank is not None for rank in answers.ranks["lexical"])


def test_report_and_comparison() -> None:
    from benchmarks.quality.evaluate import CorpusRun

    pairs = [
        Pair("toy", f"query number {i}", "a.py", f"f{i}", "function", i * 10 + 1, i * 10 + 5)
        for i in range(6)
    ]
    spec = CORPORA[0]
    run = CorpusRun(
        spec=spec,
        files=1,
        pair_set=PairSet(pairs=pairs),
        pairs=pairs,
        ranks={"lexical": [1, 2, None, 1, 3, None], "semantic": [None] * 6, "hybrid": [1, 1, 2, 1, 1, None]},
        latency_ms={"lexical": [1.0] * 6, "semantic": [2.0] * 6, "hybrid": [3.0] * 6},
    )
    result = build_result([run], seed=0, meta={"profile": "quick"})
    json.dumps(result, allow_nan=False)
    assert result["macro"]["hybrid"]["recall@10"]["mean"] == pytest.approx(5 / 6, abs=1e-4)
    assert result["paired"]["hybrid-semantic"]["mrr@10"]["delta"] > 0
    table = to_markdown(result)
    assert "| **macro** |" in table
    assert "hybrid − lexical" in table
    same = compare_runs(result, result)
    assert same["hybrid"]["mrr@10"]["delta"] == 0.0
    assert same["hybrid"]["queries"] == 6


# ---- corpora and archives ---------------------------------------------------------------


def test_corpus_globs() -> None:
    spec = CorpusSpec(
        name="x",
        language="go",
        registry="debian",
        package="x",
        version="1",
        url="https://example.invalid/x.deb",
        sha256="0" * 64,
        root="src/",
        include=("*.go", "doc/*.go"),
        full_include=("**/*.go",),
        exclude=("**/*_test.go",),
    )
    assert spec.wants("a.go", full=False)
    assert spec.wants("doc/b.go", full=False)
    assert not spec.wants("internal/c.go", full=False)
    assert spec.wants("internal/deep/c.go", full=True)
    assert not spec.wants("a_test.go")
    assert not spec.wants("doc/b_test.go")


def test_pinned_corpora_are_well_formed() -> None:
    assert len({c.language for c in CORPORA}) >= 4
    assert len({c.name for c in CORPORA}) == len(CORPORA)
    for spec in CORPORA:
        assert len(spec.sha256) == 64
        assert spec.url.startswith("https://")
        assert spec.version in spec.url


def _tar(members: dict[str, bytes], *, xz: bool = False) -> bytes:
    buffer = io.BytesIO()
    with (
        tarfile.open(fileobj=buffer, mode="w:xz") if xz else tarfile.open(fileobj=buffer, mode="w:gz")
    ) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _deb(data_tar: bytes) -> bytes:
    def member(name: str, body: bytes) -> bytes:
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode()
        return header + body + (b"\n" if len(body) % 2 else b"")

    return b"!<arch>\n" + member("debian-binary", b"2.0\n") + member("data.tar.xz", data_tar)


def test_iter_archive_reads_tar_deb_and_inner_zip(tmp_path: Path) -> None:
    tgz = tmp_path / "pkg.tgz"
    tgz.write_bytes(_tar({"package/index.js": b"a", "package/README.md": b"b"}))
    assert list(iter_archive(tgz, lambda n: n.endswith(".js"))) == [("package/index.js", b"a")]

    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("java.base/java/util/A.java", b"class A {}")
        archive.writestr("java.base/java/util/B.txt", b"no")
    deb = tmp_path / "src.deb"
    deb.write_bytes(_deb(_tar({"./usr/lib/src.zip": zipped.getvalue(), "./usr/x.go": b"go"}, xz=True)))
    assert list(iter_archive(deb, lambda n: n.endswith(".go"))) == [("usr/x.go", b"go")]
    inner = list(iter_archive(deb, lambda n: n.endswith(".java"), inner="usr/lib/src.zip"))
    assert inner == [("java.base/java/util/A.java", b"class A {}")]


def test_download_verifies_the_digest(tmp_path: Path) -> None:
    source = tmp_path / "artifact.tgz"
    source.write_bytes(b"payload")
    digest = sha256_of(source)
    target = tmp_path / "cache" / "artifact.tgz"
    assert download(source.as_uri(), target, digest) == target
    assert target.read_bytes() == b"payload"
    with pytest.raises(DownloadError, match="does not match"):
        download(source.as_uri(), tmp_path / "other.tgz", "0" * 64, attempts=1)
    assert not (tmp_path / "other.tgz").exists()


def test_summarize_renders_any_result_and_plots(tmp_path: Path) -> None:
    from benchmarks.quality.evaluate import CorpusRun
    from benchmarks.summarize import summarize

    pairs = [
        Pair("toy", f"query number {i}", "a.py", f"f{i}", "function", i * 10 + 1, i * 10 + 5)
        for i in range(5)
    ]
    run = CorpusRun(
        spec=CORPORA[0],
        files=1,
        pair_set=PairSet(pairs=pairs),
        pairs=pairs,
        ranks={"lexical": [1, None, 2, 1, 3], "hybrid": [1, 1, 2, 1, None]},
        latency_ms={"lexical": [1.0, 2.0, 3.0, 4.0, 5.0], "hybrid": [2.0, 3.0, 4.0, 5.0, 9.0]},
    )
    quality = json.dumps(build_result([run], seed=0, meta={"profile": "quick"}))
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "quality.json").write_text(quality)
    summarize(alone)
    assert (alone / "latency.png").is_file()  # from the quality run's latency samples
    (tmp_path / "quality.json").write_text(quality)
    search = {"profile": "quick", "queries": 5, "modes": {"hybrid": {"p50_ms": 3.5, "p95_ms": 9.1}}}
    (tmp_path / "search.json").write_text(json.dumps({**search, "samples_ms": [1, 2, 3, 4, 5, 6]}))
    text = summarize(tmp_path)
    assert "| **macro** |" in text
    assert "## search" in text
    assert "| modes.hybrid | 3.5 | 9.1 |" in text
    assert (tmp_path / "SUMMARY.md").read_text() == text
    for png in ("quality_mrr.png", "latency.png"):
        assert (tmp_path / png).read_bytes().startswith(b"\x89PNG")


def test_public_api_is_pinned() -> None:
    from benchmarks import quality

    assert quality.__all__ == sorted(quality.__all__, key=lambda n: (not n.isupper(), n))
    assert set(quality.__all__) == {
        "CORPORA", "METRICS", "MODES", "REPO_CORPORA", "CorpusRun", "CorpusSpec", "Estimate", "Pair",
        "PairSet", "PairedEstimate", "RepoCorpus", "RepoRun", "blank_source", "bootstrap",
        "build_repo_result", "build_result", "cache_dir", "compare_repo_runs", "compare_runs",
        "evaluate_corpus", "evaluate_repo", "extract_pairs", "fetch_corpus", "file_role",
        "index_and_ask", "macro_bootstrap", "metric_values", "paired_bootstrap", "read_corpus",
        "repo_markdown", "sample_pairs", "to_markdown",
    }  # fmt: skip


def test_vector_cache_reuses_document_vectors_only(tmp_path: Path) -> None:
    import numpy as np

    from benchmarks._vector_cache import CachedEmbedder
    from indexer.embed import FakeEmbedder

    inner = FakeEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "v.sqlite")
    first = cached.embed(["def a(): pass", "class B: pass", "def a(): pass"])
    assert (cached.hits, cached.misses) == (0, 3)
    again = CachedEmbedder(FakeEmbedder(), tmp_path / "v.sqlite")
    second = again.embed(["class B: pass", "def a(): pass", "new text"])
    assert (again.hits, again.misses) == (2, 1)
    np.testing.assert_array_equal(second[:2], first[[1, 0]])
    np.testing.assert_array_equal(second[2], inner.embed(["new text"])[0])
    np.testing.assert_array_equal(cached.embed_queries(["q"]), inner.embed_queries(["q"]))
    again.embed(["q"])
    assert again.misses == 2  # the query embedded above was not stored
    int8 = CachedEmbedder(FakeEmbedder(), tmp_path / "v.sqlite", "int8")
    int8.embed(["class B: pass"])
    assert (int8.hits, int8.misses) == (0, 1)  # int8 vectors are other vectors: never the float ones
    cached.close()
    again.close()
    int8.close()
