"""Search processes: ``POST /api/v1/search`` answered by child processes of the server.

A search is mostly native work (ONNX Runtime, Lance) that releases the GIL, but the
server's event loop, Litestar and the search threads still take turns on one GIL: under
clients asking back to back the one server process was the bottleneck, and two whole
servers on one store answered faster than one (docs/http-api.md). So the server
starts ``search_processes`` children (``python -m server._search_worker``) that open the
same store read-only and the same model; the event loop hands each search to the child
with the fewest searches in flight and writes back the JSON body the child encoded. The
one writer stays in the server process; a child sees each write at the next table version
it pins, like any reader, and forgets its cached project list whenever a table changed.

Frames on the child's stdin/stdout: a 4-byte big-endian length, then a pickle (both ends
are this program). Requests are ``(id, kind, payload)``; answers ``(id, status, body)``,
where ``body`` is the JSON response (or error) body. A search whose client went away is
forgotten here and a ``cancel`` request sent: the child stops it at its next stage (or
before it starts) and answers 499, which no one reads. A child that is not ready yet, or
died, makes its searches run in the server process instead; a dead child is started
again after a pause.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import anyio.to_thread

from indexer.activity import SearchActivity
from indexer.config import LodeConfig
from indexer.embed import QueryGraph
from indexer.search import SearchOptions

__all__ = ["SearchAnswer", "SearchPool", "read_frame", "write_frame"]

log = logging.getLogger(__name__)

_HEADER = struct.Struct(">I")
#: The largest frame either side accepts (a page of 100 hits of long chunks is ~2 MB).
MAX_FRAME = 256 * 1024 * 1024
#: A search process that has not answered after this long is ended (and started again);
#: the search then runs in the server process.
ANSWER_SECONDS = 120.0
#: Seconds before a child that died is started again (doubling up to a minute).
_RESTART_SECONDS = 1.0
_RESTART_MAX_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """What a search process answered: the HTTP status and the JSON body."""

    status: int
    body: bytes


def _frame(message: Any) -> bytes:
    """One message as a frame: its length, then its pickle."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _frame_size(header: bytes) -> int:
    """The length a frame header announces (over ``MAX_FRAME`` is an error)."""
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is over the limit")
    return int(size)


def write_frame(out: IO[bytes], message: Any) -> None:
    """Write one message as a frame (blocking; the caller serialises writers)."""
    out.write(_frame(message))
    out.flush()


def read_frame(source: IO[bytes]) -> Any:
    """Read one message (blocking); None at the end of the stream."""
    header = source.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    size = _frame_size(header)
    data = source.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)  # our own child process


async def _read_frame_async(reader: asyncio.StreamReader) -> Any:
    try:
        data = await reader.readexactly(_frame_size(await reader.readexactly(_HEADER.size)))
    except asyncio.IncompleteReadError:
        return None
    return pickle.loads(data)  # our own child process


class _WorkerLostError(Exception):
    """The search process died or closed before it answered."""


