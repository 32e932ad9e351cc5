"""Nothing outside a project is ever read; odd file names never stop a run (issue 28, 1–2, 5–6)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import httpx
import pytest
from live import serve_in_thread, wait_task

from indexer.api import Lode
from indexer.config import WalkerConfig, load_config
from indexer.containment import display_path, read_contained, real_relative, refuse_broad_root
from indexer.embed import FakeEmbedder
from indexer.errors import PathError
from indexer.search import SearchOptions
from indexer.walker import walk_project
from indexer.watch._handler import iter_changes

API = "/api/v1"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding a secret."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "shadow").write_text("root:$6$secret-hash:19000:0:99999:7:::\n")
    (folder / "inner").mkdir()
    (folder / "inner" / "deep.py").write_text("TOKEN = 'outside-secret'\n")
    return folder


@pytest.fixture
def project(tmp_path: Path, outside: Path) -> Path:
    """A project holding links that leave it (a folder, a file) and one that stays."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def handler():\n    return 1\n")
    (root / "etc_link").symlink_to(outside)
    (root / "shadow_link").symlink_to(outside / "shadow")
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    return root


def _indexed(lode: Lode, name: str) -> set[str]:
    project = lode.store.projects.get(name)
    return set(lode.store.documents.states(project.id))


@pytest.mark.parametrize(
    "start", ["etc_link", "etc_link/shadow", "etc_link/inner", "shadow_link", "etc_link/inner/deep.py"]
)
def test_an_explicit_path_through_a_link_that_leaves_the_root_is_skipped(project: Path, start: str) -> None:
    result = walk_project(project, under=[start])
    assert result.files == []
    assert [(s.path, s.reason) for s in result.skipped] == [(start, "symlink leaves the project root")]


def test_an_explicit_path_through_a_link_inside_the_root_is_walked(project: Path) -> None:
    assert [e.rel_path for e in walk_project(project, under=["alias.py"]).files] == ["alias.py"]
    no_follow = walk_project(project, WalkerConfig(follow_symlinks=False), under=["alias.py"])
    assert no_follow.files == []
    assert no_follow.skipped[0].reason == "symlink (not followed)"


def test_index_of_explicit_paths_never_reads_outside(lode: Lode, project: Path) -> None:
    lode.index(project, name="proj")
    assert _indexed(lode, "proj") == {"alias.py", "src/app.py"}
    for paths in (["etc_link"], ["etc_link/shadow"], ["shadow_link"], ["etc_link/inner"]):
        report = lode.index(project, paths=paths)
        assert report.files_indexed == 0
        assert {s.reason for s in report.files_skipped} == {"symlink leaves the project root"}
    assert _indexed(lode, "proj") == {"alias.py", "src/app.py"}
    hits = lode.search(SearchOptions(query="secret", mode="lexical", granularity="chunk"))
    assert hits.groups == ()


def test_a_file_swapped_for_a_link_after_the_walk_is_not_read(project: Path, outside: Path) -> None:
    inside = read_contained(project / "alias.py", project, 1 << 20)
    assert inside.data is not None
    assert inside.data.startswith(b"def handler")
    target = project / "src" / "app.py"
    target.unlink()
    target.symlink_to(outside / "shadow")
    read = read_contained(target, project, 1 << 20)
    assert read.data is None
    assert read.reason == "resolves outside the project root"
    read = read_contained(target, project, 1 << 20, follow_symlinks=False)
    assert (read.data, read.reason) == (None, "symlink (not followed)")


def test_a_file_swapped_for_a_link_during_a_run_is_skipped_and_dropped(
    lode: Lode, project: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexer import prepare

    lode.index(project, name="proj")
    (project / "src" / "app.py").write_text("def handler():\n    return 2\n")
    real_read = prepare._read

    def swap(job: prepare.FileJob) -> prepare.ContainedRead:
        path = Path(job.abs_path)
        if path.name == "app.py":
            path.unlink()
            path.symlink_to(outside / "inner" / "deep.py")
        return real_read(job)

    monkeypatch.setattr(prepare, "_read", swap)
    report = lode.index(project, paths=["src/app.py"])
    assert {s.path: s.reason for s in report.files_skipped} == {
        "src/app.py": "resolves outside the project root"
    }
    lexical = lode.search(SearchOptions(query="TOKEN", mode="lexical", granularity="chunk"))
    assert lexical.groups == ()


def test_a_fifo_is_never_opened_for_a_blocking_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(read_contained(fifo, tmp_path, 1 << 20)), daemon=True
    )
    worker.start()
    worker.join(timeout=5)
    assert done, "reading a FIFO blocked"
    read = done[0]
    assert getattr(read, "reason", None) == "not a regular file"


def test_a_fifo_swapped_in_during_a_run_does_not_hang_it(lode: Lode, tmp_path: Path) -> None:
    root = tmp_path / "fifo-proj"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    lode.index(root, name="fifo-proj")
    (root / "a.py").unlink()
    os.mkfifo(root / "a.py")
    finished = threading.Event()
    outcome: list[object] = []

    def run() -> None:
        outcome.append(lode.index(root, paths=["a.py"]))
        finished.set()

    threading.Thread(target=run, daemon=True).start()
    assert finished.wait(30), "the run hung on a FIFO"
    assert "a.py" not in _indexed(lode, "fifo-proj")


