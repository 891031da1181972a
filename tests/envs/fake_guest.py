"""A tiny scripted HTTP server on 127.0.0.1 that records requests (an OSWorld-style guest or a faulty one)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, bytes]:
        """Fields of a multipart or urlencoded form body."""
        kind = self.headers.get("content-type", "")
        if kind.startswith("multipart/"):
            message = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {kind}\r\n\r\n".encode() + self.body
            )
            return {
                part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
                for part in message.iter_parts()
            }
        return {k: v[0].encode() for k, v in parse_qs(self.body.decode()).items()}


Reply = tuple[int, str, bytes]
"""status, content type, body"""


def json_reply(data: Any, status: int = 200) -> Reply:
    return status, "application/json", json.dumps(data).encode()


@dataclass
class FakeGuest:
    """Routes ``(method, path)`` to functions of the request; records every request."""

    routes: dict[tuple[str, str], Callable[[Request], Reply]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    delay: float = 0.0

    def route(self, method: str, path: str, reply: Callable[[Request], Reply]) -> None:
        self.routes[(method, path)] = reply

    def calls(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    def start(self) -> str:
        guest = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                guest.requests.append(request)
                reply = guest.routes.get((self.command, parts.path))
                status, kind, body = (
                    reply(request) if reply else (404, "application/json", b'{"detail":"no"}')
                )
                if guest.delay:
                    time.sleep(guest.delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def osworld_guest(screen: tuple[int, int] = (1920, 1080)) -> FakeGuest:
    """A fake of OSWorld's guest server: no /capabilities, commands succeed, uploads are kept."""
    guest = FakeGuest()
    guest.route("POST", "/screen_size", lambda r: json_reply({"width": screen[0], "height": screen[1]}))
    ok = {"status": "success", "output": "", "error": "", "returncode": 0}
    for path in ("/execute", "/setup/execute"):
        guest.route("POST", path, lambda r: json_reply(ok))
    for path in ("/setup/upload", "/setup/launch", "/setup/open_file", "/setup/activate_window"):
        guest.route("POST", path, lambda r: json_reply({"status": "success", "message": "ok"}))
    return guest
