"""Identifiers: time-ordered chunk ids (UUID v7) and stable document ids."""

from __future__ import annotations

import os
import time
import uuid

__all__ = ["document_id", "uuid7"]

_NAMESPACE = uuid.UUID("6f1d3a52-8f6b-4c1e-9a57-1c0de5ea4c40")


def uuid7() -> str:
    """A UUID version 7 (48-bit millisecond timestamp, then random bits), as text."""
    millis = time.time_ns() // 1_000_000
    raw = bytearray(millis.to_bytes(6, "big") + os.urandom(10))
    raw[6] = (raw[6] & 0x0F) | 0x70
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def document_id(project_id: str, file_path: str) -> str:
    """The stable id of a project's file (the same path always gets the same id)."""
    return str(uuid.uuid5(_NAMESPACE, f"{project_id}\x00{file_path}"))
