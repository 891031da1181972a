"""A hostile HTTP server on 127.0.0.1: each route writes whatever bytes it likes, for as long as it likes.

Routes are functions of the path that return ``(headers, body chunks)``; the chunks are sent with
chunked transfer encoding (no length declared) until they end or the client hangs up. Bodies are
generated as they are sent, so a route can send gigabytes without holding them.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[[], tuple[dict[str, str], Iterable[bytes]]]


class HostileServer:
    """Serves ``routes`` (``"/path"`` or ``"METHOD /path"``) on 127.0.0.1; counts the bytes it sent."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.sent = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                route = owner.routes.get(f"{self.command} {path}") or owner.routes.get(path)
                if route is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                headers, chunks = route()
                try:
                    self.send_response(200)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for chunk in chunks:
                        if chunk:
                            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                            owner.sent += len(chunk)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def repeated(piece: bytes, total: int) -> Iterator[bytes]:
    """``piece`` again and again, ``total`` bytes in all (generated, never held)."""
    sent = 0
    while sent < total:
        out = piece[: total - sent]
        sent += len(out)
        yield out


def compressed(chunks: Iterable[bytes], encoding: str) -> bytes:
    """The chunks compressed whole with ``gzip`` or ``deflate`` (zlib-wrapped), made a piece at a time."""
    if encoding == "gzip":
        obj = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    else:
        obj = zlib.compressobj(1)
    out = [obj.compress(c) for c in chunks]
    out.append(obj.flush())
    return b"".join(out)


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header declares ``width``×``height`` RGB pixels and whose data holds one row."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = zlib.compress(b"\0" + b"\0" * 3 * min(width, 4096))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", row) + chunk(b"IEND", b"")


__all__ = ["HostileServer", "compressed", "png_header", "repeated"]
