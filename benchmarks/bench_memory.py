"""Peak RSS of indexing per phase, and the index folder's size against what it holds.

The corpus is synthetic: the installed sources of networkx, pygments and litestar copied
side by side (``copy0/``, ``copy1/``…) until it has 5,000 files; a copy's chunks share
their text with the first copy's, so phase 2 embeds each distinct text once and takes the
copies' vectors from the embedding cache (it still writes a vector for every chunk).

The indexing runs in a child process (``--child``) that reports its phases on stdout;
this process samples the child's RSS every 0.2 s through ``/proc`` (and the PSS of its
whole process tree, with the store's maintenance children: their RSS counted the pages a
child shares with its parent between fork and exec twice) and reports:

- the peak RSS of each phase: ``load`` (the model), ``phase1`` (walk, chunk, write),
  ``phase2`` (embedding), ``edits`` (100 single-file re-indexes, as a watcher sends them);
- phase 2's curve: RSS 10 % into it (``start``), at its end, and the growth between;
  the RSS swings ~15 % within each model batch (min to max of any tenth of phase 2), so
  the target is judged on windows rather than on those two samples: the peak (and the
  median) RSS over the tenth from 10 % to 20 % of phase 2 against the same over its last
  tenth (``window_growth``, ``window_median_growth``);
- bytes on disk per chunk after the first index (phase 1), after phase 2 and after the
  100 edits, beside what the index holds (``DiskUsage.held``: live rows as Arrow data and
  the current index files), and once more after the folder settled (polled until the
  versions kept for readers, ``LODE_KEEP_VERSIONS_SECONDS``, are pruned).

Targets: peak RSS ≤ 1.5 GB; phase 2 flat within ±10 % (``window_growth``); the folder ≤ 3×
what it holds.
Not a timing benchmark: seconds are shown only to place the curve.

Writes ``benchmarks/results/memory.json`` (quick: phase 2 stopped after 150 s) or
``memory_full.json`` (phase 2 to the end); ``--phase2-seconds N`` stops it after N s
instead (``memory_<N>s.json``).

Example:
    .venv/bin/python -m benchmarks.bench_memory --quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, TextIO

RESULTS = Path(__file__).parent / "results"
#: Installed packages whose sources make the corpus (copied until it has ``FILES`` files).
PACKAGES = ("networkx", "pygments", "litestar")
FILES = 5000
EDITS = 100
#: Seconds between RSS samples.
_SAMPLE = 0.2
#: The quick profile stops phase 2 after this long (the full one lets it finish).
_QUICK_PHASE2_SECONDS = 150.0
#: How long the folder may take to settle after the run (polled every few seconds).
_SETTLE_SECONDS = 240.0
_TARGETS = {"peak_rss_mb": 1536, "phase2_growth": 0.10, "disk_over_held": 3.0}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def make_corpus(target: Path, files: int = FILES) -> Path:
    """Copy the packages' sources side by side until ``files`` files are there."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    sources = sorted(
        (package, path)
        for package in PACKAGES
        for path in (purelib / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )
    for n in range(files):
        package, path = sources[n % len(sources)]
        rel = Path(f"copy{n // len(sources)}") / package / path.relative_to(purelib / package)
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / rel)
    return target


# ---------------------------------------------------------------------------- the child


def _emit(out: TextIO, event: str, **fields: Any) -> None:
    out.write(json.dumps({"event": event, "t": time.time(), **fields}) + "\n")
    out.flush()


def _disk(lode: Any) -> dict[str, Any]:
    usage = lode.store.versions.disk_usage()
    return {
        "on_disk": usage.on_disk,
        "held": usage.held,
        "versions": usage.versions,
        "chunks": usage.chunks,
    }


def _watch_peaks(path: Path, poll: float = 0.02) -> None:
    """Write every thread's Python stack to ``path`` whenever this process's RSS passes its
    highest so far by 50 MB (past 1 GB): what the process was doing at each new peak."""
    import traceback

    def run() -> None:
        highest = 1024 * 1024
        while True:
            rss = _rss_kb(os.getpid())
            if rss > highest + 50 * 1024:
                highest = rss
                frames = sys._current_frames()
                with path.open("a", encoding="utf-8") as out:
                    out.write(f"=== {time.time():.3f} rss {rss // 1024} MB\n")
                    for thread in threading.enumerate():
                        frame = frames.get(thread.ident or -1)
                        if frame is not None and thread is not threading.current_thread():
                            out.write(f"--- {thread.name}\n{''.join(traceback.format_stack(frame)[-12:])}")
            time.sleep(poll)

    threading.Thread(target=run, name="peak-watch", daemon=True).start()


