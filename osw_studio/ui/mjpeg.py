r"""Split a ``multipart/x-mixed-replace`` MJPEG byte stream into JPEG frames.

Pure and incremental: feed whatever chunks the HTTP client yields, get back the complete frames. Parts
carry ``Content-Length`` (the guest server always sends it); parts without one are cut at the next
boundary.

Examples:
    >>> p = MjpegParser("frame")
    >>> part = b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: 3\r\n\r\nabc\r\n"
    >>> p.feed(part[:20]), p.feed(part[20:] + part)
    ([], [b'abc', b'abc'])
"""

from __future__ import annotations

MAX_BUFFER = 32 * 1024 * 1024
"""A guest sending more than this without a complete part is broken; the buffer is dropped."""


def boundary_of(content_type: str) -> str:
    """The boundary token of a multipart content type (``frame`` when none is named).

    >>> boundary_of('multipart/x-mixed-replace; boundary="--abc"')
    'abc'
    >>> boundary_of("multipart/x-mixed-replace")
    'frame'
    """
    for param in content_type.split(";")[1:]:
        key, _, value = param.strip().partition("=")
        if key.lower() == "boundary" and value:
            return value.strip('"').removeprefix("--")
    return "frame"


class MjpegParser:
    """Incremental parser of one MJPEG stream.

    Args:
        boundary: The multipart boundary without its leading dashes.
    """

    def __init__(self, boundary: str = "frame") -> None:
        self._marker = b"--" + boundary.encode()
        self._buf = bytearray()
        self.dropped = 0
        """Bytes thrown away because they did not parse (a counter for diagnostics)."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add bytes from the wire; return every frame completed by them, oldest first."""
        self._buf += chunk
        frames: list[bytes] = []
        while True:
            frame = self._next()
            if frame is None:
                break
            frames.append(frame)
        if len(self._buf) > MAX_BUFFER:
            self.dropped += len(self._buf)
            self._buf.clear()
        return frames

    def _next(self) -> bytes | None:
        start = self._buf.find(self._marker)
        if start < 0:
            return None
        head_end = self._buf.find(b"\r\n\r\n", start)
        if head_end < 0:
            return None
        if start:
            self.dropped += start
        headers = bytes(self._buf[start + len(self._marker) : head_end]).decode("latin-1")
        body_start = head_end + 4
        length = _content_length(headers)
        if length is not None:
            if len(self._buf) < body_start + length:
                return None
            frame = bytes(self._buf[body_start : body_start + length])
            del self._buf[: body_start + length]
            return frame
        nxt = self._buf.find(self._marker, body_start)
        if nxt < 0:
            return None
        frame = bytes(self._buf[body_start:nxt]).removesuffix(b"\r\n")
        del self._buf[:nxt]
        return frame


def _content_length(headers: str) -> int | None:
    for line in headers.split("\r\n"):
        key, _, value = line.partition(":")
        if key.strip().lower() == "content-length":
            try:
                return int(value.strip())
            except ValueError:
                return None
    return None
