"""A small, real Anthropic Messages API server on 127.0.0.1 for tests, with scripted tool uses.

``POST /v1/messages`` answers streaming (server-sent events as Anthropic sends them: ``message_start``,
``content_block_*`` with text, thinking and ``input_json`` deltas, ``message_delta``, ``message_stop``) and
not, for the anthropic SDK. It checks what a computer-use request must get right: the key (``x-api-key``
or a bearer token), the model, and that a versioned computer tool comes with its beta header
(``computer_20251124`` needs ``computer-use-2025-11-24``); a tool version it does not know is refused as
Anthropic refuses it. It records every request.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.openai_server import RecordedRequest
from tests.fakes.scripted_server import JsonHandler, ScriptedServer

__all__ = ["FakeMessagesServer", "Turn", "text", "thinking", "tool_use"]

TOOL_BETAS = {"computer_20251124": "computer-use-2025-11-24", "computer_20250124": "computer-use-2025-01-24"}
"""Computer tool versions and the beta header each needs."""


def text(value: str) -> dict[str, Any]:
    """A ``text`` content block."""
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    """A ``thinking`` content block (with a signature, as the API returns it)."""
    return {"type": "thinking", "thinking": value, "signature": "sig"}


def tool_use(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    """A ``tool_use`` content block."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": tool_input}
    if tool_id:
        block["id"] = tool_id
    return block


@dataclass
class Turn:
    """One scripted answer.

    Attributes:
        content: The content blocks (tool use ids are filled in when missing).
        status: HTTP status; anything but 200 sends an Anthropic-shaped error of ``error_type``.
        message: The error's message.
        error_type: The error's type (``overloaded_error`` with 529...).
        headers: Extra response headers.
        cut_after: Streaming: close the connection after this many blocks.
        usage: ``(input, output, cache read, cache write)`` tokens.
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    message: str = "error"
    error_type: str = "invalid_request_error"
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    usage: tuple[int, int, int, int] = (50, 20, 400, 30)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class _Handler(JsonHandler):
    def do_POST(self) -> None:
        owner: FakeMessagesServer = self.server.owner  # type: ignore[assignment]
        request = owner.record(self)
        if self.path.split("?")[0].rstrip("/") != "/v1/messages":
            self.send_json(404, _error("not_found_error", "Not Found"))
            return
        sent = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix(
            "Bearer "
        )
        if owner.api_key is not None and sent != owner.api_key:
            self.send_json(401, _error("authentication_error", "invalid x-api-key"))
            return
        payload = json.loads(request.body)
        if owner.models and payload.get("model") not in owner.models:
            self.send_json(404, _error("not_found_error", f"model: {payload.get('model')}"))
            return
        betas = {b.strip() for b in (self.headers.get("anthropic-beta") or "").split(",") if b.strip()}
        for index, tool in enumerate(payload.get("tools") or []):
            kind = tool.get("type")
            if kind not in TOOL_BETAS and kind != "custom" and "input_schema" not in tool:
                self.send_json(
                    400,
                    _error(
                        "invalid_request_error",
                        f"tools.{index}: Input tag '{kind}' found using 'type' does not match any of the "
                        "expected tags",
                    ),
                )
                return
            if kind in TOOL_BETAS and TOOL_BETAS[kind] not in betas:
                self.send_json(
                    400,
                    _error(
                        "invalid_request_error",
                        f"tools.{index}: '{kind}' requires the beta "
                        f"header anthropic-beta: {TOOL_BETAS[kind]}",
                    ),
                )
                return
        turn = owner.next_answer()
        if turn.status != 200:
            self.send_json(turn.status, _error(turn.error_type, turn.message), turn.headers)
            return
        message = owner._message(turn, payload)
        if payload.get("stream"):
            self._stream(turn, message)
        else:
            self.send_json(200, message, turn.headers)

    def _stream(self, turn: Turn, message: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

        def event(kind: str, **data: Any) -> None:
            chunk = f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()

        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**message["usage"], "output_tokens": 1},
        }
        event("message_start", message=start)
        for index, block in enumerate(message["content"]):
            if turn.cut_after is not None and index >= turn.cut_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            kind = block["type"]
            empty = {"text": {"type": "text", "text": ""}, "thinking": {"type": "thinking", "thinking": ""}}
            opening = empty.get(kind, {**block, "input": {}})
            event("content_block_start", index=index, content_block=opening)
            if kind == "text":
                for i in range(0, len(block["text"]), 5):
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "text_delta", "text": block["text"][i : i + 5]},
                    )
            elif kind == "thinking":
                for i in range(0, len(block["thinking"]), 5):
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "thinking_delta", "thinking": block["thinking"][i : i + 5]},
                    )
                event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "signature_delta", "signature": block["signature"]},
                )
            else:
                raw = json.dumps(block["input"])
                for i in range(0, len(raw), 7):
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": raw[i : i + 7]},
                    )
            event("content_block_stop", index=index)
        event(
            "message_delta",
            delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
            usage={"output_tokens": message["usage"]["output_tokens"]},
        )
        event("message_stop")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class FakeMessagesServer(ScriptedServer[Turn]):
    """A scripted Messages API on ``127.0.0.1`` and a free port (base URL without ``/v1``, as the SDK wants).

    Args:
        api_key: When set, requests without that key get a 401.
        models: Model ids it serves.
    """

    handler = _Handler

    def __init__(
        self, *, api_key: str | None = None, models: tuple[str, ...] = ("claude-sonnet-4-5",)
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.models = list(models)
        self._counter = 0

    def default(self) -> Turn:
        """A text ``Done.``."""
        return Turn([text("Done.")])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return self.root_url

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests received so far."""
        return self.posted("/v1/messages")

    def _message(self, turn: Turn, payload: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._counter += 1
            number = self._counter
        content = []
        for index, block in enumerate(turn.content):
            block = json.loads(json.dumps(block))
            if block["type"] == "tool_use":
                block.setdefault("id", f"toolu_{number}_{index}")
            content.append(block)
        uses = any(b["type"] == "tool_use" for b in content)
        fresh, out, read, written = turn.usage
        return {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": payload.get("model"),
            "content": content,
            "stop_reason": "tool_use" if uses else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": fresh,
                "output_tokens": out,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
            },
        }
