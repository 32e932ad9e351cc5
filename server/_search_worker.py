"""A search process of ``lode serve`` (see ``server.search_pool``): run as
``python -m server._search_worker``, it reads the server's config and then search requests
as frames on stdin, and writes each answer (HTTP status, JSON body) as a frame on stdout.

It opens the store for reading and the model, answers several searches at once on
threads, and ends when its stdin ends (the server stopped or was killed).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

from litestar.serialization import encode_json

from indexer.api import Lode, open_for_queries
from indexer.config import LodeConfig
from indexer.embed import QueryGraph
from indexer.errors import LodeError
from indexer.search import SearchOptions, cancellable
from server.convert import to_search_response
from server.errors import error_body
from server.search_pool import read_frame, write_frame

log = logging.getLogger("lode.search_worker")

#: Searches one process runs at once (each also runs its store queries on a few threads).
THREADS = 4


def answer(lode: Lode, options: SearchOptions) -> tuple[int, bytes]:
    """The HTTP status and JSON body for one search."""
    try:
        lode.store.db.forget_if_changed()
        return 200, encode_json(to_search_response(lode.search(options)))
    except BaseException as exc:  # a storage panic too: answer it, never lose the request
        if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
            raise
        if not isinstance(exc, LodeError):
            log.exception("search failed")
        status, body = error_body(exc)
        return status, encode_json(body)


def serve(config: LodeConfig, graph: QueryGraph | None, source: IO[bytes], out: IO[bytes]) -> None:
    """Answer search requests from ``source`` on ``out`` until ``source`` ends (queries
    embedded through ``graph`` when there is one: no torch, no model in memory)."""
    lode = open_for_queries(config, graph)
    lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="lode-search-request")

    def reply(message: Any) -> None:
        with lock:
            write_frame(out, message)

    cancels: dict[int, threading.Event] = {}

    def run(request_id: int, request: Any, cancel: threading.Event) -> None:
        try:
            with cancellable(cancel):
                status, body = answer(lode, request)
        finally:
            cancels.pop(request_id, None)
        reply((request_id, status, body))

    try:
        lode.searcher.query_vector("warm up")  # loads the model
        try:
            lode.store.indexes.prewarm()
        except BaseException as exc:  # only a slower first search (a damaged index's panic too:
            if isinstance(exc, KeyboardInterrupt | SystemExit):  # dying here crash-looped)
                raise
            log.warning("the search indexes could not be prewarmed", exc_info=True)
        reply((0, 0, b"ready"))
        while (message := read_frame(source)) is not None:
            request_id, kind, payload = message
            if kind == "close":
                break
            if kind == "cancel":  # its client went away: stop it (or never start it)
                event = cancels.get(request_id)
                if event is not None:
                    event.set()
                continue
            cancels[request_id] = threading.Event()
            pool.submit(run, request_id, payload, cancels[request_id])
    finally:
        pool.shutdown(wait=True)
        lode.close()


def main() -> None:
    """Entry point: frames on stdin/stdout; anything else printed goes to stderr."""
    # a buffered writer (it completes short pipe writes; ``write_frame`` flushes each frame)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt frames
    # Ctrl-C in a terminal reaches the whole process group: the server stops its children
    # (close frame, or the end of stdin), so they ignore it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    source = sys.stdin.buffer
    first = read_frame(source)
    if first is None:  # the server ended before it sent anything
        return
    config, graph = first
    if not isinstance(config, LodeConfig):
        raise SystemExit("search worker: expected the server's config first")
    serve(config, graph, source, out)


if __name__ == "__main__":
    main()
