"""Issue 31's acceptance, with real servers (subprocesses, the real model) on one index in
a local S3 (moto's server): one writer (``lode serve``), two readers (``lode serve
--read-only``, one of them with a search process) and, for comparison, a writer of a
local index of the same project."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_repo
from live import free_port, wait_healthy, wait_task

pytestmark = pytest.mark.slow

API = "/api/v1"
#: The readers' consistency window (seconds).
WINDOW = 1.0
#: What it may take on top of the window for an answer to show a commit: the poll, the
#: request, a search process's own window (it looks on its own clock).
SLACK = 3.0
QUERIES = ["parse the request document", "refresh the session token", "cart total in cents"]


@dataclass
class Cluster:
    """The servers of the test and how to start them again."""

    tmp: Path
    repo: Path
    env: dict[str, str]
    writer_port: int
    writer: subprocess.Popen[bytes]
    readers: list[str]
    local: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def writer_url(self) -> str:
        return f"http://127.0.0.1:{self.writer_port}"


def _serve(env: dict[str, str], port: int, log: Path, *args: str, **extra: str) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "server", "serve", *args],
            env={**env, "LODE_PORT": str(port), **extra},
            stdout=out,
            stderr=out,
        )
    finally:
        out.close()


def _start_writer(tmp: Path, env: dict[str, str], port: int, *args: str) -> subprocess.Popen[bytes]:
    # tests/slowdown pauses after every durable write, so a kill lands inside a run
    slow = os.pathsep.join(
        (str(Path(__file__).resolve().parent.parent), str(Path(__file__).parent / "slowdown"))
    )
    return _serve(env, port, tmp / "writer.log", *args, PYTHONPATH=slow, LODE_TEST_PAUSE="0.2")


def _all_tasks_done(base: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tasks = httpx.get(f"{base}{API}/tasks", timeout=30).json()
        if tasks and all(t["status"] not in ("queued", "running") for t in tasks):
            assert all(t["status"] == "done" for t in tasks), tasks
            return
        time.sleep(0.2)
    raise TimeoutError(f"tasks of {base} still running")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, s3_endpoint: str) -> Iterator[Cluster]:
    from local_s3 import new_bucket, s3_env

    tmp = tmp_path_factory.mktemp("scale-out")
    repo = make_repo(tmp / "repo")
    env = {
        **os.environ,
        **s3_env(s3_endpoint),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LODE_DB": f"s3://{new_bucket(s3_endpoint)}/index",
        "LODE_WATCH": "false",
        "LODE_SEARCH_PROCESSES": "0",
        "LODE_READ_CONSISTENCY_SECONDS": str(WINDOW),
    }
    procs: list[subprocess.Popen[bytes]] = []
    writer_port = free_port()
    writer = _start_writer(tmp, env, writer_port, str(repo))
    local_port = free_port()
    local_env = {**env, "LODE_DB": str(tmp / "local-db")}
    for name in s3_env(s3_endpoint):
        local_env.pop(name)
    procs.append(_serve(local_env, local_port, tmp / "local.log", str(repo)))
    made: Cluster | None = None
    try:
        writer_url = f"http://127.0.0.1:{writer_port}"
        local = f"http://127.0.0.1:{local_port}"
        for base in (writer_url, local):
            wait_healthy(base, timeout=300)
            _all_tasks_done(base)
        readers = []
        for number in range(2):  # the first reader answers searches in a search process
            port = free_port()
            processes = "1" if number == 0 else "0"
            log = tmp / f"reader{number}.log"
            procs.append(_serve(env, port, log, "--read-only", LODE_SEARCH_PROCESSES=processes))
            readers.append(f"http://127.0.0.1:{port}")
        for number, base in enumerate(readers):
            wait_healthy(base, timeout=300, processes=1 if number == 0 else 0)
        made = Cluster(tmp, repo, env, writer_port, writer, readers, local, procs)
        yield made
    finally:
        every = [*procs, made.writer if made is not None else writer]
        for proc in every:
            proc.terminate()
        for proc in every:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _search(base: str, query: str, mode: str = "hybrid", granularity: str = "chunk") -> list[tuple[Any, ...]]:
    body = {"query": query, "mode": mode, "granularity": granularity, "limit": 10}
    response = httpx.post(f"{base}{API}/search", json=body, timeout=60)
    assert response.status_code == 200, response.text
    found = response.json()
    if granularity == "document":
        return [(d["file_path"], round(d["relevance_score"], 4)) for d in found["documents"]]
    return [
        (hit["file_path"], hit["start_line"], hit["end_line"], round(hit["relevance_score"], 4))
        for group in found["groups"]
        for hit in group["chunks"]
    ]


def test_two_readers_answer_as_a_local_index_of_the_same_project(cluster: Cluster) -> None:
    for base in cluster.readers:
        health = httpx.get(f"{base}/health").json()
        assert (health["status"], health["role"]) == ("ok", "reader")
        assert isinstance(health["index_version"], int)
    for query in QUERIES:
        for mode, granularity in (("hybrid", "chunk"), ("lexical", "chunk"), ("hybrid", "document")):
            expected = _search(cluster.local, query, mode, granularity)
            assert expected, (query, mode)
            for base in (*cluster.readers, cluster.writer_url):
                assert _search(base, query, mode, granularity) == expected, (base, query, mode)


def test_an_edit_through_the_writer_reaches_both_readers_within_the_window(cluster: Cluster) -> None:
    base = cluster.writer_url
    project = httpx.get(f"{base}{API}/projects").json()[0]
    (cluster.repo / "src" / "shop" / "zebra.py").write_text(
        "def zebracorn_total(stripes: int) -> int:\n    return stripes * 2\n"
    )
    task = httpx.post(
        f"{base}{API}/projects/{project['id']}/index", json={"paths": ["src/shop/zebra.py"], "full": False}
    ).json()
    assert wait_task(base, task["id"])["status"] == "done"
    committed = time.monotonic()
    seen: dict[str, float] = {}
    while len(seen) < len(cluster.readers):
        for reader in cluster.readers:
            if reader not in seen and any(
                hit[0] == "src/shop/zebra.py" for hit in _search(reader, "zebracorn_total", "lexical")
            ):
                seen[reader] = time.monotonic() - committed
        assert time.monotonic() - committed < WINDOW + SLACK, f"not every reader saw the edit: {seen}"
        time.sleep(0.05)


def test_a_second_writer_is_refused(cluster: Cluster) -> None:
    port = free_port()
    log = cluster.tmp / "second-writer.log"
    second = _serve(cluster.env, port, log)
    assert second.wait(timeout=120) == 2
    said = log.read_text()
    assert "is written by lode serve (pid" in said
    assert cluster.writer_url in said
    # an in-process index is refused too: it finds the writer through the lease
    done = subprocess.run(
        [sys.executable, "-m", "indexer", "index", str(cluster.repo), "--local"],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert f"the lode server at {cluster.writer_url} writes this index" in done.stderr


def test_a_reader_refuses_writes_naming_the_writer(cluster: Cluster) -> None:
    for reader in cluster.readers:
        response = httpx.post(f"{reader}{API}/projects", json={"path": str(cluster.repo)})
        assert response.status_code == 409
        body = response.json()
        assert body["status_code"] == 409
        assert "only reads the index" in body["detail"]
        assert f"its writer now is lode serve (pid {cluster.writer.pid}" in body["detail"]
        assert cluster.writer_url in body["detail"]


class _Hammer:
    """Searches the readers back to back in a thread, counting every answer by status."""

    def __init__(self, readers: list[str]) -> None:
        self.readers = readers
        self.statuses: list[int] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(timeout=60) as client:
            while not self._stop.is_set():
                for reader in self.readers:
                    try:
                        response = client.post(f"{reader}{API}/search", json={"query": "handle an event"})
                        self.statuses.append(response.status_code)
                    except httpx.HTTPError as exc:
                        self.errors.append(repr(exc))
                time.sleep(0.05)

    def __enter__(self) -> _Hammer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=120)


def _big_repo(root: Path, files: int) -> Path:
    for i in range(files):
        folder = root / f"pkg{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{i}.py").write_text(
            f"def handler_{i}(value: int) -> int:\n"
            f'    """Handle event {i} and return a derived number."""\n'
            f"    return value * {i + 1} - {i * 7}\n"
        )
    return root


def test_a_writer_killed_mid_run_restarts_and_repairs_while_readers_answer(cluster: Cluster) -> None:
    files = 240
    big = _big_repo(cluster.tmp / "big", files)
    base = cluster.writer_url
    with _Hammer(cluster.readers) as hammer:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(big), "name": "big"}).json()
        task_id, project_id = created["task_id"], created["project"]["id"]
        deadline = time.monotonic() + 300
        while True:  # kill once the run has written some files, well before it ends
            task = httpx.get(f"{base}{API}/tasks/{task_id}").json()
            if task["status"] == "running" and (task["files_done"] > 0 or task["phase"] == "embed"):
                break
            assert task["status"] in ("queued", "running"), task
            assert time.monotonic() < deadline, task
            time.sleep(0.05)
        cluster.writer.send_signal(signal.SIGKILL)
        cluster.writer.wait()
        time.sleep(2 * WINDOW)  # the readers answer on, from the last commit
        cut = httpx.get(f"{cluster.readers[1]}{API}/projects/{project_id}").json()
        assert cut["files"] < files or cut["semantic_coverage"] < 1.0, "the kill came after the run"
        cluster.writer = _start_writer(cluster.tmp, cluster.env, cluster.writer_port)
        wait_healthy(base, timeout=300)  # the dead writer's lease is taken at once (same machine)
        _all_tasks_done(base, timeout=600)
        files_seen = httpx.get(f"{base}{API}/projects/{project_id}").json()["files"]
        assert files_seen == files
        check = httpx.get(f"{base}{API}/check", timeout=300).json()
        assert check["ok"], check["problems"]
        deadline = time.monotonic() + WINDOW + SLACK
        while not all(
            any(hit[0].startswith("pkg") for hit in _search(r, "handler_17", "lexical"))
            for r in cluster.readers
        ):
            assert time.monotonic() < deadline, "a reader never saw the repaired project"
            time.sleep(0.1)
    assert hammer.errors == []
    assert len(hammer.statuses) > 20
    assert [s for s in hammer.statuses if s >= 500] == []
    assert set(hammer.statuses) == {200}
    health = httpx.get(f"{base}/health").json()
    assert (health["role"], health["worker_alive"]) == ("writer", True)