def _watch_heap(path: Path, every: float = 0.5) -> None:
    """Write this process's resident memory by kind (``/proc/self/status``: anonymous,
    file-backed) and glibc's heap figures (``mallinfo2``: bytes in use, free but kept,
    mapped on their own) to ``path`` as JSON lines: whether a step in RSS is memory
    allocated, memory glibc keeps, or memory outside ``malloc``."""
    import ctypes

    class _MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return
    mallinfo2.restype = _MallInfo2

    def run() -> None:
        while True:
            info = mallinfo2()
            row = {
                "t": round(time.time(), 2),
                **{
                    k: _proc_kb(os.getpid(), "status", f"{k}:") // 1024
                    for k in ("VmRSS", "RssAnon", "RssFile")
                },
                "heap_in_use": info.uordblks >> 20,
                "heap_free": info.fordblks >> 20,
                "mapped": info.hblkhd >> 20,
            }
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
            time.sleep(every)

    threading.Thread(target=run, name="heap-watch", daemon=True).start()


def run_child(corpus: Path, db: Path, phase2_seconds: float | None, edits: int) -> None:
    """Index ``corpus`` into ``db`` as the benchmark measures it, reporting on stdout."""
    from indexer.api import Lode
    from indexer.config import load_config
    from indexer.models import IndexProgress

    out = sys.stdout
    trace = os.environ.get("LODE_BENCH_MEMORY_TRACE")
    if trace:  # lode's own log, timestamped, beside the RSS samples (``--trace``)
        import logging

        logging.basicConfig(
            filename=trace, level=logging.INFO, format="%(created).3f %(threadName)s %(name)s %(message)s"
        )
        logging.getLogger("indexer.store").setLevel(logging.DEBUG)  # what each optimize does
        logging.getLogger("indexer.vectorizer").setLevel(logging.DEBUG)  # heap pages given back
        _watch_peaks(Path(trace).with_name("stacks.log"))
        _watch_heap(Path(trace).with_name("heap.jsonl"))
    _emit(out, "load")
    lode = Lode(load_config(overrides={"db": db}))
    lode.hold_writer()  # as `lode index` does before it loads the model
    lode.lazy_embedder.embed(["warm the model up"])
    _emit(out, "phase1")
    first = lode.index(corpus, name="corpus", embed=False)
    _emit(out, "disk", label="first_index", files=first.files_indexed, **_disk(lode))
    cancel = threading.Event()
    last = [0.0]

    def progress(state: IndexProgress) -> None:
        if state.phase == "embed" and time.time() - last[0] >= 2.0:
            last[0] = time.time()
            _emit(out, "progress", embedded=state.chunks_embedded, total=state.chunks_total)

    if phase2_seconds is not None:
        threading.Timer(phase2_seconds, cancel.set).start()
    _emit(out, "phase2")
    second = lode.index(corpus, name="corpus", progress=progress, cancel=cancel)
    _emit(
        out,
        "phase2_end",
        embedded=second.chunks_embedded,
        cache_hits=second.embedding_cache_hits,
        connection_cache_mb=round(lode.store.db.connection_cache_bytes() / 2**20, 1),
    )
    _emit(out, "disk", label="after_phase2", **_disk(lode))
    _emit(out, "edits")
    chosen = random.Random(0).sample(sorted(p for p in corpus.rglob("*.py")), edits)
    for n, path in enumerate(chosen):
        with path.open("a", encoding="utf-8") as file:
            file.write(f"\n\ndef lode_bench_edit_{n}(value):\n    return value + {n}\n")
        lode.index(corpus, name="corpus", paths=[path.relative_to(corpus).as_posix()], cancel=cancel)
    _emit(out, "edits_end")
    _emit(out, "disk", label="after_edits", **_disk(lode))
    lode.settle_later()  # as `lode index` and `lode watch` do when they end
    lode.close()
    _emit(out, "closed")


# --------------------------------------------------------------------------- the parent


