#!/usr/bin/env python3
"""Sample module for the chunker tests."""

from __future__ import annotations

import functools
from dataclasses import dataclass

MAX_RETRIES = 3
DEFAULT_NAME: str = "lode"


def retry(times: int):
    """Retry the wrapped function ``times`` times."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for _ in range(times):
                try:
                    return func(*args, **kwargs)
                except ValueError:
                    continue
            return None

        return wrapper

    return decorator


@dataclass
class HttpParser:
    """Parses HTTP requests."""

    buffer: bytes = b""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.headers: dict[str, str] = {}

    @retry(MAX_RETRIES)
    def parseHTTPRequest(self, raw: bytes) -> Request:
        """Parse one request."""
        line, _, rest = raw.partition(b"\r\n")
        method, target = line.split(b" ", 1)
        return Request(method.decode(), target.decode(), self.headers)

    class Options:
        """Nested options."""

        strict = True

        def enable(self, flag: bool) -> None:
            self.strict = flag


def test_parse_request():
    parser = HttpParser()
    key = lambda item: item[0]
    assert parser.parseHTTPRequest(b"GET / HTTP/1.1") is not None
    assert sorted([(1, 2)], key=key)


if __name__ == "__main__":
    print(HttpParser().limit)