@dataclass(eq=False)
class _Child:
    """One search process and the searches it has in flight."""

    number: int
    process: asyncio.subprocess.Process
    ready: bool = False
    pending: dict[int, asyncio.Future[SearchAnswer]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None

    def send(self, message: Any) -> None:
        """Queue one frame to the child (the event loop writes it)."""
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise _WorkerLostError(f"search process {self.number} is gone")
        stdin.write(_frame(message))


class SearchPool:
    """The server's search processes, driven from its event loop."""

    def __init__(
        self,
        config: LodeConfig,
        processes: int,
        query_graph: Callable[[], QueryGraph | None],
        activity: SearchActivity | None = None,
    ) -> None:
        self.config = config
        self.processes = processes
        #: Counts the searches sent to the processes (the index writer yields to them).
        self.activity = activity or SearchActivity()
        #: Gives the model's ``QueryGraph`` (blocking: it loads the model if needed); with
        #: one, the processes embed queries without loading torch and the model (~0.5 GB).
        self._query_graph = query_graph
        self._graph: QueryGraph | None = None
        self._children: dict[int, _Child] = {}
        self._ids = itertools.count(1)
        self._closing = False
        self._restarts: dict[int, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Searches the processes answered (the others ran in the server process).
        self.answered = 0
        #: Searches cancelled (their client went away) while a process ran them.
        self.cancelled = 0

    @property
    def ready(self) -> int:
        """How many search processes answer searches now."""
        return sum(1 for c in self._children.values() if c.ready)

    @property
    def in_flight(self) -> int:
        """Searches sent to the processes and not answered (nor cancelled) yet."""
        return sum(len(c.pending) for c in self._children.values())

    @property
    def query_graph(self) -> QueryGraph | None:
        """What the processes embed queries with (None: each loads the model itself)."""
        return self._graph

    @property
    def pids(self) -> list[int]:
        """Process ids of the search processes running now."""
        return [c.process.pid for c in self._children.values()]

    def start(self) -> None:
        """Start every search process once the model is loaded, in the background (they
        open the store and report ready on their own)."""
        self._keep(asyncio.get_running_loop().create_task(self._start()))

    async def _start(self) -> None:
        try:
            self._graph = await anyio.to_thread.run_sync(self._query_graph)
        except Exception:  # the model failed in this process: each process tries on its own
            log.warning("search processes load the model themselves", exc_info=True)
        for number in range(self.processes):
            if self._closing:
                return
            try:
                await self._spawn(number)
            except OSError:
                log.exception("search process %d could not be started", number)

    def _keep(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _spawn(self, number: int) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",  # not the working directory first on sys.path: a project's own server.py
            "-m",
            "server._search_worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            limit=MAX_FRAME,
        )
        child = _Child(number, process)
        self._children[number] = child
        child.send((self.config, self._graph))
        child.reader = asyncio.get_running_loop().create_task(self._read(child))

    async def _read(self, child: _Child) -> None:
        """Resolve the child's answers until its output ends, then fail what is left."""
        stdout = child.process.stdout
        assert stdout is not None
        try:
            while True:
                message = await _read_frame_async(stdout)
                if message is None:
                    break
                request_id, status, body = message
                if request_id == 0:
                    child.ready = True
                    self._restarts.pop(child.number, None)  # a new death waits the shortest pause
                    log.info("search process %d is ready (pid %d)", child.number, child.process.pid)
                    continue
                future = child.pending.pop(request_id, None)
                if future is not None and not future.done():
                    future.set_result(SearchAnswer(int(status), bytes(body)))
        except Exception:
            log.exception("reading from search process %d failed", child.number)
        finally:
            child.ready = False
            for future in child.pending.values():
                if not future.done():
                    future.set_exception(_WorkerLostError(f"search process {child.number} ended"))
            child.pending.clear()
            await self._reap(child)

    async def _reap(self, child: _Child) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.process.kill()
        code = await child.process.wait()
        if self._children.get(child.number) is child:
            del self._children[child.number]
        if self._closing:
            return
        pause = min(_RESTART_MAX_SECONDS, self._restarts.get(child.number, _RESTART_SECONDS / 2) * 2)
        self._restarts[child.number] = pause
        log.warning(
            "search process %d ended (exit %s); starting it again in %.0f s", child.number, code, pause
        )
        self._keep(asyncio.get_running_loop().create_task(self._respawn(child.number, pause)))

    async def _respawn(self, number: int, pause: float) -> None:
        await asyncio.sleep(pause)
        if not self._closing and number not in self._children:
            try:
                await self._spawn(number)
            except OSError:
                log.exception("search process %d could not be started", number)

    async def search(self, request: SearchOptions) -> SearchAnswer | None:
        """The answer of the least busy ready search process, or None when none is ready or
        the process died before answering (the caller then searches in this process)."""
        ready = [c for c in self._children.values() if c.ready]
        if not ready:
            return None
        child = min(ready, key=lambda c: len(c.pending))
        request_id = next(self._ids)
        future: asyncio.Future[SearchAnswer] = asyncio.get_running_loop().create_future()
        child.pending[request_id] = future
        self.activity.begin()
        try:
            child.send((request_id, "search", request))
            answer = await asyncio.wait_for(future, ANSWER_SECONDS)
        except asyncio.CancelledError:  # its client went away: the process stops it too
            self.cancelled += 1
            with contextlib.suppress(_WorkerLostError, OSError):
                child.send((request_id, "cancel", None))
            raise
        except _WorkerLostError:
            return None
        except TimeoutError:
            log.error("search process %d did not answer in %.0f s: ending it", child.number, ANSWER_SECONDS)
            with contextlib.suppress(ProcessLookupError):
                child.process.kill()
            return None
        finally:
            child.pending.pop(request_id, None)
            self.activity.end()
        self.answered += 1
        return answer

    async def close(self, timeout: float = 10.0) -> None:
        """Ask every search process to stop, then end those that do not in time."""
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        children = list(self._children.values())
        for child in children:
            if not child.ready:  # still loading: it would read the close frame only later
                with contextlib.suppress(ProcessLookupError):
                    child.process.kill()
                continue
            with contextlib.suppress(_WorkerLostError, OSError):
                child.send((0, "close", None))
                if child.process.stdin is not None:
                    child.process.stdin.close()
        waits = [asyncio.wait_for(c.process.wait(), timeout) for c in children]
        for child, outcome in zip(
            children, await asyncio.gather(*waits, return_exceptions=True), strict=True
        ):
            if isinstance(outcome, BaseException):
                with contextlib.suppress(ProcessLookupError):
                    child.process.kill()
        for child in children:
            if child.reader is not None:
                with contextlib.suppress(Exception):
                    await child.reader
