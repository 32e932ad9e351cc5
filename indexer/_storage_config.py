"""Where the index is, and the settings of an index on object storage (re-exported by
``indexer.config``, which alone reads them from the environment)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from indexer.errors import ConfigError

__all__ = [
    "LOCAL_KEEP_VERSIONS_SECONDS",
    "OBJECT_STORE_KEEP_VERSIONS_SECONDS",
    "IndexLocation",
    "StorageConfig",
    "db_location",
    "is_object_store",
    "storage_options_from_env",
]

#: Seconds a replaced table version is kept in a local folder (``keep_versions_seconds``
#: unset): its readers pin a version for one request, and every vector write of phase 2
#: rewrites rows.
LOCAL_KEEP_VERSIONS_SECONDS = 60.0
#: …and on object storage, where readers in other processes serve a version for their
#: consistency window and page with continuation tokens.
OBJECT_STORE_KEEP_VERSIONS_SECONDS = 3600.0

if TYPE_CHECKING:
    #: Where the index is: a local folder (``Path``) or an object-storage URI (``str``).
    IndexLocation: TypeAlias = Path | str
else:
    # the same at run time, but msgspec (which Litestar's dependency checks run over the
    # server's context and so over this config) takes no union of Path with str
    IndexLocation = Any


def is_object_store(db: Path | str) -> bool:
    """Whether an index location is an object-storage URI (``s3://bucket/prefix``,
    ``gs://…``, ``az://…``: anything with a scheme but ``file://``), not a local folder."""
    return isinstance(db, str) and "://" in db and not db.startswith("file://")


def db_location(raw: Path | str) -> Path | str:
    """An index location as lode keeps it: a local folder as a ``Path`` (``~`` expanded,
    ``file://`` dropped), an object-storage URI as its text without a trailing slash."""
    if isinstance(raw, Path):
        return raw.expanduser()
    text = raw.strip()
    if text.startswith("file://"):
        return Path(text.removeprefix("file://")).expanduser()
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if not rest.strip("/"):
            raise ConfigError(f"db: {raw!r} names no bucket")
        return f"{scheme.lower()}://{rest.rstrip('/')}"
    return Path(text).expanduser()


#: The longest an object store's connection may take to open (``connect_timeout``).
_CONNECT_TIMEOUT_MS = 5000


@dataclass(frozen=True, slots=True)
class StorageConfig:
    """How lode reaches the index, and how its one writer and its readers share it."""

    storage_options: tuple[tuple[str, str], ...] = ()
    """Options of the object store of an ``s3://`` (``gs://``, ``az://``) index: endpoint,
    region, keys, ``allow_http``… Each ``LODE_STORAGE_<KEY>`` variable gives option
    ``<key>``, over the standard ``AWS_*`` variables; unused for a local folder."""
    read_consistency_seconds: float = 3.0
    """A read-only server sees the writer's commits at most this long after they land (it
    asks for each table's newest version at most this often)."""
    keep_versions_seconds: float | None = None
    """The writer prunes a table version only once a newer one has existed for this long,
    so a reader still pinned to it (within its consistency window, or paging with a
    continuation token) keeps reading it. Unset: ``OBJECT_STORE_KEEP_VERSIONS_SECONDS``
    (an hour) on object storage, ``LOCAL_KEEP_VERSIONS_SECONDS`` (a minute) for a local
    folder, whose readers (the server's search processes, ``lode search``) read the newest
    version at every request (see ``keep_versions_for``)."""
    writer_lease_seconds: float = 30.0
    """On object storage, the writer renews its lease (``<index>/writer.lease``) every third
    of this; a writer that stopped renewing (crashed, cut off) loses it after this long."""
    object_store_timeout_seconds: float = 30.0
    """On object storage, the longest one request may take (connecting: at most 5 s of
    it), and how long a failing request is tried again: an endpoint that does not answer
    fails a command after about this long for each request it makes (a handful at most),
    with one line naming the cause. Storage options ``timeout``, ``connect_timeout`` and
    ``client_retry_timeout`` given explicitly win."""

    def __post_init__(self) -> None:
        if self.read_consistency_seconds < 0:
            raise ConfigError("read_consistency_seconds must be >= 0")
        keep = self.keep_versions_seconds
        if keep is not None and keep < self.read_consistency_seconds:
            raise ConfigError(
                f"keep_versions_seconds ({self.keep_versions_seconds}) must be at least "
                f"read_consistency_seconds ({self.read_consistency_seconds})"
            )
        if self.writer_lease_seconds < 3:
            raise ConfigError(f"writer_lease_seconds must be >= 3 (got {self.writer_lease_seconds})")
        if self.object_store_timeout_seconds <= 0:
            raise ConfigError(
                f"object_store_timeout_seconds must be > 0 (got {self.object_store_timeout_seconds})"
            )

    @property
    def options(self) -> dict[str, str]:
        """The storage options given (``LODE_STORAGE_*``, ``AWS_*``) as a dict."""
        return dict(self.storage_options)

    @property
    def store_options(self) -> dict[str, str]:
        """The options lode opens an object store with (what Lance, LanceDB and the
        writer's lease take): ``options`` over the timeouts of ``object_store_timeout_seconds``."""
        millis = max(1, round(self.object_store_timeout_seconds * 1000))
        timeouts = {
            "timeout": f"{millis}ms",
            "connect_timeout": f"{min(millis, _CONNECT_TIMEOUT_MS)}ms",
            "client_retry_timeout": str(max(1, round(self.object_store_timeout_seconds))),
        }
        return {**timeouts, **self.options}

    def keep_versions_for(self, remote: bool) -> float:
        """Seconds a replaced table version is kept: ``keep_versions_seconds`` when set,
        else the default of an index on object storage (``remote``) or in a local folder
        (never under ``read_consistency_seconds``)."""
        if self.keep_versions_seconds is not None:
            return self.keep_versions_seconds
        default = OBJECT_STORE_KEEP_VERSIONS_SECONDS if remote else LOCAL_KEEP_VERSIONS_SECONDS
        return max(default, self.read_consistency_seconds)


#: ``LODE_STORAGE_<KEY>=value`` sets storage option ``<key>`` (lower case).
_STORAGE_PREFIX = "LODE_STORAGE_"
#: The standard AWS variables lode passes on as storage options (explicit options, so a
#: search process, a maintenance child and the writer's lease all use the same ones).
_AWS_OPTIONS = (
    ("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
    ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
    ("AWS_SESSION_TOKEN", "aws_session_token"),
    ("AWS_DEFAULT_REGION", "aws_region"),
    ("AWS_REGION", "aws_region"),
    ("AWS_ENDPOINT", "aws_endpoint"),
    ("AWS_ENDPOINT_URL", "aws_endpoint"),
    ("AWS_ENDPOINT_URL_S3", "aws_endpoint"),
    ("AWS_ALLOW_HTTP", "allow_http"),
)
#: Other spellings of the S3 options above (object_store takes each), as lode keeps them:
#: one spelling per option, so a variable and its alias cannot both reach the store.
_CANONICAL = {
    "access_key_id": "aws_access_key_id",
    "secret_access_key": "aws_secret_access_key",
    "session_token": "aws_session_token",
    "token": "aws_session_token",
    "aws_token": "aws_session_token",
    "region": "aws_region",
    "aws_default_region": "aws_region",
    "endpoint": "aws_endpoint",
    "endpoint_url": "aws_endpoint",
    "aws_endpoint_url": "aws_endpoint",
    "aws_endpoint_url_s3": "aws_endpoint",
    "aws_allow_http": "allow_http",
}


def storage_options_from_env(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The storage options the environment gives: the ``AWS_*`` variables lode knows
    (later ones in ``_AWS_OPTIONS`` win), then every ``LODE_STORAGE_<KEY>`` over them; an
    ``http://`` endpoint (a local S3-compatible server) implies ``allow_http``."""
    options: dict[str, str] = {}
    for name, key in _AWS_OPTIONS:
        if env.get(name, "").strip():
            options[key] = env[name].strip()
    for name, value in env.items():
        if name.startswith(_STORAGE_PREFIX) and len(name) > len(_STORAGE_PREFIX) and value != "":
            key = name[len(_STORAGE_PREFIX) :].lower()
            options[_CANONICAL.get(key, key)] = value
    if options.get("aws_endpoint", "").lower().startswith("http://"):
        options.setdefault("allow_http", "true")
    return tuple(sorted(options.items()))
