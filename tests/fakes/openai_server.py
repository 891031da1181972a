"""A small, real OpenAI-compatible HTTP server on 127.0.0.1 for tests.

It speaks enough of the Chat Completions API (``POST {prefix}/chat/completions``, streaming and not, and
``GET {prefix}/models``) for the openai SDK to talk to it, and it can be scripted: queue replies, errors
with any status and headers (``Retry-After``), delays, streams cut short, invalid JSON. It records every
request it got. It runs in a daemon thread, so it serves any test: asyncio, Qt or a subprocess.

Use it as a context manager or through the ``openai_server`` fixture (``tests/conftest.py``)::

    with FakeOpenAIServer(models=["m"]) as server:
        server.queue(Reply(text="click(1, 2)"))
        server.queue(Reply.error(429, "slow down", headers={"Retry-After": "1"}))
        client = AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        ...
        assert server.requests[0].json["model"] == "m"

When nothing is queued, the server answers ``server.default`` (the text ``OK``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply", "TokenLogprob", "openai_server"]


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the top alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        text: The assistant message (split into ``chunk_chars`` pieces when streaming).
        status: HTTP status. Anything but 200 sends ``body`` (or an OpenAI-shaped error) instead.
        headers: Extra response headers (``Retry-After``...).
        body: A raw body that replaces the normal one (bytes or str sent verbatim, dict as JSON).
        delay: Seconds to wait before answering (the client may time out first).
        chunk_delay: Seconds between stream chunks.
        cut_after: Streaming: close the connection after this many content chunks, without finishing.
        invalid_json: Send a body (or, streaming, an event) that is not JSON.
        usage: ``(prompt_tokens, completion_tokens)``; default: counted from the request and text.
        cached_tokens: Reported as ``prompt_tokens_details.cached_tokens`` when set.
        reasoning_tokens: Reported as ``completion_tokens_details.reasoning_tokens`` when set.
        logprobs: Per-token logprobs to return when the request asked for them.
        finish_reason: The finish reason of the choice.
        chunk_chars: Characters per streamed delta.
    """

    text: str = "OK"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | str | dict[str, Any] | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    cut_after: int | None = None
    invalid_json: bool = False
    usage: tuple[int, int] | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    logprobs: list[TokenLogprob] | None = None
    finish_reason: str = "stop"
    chunk_chars: int = 4

    @classmethod
    def error(
        cls,
        status: int,
        message: str = "error",
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """An OpenAI-shaped error reply: ``{"error": {"message", "type", "code"}}``."""
        body = {"error": {"message": message, "type": type, "code": code, "param": None}}
        return cls(status=status, body=body, headers=dict(headers or {}), delay=delay)


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    @property
    def json(self) -> Any:
        """The body parsed as JSON (``None`` when empty)."""
        return json.loads(self.body) if self.body else None

    @property
    def authorization(self) -> str | None:
        """The ``Authorization`` header, if any."""
        return self.headers.get("authorization")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out close their socket under a sleeping handler; that is expected here.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # --- plumbing -----------------------------------------------------------------------------------

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            received_at=time.monotonic(),
        )
        with self.server.owner._arrived:
            self.server.owner.requests.append(request)
            self.server.owner._arrived.notify_all()
        return request

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        merged = {"content-type": "application/json", **{k.lower(): v for k, v in (headers or {}).items()}}
        for key, value in merged.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), headers)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # --- routes -------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        owner = self.server.owner
        self._record()
        if not owner._authorized(self.headers.get("authorization")):
            self._send_json(401, _error_body("Incorrect API key provided.", "invalid_api_key"))
        elif self.path.rstrip("/") == f"{owner.prefix}/models" and owner.list_models:
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in owner.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        owner = self.server.owner
        request = self._record()
        if self.path.rstrip("/") != f"{owner.prefix}/chat/completions":
            self._send_json(404, {"detail": "Not Found"})
            return
        if not owner._authorized(self.headers.get("authorization")):
            self._send_json(401, _error_body("Incorrect API key provided.", "invalid_api_key"))
            return
        try:
            payload = json.loads(request.body)
        except ValueError:
            self._send_json(400, _error_body("The request body is not JSON.", None))
            return
        model = payload.get("model")
        if owner.models and model not in owner.models:
            message = f"The model `{model}` does not exist."
            self._send_json(404, _error_body(message, "model_not_found"))
            return
        reply = owner._next_reply()
        if reply.delay and owner._stopping.wait(reply.delay):
            return
        if reply.status != 200 or reply.body is not None:
            body = reply.body if reply.body is not None else _error_body("error", None)
            data = body.encode() if isinstance(body, str) else body
            raw = data if isinstance(data, bytes) else json.dumps(data).encode()
            self._send(reply.status, raw, reply.headers)
            return
        if payload.get("stream"):
            self._stream(reply, payload)
        else:
            self._complete(reply, payload)

    def _complete(self, reply: Reply, payload: dict[str, Any]) -> None:
        if reply.invalid_json:
            self._send(200, b'{"id": "chatcmpl-1", "choices": [', reply.headers)
            return
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "finish_reason": reply.finish_reason,
            "logprobs": _logprobs(reply.logprobs) if payload.get("logprobs") and reply.logprobs else None,
        }
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": payload.get("model"),
            "choices": [choice],
            "usage": _usage(reply, payload),
        }
        self._send_json(200, body, reply.headers)

    def _stream(self, reply: Reply, payload: dict[str, Any]) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()

        def event(data: dict[str, Any] | str) -> None:
            text = data if isinstance(data, str) else json.dumps(data)
            self._chunk(f"data: {text}\n\n".encode())

        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0}
        base["model"] = payload.get("model")
        pieces = [reply.text[i : i + reply.chunk_chars] for i in range(0, len(reply.text), reply.chunk_chars)]
        tokens = reply.logprobs if payload.get("logprobs") and reply.logprobs else None
        if reply.invalid_json:
            event("{this is not json")
        for index, piece in enumerate(pieces):
            if reply.cut_after is not None and index >= reply.cut_after:
                # Close without the terminating chunk: the client sees an incomplete body.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            delta: dict[str, Any] = {"content": piece}
            if index == 0:
                delta["role"] = "assistant"
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": None}
            if tokens is not None:
                # One logprob entry per piece, in order, for as long as there are tokens.
                chunk_tokens = tokens[index : index + 1] if index < len(pieces) - 1 else tokens[index:]
                choice["logprobs"] = _logprobs(chunk_tokens)
            event({**base, "choices": [choice]})
            if reply.chunk_delay and owner._stopping.wait(reply.chunk_delay):
                return
        event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
        if (payload.get("stream_options") or {}).get("include_usage"):
            event({**base, "choices": [], "usage": _usage(reply, payload)})
        event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _error_body(message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code, "param": None}}


