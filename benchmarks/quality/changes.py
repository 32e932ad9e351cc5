"""Set (b) of the whole-repository benchmark: change descriptions → the files they changed.

Mined once from a project's public history (a local bare git directory, e.g. a snapshot
of the GitHub repository) and committed as a small JSON file per corpus under
``benchmarks/quality/changes/``; the benchmark only reads those files. Each pair is the
subject of a real commit made after the pinned version, cleaned, and the implementation
files it changed that exist in the pinned tree.

Rules (``RULES``, recorded in each file), applied to ``git log --no-merges
--name-status <tag>..<head>``:

* the subject is cleaned: a trailing ``(#123)``, leading ``[IO-892]``/``[skip ci]``
  tags and a conventional-commit type are removed (``fix(reporter): x`` → ``reporter: x``);
* dropped: releases and version bumps, dependency updates, CI, docs/typo/comment-only,
  formatting/lint, reverts, chores and test-only subjects (by the words in ``_DROP``);
  commits touching more than ``MAX_FILES`` files; cleaned subjects of fewer than
  ``MIN_WORDS`` words; commits without an implementation file (``roles.file_role``)
  among the changed files that exist in the pinned tree; commits where fewer than half
  of the changed implementation files exist in the pinned tree (the subject may describe
  code the pinned tree lacks); repeated subjects (first kept).

``benchmarks.quality.mine_changes`` runs this on a git directory and writes the file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.quality.roles import IMPLEMENTATION, file_role

__all__ = [
    "CHANGES_DIR",
    "LOG_FORMAT",
    "MAX_FILES",
    "MIN_WORDS",
    "RULES",
    "ChangePair",
    "Commit",
    "clean_subject",
    "drop_reason",
    "load_change_pairs",
    "mine_pairs",
    "parse_log",
]

CHANGES_DIR = Path(__file__).parent / "changes"
MAX_FILES = 8
MIN_WORDS = 4
_SEPARATOR = "\x1e"
LOG_FORMAT = f"{_SEPARATOR}%H%x1f%cs%x1f%s"
_PR_NUMBER = re.compile(r"\s*\((#\d+(,\s*#\d+)*|[A-Z]+-\d+)\)\.?\s*$")
_TAGS = re.compile(r"^(\s*\[[^\]]*\]\s*)+")
_CONVENTIONAL = re.compile(r"^(?P<type>[a-z]+)(\((?P<scope>[^)]*)\))?!?:\s*", re.IGNORECASE)
_CONVENTIONAL_TYPES = frozenset(
    {
        "fix",
        "feat",
        "feature",
        "refactor",
        "perf",
        "chore",
        "build",
        "test",
        "tests",
        "docs",
        "doc",
        "style",
        "ci",
        "revert",
        "deps",
    }
)
_DROPPED_TYPES = {
    "chore": "chore",
    "build": "build",
    "ci": "ci",
    "docs": "docs",
    "doc": "docs",
    "style": "style",
    "test": "tests",
    "tests": "tests",
    "revert": "revert",
    "deps": "dependencies",
}
#: (reason, pattern over the raw subject) — the first that matches drops the commit.
_DROP: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("revert", re.compile(r"^\s*(revert|reapply)\b", re.I)),
    (
        "release",
        re.compile(
            r"\b(release[sd]?|releasing|version bump|bump(ed)? (the )?version|prepare for|"
            r"next (development )?version|changelog|release notes)\b|^\s*v?\d+\.\d+(\.\d+)?\b",
            re.I,
        ),
    ),
    (
        "dependencies",
        re.compile(
            r"\b(deps|dependabot|dependenc(y|ies)|renovate|bump \S+ from|update \S+ to v?\d|"
            r"upgrade \S+ to v?\d|requirements|lockfile|package-lock|go\.(mod|sum)|cargo\.lock|"
            r"commons-parent|msrv)\b|\b(update|upgrade|bump)\w*\b.*\b(to (the )?latest|to v?\d+(\.\d+)+|packages)\b|"
            r"\b(update|upgrade|bump)\w* to \S+ v?\d+(\.\d+)+",
            re.I,
        ),
    ),
    (
        "ci",
        re.compile(
            r"\b(ci|github actions?|workflows?|travis|appveyor|circleci|cirrus|codecov|coverage|"
            r"cibuildwheel|wheels?|codeql|sonar|jenkins)\b",
            re.I,
        ),
    ),
    (
        "docs",
        re.compile(
            r"\b(typos?|spelling|misspell\w*|docs?|documentation|documented|readme|javadocs?|"
            r"docstrings?|comments?|jsdoc|rustdoc|godoc|contributing|license|copyright)\b",
            re.I,
        ),
    ),
    (
        "style",
        re.compile(
            r"\b(lint(er|ing)?|clippy|rustfmt|fmt|format(ting)?|isort|black|pyupgrade|eslint|"
            r"prettier|noqa|whitespace|checkstyle|pmd|spotless|sort members|reformat\w*|"
            r"cosmetics?|nits?)\b",
            re.I,
        ),
    ),
    (
        "tests",
        re.compile(
            r"^\s*((add|fix|improve|update|refactor|more|missing|new|extra|better)\s+){0,3}"
            r"(unit\s+|integration\s+)?tests?\b",
            re.I,
        ),
    ),
)
#: The filtering rules in words, recorded in every pair file.
RULES = (
    "git log --no-merges --name-status <tag>..<snapshot head>, oldest first",
    "subject cleaned: trailing (#123) or (JIRA-1), leading [tags] and conventional-commit types removed",
    "dropped by subject: reverts, releases/version bumps/changelogs, dependency updates, CI, "
    "docs/typos/comments, formatting/lint, chores, test-only (conventional type or words)",
    f"dropped: more than {MAX_FILES} changed files; fewer than {MIN_WORDS} words after cleaning",
    "targets: the changed (modified, deleted or renamed-from) files that exist in the pinned tree "
    "and that the benchmark's role rules call implementation",
    "dropped: no target; fewer than half of the changed implementation files exist in the pinned tree",
    "dropped: a cleaned subject seen before (case-insensitive)",
)


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of the log: its id, date, subject and changed files."""

    sha: str
    date: str
    subject: str
    changes: tuple[tuple[str, str], ...]
    """(status letter, path) per changed file; a rename gives its old path (``R``) and its
    new one (``A``)."""


