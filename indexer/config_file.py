"""lode's config file: TOML at ``$LODE_CONFIG`` or ``<user config dir>/lode/config.toml``.

Only the ``[discover]`` table is read for now (``docs/lode.example.toml`` documents every
key with its default). A missing file is fine; an unreadable file, bad TOML, an unknown
key or a bad value is a ConfigError naming the file and the key.
"""

from __future__ import annotations

import os
import threading
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import ConfigError, ValidationError

if TYPE_CHECKING:  # imported lazily: indexer.config may import this module
    from indexer.search.discover import DiscoverConfig

__all__ = ["config_file_path", "discover_overrides", "load_config_file", "load_discover_config"]

#: Tables the file may hold.
KNOWN_TABLES = frozenset({"discover"})


def config_file_path(env: Mapping[str, str] | None = None) -> Path:
    """``$LODE_CONFIG``, else ``config.toml`` in the per-user config directory (platformdirs)."""
    env = os.environ if env is None else env
    override = env.get("LODE_CONFIG", "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("lode", appauthor=False)) / "config.toml"


def load_config_file(path: Path) -> dict[str, Any]:
    """The parsed file ({} when it does not exist); unknown top-level tables are an error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(parsed) - KNOWN_TABLES)
    if unknown:
        known = ", ".join(sorted(KNOWN_TABLES))
        raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)}; known tables: {known}")
    return parsed


def discover_overrides(path: Path) -> dict[str, Any]:
    """The file's ``[discover]`` table, checked against ``DiscoverConfig`` (unknown keys and bad
    values are a ConfigError naming every offending key)."""
    from indexer.search.discover import DiscoverConfig, with_overrides

    table = load_config_file(path).get("discover", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: discover must be a table")
    try:
        with_overrides(DiscoverConfig(), table, prefix="discover.")
    except ValidationError as exc:
        keys = ", ".join(e.field for e in exc.errors)
        raise ConfigError(f"{path}: {keys}: {exc.errors[0].message}") from None
    return table


_CACHE: dict[Path, tuple[int, DiscoverConfig]] = {}
_LOCK = threading.Lock()


def load_discover_config(
    env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> DiscoverConfig:
    """Discovery settings: defaults, then the config file's ``[discover]`` table (re-read when
    the file changes), then ``overrides`` (same nesting; errors name ``config.<key>``)."""
    from indexer.search.discover import DiscoverConfig, with_overrides

    path = config_file_path(env)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = -1
    with _LOCK:
        cached = _CACHE.get(path)
    if cached is None or cached[0] != stamp:
        base = with_overrides(DiscoverConfig(), discover_overrides(path), prefix="discover.")
        cached = (stamp, base)
        with _LOCK:
            _CACHE[path] = cached
    return with_overrides(cached[1], overrides)
