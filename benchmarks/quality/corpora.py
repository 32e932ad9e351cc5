"""The benchmark corpora: real packages at pinned versions, downloaded once and cached.

Each ``CorpusSpec`` names one artifact on a package registry (PyPI sdist, npm tarball,
Debian ``.deb``), its sha256, and which of its files form the corpus. Files are unpacked
under ``$LODE_BENCH_CACHE`` (default ``~/.cache/lode-bench``), never inside the repo.
Globs match paths relative to the spec's ``root``: ``*`` stays within a folder, ``**/``
spans folders. The quick profile indexes ``include``; the full profile adds
``full_include``.

To bump a pin: change ``version``/``url``, run the benchmark once, and copy the sha256
from the error message after checking it against the registry's own digest (PyPI JSON,
``npm view``, ``apt-cache show``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.quality._fetch import download, iter_archive

__all__ = ["CORPORA", "CorpusSpec", "cache_dir", "fetch_corpus", "read_corpus"]

_DEBIAN = "https://deb.debian.org/debian/pool/main"
_STAMP = ".lode-bench.json"


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    """One pinned package and the files of it that the benchmark indexes."""

    name: str
    """Short corpus name (also the lode project name)."""
    language: str
    """The language of the query units (lode's language name)."""
    registry: str
    """Where the artifact comes from: ``pypi``, ``npm`` or ``debian``."""
    package: str
    """The package name on that registry."""
    version: str
    """The pinned version."""
    url: str
    """The artifact's download URL."""
    sha256: str
    """The artifact's pinned sha256 (hex)."""
    root: str
    """Member path prefix that becomes the corpus root (stripped from paths)."""
    include: tuple[str, ...]
    """Globs (relative to ``root``) of the files indexed by every profile."""
    full_include: tuple[str, ...] = ()
    """Globs of the files added by the full profile."""
    exclude: tuple[str, ...] = ()
    """Globs of files never indexed (tests, generated tables)."""
    inner: str | None = None
    """An archive inside the artifact whose members are the files (the JDK's ``src.zip``)."""

    def wants(self, rel_path: str, full: bool = True) -> bool:
        """True when ``rel_path`` (relative to ``root``) belongs to the corpus of a profile."""
        globs = self.include + self.full_include if full else self.include
        return _matches(rel_path, globs) and not _matches(rel_path, self.exclude)


def _matches(path: str, globs: tuple[str, ...]) -> bool:
    return any(_glob_regex(glob).fullmatch(path) for glob in globs)


@functools.cache
def _glob_regex(glob: str) -> re.Pattern[str]:
    parts = re.split(r"(\*\*/|\*|\?)", glob)
    table = {"**/": "(?:.*/)?", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(table.get(part, re.escape(part)) for part in parts))


_JAVA_QUICK = (
    "ArrayDeque",
    "ArrayList",
    "Base64",
    "BitSet",
    "HexFormat",
    "Objects",
    "Optional",
    "PriorityQueue",
    "Random",
    "StringJoiner",
    "StringTokenizer",
    "Timer",
    "TimerTask",
    "UUID",
)

#: The corpora, one per language (Python, Go, Rust, JavaScript, Java).
CORPORA: tuple[CorpusSpec, ...] = (
    CorpusSpec(
        name="click",
        language="python",
        registry="pypi",
        package="click",
        version="8.1.8",
        url="https://files.pythonhosted.org/packages/b9/2e/"
        "0090cbf739cee7d23781ad4b89a9894a41538e4fcf4c31dcdd705b78eb8b/click-8.1.8.tar.gz",
        sha256="ed53c9d8990d83c2a27deae68e4ee337473f6330c040a31d4225c9574d16096a",
        root="click-8.1.8/",
        include=("src/click/*.py",),
        full_include=("tests/*.py",),
    ),
    CorpusSpec(
        name="cobra",
        language="go",
        registry="debian",
        package="golang-github-spf13-cobra-dev",
        version="1.6.1-1",
        url=f"{_DEBIAN}/g/golang-github-spf13-cobra/golang-github-spf13-cobra-dev_1.6.1-1_all.deb",
        sha256="4f5d20855133319beef3c5b49d3c21a0406f270bf94fb4b6f4d406b691283cb2",
        root="usr/share/gocode/src/github.com/spf13/cobra/",
        include=("*.go", "doc/*.go"),
        exclude=("**/*_test.go",),
    ),
    CorpusSpec(
        name="serde_json",
        language="rust",
        registry="debian",
        package="librust-serde-json-dev",
        version="1.0.87-1",
        url=f"{_DEBIAN}/r/rust-serde-json/librust-serde-json-dev_1.0.87-1_amd64.deb",
        sha256="2d053de630af6649c40a39d9ab6268d5469385289016a1205d0dec196e7b77d2",
        root="usr/share/cargo/registry/serde_json-1.0.87/",
        include=("src/*.rs", "src/io/*.rs", "src/value/*.rs"),
        full_include=("src/**/*.rs",),
    ),
    CorpusSpec(
        name="commander",
        language="javascript",
        registry="npm",
        package="commander",
        version="12.1.0",
        url="https://registry.npmjs.org/commander/-/commander-12.1.0.tgz",
        sha256="56affc6ddafe486f94b428ae2823d059cf60d4dae2f33eaaf1b1ec4306f73173",
        root="package/",
        include=("index.js", "lib/*.js"),
    ),
    CorpusSpec(
        name="java.util",
        language="java",
        registry="debian",
        package="openjdk-17-source",
        version="17.0.19+10-1~deb12u2",
        url=f"{_DEBIAN}/o/openjdk-17/openjdk-17-source_17.0.19+10-1~deb12u2_all.deb",
        sha256="2591b37131025f872f057be99467b45f7fa2aed928c8d779208db9c3239e1190",
        root="java.base/",
        inner="usr/lib/jvm/openjdk-17/lib/src.zip",
        include=tuple(f"java/util/{name}.java" for name in _JAVA_QUICK),
        full_include=("java/util/*.java",),
    ),
)


def cache_dir() -> Path:
    """Where artifacts and unpacked corpora live: ``$LODE_BENCH_CACHE`` or ``~/.cache/lode-bench``."""
    override = os.environ.get("LODE_BENCH_CACHE", "").strip()
    return Path(override).expanduser() if override else Path.home() / ".cache" / "lode-bench"


def _fingerprint(spec: CorpusSpec) -> str:
    facts = [spec.sha256, spec.root, spec.inner, spec.include, spec.full_include, spec.exclude]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:16]


