"""Storage failures told apart, once: what went wrong with the index's storage, and the fix.

A read or write that fails inside the storage libraries (Lance, LanceDB, Arrow, obstore) or
the file system is a *storage failure*: the index's storage, not the request, is at fault.
``storage_cause`` sorts one into a small set of causes, each with a plain sentence and the
fix; ``storage_error`` makes it the ``StorageError`` (a ``StoreError``: 503 in the HTTP API,
one line and exit 2 in the CLI, a tool error in MCP) that every front end shows alike:

    disk-full     the disk (or quota) holding a local index is used up
    read-only     the index folder is on a read-only file system
    denied        the file system refuses this user
    credentials   the object store refuses lode's credentials
    no-bucket     the object store has no such bucket
    timeout       the object store did not answer in time (``object_store_timeout_seconds``)
    unreachable   the object store cannot be reached (refused, no route, no such host)
    damaged       anything else: the index may be damaged (``lode check`` says)

Every cause but ``damaged`` waits for someone to act (free space, fix the credentials): the
index itself is sound, a server's writer retries with backoff, and only a write that
succeeds shows it is over (a check, which only reads, proves nothing about it).
"""

from __future__ import annotations

import errno
import logging
import os
import re
from dataclasses import dataclass

from indexer.errors import StorageError

__all__ = [
    "StorageCause",
    "describe_storage_failure",
    "is_storage_failure",
    "log_failure",
    "storage_cause",
    "storage_error",
]

_STORAGE_MODULES = ("lance", "lancedb", "pyarrow", "obstore")
#: Words of the storage libraries' errors (Lance's, Arrow's, the object_store crate's).
_STORAGE_WORDS = (
    "lanceerror",
    "lance error",
    "arrow error",
    "object store",
    "object_store",
    "io error",
    "s3 error",
    "(os error ",
    "debug source:",
    'generic { store: "',
    "lance-io",
)
_OBJECT_STORE_HINT = "AWS_ENDPOINT_URL or LODE_STORAGE_AWS_ENDPOINT"
_MAX_DETAIL = 160


@dataclass(frozen=True, slots=True)
class StorageCause:
    """One kind of storage failure: what it is, and what fixes it."""

    name: str
    """``disk-full``, ``read-only``, ``denied``, ``credentials``, ``no-bucket``, ``timeout``,
    ``unreachable`` or ``damaged``."""
    what: str
    """The cause, said plainly (``{db}`` stands for the index's location)."""
    fix: str
    """What the user does about it."""

    @property
    def waits(self) -> bool:
        """True when the index is sound and waits for someone to act (all but ``damaged``):
        a writer retries, and only a write that succeeds clears it."""
        return self.name != "damaged"


_CAUSES = {
    cause.name: cause
    for cause in (
        StorageCause(
            "disk-full",
            "the disk holding the index {db} is full",
            "free space on it (or move the index: --db / LODE_DB), then run the command again "
            "(a server retries by itself)",
        ),
        StorageCause(
            "read-only",
            "the index folder {db} is read-only",
            "remount it read-write, or give --db / LODE_DB a writable folder",
        ),
        StorageCause(
            "denied",
            "permission denied on the index {db}",
            "give this user read and write access to the index folder, or give --db / LODE_DB another one",
        ),
        StorageCause(
            "credentials",
            "the object store refused lode's credentials for the index {db}",
            "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or LODE_STORAGE_* options) and that "
            "they may read and write the bucket",
        ),
        StorageCause(
            "no-bucket",
            "the bucket of the index {db} does not exist",
            "create it, or fix the bucket's name in --db / LODE_DB",
        ),
        StorageCause(
            "timeout",
            "the object store of the index {db} did not answer in time",
            f"check the endpoint ({_OBJECT_STORE_HINT}) and the network, or allow more time "
            "with LODE_OBJECT_STORE_TIMEOUT_SECONDS",
        ),
        StorageCause(
            "unreachable",
            "cannot reach the object store of the index {db}",
            f"check the endpoint ({_OBJECT_STORE_HINT}) and the network",
        ),
        StorageCause(
            "damaged",
            "the index {db} cannot be read or written",
            "run `lode check` to see what is damaged",
        ),
    )
}