def _usage(reply: Reply, payload: dict[str, Any]) -> dict[str, Any]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        prompt = max(1, len(json.dumps(payload.get("messages", []))) // 4)
        completion = max(1, len(reply.text) // 4)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    if reply.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reply.reasoning_tokens}
    return usage


def _logprobs(tokens: list[TokenLogprob]) -> dict[str, Any]:
    content = []
    for token in tokens:
        top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in token.top]
        content.append({"token": token.token, "logprob": token.logprob, "bytes": None, "top_logprobs": top})
    return {"content": content, "refusal": None}


class FakeOpenAIServer:
    """A scripted OpenAI-compatible server on ``127.0.0.1`` and a free port.

    Args:
        api_key: When set, requests without ``Authorization: Bearer <api_key>`` get a 401.
        models: Model ids the server knows; a request for another model gets OpenAI's 404
            ``model_not_found``. Empty: any model is accepted.
        prefix: The path the API lives under (``/v1``, as vLLM and OpenAI serve it).
        list_models: Whether ``GET {prefix}/models`` answers (some gateways do not).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: list[str] | tuple[str, ...] = ("test-model",),
        prefix: str = "/v1",
        list_models: bool = True,
    ) -> None:
        self.api_key = api_key
        self.models = list(models)
        self.prefix = prefix.rstrip("/")
        self.list_models = list_models
        self.default = Reply()
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.RLock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; sleeping handlers wake up and end."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- addresses ----------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on."""
        assert self._port is not None, "server not started"
        return self._port

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no API prefix)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The base URL clients use: ``root_url`` plus the prefix (``.../v1``)."""
        return self.root_url + self.prefix

    # --- scripting ----------------------------------------------------------------------------------

    def queue(self, *replies: Reply | str) -> None:
        """Queue replies, answered in order by the next chat completion requests (a str is a text reply)."""
        with self._lock:
            self._replies.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)

    @property
    def pending(self) -> int:
        """How many queued replies have not been sent yet."""
        with self._lock:
            return len(self._replies)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat completion requests received so far."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.endswith("/chat/completions")]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` chat requests have arrived (True) or ``timeout`` passes (False).

        From async code: ``await asyncio.to_thread(server.wait_for_requests, 1)``.
        """
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.chat_requests) >= count, timeout)

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._replies.popleft() if self._replies else self.default

    def _authorized(self, header: str | None) -> bool:
        return self.api_key is None or header == f"Bearer {self.api_key}"


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` (model ``test-model``, no key required), stopped after the test.

    Import it into a ``conftest.py`` to use it: ``from tests.fakes.openai_server import openai_server``.
    """
    with FakeOpenAIServer() as server:
        yield server
