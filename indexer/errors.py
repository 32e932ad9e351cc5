"""The one error tree of lode.

Every error lode raises on purpose derives from ``LodeError``; the HTTP layer maps
these classes to status codes in exactly one place (``server.errors``), the CLI maps
them to a one-line message and exit code 2.

    LodeError
    ├── ConfigError            bad settings (env var, config file, flag)
    ├── ValidationError        a request option is invalid; names the field(s)       → 400
    │   └── PathError          a path is missing, not a directory, unreadable, outside a root
    ├── NotFoundError          an unknown project, task, document, chunk or node      → 404
    ├── ConflictError          the request clashes with current state                 → 409
    │   ├── TokenExpiredError  a continuation token made before the index changed
    │   └── ReadOnlyError      a write sent to a reader (``lode serve --read-only``)
    ├── PayloadTooLargeError   a request body over the limit                          → 413
    ├── StoreError             the index on disk cannot be used                       → 503
    │   ├── StorageError       its storage failed: disk full, permission denied, wrong
    │   │                      credentials, no bucket, an endpoint that does not answer
    │   ├── ModelMismatchError the store was built with another embedding model
    │   └── StoreVersionError  the store's schema version is unknown
    ├── EmbedError             the embedding model failed to load or to encode
    ├── SearchCancelledError   a search stopped: its client went away                  → 499
    ├── ServerUnavailableError a lode server was expected but cannot be reached
    └── ServiceError           the user's service manager (systemd, launchd) is absent or refused
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_MESSAGE_CHARS",
    "QUOTE_CHARS",
    "ConfigError",
    "ConflictError",
    "EmbedError",
    "FieldError",
    "LodeError",
    "ModelMismatchError",
    "NotFoundError",
    "PathError",
    "PayloadTooLargeError",
    "ReadOnlyError",
    "SearchCancelledError",
    "ServerUnavailableError",
    "ServiceError",
    "StorageError",
    "StoreError",
    "StoreVersionError",
    "TokenExpiredError",
    "UnauthorizedError",
    "ValidationError",
    "clip",
]

# These three live here, not in ``indexer.limits`` (which re-exports them), because every
# error cuts its message with them and ``limits`` raises errors: the root of the error tree
# imports nothing of lode's.
QUOTE_CHARS: Final = 80
"""Most characters of a value an error message or a log line quotes."""
MAX_MESSAGE_CHARS: Final = 1_000
"""Most characters of a request error's message (a longer one is cut)."""


def clip(text: str, chars: int = QUOTE_CHARS) -> str:
    """``text`` cut to its first ``chars`` characters, ``…`` marking a cut."""
    return text if len(text) <= chars else text[:chars] + "…"


class LodeError(Exception):
    """Root of every error lode raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(LodeError):
    """A setting (flag, environment variable, config file) is invalid."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """One invalid field of a request: its name and what is wrong with it (both cut short:
    a field's name can be a key the request made up)."""

    field: str
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", clip(self.field, QUOTE_CHARS))
        object.__setattr__(self, "message", clip(self.message, MAX_MESSAGE_CHARS))


class ValidationError(LodeError):
    """Request options are invalid; ``errors`` names each offending field."""

    def __init__(self, field: str, message: str, *, more: tuple[FieldError, ...] = ()) -> None:
        first = FieldError(field, message)
        super().__init__(f"{first.field}: {first.message}")
        self.errors: tuple[FieldError, ...] = (first, *more)

    @property
    def field(self) -> str:
        """Name of the first offending field."""
        return self.errors[0].field


class PathError(ValidationError):
    """A path argument does not name a readable directory or file inside its root."""


class NotFoundError(LodeError):
    """An id or name that does not exist; ``field`` names the request field that named it,
    when one did (``projects`` of a search)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(clip(message, MAX_MESSAGE_CHARS))
        self.field = field


class ConflictError(LodeError):
    """The request is valid but clashes with the current state; ``field`` names the request
    field that clashes, when one does (a taken name)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class TokenExpiredError(ConflictError):
    """A continuation token was made for an index version that no longer exists."""


class ReadOnlyError(ConflictError):
    """A write reached a process that only reads the index; the message names the writer."""


class PayloadTooLargeError(LodeError):
    """A request body larger than the configured limit."""


class StoreError(LodeError):
    """The index on disk cannot be opened or written."""


class StorageError(StoreError):
    """The index's storage failed: ``cause`` names why (``disk-full``, ``read-only``,
    ``denied``, ``credentials``, ``no-bucket``, ``timeout``, ``unreachable``, ``damaged``:
    see ``indexer.storage_failure``) and the message says the fix."""

    def __init__(self, message: str, cause: str = "damaged") -> None:
        super().__init__(message)
        self.cause = cause


class ModelMismatchError(StoreError):
    """The store was built with another embedding model or dimension."""


class StoreVersionError(StoreError):
    """The store's schema version is not one this lode understands."""


class EmbedError(LodeError):
    """The embedding model could not be loaded or failed on a batch."""


class SearchCancelledError(LodeError):
    """A search stopped before its end because its client went away (the answer, 499,
    reaches no one: it frees the search's thread for the next)."""


class ServerUnavailableError(LodeError):
    """A lode server was expected at an address but did not answer."""


class ServiceError(LodeError):
    """``lode service``: systemd's user manager or launchd is absent, or refused a step."""


class UnauthorizedError(LodeError):
    """A lode server refused the API key (missing or wrong)."""
