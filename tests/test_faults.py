"""Fault injection: SIGKILL an index run right after each of its commits, in both phases, then
check that the next run leaves a store with nothing duplicate, orphan, missing, stale or
unembedded, identical to a clean index of the same files, chunks and symbol rows alike
(issues 28 and 27): a first index, edits, and a full re-chunk of unchanged files (the case
where only the write intents show that chunks and symbols are out of step).

Each run is a real process (``tests/faults/forkserver.py`` forks it from one that imported
lode once: a run that imports LanceDB afresh spent half its time doing so)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner

from indexer.api import Lode
from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder

pytestmark = pytest.mark.slow

_FAULTS = Path(__file__).parent / "faults"
#: Kill points per scenario: after every commit, or spread evenly over them past this many.
_KILLS = 48


def _write_repo(root: Path, version: int) -> None:
    """Version 1: 40 modules; version 2: edits, deletes, additions and renames of version 1."""
    if root.exists():
        shutil.rmtree(root)
    for i in range(40):
        if version == 2 and i % 10 == 3:
            continue  # deleted
        name = f"mod_{i}.py" if not (version == 2 and i % 10 == 5) else f"renamed_{i}.py"
        extra = f"\n\ndef added_{i}():\n    return {i} * 2\n" if version == 2 and i % 10 == 7 else ""
        folder = root / f"pkg{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(
            f'"""Module {i}."""\n\n\nclass Handler{i}:\n    def run(self, value):\n'
            f"        return value + {i}\n\n\ndef helper_{i}(items):\n"
            f"    return [item * {i} for item in items]\n{extra}"
        )
    if version == 2:
        for i in range(5):
            (root / "new").mkdir(exist_ok=True)
            (root / "new" / f"fresh_{i}.py").write_text(f"def fresh_{i}():\n    return 'fresh {i}'\n")
    (root / "README.md").write_text(f"# Demo v{version}\n\nHandlers and helpers.\n")


def _env(db: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        # this checkout first (the editable install may point at another), then the faults
        "PYTHONPATH": os.pathsep.join((str(_FAULTS.parent.parent), str(_FAULTS))),
        "LODE_DB": str(db),
        "LODE_MODEL": "fake-hash-256",
        "LODE_PORT": "9",  # no server there: the run is in-process
        **extra,
    }


class Runs:
    """``lode index`` runs, each a child process of the fork server (``forkserver.py``)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.server = subprocess.Popen(
            [sys.executable, str(_FAULTS / "forkserver.py")],
            env=_env(tmp / "no-db"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def __call__(self, repo: Path, db: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[bytes]:
        """``lode index REPO --json ARGS`` on ``db`` with ``extra`` in its environment."""
        command = ["index", str(repo), "--name", "demo", "--json", *args]
        out, err = self.tmp / "run.out", self.tmp / "run.err"
        job = {"args": command, "env": {"LODE_DB": str(db), **extra}, "stdout": str(out), "stderr": str(err)}
        stdin, stdout = self._pipes()
        stdin.write(json.dumps(job) + "\n")
        stdin.flush()
        answer = stdout.readline()
        assert answer, f"the fork server ended (exit {self.server.wait()})"
        code = json.loads(answer)["returncode"]
        return subprocess.CompletedProcess(command, code, out.read_bytes(), err.read_bytes())

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.server.stdin is not None
        assert self.server.stdout is not None
        return self.server.stdin, self.server.stdout

    def close(self) -> None:
        """End the fork server (it leaves when its stdin closes)."""
        stdin, stdout = self._pipes()
        stdin.close()
        try:
            self.server.wait(timeout=30)
        finally:
            if self.server.poll() is None:
                self.server.kill()
                self.server.wait()
            stdout.close()


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Runs]:
    """Index runs in child processes of one fork server."""
    runs = Runs(tmp_path)
    yield runs
    runs.close()


@contextmanager
def _lode(db: Path) -> Iterator[Lode]:
    config = load_config(env={}, overrides={"db": db, "model": "fake-hash-256"})
    lode = Lode(config, embedder=FakeEmbedder())
    try:
        yield lode
    finally:
        lode.close()


Snapshot = dict[str, tuple[str, tuple[str, ...], bool, tuple[tuple[str, str, str, int, int], ...]]]


def _snapshot(lode: Lode) -> Snapshot:
    """Per file: its hash, its chunks' hashes, whether all are embedded, and its symbol rows
    (role, name, kind, line, the index of the chunk each names: which must be the file's)."""
    store = lode.store
    project = store.projects.all()[0]
    states = store.documents.states(project.id)
    chunks = store.chunks.of_files([s.id for s in states.values()])
    out = {}
    for path, state in states.items():
        mine = sorted(
            (c.chunk.chunk_index, c.chunk.chunk_hash, c.embedded) for c in chunks if c.file_id == state.id
        )
        index_of = {c.id: c.chunk.chunk_index for c in chunks if c.file_id == state.id}
        symbols = tuple(
            sorted(
                (s.role, s.name, s.kind, s.start_line, index_of.get(s.chunk_id, -1))
                for s in store.symbols.of_file(state.id)
            )
        )
        out[path] = (
            state.content_hash,
            tuple(h for _, h, _ in mine),
            state.embedded and all(e for _, _, e in mine),
            symbols,
        )
    return out


def _commits(run: Runs, repo: Path, db: Path, tmp: Path, *args: str) -> int:
    counter = tmp / "commits.txt"
    done = run(repo, db, *args, LODE_TEST_COMMITS_FILE=str(counter))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return int(counter.read_text())


def _kill_points(total: int) -> list[int]:
    if total <= _KILLS:
        return list(range(1, total + 1))
    step = (total - 1) / (_KILLS - 1)
    return sorted({1 + round(k * step) for k in range(_KILLS)})


@pytest.mark.parametrize("scenario", ["first-index", "edits", "rechunk"])
def test_a_kill_after_any_commit_is_repaired_by_the_next_run(
    tmp_path: Path, run: Runs, scenario: str
) -> None:
    repo, base = tmp_path / "repo", tmp_path / "base-db"
    if scenario != "first-index":
        _write_repo(repo, 1 if scenario == "edits" else 2)
        with _lode(base) as lode:
            lode.index(repo, name="demo")
    _write_repo(repo, 2)
    reference_db = tmp_path / "reference-db"
    with _lode(reference_db) as lode:
        lode.index(repo, name="demo")
        reference = _snapshot(lode)
    assert all(embedded for _, _, embedded, _ in reference.values())
    assert all(-1 not in {s[-1] for s in symbols} for _, _, _, symbols in reference.values())
    assert sum(len(symbols) for _, _, _, symbols in reference.values()) > 100
    # rechunk: every unchanged file cut again (new chunk ids, same bytes) by ``--full``
    args = ("--full",) if scenario == "rechunk" else ()

    dry = tmp_path / "dry-db"
    if base.exists():
        shutil.copytree(base, dry)
    total = _commits(run, repo, dry, tmp_path, *args)
    least = 5 if scenario == "rechunk" else 10  # a re-chunk embeds nothing: no phase 2 commits
    assert total >= least, f"only {total} commits: the run did not write what it should"
    print(f"{scenario}: {total} commits, kills after {_kill_points(total)}")
    killed = 0
    for point in _kill_points(total):
        db = tmp_path / f"db-{point}"
        if base.exists():
            shutil.copytree(base, db)
        killed_run = run(repo, db, *args, LODE_TEST_KILL_AFTER=str(point))
        assert killed_run.returncode == -signal.SIGKILL, (
            f"commit {point} of {total}: {killed_run.stderr.decode()[-1500:]}"
        )
        killed += 1
        with _lode(db) as lode:
            lode.index(repo, name="demo")
            check = lode.store.check()
            assert check.ok, f"after a kill at commit {point} of {total}: {check.problems}"
            assert _snapshot(lode) == reference, f"after a kill at commit {point} of {total}"
        checked = CliRunner().invoke(cli, ["check", "--json"], env={"LODE_DB": str(db), "LODE_PORT": "9"})
        assert checked.exit_code == 0, f"lode check after a kill at commit {point}: {checked.output}"
        shutil.rmtree(db)
    assert killed >= min(_KILLS, total)


#: Points per scenario at which the disk fills up, spread over the run's commits.
_FULL_AT = 4


@pytest.mark.parametrize("scenario", ["first-index", "edits"])
def test_a_full_disk_at_any_write_is_one_line_and_the_rerun_after_freeing_space_is_clean(
    tmp_path: Path, run: Runs, scenario: str
) -> None:
    """The disk fills up before one commit of a run (and stays full): the run stops with one
    line naming the full disk (exit 2, no traceback), and once there is room again the same
    command leaves exactly what a clean index holds, and ``lode check`` passes (issue 39)."""
    repo, base = tmp_path / "repo", tmp_path / "base-db"
    if scenario == "edits":
        _write_repo(repo, 1)
        with _lode(base) as lode:
            lode.index(repo, name="demo")
    _write_repo(repo, 2)
    with _lode(tmp_path / "reference-db") as lode:
        lode.index(repo, name="demo")
        reference = _snapshot(lode)
    dry = tmp_path / "dry-db"
    if base.exists():
        shutil.copytree(base, dry)
    total = _commits(run, repo, dry, tmp_path)
    points = sorted({1 + round(k * (total - 1) / (_FULL_AT - 1)) for k in range(_FULL_AT)})
    print(f"{scenario}: {total} commits, the disk full from {points}")
    for point in points:
        db = tmp_path / f"db-{point}"
        if base.exists():
            shutil.copytree(base, db)
        full = run(repo, db, LODE_TEST_ENOSPC_AT=str(point))
        stderr = full.stderr.decode()
        assert "Traceback" not in stderr, f"full from commit {point} of {total}: {stderr[-1500:]}"
        said = [line for line in stderr.splitlines() if "the disk holding the index" in line]
        assert len(said) == 1, stderr[-1500:]
        # the run stops (exit 2), or its files are all in and only folding them into the
        # indexes waits for room (exit 0, a warning: the next run or optimize folds them)
        if full.returncode == 0:
            assert said[0].startswith("folding new rows into the indexes failed: "), said[0]
        else:
            assert full.returncode == 2, stderr[-1500:]
            assert said[0].startswith("lode: error: "), said[0]
        again = run(repo, db)  # space freed: the same command again
        assert again.returncode == 0, f"after a full disk at commit {point}: {again.stderr.decode()[-1500:]}"
        with _lode(db) as lode:
            assert _snapshot(lode) == reference, f"after a full disk at commit {point} of {total}"
        checked = CliRunner().invoke(cli, ["check", "--json"], env={"LODE_DB": str(db), "LODE_PORT": "9"})
        assert checked.exit_code == 0, f"lode check after a full disk at commit {point}: {checked.output}"
        shutil.rmtree(db)
