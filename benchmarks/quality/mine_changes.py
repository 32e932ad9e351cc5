"""Mine one corpus's change-description pairs from a local git directory (run once, by hand).

Reads ``git log --no-merges --reverse --name-status <tag>..<head>`` of the corpus's
repository (a clone or the bare snapshot of it), applies ``changes.mine_pairs`` against
the pinned tree and writes ``benchmarks/quality/changes/<corpus>.json`` with its
provenance: repository, pinned tag and commit, snapshot commit, date range, the rules,
how many commits each rule dropped, and this command.

Example:
    .venv/bin/python -m benchmarks.quality.mine_changes tornado /path/to/tornado.git
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality.changes import CHANGES_DIR, LOG_FORMAT, RULES, mine_pairs, parse_log
from benchmarks.quality.corpora import fetch_corpus, read_corpus
from benchmarks.quality.repo_corpora import REPO_CORPORA


def _git(git_dir: Path, *args: str) -> str:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True)
    return done.stdout


def main(argv: Sequence[str] | None = None) -> int:
    """Mine one corpus's pairs from a local git directory and write its pair file."""
    by_name = {c.name: c for c in REPO_CORPORA}
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", choices=sorted(by_name))
    parser.add_argument("git_dir", type=Path, help="a (bare) git directory of the corpus's repository")
    parser.add_argument("--head", default="HEAD", help="the last commit to read (default: HEAD)")
    args = parser.parse_args(argv)
    corpus = by_name[args.corpus]
    files = read_corpus(fetch_corpus(corpus.spec), corpus.spec, True)
    tree = {path: data[:4096] for path, data in files.items()}
    head = _git(args.git_dir, "rev-parse", args.head).strip()
    pinned = _git(args.git_dir, "rev-list", "-n", "1", corpus.tag).strip()
    log = _git(
        args.git_dir,
        "log",
        "--no-merges",
        "--reverse",
        "--name-status",
        f"--format={LOG_FORMAT}",
        f"{corpus.tag}..{head}",
    )
    commits = parse_log(log)
    pairs, dropped = mine_pairs(corpus.name, commits, tree, corpus.roles)
    document: dict[str, Any] = {
        "corpus": corpus.name,
        "repository": corpus.repository,
        "pinned_tag": corpus.tag,
        "pinned_commit": pinned,
        "snapshot_commit": head,
        "date_range": [commits[0].date, commits[-1].date] if commits else [],
        "commits_read": len(commits),
        "produced_by": f"python -m benchmarks.quality.mine_changes {corpus.name} <git dir of {corpus.repository}>",
        "rules": list(RULES),
        "dropped": dict(sorted(dropped.items())),
        "pairs": [
            {
                "commit": p.commit,
                "date": p.date,
                "subject": p.subject,
                "query": p.query,
                "files": list(p.files),
            }
            for p in pairs
        ],
    }
    CHANGES_DIR.mkdir(parents=True, exist_ok=True)
    out = CHANGES_DIR / f"{corpus.name}.json"
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"{corpus.name}: {len(pairs)} pairs from {len(commits)} commits; dropped {dict(dropped)}; wrote {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