def fetch_corpus(spec: CorpusSpec, cache: Path | None = None) -> Path:
    """The unpacked files of ``spec`` (both profiles), downloading and unpacking them once."""
    cache = cache or cache_dir()
    target = cache / "corpora" / f"{spec.name}-{spec.version}"
    stamp = target / _STAMP
    fingerprint = _fingerprint(spec)
    if stamp.is_file() and json.loads(stamp.read_text()).get("fingerprint") == fingerprint:
        return target
    artifact = download(spec.url, cache / "downloads" / spec.url.rsplit("/", 1)[-1], spec.sha256)
    if target.exists():
        shutil.rmtree(target)
    partial = target.with_name(target.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)

    def keep(member: str) -> bool:
        return member.startswith(spec.root) and spec.wants(member[len(spec.root) :])

    count = 0
    for member, data in iter_archive(artifact, keep, spec.inner):
        path = partial / member[len(spec.root) :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        count += 1
    if count == 0:
        raise FileNotFoundError(f"{spec.name}: no file of {artifact.name} matches the corpus globs")
    (partial / _STAMP).write_text(json.dumps({"fingerprint": fingerprint, "files": count}))
    partial.replace(target)
    return target


def read_corpus(root: Path, spec: CorpusSpec, full: bool) -> dict[str, bytes]:
    """The corpus files of one profile: POSIX path relative to the corpus root → bytes."""
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and rel != _STAMP and spec.wants(rel, full):
            files[rel] = path.read_bytes()
    return files
