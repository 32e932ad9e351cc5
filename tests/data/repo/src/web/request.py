"""Parsing raw HTTP requests."""


class RequestParser:
    """Turns raw bytes into a request object."""

    def __init__(self, max_header_bytes: int = 8192) -> None:
        self.max_header_bytes = max_header_bytes

    def parseDocument(self, raw: bytes) -> dict:
        """Split a raw HTTP message into its head and body."""
        head, _, body = raw.partition(b"\r\n\r\n")
        if len(head) > self.max_header_bytes:
            raise ValueError("header too large")
        return {"head": head.decode("latin-1"), "body": body}


def parse_document(text: str) -> list[str]:
    """Split a plain-text document into paragraphs."""
    return [block for block in text.split("\n\n") if block.strip()]


def ParseDocument(text: str) -> str:
    """Normalise line endings of a document."""
    return text.replace("\r\n", "\n")