def _proc_kb(pid: int, file_name: str, field: str) -> int:
    """The kB figure of ``field`` in ``/proc/PID/FILE_NAME`` (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/{file_name}", encoding="ascii") as file:
            for line in file:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _rss_kb(pid: int) -> int:
    return _proc_kb(pid, "status", "VmRSS:")


def _pss_kb(pid: int) -> int:
    """A process's proportional set size: its pages, each shared one divided among the
    processes sharing it (a child between fork and exec shares all of its parent's, which
    its RSS counts a second time)."""
    return _proc_kb(pid, "smaps_rollup", "Pss:")


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as file:
                    todo.extend(int(c) for c in file.read().split())
        except OSError:
            continue
    return found


class _Sampler:
    """Samples a process's RSS (and its tree's) every ``_SAMPLE`` s, tagged with its phase."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.phase = "start"
        self.samples: list[tuple[float, str, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            own = _rss_kb(self.pid)
            tree = sum(_pss_kb(p) for p in _tree(self.pid))
            if own:
                self.samples.append((time.time(), self.phase, own, tree))
            self._stop.wait(_SAMPLE)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _mb(kb: float) -> float:
    return round(kb / 1024, 1)


def _phase_figures(samples: list[tuple[float, str, int, int]]) -> dict[str, Any]:
    phases: dict[str, Any] = {}
    for phase in dict.fromkeys(s[1] for s in samples):
        mine = [s for s in samples if s[1] == phase]
        phases[phase] = {
            "peak_rss_mb": _mb(max(s[2] for s in mine)),
            "peak_tree_pss_mb": _mb(max(s[3] for s in mine)),
            "seconds": round(mine[-1][0] - mine[0][0], 1),
        }
    return phases


def _curve(samples: list[tuple[float, str, int, int]], progress: list[dict[str, Any]]) -> dict[str, Any]:
    """Phase 2's RSS 10 % into it and at its end, its peak and median over the tenth from
    10 % to 20 % of it and over its last tenth, and 20 points of it."""
    mine = [s for s in samples if s[1] == "phase2"]
    if len(mine) < 10:
        return {}
    began, ended = mine[0][0], mine[-1][0]
    start = next(s for s in mine if s[0] >= began + 0.1 * (ended - began))
    end = mine[-1]
    tenth = (ended - began) / 10

    def window(since: float) -> list[int]:
        return [s[2] for s in mine if began + since <= s[0] <= began + since + tenth]

    first, last = window(tenth), window(ended - began - tenth)
    step = max(1, len(mine) // 20)
    points = []
    for s in mine[::step]:
        done = [p["embedded"] for p in progress if p["t"] <= s[0]]
        points.append([round(s[0] - began, 1), _mb(s[2]), done[-1] if done else 0])
    return {
        "start_rss_mb": _mb(start[2]),
        "end_rss_mb": _mb(end[2]),
        "max_rss_mb": _mb(max(s[2] for s in mine)),
        "max_at_seconds": round(max(mine, key=lambda s: s[2])[0] - began, 1),
        "growth": round(end[2] / start[2] - 1, 3),
        "window_peak_mb": [_mb(max(first)), _mb(max(last))],
        "window_growth": round(max(last) / max(first) - 1, 3),
        "window_median_mb": [_mb(statistics.median(first)), _mb(statistics.median(last))],
        "window_median_growth": round(statistics.median(last) / statistics.median(first) - 1, 3),
        "points_seconds_mb_embedded": points,
    }


def _per_chunk(disk: dict[str, Any]) -> dict[str, Any]:
    chunks = max(1, int(disk["chunks"]))
    return {
        **disk,
        "on_disk_per_chunk": round(disk["on_disk"] / chunks),
        "held_per_chunk": round(disk["held"] / chunks),
        "disk_over_held": round(disk["on_disk"] / max(1, disk["held"]), 2),
    }


def _settle(db: Path) -> dict[str, Any]:
    """Poll the folder after the run: until the versions kept for readers have had their
    window (``LODE_KEEP_VERSIONS_SECONDS``) and its size stopped changing, or at most
    ``_SETTLE_SECONDS``."""
    from indexer.api import Lode
    from indexer.config import load_config

    config = load_config(overrides={"db": db})
    keep = config.storage.keep_versions_for(remote=False)
    began = time.time()
    seen: list[dict[str, Any]] = []
    while True:
        lode = Lode(config)
        try:
            store = lode.open_readonly()
            assert store is not None
            disk = store.versions.disk_usage()
        finally:
            lode.close()
        waited = time.time() - began
        seen.append({"after_seconds": round(waited), "on_disk": disk.on_disk, "versions": disk.versions})
        last = {"on_disk": disk.on_disk, "held": disk.held, "versions": disk.versions, "chunks": disk.chunks}
        still = len(seen) >= 2 and seen[-2]["on_disk"] == disk.on_disk
        if waited >= _SETTLE_SECONDS or (waited >= keep + 15 and still):
            return {**_per_chunk(last), "keep_versions_seconds": keep, "polled": seen}
        time.sleep(10)


def run_parent(cap_seconds: float | None, work: Path, trace: Path | None = None) -> dict[str, Any]:
    """Make the corpus, index it in a child while sampling it, then let the folder settle
    (``trace``: a folder for every RSS sample and the child's log, to find what a peak is)."""
    corpus = make_corpus(work / "corpus")
    db = work / "db"
    cap = "none" if cap_seconds is None else str(cap_seconds)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    if trace is not None:
        trace.mkdir(parents=True, exist_ok=True)
        env["LODE_BENCH_MEMORY_TRACE"] = str(trace / "lode.log")
    command = [sys.executable, "-m", "benchmarks.bench_memory", "--child", str(corpus), str(db), cap]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    sampler = _Sampler(child.pid)
    disks: dict[str, Any] = {}
    progress: list[dict[str, Any]] = []
    counts: dict[str, Any] = {}
    assert child.stdout is not None
    for line in child.stdout:
        event = json.loads(line)
        name = event.pop("event")
        if name == "disk":
            disks[event.pop("label")] = _per_chunk({k: v for k, v in event.items() if k != "t"})
        elif name == "progress":
            progress.append(event)
        elif name == "phase2_end":
            counts = {k: v for k, v in event.items() if k != "t"}
        if name not in ("disk", "progress", "phase2_end", "edits_end", "closed"):
            sampler.phase = name
            _log(f"memory: {name}…")
        elif name in ("edits_end", "phase2_end"):
            sampler.phase = "measure"
    if child.wait() != 0:
        raise RuntimeError(f"the indexing child failed ({child.returncode})")
    sampler.stop()
    _log("memory: waiting for the folder to settle…")
    disks["settled"] = _settle(db)
    samples = sampler.samples
    if trace is not None:
        (trace / "samples.json").write_text(json.dumps(samples))
    return {
        "corpus": f"{FILES} files: installed {', '.join(PACKAGES)} sources, copied side by side",
        "phase2_stopped_after_s": cap_seconds,
        "phase2": counts,
        "peak_rss_mb": _mb(max(s[2] for s in samples if s[1] != "measure")),
        "phases": _phase_figures(samples),
        "phase2_curve": _curve(samples, progress),
        "disk": disks,
    }


def main() -> int:
    """Run the memory and disk benchmark of one profile and write its JSON results."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        corpus, db, cap = sys.argv[2:5]
        run_child(Path(corpus), Path(db), None if cap == "none" else float(cap), EDITS)
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="phase 2 stopped after 150 s (default)")
    group.add_argument("--full", action="store_true", help="phase 2 to the end")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (printed)")
    parser.add_argument("--phase2-seconds", type=float, help="stop phase 2 after this long (quick: 150)")
    parser.add_argument(
        "--trace",
        type=Path,
        help="write every RSS sample, lode's log (timestamped), the stacks at each new peak and "
        "the heap's figures every 0.5 s to this folder",
    )
    args = parser.parse_args()
    profile = "full" if args.full else "quick"
    seconds: float | None = None if args.full else args.phase2_seconds or _QUICK_PHASE2_SECONDS
    work = Path(tempfile.mkdtemp(prefix="lode-bench-memory-"))
    try:
        figures = run_parent(seconds, work, args.trace)
    finally:
        if args.keep:
            _log(f"memory: work folder kept at {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result = {
        "benchmark": "memory",
        "profile": profile,
        "machine": {"cpus": os.cpu_count()},
        **figures,
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
        "targets": _TARGETS,
    }
    RESULTS.mkdir(exist_ok=True)
    name = "memory_full" if args.full else "memory"
    if not args.full and args.phase2_seconds:
        name = f"memory_{args.phase2_seconds:.0f}s"
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
