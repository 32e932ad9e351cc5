"""Progress that is true: phase 1 advances file by file (in-process and over HTTP), the
terminal bar shows a time left once 5 % is done, and a run's chunk counts add up."""

from __future__ import annotations

import io
import itertools
import json
import shutil
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from live import serve_in_thread
from rich.console import Console

from indexer import pipeline
from indexer.api import Lode
from indexer.cli import cli
from indexer.cli._progress import BarClock, IndexBar, eta_text
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.models import IndexProgress, IndexReport

API = "/api/v1"


def make_files(root: Path, count: int) -> Path:
    """``count`` small Python files in folders of 40 (many files: several progress steps)."""
    for i in range(count):
        folder = root / f"pkg{i // 40:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(f"def step_{i}_{j}(value):\n    return value * {j} + {i}\n" for j in range(6))
        (folder / f"mod{i:04d}.py").write_text(body + "\n")
    return root


def adds_up(report: IndexReport) -> bool:
    """written + from earlier runs = embedded by the model + from the cache + still queued."""
    given = report.chunks_embedded + report.embedding_cache_hits + report.chunks_queued
    return report.chunks_written + report.chunks_from_earlier == given


def test_phase_1_reports_files_as_they_are_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "_NOTIFY_FILES", 10)  # (50 by default: 180 files showed as much)
    root = make_files(tmp_path / "proj", 45)  # one batch of files (200): written once, at the end
    seen: list[tuple[str, int, int]] = []
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        lode.index(root, progress=lambda s: seen.append((s.phase, s.files_done, s.files_total)))
    finally:
        lode.close()
    steps = sorted({done for phase, done, _total in seen if phase == "chunk"})
    assert steps[0] == 0
    assert steps[-1] == 45
    assert len(steps) >= 5
    assert max(b - a for a, b in itertools.pairwise(steps)) <= 10  # not once per write


def test_files_done_advances_over_http(tmp_path: Path) -> None:
    root = make_files(tmp_path / "proj", 190)  # one write of files (200): old code said 0, then 190
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = post(f"{base}{API}/projects", {"path": str(root), "name": "many"})
        seen: set[tuple[str, int, int]] = set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            task = get(f"{base}{API}/tasks/{created['task_id']}")
            seen.add((task["phase"], task["files_done"], task["files_total"]))
            if task["status"] not in ("queued", "running"):
                break
            time.sleep(0.01)
    assert task["status"] == "done"
    assert task["files_done"] == task["files_total"] == 190
    between = {done for phase, done, total in seen if phase == "chunk" and 0 < done < total}
    assert between, f"files_done jumped from 0 to the total: {sorted(seen)}"


def post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def test_eta_shows_once_five_percent_is_done() -> None:
    clock = BarClock(started_at=100.0, start_done=200)  # 200 of 1,200 came from the cache
    assert eta_text(clock, 200, 1200, 110.0) == ""
    assert eta_text(clock, 249, 1200, 110.0) == ""  # 4.9 % of the 1,000 left
    assert eta_text(clock, 250, 1200, 110.0) == "eta 3:10"  # 50 in 10 s: 950 left at 5/s
    assert eta_text(clock, 1200, 1200, 300.0) == "eta 0:00"
    assert eta_text(BarClock(0.0, 0), 50, 100_000, 3600.0) == ""
    assert eta_text(BarClock(0.0, 0), 5_000, 100_000, 3600.0) == "eta 19:00:00"


def test_the_bar_moves_steadily_and_shows_its_eta(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    bar = IndexBar(enabled=True, console=console)
    with bar:
        for done in range(0, 101, 10):
            bar(IndexProgress(phase="chunk", files_total=100, files_done=done, chunks_done=done * 3))
            time.sleep(0.11)
        progress = bar._progress
        assert progress is not None
        (files,) = progress.tasks
        assert files.completed == 100
        assert str(files.fields["eta"]).startswith("eta ")


def test_counts_add_up_with_the_cache_and_an_earlier_backlog(tmp_path: Path) -> None:
    first = make_files(tmp_path / "first", 30)
    second = tmp_path / "second"
    shutil.copytree(first, second)
    (second / "pkg00" / "extra.py").write_text("def only_here():\n    return 'new text'\n")
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        fresh = lode.index(first)
        assert adds_up(fresh)
        assert fresh.embedding_cache_hits == 0
        assert fresh.chunks_queued == fresh.chunks_from_earlier == 0
        later = lode.index(second, embed=False)  # the same texts: vectors from the cache
        assert adds_up(later)
        assert later.chunks_queued == 1
        assert later.embedding_cache_hits == later.chunks_written - 1
        (second / "pkg00" / "mod0000.py").write_text("def changed():\n    return 'changed'\n")
        resumed = lode.index(second)  # the queued chunk of the run before, and the edit
        assert adds_up(resumed)
        assert resumed.chunks_from_earlier == 1
        assert resumed.chunks_embedded == 2
        assert resumed.chunks_queued == 0
    finally:
        lode.close()


def test_the_index_summary_says_which_counts_make_the_total(tmp_path: Path) -> None:
    root = make_files(tmp_path / "proj", 5)
    result = CliRunner().invoke(
        cli, ["index", str(root), "--db", str(tmp_path / "db"), "--no-embed", "--local"]
    )
    assert result.exit_code == 0, result.output
    line = result.output.strip().splitlines()[-1]
    assert " chunk(s) written: 0 embedded by the model, 0 from the cache, " in line
    written = int(line.split("; ")[1].split(" chunk(s)")[0])
    assert f"{written} still queued" in line


def test_a_task_whose_vectors_all_came_from_the_cache_ends_with_them_counted(tmp_path: Path) -> None:
    first = make_files(tmp_path / "a", 4)
    second = tmp_path / "b"
    shutil.copytree(first, second)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        tasks = []
        for root in (first, second):
            created = post(f"{base}{API}/projects", {"path": str(root)})
            tasks.append(wait(base, created["task_id"]))
    cached = tasks[1]
    assert cached["status"] == "done"
    assert cached["chunks_done"] > 0
    assert cached["chunks_total"] == cached["chunks_embedded"] == cached["chunks_done"]  # not 0/0


def wait(base: str, task_id: str) -> Any:
    done = threading.Event()
    deadline = time.monotonic() + 60
    while not done.is_set() and time.monotonic() < deadline:
        task = get(f"{base}{API}/tasks/{task_id}")
        if task["status"] not in ("queued", "running"):
            return task
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} did not end")
