"""Mine one corpus's bug-report pairs from a local git directory (run once, by hand).

Input: a JSON list of candidate reports collected by hand from the repository's issue
threads, each ``{"url", "title", "body"}`` and either ``"commit"`` (the fixing commit the
thread names) or ``"pr"`` (the pull request whose description says it fixes the issue),
optionally ``"link_note"`` (how the thread links issue and fix, when it is not plain).
Without ``--candidates`` the committed file's own reports and dropped candidates are read
again, so the file can be rebuilt from itself.

Applies ``bugs.RULES`` against the pinned tree and the repository's history after the
pinned tag, and writes ``benchmarks/quality/bugs/<corpus>.json`` with its provenance:
repository, pinned tag and commit, snapshot commit, the rules, every dropped candidate
with its reason, and this command.

Example:
    .venv/bin/python -m benchmarks.quality.mine_bugs tornado /path/to/tornado.git \\
        --candidates tornado-candidates.json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality.bugs import (
    BUGS_DIR,
    MAX_FILES,
    MIN_PRESENT,
    RULES,
    issue_number,
    present_share,
    trim_body,
)
from benchmarks.quality.corpora import fetch_corpus, read_corpus
from benchmarks.quality.repo_corpora import REPO_CORPORA, RepoCorpus
from benchmarks.quality.roles import IMPLEMENTATION, file_role

SOURCE = (
    "issue text: the thread's opening description as stored by a public index of GitHub "
    "threads (where that index's excerpt starts at the first reporting comment, that comment), "
    "trimmed; fixing commit and files from the repository's own history"
)


def _git(git_dir: Path, *args: str) -> str:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True)
    return done.stdout


def _after_tag(git_dir: Path, tag: str) -> list[tuple[str, str, str]]:
    """(sha, date, subject) of every commit after the tag, oldest first."""
    log = _git(git_dir, "log", "--reverse", "--format=%H%x1f%cs%x1f%s", f"{tag}..HEAD")
    return [tuple(line.split("\x1f", 2)) for line in log.splitlines() if line]  # type: ignore[misc]


def find_fix(candidate: Mapping[str, Any], commits: Sequence[tuple[str, str, str]]) -> tuple[str, str] | None:
    """(sha, date) of the candidate's fixing commit among ``commits`` (None when absent):
    its ``commit`` (a prefix), else the squash (``… (#PR)``) or merge commit of its ``pr``."""
    if candidate.get("commit"):
        prefix = str(candidate["commit"])
        return next(((sha, date) for sha, date, _ in commits if sha.startswith(prefix)), None)
    if candidate.get("pr"):
        pr = int(candidate["pr"])
        pattern = re.compile(rf"\(#{pr}\)\s*$|^Merge (pull request )?#{pr}\b")
        return next(((sha, date) for sha, date, subject in commits if pattern.search(subject)), None)
    return None


def _changes(git_dir: Path, sha: str) -> list[tuple[str, str]]:
    parent = f"{sha}^1"
    out = _git(git_dir, "diff", "--name-status", "-M", parent, sha)
    changes: list[tuple[str, str]] = []
    for line in out.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            changes.append((fields[0][0], fields[1]))
    return changes


def _diff_lines(git_dir: Path, sha: str, path: str) -> tuple[list[str], list[str]]:
    """(removed lines, context lines) of the fix's diff of ``path``."""
    out = _git(git_dir, "diff", "-U3", f"{sha}^1", sha, "--", path)
    removed: list[str] = []
    context: list[str] = []
    in_hunk = False
    for line in out.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("-"):
            removed.append(line[1:])
        elif in_hunk and line.startswith(" "):
            context.append(line[1:])
    return removed, context


def mine(
    corpus: RepoCorpus,
    git_dir: Path,
    candidates: Sequence[Mapping[str, Any]],
    files: Mapping[str, bytes],
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The kept reports and the dropped candidates (url, reason) of ``candidates``."""
    commits = _after_tag(git_dir, corpus.tag)
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    seen: set[str] = set()
    for cand in candidates:
        url = str(cand["url"])
        fix = find_fix(cand, commits)
        if fix is None:
            dropped.append({"url": url, "reason": "no fixing commit after the pinned tag"})
            continue
        sha, date = fix
        changes = _changes(git_dir, sha)
        impl = [
            (status, path)
            for status, path in changes
            if file_role(path, files.get(path, b"")[:4096], corpus.roles) == IMPLEMENTATION
        ]
        targets: list[str] = []
        for status, path in impl:
            if status not in "MDR" or path not in files or path in targets:
                continue
            removed, context = _diff_lines(git_dir, sha, path)
            if present_share(removed, context, files[path].decode("utf-8", "replace")) >= MIN_PRESENT:
                targets.append(path)
        reason = None
        if len({p for _, p in changes}) > MAX_FILES:
            reason = f"more than {MAX_FILES} changed files"
        elif not targets:
            reason = "no target (no changed implementation file of the pinned tree with the touched code)"
        elif len(targets) * 2 < len(impl):
            reason = "fewer than half of the changed implementation files kept"
        elif sha in seen:
            reason = "fixing commit seen before"
        if reason:
            dropped.append({"url": url, "reason": reason, "commit": sha[:12]})
            continue
        seen.add(sha)
        entry: dict[str, Any] = {
            "url": url,
            "number": issue_number(url),
            "title": str(cand["title"]).strip(),
            "body": trim_body(str(cand["body"])),
            "link": f"pull request #{cand['pr']}" if cand.get("pr") else "commit named by the thread",
        }
        if cand.get("pr"):
            entry["pr"] = int(cand["pr"])
        if cand.get("link_note"):
            entry["link_note"] = str(cand["link_note"])
        entry |= {"commit": sha[:12], "date": date, "files": targets}
        kept.append(entry)
    return kept, dropped


def _candidates_of(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A committed file's reports and dropped candidates as candidates again."""
    out = [
        {k: r[k] for k in ("url", "title", "body", "pr", "link_note") if k in r}
        | ({} if "pr" in r else {"commit": r["commit"]})
        for r in document.get("reports", [])
    ]
    out += [dict(d["candidate"]) for d in document.get("dropped", []) if "candidate" in d]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Mine one corpus's bug reports and write its bug file."""
    by_name = {c.name: c for c in REPO_CORPORA}
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", choices=sorted(by_name))
    parser.add_argument("git_dir", type=Path, help="a (bare) git directory of the corpus's repository")
    parser.add_argument(
        "--candidates", type=Path, help="JSON list of candidate reports (default: the bug file)"
    )
    args = parser.parse_args(argv)
    corpus = by_name[args.corpus]
    out = BUGS_DIR / f"{corpus.name}.json"
    if args.candidates:
        candidates = json.loads(args.candidates.read_text(encoding="utf-8"))
    else:
        candidates = _candidates_of(json.loads(out.read_text(encoding="utf-8")))
    files = read_corpus(fetch_corpus(corpus.spec), corpus.spec, True)
    kept, dropped = mine(corpus, args.git_dir, candidates, files)
    by_url = {str(c["url"]): c for c in candidates}
    document: dict[str, Any] = {
        "corpus": corpus.name,
        "repository": corpus.repository,
        "pinned_tag": corpus.tag,
        "pinned_commit": _git(args.git_dir, "rev-list", "-n", "1", corpus.tag).strip(),
        "snapshot_commit": _git(args.git_dir, "rev-parse", "HEAD").strip(),
        "source": SOURCE,
        "produced_by": f"python -m benchmarks.quality.mine_bugs {corpus.name} <git dir of {corpus.repository}>",
        "rules": list(RULES),
        "candidates": len(candidates),
        "dropped": [d | {"candidate": by_url[d["url"]]} for d in dropped],
        "reports": kept,
    }
    BUGS_DIR.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"{corpus.name}: {len(kept)} reports from {len(candidates)} candidates; dropped {len(dropped)}; wrote {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
