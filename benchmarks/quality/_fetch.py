"""Downloading and unpacking registry artifacts: HTTPS, sha256, tar, zip and Debian ``.deb``.

Nothing here knows which corpora exist; ``corpora`` passes the URL, the digest and a
filter of member paths. A ``.deb`` is read without ``dpkg``: it is an ``ar`` archive whose
``data.tar.*`` member holds the files.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["DownloadError", "download", "iter_archive", "sha256_of"]

_CHUNK = 1 << 20
_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60
_USER_AGENT = "lode-bench/0.1 (corpus download)"


class DownloadError(RuntimeError):
    """An artifact could not be fetched or did not match its pinned digest."""


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, target: Path, sha256: str, *, attempts: int = 3, timeout: float = 60) -> Path:
    """Fetch ``url`` to ``target`` once (reused while its digest matches ``sha256``)."""
    if target.exists() and sha256_of(target) == sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    last: Exception | None = None
    for attempt in range(attempts):
        try:
            request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
            with urllib.request.urlopen(request, timeout=timeout) as response, part.open("wb") as out:
                while block := response.read(_CHUNK):
                    out.write(block)
            break
        except OSError as exc:  # URLError and HTTPError are OSErrors
            last = exc
            if attempt + 1 < attempts:
                time.sleep(1 + 2 * attempt)
    else:
        raise DownloadError(f"cannot fetch {url}: {last}")
    got = sha256_of(part)
    if got != sha256:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{url}: sha256 {got} does not match the pinned {sha256}")
    part.replace(target)
    return target


def iter_archive(
    path: Path, keep: Callable[[str], bool], inner: str | None = None
) -> Iterator[tuple[str, bytes]]:
    """(member path, bytes) of the regular files of an archive that ``keep`` accepts.

    ``inner`` names a zip or tar inside the archive (the JDK's ``src.zip``) whose members
    are read instead.
    """
    opened = _open_members(path.name, path.read_bytes(), keep if inner is None else _exactly(inner))
    if inner is None:
        yield from opened
        return
    for name, data in opened:
        yield from _open_members(name, data, keep)


def _exactly(wanted: str) -> Callable[[str], bool]:
    return lambda name: name.lstrip("./") == wanted.lstrip("./")


def _open_members(name: str, data: bytes, keep: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    if name.endswith(".deb"):
        yield from _open_members(*_deb_data(data), keep)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.is_dir() and keep(info.filename):
                    yield info.filename, archive.read(info)
    else:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for member in archive:
                member_name = member.name.removeprefix("./")
                if member.isfile() and keep(member_name):
                    handle = archive.extractfile(member)
                    if handle is not None:
                        yield member_name, handle.read()


def _deb_data(data: bytes) -> tuple[str, bytes]:
    """The ``data.tar.*`` member of a ``.deb`` (an ``ar`` archive)."""
    if not data.startswith(_AR_MAGIC):
        raise DownloadError("not a Debian package (no ar header)")
    offset = len(_AR_MAGIC)
    while offset + _AR_HEADER <= len(data):
        header = data[offset : offset + _AR_HEADER]
        member = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        body = data[offset + _AR_HEADER : offset + _AR_HEADER + size]
        if member.startswith("data.tar"):
            return member, body
        offset += _AR_HEADER + size + (size % 2)
    raise DownloadError("Debian package without a data.tar member")
