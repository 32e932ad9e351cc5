"""The whole-repository corpora: complete upstream trees at pinned versions, one per language.

Each ``RepoCorpus`` wraps a ``CorpusSpec`` (same download, sha256 check and fetch-once
cache as the source-only benchmark) whose globs take the whole tree: source, tests,
docs, examples, changelogs and whatever generated or vendored files upstream ships. It
adds the public repository whose later history gave the change-description pairs
(``benchmarks/quality/changes/<name>.json``), the tag the pinned version was cut from,
and why the corpus was chosen.

Debian ``.orig.tar.*`` source tarballs are the upstream release trees (GitHub tarballs
for these projects). Rust is the exception: the mirror reachable here serves no Rust
``.orig`` tarball, so nix comes from Debian's ``librust-nix-dev`` package, which holds
the crate as published (source, tests, changelog; no CI folder); ``debian/`` (Debian's
own patches) is left out.

None of these repositories is held out for independent evaluation (requests, regex,
date-fns, httpx, axum, CoSQA, SWE-bench-family repositories).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.quality.corpora import CorpusSpec

__all__ = ["REPO_CORPORA", "RepoCorpus"]

_DEBIAN = "https://deb.debian.org/debian/pool/main"
_EVERYTHING = ("**/*",)


@dataclass(frozen=True, slots=True)
class RepoCorpus:
    """One complete upstream tree and where its change history comes from."""

    spec: CorpusSpec
    """The pinned artifact (its globs take the whole tree)."""
    repository: str
    """The public repository (URL) whose history after ``tag`` gave set (b)."""
    tag: str
    """The upstream tag the pinned release was cut from."""
    why: str
    """Why this corpus was chosen."""
    roles: tuple[tuple[str, str], ...] = ()
    """Role overrides for this tree: (``fnmatch`` glob, role), tried before ``roles``' rules."""

    @property
    def name(self) -> str:
        """The corpus name (also the lode project name)."""
        return self.spec.name

    @property
    def language(self) -> str:
        """The corpus's main language (lode's name)."""
        return self.spec.language


def _debian_orig(
    name: str, language: str, package: str, version: str, file: str, sha256: str, root: str
) -> CorpusSpec:
    return CorpusSpec(
        name=name,
        language=language,
        registry="debian",
        package=package,
        version=version,
        url=f"{_DEBIAN}/{package[0]}/{package}/{file}",
        sha256=sha256,
        root=root,
        include=_EVERYTHING,
    )


#: The corpora: Python, JavaScript, Go, Rust, Java.
REPO_CORPORA: tuple[RepoCorpus, ...] = (
    RepoCorpus(
        spec=_debian_orig(
            "tornado",
            "python",
            "python-tornado",
            "6.4.2",
            "python-tornado_6.4.2.orig.tar.gz",
            "a45eec6f5fc01ed78b01a9dafceb81bf0d0440309bd478a9daadfa7c87bdd893",
            "tornado-6.4.2/",
        ),
        repository="https://github.com/tornadoweb/tornado",
        tag="v6.4.2",
        why=(
            "A medium Python library whose tree mixes ~40 documented modules with twice as many "
            "test files inside the package (tornado/test/), Sphinx docs with ~60 release-note "
            "pages, demos and maintenance scripts; 200+ commits after the pin."
        ),
    ),
    RepoCorpus(
        spec=_debian_orig(
            "mocha",
            "javascript",
            "node-mocha",
            "10.7.2",
            "node-mocha_10.7.2+ds1+~cs33.1.11.orig.tar.xz",
            "cf375caa7c7d2f8b9d93c60e10f43d4068ed5f83220a3f3187ffba26cc23b075",
            "mocha-10.7.2/",
        ),
        repository="https://github.com/mochajs/mocha",
        roles=(("bin/*", "implementation"),),
        tag="v10.7.2",
        why=(
            "A JavaScript tool with JSDoc-documented lib/ (~60 files) outnumbered by its tests "
            "and fixtures (~350 files), a docs site and examples: the case where tests crowd "
            "out the code; 400+ commits after the pin."
        ),
    ),
    RepoCorpus(
        spec=_debian_orig(
            "client_golang",
            "go",
            "golang-github-prometheus-client-golang",
            "1.21.1",
            "golang-github-prometheus-client-golang_1.21.1.orig.tar.gz",
            "9e34682ae79f80eb17afe73d1d7800574af63d63af5c4a0be859751e07446b42",
            "client_golang-1.21.1/",
        ),
        repository="https://github.com/prometheus/client_golang",
        tag="v1.21.1",
        why=(
            "A Go library with thoroughly documented packages, *_test.go beside every file, "
            "examples, tutorials, a vendored copy of gddo under internal/github.com and "
            "generated code; 200+ commits after the pin."
        ),
    ),
    RepoCorpus(
        spec=CorpusSpec(
            name="nix",
            language="rust",
            registry="debian",
            package="librust-nix-dev",
            version="0.26.1-3",
            url=f"{_DEBIAN}/r/rust-nix/librust-nix-dev_0.26.1-3_amd64.deb",
            sha256="ab9cae62972e33c451a053b31815e98ddb951d2c661e12970c2a2f037b5dedc8",
            root="usr/share/cargo/registry/nix-0.26.1/",
            include=_EVERYTHING,
            exclude=("debian/**/*", ".cargo-checksum.json"),
        ),
        repository="https://github.com/nix-rust/nix",
        tag="v0.26.1",
        why=(
            "A Rust crate of many documented Unix wrappers (src/, ~60 files) with an "
            "integration-test tree (test/), a long CHANGELOG and inline test modules; the "
            "busiest history of the five (500+ commits after the pin)."
        ),
    ),
    RepoCorpus(
        spec=_debian_orig(
            "commons-io",
            "java",
            "commons-io",
            "2.19.0",
            "commons-io_2.19.0.orig.tar.xz",
            "e15d8c5afb162423499afca525642826194f9fe375252ef435c0ec0c49fdc0d3",
            "commons-io-2.19.0-src/",
        ),
        repository="https://github.com/apache/commons-io",
        tag="rel/commons-io-2.19.0",
        why=(
            "A Java library with Javadoc on nearly every public member (~270 main classes), "
            "more test classes than main ones, a Maven site (src/site) and release notes; "
            "700+ commits after the pin."
        ),
    ),
)
