"""Server-sent events (issue 41): a client follows an index run over ``GET /api/v1/events``
instead of polling: the task's progress through both phases, the files written, the
project's coverage; a reader says it streams versions only."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from live import serve_in_thread

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.events import EventHub, IndexEvent

API = "/api/v1"


def make_files(root: Path, count: int) -> Path:
    """``count`` small Python files (six functions each)."""
    root.mkdir(parents=True)
    for i in range(count):
        body = "\n\n".join(f"def step_{i}_{j}(value):\n    return value * {j} + {i}\n" for j in range(6))
        (root / f"mod{i:03d}.py").write_text(body + "\n")
    return root


def iter_events(response: httpx.Response) -> Iterator[tuple[str, Any]]:
    """(event, decoded data) of a ``text/event-stream`` as they arrive (comments skipped)."""
    kind, data = "message", []
    for line in response.iter_lines():
        if not line:
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def test_an_index_run_streams_its_progress(tmp_path: Path) -> None:
    root = make_files(tmp_path / "proj", 40)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with (
        serve_in_thread(config, FakeEmbedder(delay=0.01)) as base,
        httpx.Client(base_url=base + API, timeout=30) as http,
        http.stream("GET", "/events") as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = iter_events(stream)
        kind, hello = next(events)
        assert kind == "hello"
        assert hello["read_only"] is False
        assert set(hello["kinds"]) == {"task", "files", "coverage", "version"}
        created = http.post("/projects", json={"path": str(root), "name": "proj"}).json()
        task_id, project_id = created["task_id"], created["project"]["id"]
        tasks: list[dict[str, Any]] = []
        paths: set[str] = set()
        coverage: list[float] = []
        for kind, data in events:
            if kind == "task" and data["id"] == task_id:
                tasks.append(data)
                if data["status"] not in ("queued", "running"):
                    break
            elif kind == "files":
                assert data["project_id"] == project_id
                paths.update(data["paths"])
            elif kind == "coverage":
                assert data["project_id"] == project_id
                coverage.append(data["semantic_coverage"])
    phases = [t["phase"] for t in tasks]
    assert phases[0] == "queued"
    assert "chunk" in phases
    assert "embed" in phases
    assert tasks[-1]["status"] == "done"
    assert tasks[-1]["embedded"] is True
    percents = [t["percent"] for t in tasks]
    assert percents == sorted(percents), "progress never goes back"
    assert len({p for p in percents if 0 < p < 100}) >= 2, "progress between start and end"
    assert paths == {f"mod{i:03d}.py" for i in range(40)}
    assert coverage, "the coverage was announced"
    assert coverage[-1] == 1.0


def test_a_stream_of_one_project_and_an_unknown_project(tmp_path: Path) -> None:
    one, other = make_files(tmp_path / "one", 2), make_files(tmp_path / "other", 2)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with (
        serve_in_thread(config, FakeEmbedder()) as base,
        httpx.Client(base_url=base + API, timeout=30) as http,
    ):
        missing = http.get("/events", params={"project": "nope"})
        assert missing.status_code == 404
        assert missing.json()["status_code"] == 404
        first = http.post("/projects", json={"path": str(one), "name": "one"}).json()
        with http.stream("GET", "/events", params={"project": "one"}) as stream:
            events = iter_events(stream)
            kind, hello = next(events)
            assert (kind, hello["project_id"]) == ("hello", first["project"]["id"])
            second = http.post("/projects", json={"path": str(other), "name": "other"}).json()
            http.post("/projects/one/index", json={"full": True})
            for kind, data in events:
                if kind in ("task", "files", "coverage"):
                    assert data["project_id"] == first["project"]["id"], (kind, data)
                if kind == "task" and data["status"] == "done" and data["id"] != first["task_id"]:
                    break
        assert second["project"]["id"] != first["project"]["id"]


def test_a_reader_says_it_streams_versions_only(tmp_path: Path) -> None:
    root = make_files(tmp_path / "proj", 2)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    embedder = FakeEmbedder()
    lode = Lode(config, embedder=embedder)
    lode.index(root)
    lode.close()
    reader = dataclasses.replace(config, server=dataclasses.replace(config.server, read_only=True))
    with (
        serve_in_thread(reader, embedder) as base,
        httpx.Client(base_url=base + API, timeout=30) as http,
        http.stream("GET", "/events") as stream,
    ):
        kind, hello = next(iter_events(stream))
    assert kind == "hello"
    assert hello["read_only"] is True
    assert hello["kinds"] == ["version"]
    assert isinstance(hello["version"], int)


def test_a_failing_listener_does_not_stop_the_others() -> None:
    hub = EventHub()
    seen: list[IndexEvent] = []

    def broken(_: IndexEvent) -> None:
        raise RuntimeError("gone")

    stop = hub.subscribe(broken)
    hub.subscribe(seen.append)
    hub.publish(IndexEvent("version", version=3))
    stop()
    done = threading.Event()
    hub.subscribe(lambda e: done.set())
    hub.publish(IndexEvent("version", version=4))
    assert [e.version for e in seen] == [3, 4]
    assert done.is_set()


def test_a_closed_stream_stops_listening(tmp_path: Path) -> None:
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    contexts: list[Any] = []
    with serve_in_thread(config, FakeEmbedder(), on_ready=contexts.append) as base:
        hub = contexts[0].events
        with httpx.stream("GET", f"{base}{API}/events", timeout=30) as stream:
            assert next(iter_events(stream))[0] == "hello"
            assert hub.listening
        deadline = time.monotonic() + 10
        while hub.listening and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not hub.listening


def iter_messages(response: httpx.Response) -> Iterator[tuple[str | None, str, Any]]:
    """(id, event, decoded data) of a ``text/event-stream`` as they arrive."""
    ident, kind, data = None, "message", []
    for line in response.iter_lines():
        if not line:
            if data:
                yield ident, kind, json.loads("\n".join(data))
            ident, kind, data = None, "message", []
        elif line.startswith("id:"):
            ident = line[3:].strip()
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def test_a_client_that_reconnects_gets_what_it_missed(tmp_path: Path) -> None:
    """An editor's stream drops (a laptop sleeps, a proxy times out): reconnecting with the
    standard ``Last-Event-ID`` header replays the events it missed, in order, before new ones;
    one that fell out of the replay window is told so (``lagged``)."""
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    contexts: list[Any] = []
    with serve_in_thread(config, FakeEmbedder(), on_ready=contexts.append) as base:
        hub = contexts[0].events
        with httpx.stream("GET", f"{base}{API}/events", timeout=30) as stream:
            messages = iter_messages(stream)
            assert next(messages)[1] == "hello"
            hub.publish(IndexEvent("files", project_id="p", paths=("a.py",)))
            ident, kind, data = next(messages)
            assert (kind, data["paths"]) == ("files", ["a.py"])
            assert ident is not None
        for name in ("b.py", "c.py"):  # while no client listens
            hub.publish(IndexEvent("files", project_id="p", paths=(name,)))
        headers = {"Last-Event-ID": ident}
        with httpx.stream("GET", f"{base}{API}/events", headers=headers, timeout=30) as stream:
            messages = iter_messages(stream)
            assert next(messages)[1] == "hello"
            replayed = [next(messages) for _ in range(2)]
            assert [(k, d["paths"]) for _, k, d in replayed] == [("files", ["b.py"]), ("files", ["c.py"])]
            run, _, number = ident.partition("-")
            assert [i for i, _, _ in replayed] == [f"{run}-{int(number) + n}" for n in (1, 2)]
        for i in range(hub.RECENT_EVENTS + 5):
            hub.publish(IndexEvent("version", version=i))
        with httpx.stream("GET", f"{base}{API}/events", headers=headers, timeout=30) as stream:
            messages = iter_messages(stream)
            assert next(messages)[1] == "hello"
            _, kind, data = next(messages)
            assert kind == "lagged"
            assert data["dropped"] >= 7
        restarted = {"Last-Event-ID": "0000-5"}  # an id of an earlier run of the server
        with httpx.stream("GET", f"{base}{API}/events", headers=restarted, timeout=30) as stream:
            messages = iter_messages(stream)
            assert next(messages)[1] == "hello"
            assert next(messages)[1] == "lagged"  # this run's first events are no longer kept
        bad = httpx.get(f"{base}{API}/events", headers={"Last-Event-ID": "x"}, timeout=30)
        assert bad.status_code == 400
        assert bad.json()["extra"][0]["key"] == "Last-Event-ID"