@dataclass(frozen=True, slots=True)
class ChangePair:
    """One change description and the implementation files it changed."""

    corpus: str
    commit: str
    date: str
    subject: str
    """The commit subject as written."""
    query: str
    """The cleaned subject asked as the query."""
    files: tuple[str, ...]

    @property
    def id(self) -> str:
        """Stable identity across runs: corpus and commit."""
        return f"{self.corpus}:change:{self.commit}"


def parse_log(text: str) -> list[Commit]:
    """Commits of ``git log --name-status --format=<LOG_FORMAT>`` output, in its order."""
    commits: list[Commit] = []
    for block in text.split(_SEPARATOR):
        if not block.strip():
            continue
        header, *lines = block.split("\n")
        sha, date, subject = header.split("\x1f", 2)
        changes: list[tuple[str, str]] = []
        for line in lines:
            fields = line.split("\t")
            if len(fields) < 2 or not fields[0]:
                continue
            status = fields[0][0]
            if status in "RC" and len(fields) >= 3:
                changes += [("R" if status == "R" else "M", fields[1]), ("A", fields[2])]
            else:
                changes.append((status, fields[1]))
        commits.append(Commit(sha, date, subject.strip(), tuple(changes)))
    return commits


def _words(text: str) -> int:
    return sum(1 for token in text.split() if re.search(r"[^\W\d_]", token))


def clean_subject(subject: str) -> str:
    """The subject without PR numbers, leading ``[tags]`` and a conventional-commit type."""
    text = _PR_NUMBER.sub("", _TAGS.sub("", subject)).strip()
    match = _CONVENTIONAL.match(text)
    if match and match.group("type").lower() in _CONVENTIONAL_TYPES:
        scope = (match.group("scope") or "").strip()
        text = (f"{scope}: " if scope else "") + text[match.end() :]
    return text.strip().rstrip(".").strip()


def drop_reason(commit: Commit) -> str | None:
    """Why a commit's subject or size rules it out (None when it may make a pair)."""
    subject = _TAGS.sub("", commit.subject)
    match = _CONVENTIONAL.match(subject)
    if match and match.group("type").lower() in _DROPPED_TYPES:
        return _DROPPED_TYPES[match.group("type").lower()]
    for reason, pattern in _DROP:
        if pattern.search(subject):
            return reason
    if len({path for _, path in commit.changes}) > MAX_FILES:
        return "too_many_files"
    if _words(clean_subject(commit.subject)) < MIN_WORDS:
        return "short_subject"
    return None


def _targets(
    commit: Commit, tree: Mapping[str, bytes], overrides: Sequence[tuple[str, str]]
) -> tuple[list[str], int]:
    """(changed implementation files in the pinned tree, changed implementation files in all)."""
    found: list[str] = []
    implementation = 0
    for status, path in commit.changes:
        if file_role(path, tree.get(path, b""), overrides) != IMPLEMENTATION:
            continue
        implementation += 1
        if status in "MDR" and path in tree and path not in found:
            found.append(path)
    return found, implementation


def mine_pairs(
    corpus: str,
    commits: Sequence[Commit],
    tree: Mapping[str, bytes],
    overrides: Sequence[tuple[str, str]] = (),
) -> tuple[list[ChangePair], Counter[str]]:
    """The pairs of ``commits`` against the pinned ``tree`` (path → first bytes), and how
    many commits each rule dropped."""
    pairs: list[ChangePair] = []
    dropped: Counter[str] = Counter()
    seen: set[str] = set()
    for commit in commits:
        reason = drop_reason(commit)
        targets, implementation = ([], 0) if reason else _targets(commit, tree, overrides)
        query = clean_subject(commit.subject)
        if reason is None and not targets:
            reason = "no_target"
        elif reason is None and len(targets) * 2 < implementation:
            reason = "targets_missing"
        elif reason is None and query.lower() in seen:
            reason = "duplicate"
        if reason:
            dropped[reason] += 1
            continue
        seen.add(query.lower())
        pairs.append(ChangePair(corpus, commit.sha[:12], commit.date, commit.subject, query, tuple(targets)))
    return pairs, dropped


def load_change_pairs(corpus: str, directory: Path = CHANGES_DIR) -> list[ChangePair]:
    """The committed pairs of ``corpus`` (empty when it has no pair file)."""
    path = directory / f"{corpus}.json"
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        ChangePair(corpus, p["commit"], p["date"], p["subject"], p["query"], tuple(p["files"]))
        for p in data["pairs"]
    ]
