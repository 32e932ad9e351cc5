"""Index runs for the fault-injection test, forked from one process that imported lode once.

Started with ``tests/faults`` on ``PYTHONPATH`` (so ``sitecustomize`` has put its hooks in),
it imports the command line and the index path, then reads one job a line on stdin
(JSON: ``args`` of ``lode``, ``env`` to set, files for ``stdout`` and ``stderr``), forks a
child that runs it exactly as ``python -m indexer`` would, and answers one line
``{"returncode": N}`` once the child has ended (``-9``: SIGKILLed by its hook). Each run is
still a process of its own that a SIGKILL stops between two commits; the fork only spares
it the second or two of importing LanceDB, Arrow and lode that a fresh interpreter pays.
Nothing is opened before the fork: the template only imports.
"""

import json
import os
import sys
import warnings

import indexer.api
import indexer.cli
import indexer.pipeline
import indexer.store
import indexer.tasks

# lance and lancedb warn at every fork that a runtime of theirs may be mid-operation (lancedb
# resets its event loop in the child): the template never used either, nothing is
warnings.filterwarnings("ignore", message="lancedb fork support is experimental")
warnings.filterwarnings("ignore", message="lance is not fork-safe")


def _child(job: dict) -> None:  # type: ignore[type-arg]
    os.environ.update(job["env"])
    for fd, name in ((1, job["stdout"]), (2, job["stderr"])):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.argv = ["lode", *job["args"]]
    indexer.cli.main()  # ends with SystemExit, as ``python -m indexer`` does


def serve() -> None:
    """Fork one child per job line on stdin; answer each with its exit status."""
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child leaves through main()'s SystemExit, as an interpreter ends
            _child(job)
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
