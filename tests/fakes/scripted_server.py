"""What the fake vendor API servers share: a threaded HTTP server on 127.0.0.1, scripted answers, requests.

A subclass names its request ``handler`` (whose ``server.owner`` is the fake) and its ``default`` answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import ClassVar, Generic, Self, TypeVar

from tests.fakes.openai_server import RecordedRequest, _Server

A = TypeVar("A")


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler that answers JSON."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_json(self, status: int, data: object, headers: dict[str, str] | None = None) -> None:
        """Answer ``data`` as JSON with ``status`` and extra ``headers``."""
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ScriptedServer(Generic[A]):
    """A started server answers queued answers in order, then ``default()``; it records every request."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._answers: deque[A] = deque()
        self._lock = threading.RLock()
        self._arrived = threading.Condition(self._lock)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def default(self) -> A:
        """The answer when nothing is queued."""
        raise NotImplementedError

    def start(self) -> Self:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), self.handler)
        httpd.owner = self  # type: ignore[assignment]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def queue(self, *answers: A) -> None:
        """Queue answers, sent in order."""
        with self._lock:
            self._answers.extend(answers)

    @property
    def pending(self) -> int:
        """Queued answers not sent yet."""
        with self._lock:
            return len(self._answers)

    def posted(self, path: str) -> list[RecordedRequest]:
        """The POST requests to a path holding ``path``, so far."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and path in r.path]

    def wait_until(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Block until ``condition()`` holds after a request arrived (True) or ``timeout`` passes (False)."""
        with self._arrived:
            return self._arrived.wait_for(condition, timeout)

    def record(self, handler: BaseHTTPRequestHandler) -> RecordedRequest:
        """Read and keep the request ``handler`` is serving."""
        length = int(handler.headers.get("content-length") or 0)
        request = RecordedRequest(
            method=handler.command,
            path=handler.path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=handler.rfile.read(length) if length else b"",
            received_at=time.monotonic(),
        )
        with self._arrived:
            self.requests.append(request)
            self._arrived.notify_all()
        return request

    def next_answer(self) -> A:
        """The next queued answer, or the default."""
        with self._lock:
            return self._answers.popleft() if self._answers else self.default()