def test_reads_stop_at_the_limit_even_when_the_size_lies(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 5000)
    read = read_contained(big, tmp_path, 1000)
    assert read.data is None
    assert read.reason.startswith("too large")
    pagemap = Path("/proc/self/pagemap")  # a regular file of size 0 that reads without end
    if not pagemap.exists():
        pytest.skip("no /proc here")
    read = read_contained(pagemap, pagemap.resolve().parent, 4095)  # read in 8-byte units
    assert read.data is None
    assert read.reason.startswith("too large")
    assert read.size == 4096


@pytest.mark.parametrize("folder", ["/", "/etc", "/usr", "/proc/self"])
def test_system_folders_need_force(folder: str) -> None:
    with pytest.raises(PathError, match="system folder") as err:
        refuse_broad_root(Path(folder).resolve())
    assert err.value.field == "path"
    refuse_broad_root(Path(folder).resolve(), force=True)


def test_the_home_folder_needs_force(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(PathError, match="home folder"):
        refuse_broad_root(tmp_path.resolve())
    refuse_broad_root((tmp_path / "src").resolve())


def test_registering_root_is_refused_with_a_reason(lode: Lode) -> None:
    with pytest.raises(PathError, match="system folder") as err:
        lode.register("/")
    assert err.value.field == "path"


# ---- file names that are not UTF-8 ------------------------------------------------------------------
def test_display_path_round_trips(tmp_path: Path) -> None:
    name = os.fsdecode(b"bad\xffname.py")
    shown = display_path(name)
    assert shown == "bad\\xffname.py"
    shown.encode("utf-8")
    (tmp_path / name).write_text("x = 1\n")
    assert real_relative(tmp_path, shown) == name
    assert display_path("ok/é.py") == "ok/é.py"
    assert real_relative(tmp_path, "ok/é.py") == "ok/é.py"


def test_a_name_that_is_not_utf8_is_indexed_and_never_stops_the_run(lode: Lode, tmp_path: Path) -> None:
    root = tmp_path / "names"
    (root / os.fsdecode(b"dir\xfe")).mkdir(parents=True)
    (root / os.fsdecode(b"bad\xffname.py")).write_text("def odd_named():\n    return 'x'\n")
    (root / os.fsdecode(b"dir\xfe") / "inner.py").write_text("def inner_one():\n    return 1\n")
    for i in range(25):
        (root / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    report = lode.index(root, name="names")
    assert report.files_failed == []
    indexed = _indexed(lode, "names")
    assert len(indexed) == 27
    assert {"bad\\xffname.py", "dir\\xfe/inner.py"} <= indexed
    hit = lode.search(SearchOptions(query="odd_named", mode="lexical", granularity="chunk")).groups
    assert hit[0].file_path == "bad\\xffname.py"
    # an explicit path in its display form, and a delete, work too
    (root / os.fsdecode(b"bad\xffname.py")).write_text("def renamed_inside():\n    return 'y'\n")
    assert lode.index(root, paths=["bad\\xffname.py"]).files_indexed == 1
    (root / os.fsdecode(b"bad\xffname.py")).unlink()
    lode.index(root, paths=["bad\\xffname.py"])
    assert "bad\\xffname.py" not in _indexed(lode, "names")


def test_watcher_events_carry_the_display_name(tmp_path: Path) -> None:
    from watchdog.events import FileModifiedEvent

    path = os.fsencode(str(tmp_path)) + b"/bad\xffname.py"
    changes = list(iter_changes(FileModifiedEvent(os.fsdecode(path)), str(tmp_path)))
    assert [c.rel_path for c in changes] == ["bad\\xffname.py"]


# ---- over HTTP ---------------------------------------------------------------------------------------
def test_http_explicit_paths_through_a_link_read_nothing_outside(tmp_path: Path, project: Path) -> None:
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(project), "name": "proj"}).json()
        assert wait_task(base, created["task_id"])["status"] == "done"
        pid = created["project"]["id"]
        task = httpx.post(f"{base}{API}/projects/{pid}/index", json={"paths": ["etc_link"]}).json()
        assert wait_task(base, task["id"])["status"] == "done"
        body = {"query": "secret", "mode": "lexical", "granularity": "chunk", "path_include": ["etc_link/**"]}
        answer = httpx.post(f"{base}{API}/search", json=body)
        assert answer.status_code == 200
        assert answer.json()["groups"] == []
        files = httpx.get(f"{base}{API}/projects/{pid}/files").json()
        assert sorted(f["path"] for f in files["files"]) == ["alias.py", "src/app.py"]
        refused = httpx.post(f"{base}{API}/projects", json={"path": "/"})
        assert refused.status_code == 400
        assert refused.json()["extra"][0]["key"] == "path"
