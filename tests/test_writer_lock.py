"""One writer per index, whatever the port (issue 28, 12): the writer holds a lock in the
index folder with its pid and URL; every other process finds it there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import free_port, serve_in_thread, wait_task

from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.writer import WriterBusyError, WriterLock, current_writer

_HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from indexer.writer import WriterLock
    WriterLock(Path(sys.argv[1])).acquire("lode watch")
    print("held", flush=True)
    time.sleep(120)
    """
)


def _hold_elsewhere(db: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def test_the_lock_names_its_holder_and_a_dead_holder_frees_it(tmp_path: Path) -> None:
    db = tmp_path / "db"
    assert current_writer(db) is None
    proc = _hold_elsewhere(db)
    try:
        writer = current_writer(db)
        assert writer is not None
        assert (writer.pid, writer.command, writer.url) == (proc.pid, "lode watch", None)
        with pytest.raises(WriterBusyError, match=f"pid {proc.pid}") as err:
            WriterLock(db).acquire("lode index")
        assert err.value.field == "db"
    finally:
        _stop(proc)
    assert current_writer(db) is None  # the kernel released a dead holder's lock
    lock = WriterLock(db)
    assert lock.acquire("lode index").pid == os.getpid()  # taken over
    again = WriterLock(db)  # the same process: shared, not refused
    again.acquire("lode index")
    again.release()
    assert current_writer(db) is None or lock.held  # still held by the first claim
    lock.release()


def test_an_in_process_index_refuses_beside_another_writer(tmp_path: Path, repo: Path) -> None:
    db = tmp_path / "db"
    proc = _hold_elsewhere(db)
    try:
        out = CliRunner().invoke(cli, ["index", str(repo), "--db", str(db), "--local"])
        assert out.exit_code == 2
        assert f"lode watch (pid {proc.pid}" in out.output
    finally:
        _stop(proc)


def test_a_server_on_any_port_is_found_through_the_lock(tmp_path: Path) -> None:
    """A server on a port the CLI is not configured for: ``lode index`` goes through it,
    never beside it (the single-writer check used to probe only the configured port)."""
    repo = make_repo(tmp_path / "repo")
    db = tmp_path / "db"
    config = load_config(env={}, overrides={"db": db, "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        writer = current_writer(db)
        assert writer is not None
        assert writer.url == base
        env = {"LODE_DB": str(db), "LODE_PORT": "9", "HF_HUB_OFFLINE": "1"}
        out = CliRunner().invoke(cli, ["index", str(repo), "--json"], env=env)
        assert out.exit_code == 0, out.output
        assert '"via": "server"' in out.output
        tasks = httpx.get(f"{base}/api/v1/tasks").json()
        assert tasks
        assert wait_task(base, tasks[0]["id"])["status"] == "done"
    assert current_writer(db) is None


def test_lode_serve_refuses_an_index_another_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "db"
    proc = _hold_elsewhere(db)
    try:
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-m", "server", "serve", "--db", str(db), "--port", str(free_port())],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        assert out.returncode == 2, out.stderr
        assert f"lode watch (pid {proc.pid}" in out.stderr
        assert time.monotonic() - started < 30
    finally:
        _stop(proc)


def test_the_writer_package_exports_its_public_names_sorted() -> None:
    import indexer.writer

    assert indexer.writer.__all__ == [
        "LEASE_OBJECT",
        "LOCK_FILE",
        "LOST_EXIT_STATUS",
        "WriterBusyError",
        "WriterClaim",
        "WriterInfo",
        "WriterLease",
        "WriterLock",
        "current_lease_writer",
        "current_writer",
        "find_writer",
        "read_only_error",
        "writer_claim",
    ]
    assert indexer.writer.__all__ == sorted(indexer.writer.__all__)
    assert all(hasattr(indexer.writer, name) for name in indexer.writer.__all__)