_ERRNO_CAUSES = {
    errno.ENOSPC: "disk-full",
    errno.EDQUOT: "disk-full",
    errno.EROFS: "read-only",
    errno.EACCES: "denied",
    errno.EPERM: "denied",
    errno.ECONNREFUSED: "unreachable",
    errno.EHOSTUNREACH: "unreachable",
    errno.ENETUNREACH: "unreachable",
    errno.ETIMEDOUT: "timeout",
}
#: Words of the object store's answers and of the HTTP client's errors, by cause, in the
#: order they are tried (a timeout's text also says "error sending request").
_TEXT_CAUSES = (
    ("no-bucket", ("nosuchbucket", "specified bucket does not exist", "bucket does not exist")),
    (
        "credentials",
        (
            "invalidaccesskeyid",
            "signaturedoesnotmatch",
            "accessdenied",
            "expiredtoken",
            "invalidtoken",
            "403 forbidden",
            "401 unauthorized",
            "lacked the necessary privileges",
            "permissiondenied {",
            "unauthenticated {",
        ),
    ),
    ("timeout", ("timedout", "timed out", "kind: timeout", "deadline has elapsed")),
    (
        "unreachable",
        (
            "connection refused",
            "tcp connect error",
            "dns error",
            "failed to lookup address",
            "network unreachable",
            "no route to host",
            "connection reset",
            "error sending request",
        ),
    ),
)
_OBSTORE_CAUSES = {"PermissionDeniedError": "credentials", "UnauthenticatedError": "credentials"}
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_S3_CODE = re.compile(r"<Code>([A-Za-z]+)</Code>")
_HTTP_STATUS = re.compile(r"status code: (\d{3} [A-Za-z ]+?):")


def is_storage_failure(exc: BaseException) -> bool:
    """True when ``exc`` came from the storage libraries or the file system (not a bug of
    lode, not a bad request): a Lance/LanceDB/Arrow/obstore error, a Rust panic, an ``OSError``."""
    if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
        return False
    if isinstance(exc, OSError | StorageError):
        return True
    for cls in type(exc).__mro__:
        if cls.__module__.split(".")[0] in _STORAGE_MODULES or cls.__name__ == "PanicException":
            return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError | ValueError) and any(w in text for w in _STORAGE_WORDS)


def _errno_of(exc: BaseException | str) -> int | None:
    code = getattr(exc, "errno", None)
    if isinstance(code, int):
        return code
    found = _OS_ERROR.search(str(exc))
    return int(found.group(1)) if found else None


def storage_cause(exc: BaseException | str) -> StorageCause:
    """The cause of a storage failure (an exception, or the text another process printed)."""
    if isinstance(exc, StorageError):
        return _CAUSES.get(exc.cause, _CAUSES["damaged"])
    name = _ERRNO_CAUSES.get(_errno_of(exc) or -1)
    if name is None and not isinstance(exc, str):
        name = _OBSTORE_CAUSES.get(type(exc).__name__)
    if name is None:
        text = str(exc).lower()
        name = next((n for n, words in _TEXT_CAUSES if any(w in text for w in words)), "damaged")
    return _CAUSES[name]


def _detail(exc: BaseException | str) -> str:
    """The library's own words, short: the S3 error code and HTTP status of an object
    store's answer, the system's message of an ``OSError``, else its first line."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip()
    found = _OS_ERROR.search(text)
    if found:
        return os.strerror(int(found.group(1)))
    code, status = _S3_CODE.search(text), _HTTP_STATUS.search(text)
    if code or status:
        return ", ".join(part.group(1) for part in (code, status) if part)
    line = text.splitlines()[0] if text else type(exc).__name__
    if not isinstance(exc, str) and not line.startswith(type(exc).__name__):
        line = f"{type(exc).__name__}: {line}"
    return line if len(line) <= _MAX_DETAIL else line[:_MAX_DETAIL] + "…"


def describe_storage_failure(exc: BaseException | str, db: object = None) -> str:
    """One line for a storage failure: its cause (naming the index ``db`` when known), the
    library's words in brackets, then the fix."""
    if isinstance(exc, StorageError):
        return exc.message
    cause = storage_cause(exc)
    where = f"at {db}" if db is not None else ""
    what = cause.what.replace(" {db}", f" {where}" if where else "")
    return f"{what} ({_detail(exc)}): {cause.fix}"


def storage_error(exc: BaseException | str, db: object = None, doing: str | None = None) -> StorageError:
    """The ``StorageError`` saying what a storage failure means and how to fix it; one of
    no known cause met while ``doing`` something (``read the writer's lease of …``) says so."""
    if isinstance(exc, StorageError):
        return exc
    cause = storage_cause(exc)
    if doing is not None and not cause.waits:
        return StorageError(f"cannot {doing} ({_detail(exc)})", cause=cause.name)
    return StorageError(describe_storage_failure(exc, db), cause=cause.name)


def log_failure(logger: logging.Logger, message: str, exc: BaseException) -> None:
    """Warn that something failed (``message``): one line naming the cause and the fix for
    a storage failure that waits for someone (a full disk: its traceback tells nothing
    more), the traceback for anything else."""
    if is_storage_failure(exc) and storage_cause(exc).waits:
        logger.warning("%s: %s", message, describe_storage_failure(exc))
    else:
        logger.warning("%s", message, exc_info=exc)
