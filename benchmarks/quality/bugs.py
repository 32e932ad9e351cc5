"""The bug-report set of the whole-repository benchmark: an issue report → the files its fix changed.

Each report is a real issue of the corpus's public repository, as its reporter wrote it
(title and body: the traceback, the failing snippet, expected vs actual, versions; long
logs trimmed), paired with the commit that fixed it and the implementation files that
commit changed. Mined once (``benchmarks.quality.mine_bugs``) and committed as a small
JSON file per corpus under ``benchmarks/quality/bugs/``; the benchmark only reads them.

Rules (``RULES``, recorded in each file), applied to a hand-collected list of candidate
reports (an issue URL, its text, and the fixing commit or pull request named by the
thread):

* the fixing commit is the one the thread names (a commit, or the pull request whose
  description says ``fixes #N`` for the issue; its squash commit ``… (#PR)`` or merge
  ``Merge pull request #PR``) and must lie after the pinned tag (``git log <tag>..<head>``):
  the tree asked is the pinned one, so the report describes code the tree still has;
* its changed files: the diff against its first parent (merges included), statuses
  modified, deleted or renamed-from; targets are those the benchmark's role rules call
  implementation and that exist in the pinned tree;
* *touched code present*: a target is kept only when at least half of the lines the fix
  removed from it (or, for a pure addition, of the context lines around it) occur in the
  pinned file; a fix of code written after the pin (a file kept under the same name) is
  not a question the pinned tree can answer;
* dropped: no fixing commit found after the tag; no target; fewer than half of the
  changed implementation files kept; the same fixing commit seen before (first report
  kept); more than ``MAX_FILES`` changed files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BUGS_DIR",
    "MAX_BODY_CHARS",
    "MAX_FILES",
    "RULES",
    "BugReport",
    "issue_number",
    "load_bug_reports",
    "present_share",
    "report_text",
    "trim_body",
]

BUGS_DIR = Path(__file__).parent / "bugs"
MAX_FILES = 12
MAX_BODY_CHARS = 1800
"""Body limit: title and body stay within the search API's 2,000-character query limit."""
#: Share of a fix's removed (or context) lines that must occur in the pinned file.
MIN_PRESENT = 0.5
_MIN_LINE_CHARS = 3
_ISSUE_URL = re.compile(r"/issues/(\d+)$")
_WORDISH = re.compile(r"\w")

#: The mining rules in words, recorded in every bug file.
RULES = (
    "candidates: issue reports of the repository, text as the reporter wrote it (title and body; "
    f"bodies over {MAX_BODY_CHARS} characters trimmed, tracebacks kept)",
    "fixing commit: the commit the thread names, or the squash/merge commit of the pull request "
    "whose description says it fixes the issue; it must lie in git log <pinned tag>..<snapshot head>",
    "changed files: diff against the first parent; modified, deleted or renamed-from",
    "targets: changed files that exist in the pinned tree and that the benchmark's role rules call "
    "implementation",
    f"touched code present: a target is kept when at least {MIN_PRESENT:.0%} of the lines the fix "
    "removed from it (for a pure addition: its context lines) occur in the pinned file",
    f"dropped: no fixing commit after the tag; more than {MAX_FILES} changed files; no target; "
    "fewer than half of the changed implementation files kept; a fixing commit seen before",
)


@dataclass(frozen=True, slots=True)
class BugReport:
    """One issue report and the implementation files its fix changed."""

    corpus: str
    url: str
    title: str
    body: str
    commit: str
    files: tuple[str, ...]

    @property
    def number(self) -> int:
        """The issue number (from its URL)."""
        return issue_number(self.url)

    @property
    def query(self) -> str:
        """The text asked: title, blank line, body."""
        return report_text(self.title, self.body)


def issue_number(url: str) -> int:
    """The number of a GitHub issue URL (``…/issues/123`` → 123)."""
    match = _ISSUE_URL.search(url.rstrip("/"))
    if not match:
        raise ValueError(f"not a GitHub issue URL: {url!r}")
    return int(match.group(1))


def report_text(title: str, body: str) -> str:
    """A report as a query: its title, a blank line and its body."""
    return f"{title.strip()}\n\n{body.strip()}".strip()


def trim_body(body: str, limit: int = MAX_BODY_CHARS) -> str:
    """The body cut to ``limit`` characters at a line end (a traceback's head is kept)."""
    text = body.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + "\n…"


def _meaningful(lines: Iterable[str]) -> list[str]:
    out = []
    for line in lines:
        text = line.strip()
        if len(text) >= _MIN_LINE_CHARS and _WORDISH.search(text):
            out.append(text)
    return out


def present_share(removed: Sequence[str], context: Sequence[str], pinned: str) -> float:
    """Share of the fix's removed lines (or, when it removed none, its context lines) found
    in the pinned file's text, compared stripped; lines without a word character or shorter
    than 3 characters do not count. 0.0 when nothing counts."""
    lines = _meaningful(removed) or _meaningful(context)
    if not lines:
        return 0.0
    have = {line.strip() for line in pinned.splitlines()}
    return sum(1 for line in lines if line in have) / len(lines)


def load_bug_reports(corpus: str, directory: Path = BUGS_DIR) -> list[BugReport]:
    """The committed reports of ``corpus`` (empty when it has no bug file)."""
    path = directory / f"{corpus}.json"
    if not path.is_file():
        return []
    data: Mapping[str, object] = json.loads(path.read_text(encoding="utf-8"))
    reports = data.get("reports", [])
    assert isinstance(reports, list)
    return [
        BugReport(corpus, r["url"], r["title"], r["body"], r["commit"], tuple(r["files"])) for r in reports
    ]
