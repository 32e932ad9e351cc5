"""Which files of a project are indexed.

Rules, in order: built-in excludes (VCS folders, dependency and build folders), nested
``.gitignore`` and ``.lodeignore`` files (git semantics: the deepest matching pattern
wins, ``.lodeignore`` over ``.gitignore`` in the same folder, an ignored folder hides
everything below it), the project's include/exclude globs, then per-file checks:
symlinks that leave the root or loop, files over the size limit, unreadable files and
known binary types. Every skip is reported with its reason.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from indexer.config import WalkerConfig
from indexer.containment import display_path, outside_reason, real_relative
from indexer.errors import ValidationError
from indexer.limits import MAX_GLOBS, check_items, check_text, quote
from indexer.models import SkippedFile

__all__ = [
    "BUILTIN_EXCLUDED_DIRS",
    "IGNORE_FILES",
    "IgnoreRules",
    "WalkEntry",
    "WalkResult",
    "check_project_fields",
    "walk_project",
]

#: Folder names never descended into.
BUILTIN_EXCLUDED_DIRS: frozenset[str] = frozenset(
    (
        ".git .hg .svn .bzr node_modules bower_components .venv venv .tox .nox __pycache__ .mypy_cache "
        ".pytest_cache .ruff_cache .hypothesis .eggs .gradle .idea .next .nuxt .terraform .cache build dist "
        "target out .lode"
    ).split()
)

#: Files whose patterns are honoured in every folder; ``.lodeignore`` wins over ``.gitignore``.
IGNORE_FILES: tuple[str, ...] = (".gitignore", ".lodeignore")

_BINARY_SUFFIXES: frozenset[str] = frozenset(
    (
        ".png .jpg .jpeg .gif .bmp .ico .webp .tiff .psd .svgz .pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar "
        ".jar .war .whl .egg .so .dll .dylib .a .o .obj .lib .exe .bin .class .pyc .pyo .pyd .wasm "
        ".ttf .otf .woff .woff2 .eot .mp3 .mp4 .wav .ogg .flac .avi .mov .mkv .webm .sqlite .db "
        ".parquet .arrow .lance .npy .npz .pkl .pickle .pt .pth .onnx .safetensors"
    ).split()
)


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """One file to consider for indexing."""

    rel_path: str
    """Path relative to the project root, POSIX separators (undecodable bytes as ``\\xHH``)."""
    abs_path: Path
    """Absolute path to read (may be a symlink inside the root; the name as on disk)."""
    size: int
    """Size in bytes at walk time."""
    mtime: float
    """Modification time (seconds) at walk time."""


@dataclass(slots=True)
class WalkResult:
    """Every indexable file of a project and every file left out, with its reason."""

    files: list[WalkEntry] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


class IgnoreRules:
    """The ignore decision for any path of one project (shared by walker and watcher)."""

    def __init__(self, root: Path, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> None:
        self.root = root
        self._include = GitIgnoreSpec.from_lines(include) if include else None
        self._exclude = GitIgnoreSpec.from_lines(exclude) if exclude else None
        self._specs: dict[str, GitIgnoreSpec | None] = {}
        git_exclude = root / ".git" / "info" / "exclude"
        self._info_exclude = _read_spec([git_exclude])

    @staticmethod
    def check_globs(globs: Sequence[str]) -> None:
        """Raise ValueError naming the first glob that cannot be used as an include/exclude."""
        for glob in globs:
            if not glob.strip() or "\x00" in glob:
                raise ValueError(f"{quote(glob)} is not a usable glob")
            try:
                GitIgnoreSpec.from_lines([glob])
            except (ValueError, TypeError, re.error) as exc:
                raise ValueError(f"{quote(glob)} is not a valid glob: {quote(str(exc))}") from None

    def invalidate(self) -> None:
        """Forget cached ignore files (after a ``.gitignore``, ``.lodeignore`` or
        ``.git/info/exclude`` changed)."""
        self._specs.clear()
        self._info_exclude = _read_spec([self.root / ".git" / "info" / "exclude"])

    def ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        """True if ``rel_path`` (POSIX, relative to the root) or any parent folder is ignored."""
        parts = [p for p in rel_path.split("/") if p]
        for depth in range(1, len(parts)):
            if self.matches("/".join(parts[:depth]), is_dir=True):
                return True
        return bool(parts) and self.matches("/".join(parts), is_dir=is_dir)

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """True if ``rel_path`` itself is ignored (its parents are not checked)."""
        name = rel_path.rsplit("/", 1)[-1]
        if is_dir and name in BUILTIN_EXCLUDED_DIRS:
            return True
        verdict = self._gitignore_verdict(rel_path, is_dir)
        if verdict is not None:
            return verdict
        if self._exclude is not None and _spec_match(self._exclude, rel_path, is_dir):
            return True
        if not is_dir and self._include is not None:
            return not self._include.match_file(rel_path)
        return False

    def _gitignore_verdict(self, rel_path: str, is_dir: bool) -> bool | None:
        parents = rel_path.split("/")[:-1]
        for depth in range(len(parents), -1, -1):
            base = "/".join(parents[:depth])
            spec = self._spec_for(base)
            if spec is None:
                continue
            sub = rel_path[len(base) + 1 :] if base else rel_path
            result = _spec_check(spec, sub, is_dir)
            if result is not None:
                return result
        if self._info_exclude is not None:
            return _spec_check(self._info_exclude, rel_path, is_dir)
        return None

    def _spec_for(self, base: str) -> GitIgnoreSpec | None:
        if base not in self._specs:
            folder = self.root / base if base else self.root
            self._specs[base] = _read_spec([folder / n for n in IGNORE_FILES])
        return self._specs[base]


def _read_spec(paths: Sequence[Path]) -> GitIgnoreSpec | None:
    lines: list[str] = []
    for path in paths:
        try:
            lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            continue
    return GitIgnoreSpec.from_lines(lines) if lines else None


def _spec_check(spec: GitIgnoreSpec, rel: str, is_dir: bool) -> bool | None:
    result = spec.check_file(rel + "/" if is_dir else rel)
    if result.include is None and is_dir:
        result = spec.check_file(rel)
    return result.include


def _spec_match(spec: GitIgnoreSpec, rel: str, is_dir: bool) -> bool:
    return bool(spec.match_file(rel + "/" if is_dir else rel) or spec.match_file(rel))


def walk_project(
    root: Path,
    config: WalkerConfig | None = None,
    rules: IgnoreRules | None = None,
    under: Sequence[str] = (),
) -> WalkResult:
    """List the indexable files under ``root`` (or only under the ``under`` sub-paths)."""
    config = config or WalkerConfig()
    root = root.resolve()
    rules = rules or IgnoreRules(root)
    result = WalkResult()
    seen_dirs: set[tuple[int, int]] = set()
    starts = [real_relative(root, p.strip("/")) for p in under] or [""]
    for start in starts:
        if start and not os.path.lexists(root / start):
            continue  # a path that vanished: nothing to walk (its rows are removed by the diff)
        if start and rules.ignored(start, is_dir=(root / start).is_dir()):
            continue
        reason = outside_reason(root, start, config.follow_symlinks) if start else None
        if reason is not None:  # an explicit path is held to the walk's rule for symlinks
            result.skipped.append(SkippedFile(display_path(start), reason))
            continue
        for entry in _iter_tree(root, start, rules, config, seen_dirs, result.skipped):
            result.files.append(entry)
    result.files.sort(key=lambda e: e.rel_path)
    return result


def _iter_tree(
    root: Path,
    start: str,
    rules: IgnoreRules,
    config: WalkerConfig,
    seen_dirs: set[tuple[int, int]],
    skipped: list[SkippedFile],
) -> Iterator[WalkEntry]:
    start_path = root / start if start else root
    if start_path.is_file() or (start_path.is_symlink() and not start_path.is_dir()):
        entry = _file_entry(root, start, start_path, config, skipped)
        if entry is not None:
            yield entry
        return
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        folder = root / rel_dir if rel_dir else root
        try:
            st = folder.stat()
            key = (st.st_dev, st.st_ino)
            if key in seen_dirs:
                skipped.append(SkippedFile(display_path(rel_dir), "symlink loop"))
                continue
            seen_dirs.add(key)
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(SkippedFile(display_path(rel_dir) or ".", f"unreadable folder ({exc.strerror})"))
            continue
        for item in entries:
            rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
            yield from _visit(root, rel, item, rules, config, stack, skipped)


def _visit(
    root: Path,
    rel: str,
    item: os.DirEntry[str],
    rules: IgnoreRules,
    config: WalkerConfig,
    stack: list[str],
    skipped: list[SkippedFile],
) -> Iterator[WalkEntry]:
    is_link = item.is_symlink()
    if is_link and not _link_inside(root, Path(item.path), config, rel, skipped):
        return
    try:
        is_dir = item.is_dir()
    except OSError:
        is_dir = False
    if is_dir:
        if not rules.matches(rel, is_dir=True):
            stack.append(rel)
        return
    if rules.matches(rel, is_dir=False):
        return
    entry = _file_entry(root, rel, Path(item.path), config, skipped)
    if entry is not None:
        yield entry


def _link_inside(root: Path, path: Path, config: WalkerConfig, rel: str, skipped: list[SkippedFile]) -> bool:
    if not config.follow_symlinks:
        skipped.append(SkippedFile(display_path(rel), "symlink (not followed)"))
        return False
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        skipped.append(SkippedFile(display_path(rel), "broken or looping symlink"))
        return False
    if target != root and root not in target.parents:
        skipped.append(SkippedFile(display_path(rel), "symlink leaves the project root"))
        return False
    return True


def _file_entry(
    root: Path, rel: str, path: Path, config: WalkerConfig, skipped: list[SkippedFile]
) -> WalkEntry | None:
    try:
        st = path.stat()
    except OSError as exc:
        skipped.append(SkippedFile(display_path(rel), f"unreadable ({exc.strerror})"))
        return None
    reason = _file_problem(rel, path, st, config)
    if reason is not None:
        skipped.append(SkippedFile(display_path(rel), reason))
        return None
    return WalkEntry(rel_path=display_path(rel), abs_path=root / rel, size=st.st_size, mtime=st.st_mtime)


def _file_problem(rel: str, path: Path, st: os.stat_result, config: WalkerConfig) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if Path(rel).suffix.lower() in _BINARY_SUFFIXES:
        return "binary file type"
    if st.st_size > config.max_file_bytes:
        return f"too large ({st.st_size} bytes > {config.max_file_bytes})"
    if not os.access(path, os.R_OK):
        return "unreadable (permission denied)"
    return None


def check_project_fields(name: str | None, include: Sequence[str], exclude: Sequence[str]) -> None:
    """A project's name and include/exclude globs as every front end takes them, or a
    ValidationError naming the field."""
    if name is not None:
        check_text("name", name)
    for name_of, globs in (("include", include), ("exclude", exclude)):
        check_items(name_of, globs, MAX_GLOBS)
        try:
            IgnoreRules.check_globs(globs)
        except ValueError as exc:
            raise ValidationError(name_of, str(exc)) from None
