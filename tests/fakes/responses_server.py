"""A small, real OpenAI Responses API server on 127.0.0.1 for tests, with scripted computer calls.

``POST {prefix}/responses`` answers streaming (server-sent events, as OpenAI sends them) and not, for the
openai SDK. It holds the API's rules that matter to a computer-use agent: ``previous_response_id`` must
name a response it gave, a chained request must answer every ``computer_call`` of that response with a
``computer_call_output`` of the same ``call_id``, and pending safety checks must be acknowledged. Tools it
does not take are refused as OpenAI refuses them (400 naming ``tools[0].type``). It records every request.

    with FakeResponsesServer() as server:
        server.queue(Script([computer_call({"type": "click", "x": 10, "y": 20})]))
        ...
        assert server.response_requests[0].json["tools"] == [{"type": "computer"}]

When nothing is queued the server answers a message ``Done.`` with no tool call.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fakes.openai_server import RecordedRequest, _error_body
from tests.fakes.scripted_server import JsonHandler, ScriptedServer

__all__ = ["FakeResponsesServer", "Script", "computer_call", "message", "reasoning", "responses_server"]


def computer_call(
    *actions: dict[str, Any],
    call_id: str | None = None,
    safety_checks: tuple[str, ...] = (),
    batched: bool = True,
) -> dict[str, Any]:
    """A ``computer_call`` output item: GPT-5.4's ``actions`` batch, or ``batched=False`` one ``action``."""
    item: dict[str, Any] = {"type": "computer_call", "status": "completed"}
    if call_id:
        item["call_id"] = call_id
    if batched:
        item["actions"] = list(actions)
    else:
        item["action"] = actions[0]
    item["pending_safety_checks"] = [
        {"id": f"sc_{i}", "code": "malicious_instructions", "message": text}
        for i, text in enumerate(safety_checks)
    ]
    return item


def message(text: str) -> dict[str, Any]:
    """An assistant ``message`` output item."""
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def reasoning(text: str) -> dict[str, Any]:
    """A ``reasoning`` output item with its summary."""
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}


@dataclass
class Script:
    """One scripted answer.

    Attributes:
        output: The output items (ids and call ids are filled in when missing).
        status: HTTP status; anything but 200 sends ``body`` (or an OpenAI-shaped error).
        body: A raw error body.
        headers: Extra response headers.
        cut_after: Streaming: close the connection after this many output items, without completing.
        response_status: The response's own ``status``.
        usage: ``(input_tokens, output_tokens)``.
        chunk_chars: Characters per streamed text delta.
    """

    output: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    response_status: str = "completed"
    usage: tuple[int, int] = (100, 20)
    chunk_chars: int = 6

    @classmethod
    def error(
        cls, status: int, text: str, *, code: str | None = None, headers: dict[str, str] | None = None
    ) -> Script:
        """An OpenAI-shaped error reply."""
        return cls(status=status, body=_error_body(text, code), headers=dict(headers or {}))


class _Handler(JsonHandler):
    def do_GET(self) -> None:
        owner: FakeResponsesServer = self.server.owner  # type: ignore[assignment]
        owner.record(self)
        if self.path.rstrip("/") == f"{owner.prefix}/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in owner.models]
            self.send_json(200, {"object": "list", "data": data})
        else:
            self.send_json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        owner: FakeResponsesServer = self.server.owner  # type: ignore[assignment]
        request = owner.record(self)
        if self.path.rstrip("/") != f"{owner.prefix}/responses":
            self.send_json(404, {"detail": "Not Found"})
            return
        if owner.api_key is not None and self.headers.get("authorization") != f"Bearer {owner.api_key}":
            self.send_json(401, _error_body("Incorrect API key provided.", "invalid_api_key"))
            return
        payload = json.loads(request.body)
        model = payload.get("model")
        if owner.models and model not in owner.models:
            self.send_json(404, _error_body(f"The model `{model}` does not exist.", "model_not_found"))
            return
        refusal = owner._refusal(payload)
        if refusal is not None:
            self.send_json(400, _error_body(refusal, None))
            return
        script = owner.next_answer()
        if script.status != 200:
            self.send_json(script.status, script.body or _error_body("error", None), script.headers)
            return
        response = owner._response(script, payload)
        if payload.get("stream"):
            self._stream(script, response)
        else:
            self.send_json(200, response, script.headers)

    def _stream(self, script: Script, response: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        sequence = 0

        def event(kind: str, **data: Any) -> None:
            nonlocal sequence
            text = json.dumps({"type": kind, "sequence_number": sequence, **data})
            sequence += 1
            chunk = f"event: {kind}\ndata: {text}\n\n".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()

        event("response.created", response={**response, "status": "in_progress", "output": []})
        for index, item in enumerate(response["output"]):
            if script.cut_after is not None and index >= script.cut_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            event("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
            step = script.chunk_chars
            if item["type"] == "reasoning":
                for part, summary in enumerate(item["summary"]):
                    for i in range(0, len(summary["text"]), step):
                        event("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index,
                              summary_index=part, delta=summary["text"][i : i + step])  # fmt: skip
                    event("response.reasoning_summary_part.done", item_id=item["id"], output_index=index,
                          summary_index=part, part=summary)  # fmt: skip
            elif item["type"] == "message":
                text = item["content"][0]["text"]
                for i in range(0, len(text), step):
                    event("response.output_text.delta", item_id=item["id"], output_index=index,
                          content_index=0, delta=text[i : i + step], logprobs=[])  # fmt: skip
            event("response.output_item.done", output_index=index, item=item)
        kind = {"completed": "response.completed", "failed": "response.failed"}.get(
            response["status"], "response.incomplete"
        )
        event(kind, response=response)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class FakeResponsesServer(ScriptedServer[Script]):
    """A scripted Responses API on ``127.0.0.1`` and a free port.

    Args:
        api_key: When set, requests without ``Authorization: Bearer <api_key>`` get a 401.
        models: Model ids it serves (another gets OpenAI's 404 ``model_not_found``).
        tools: The tool types it takes (``computer`` for GPT-5.4, ``computer_use_preview``...).
        prefix: The path the API lives under.
    """

    handler = _Handler

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: tuple[str, ...] = ("gpt-5.4", "computer-use-preview"),
        tools: tuple[str, ...] = ("computer", "computer_use_preview", "function"),
        prefix: str = "/v1",
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.models = list(models)
        self.tools = set(tools)
        self.prefix = prefix.rstrip("/")
        self._responses: dict[str, dict[str, Any]] = {}
        self._counter = 0

    def default(self) -> Script:
        """A message ``Done.`` with no tool call."""
        return Script([message("Done.")])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return self.root_url + self.prefix

    @property
    def response_requests(self) -> list[RecordedRequest]:
        """The ``POST /responses`` requests received so far."""
        return self.posted(f"{self.prefix}/responses")

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` Responses requests have arrived."""
        return self.wait_until(lambda: len(self.response_requests) >= count, timeout)

    # --- the handler's helpers ----------------------------------------------------------------------

    def _refusal(self, payload: dict[str, Any]) -> str | None:
        """Why OpenAI would answer this request with a 400, or None."""
        for index, tool in enumerate(payload.get("tools") or []):
            if tool.get("type") not in self.tools:
                supported = ", ".join(f"'{t}'" for t in sorted(self.tools))
                kind = tool.get("type")
                return f"Invalid value: '{kind}'. Supported values are: {supported}. (tools[{index}].type)"
        previous = payload.get("previous_response_id")
        if previous is None:
            return None
        with self._lock:
            before = self._responses.get(previous)
        if before is None:
            return f"Previous response with id '{previous}' not found."
        answered = {
            item.get("call_id"): item
            for item in payload.get("input") or []
            if isinstance(item, dict) and item.get("type") == "computer_call_output"
        }
        for item in before["output"]:
            if item["type"] != "computer_call":
                continue
            output = answered.get(item["call_id"])
            if output is None:
                return f"No tool output found for computer call {item['call_id']}."
            checks = {c["id"] for c in item.get("pending_safety_checks") or []}
            acknowledged = {c.get("id") for c in output.get("acknowledged_safety_checks") or []}
            if not checks <= acknowledged:
                return f"Pending safety checks of computer call {item['call_id']} were not acknowledged."
        return None

    def _response(self, script: Script, payload: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._counter += 1
            number = self._counter
        output = []
        for index, item in enumerate(script.output):
            item = json.loads(json.dumps(item))
            item.setdefault("id", f"item_{number}_{index}")
            if item["type"] == "computer_call":
                item.setdefault("call_id", f"call_{number}_{index}")
            output.append(item)
        response = {
            "id": f"resp_{number}",
            "object": "response",
            "created_at": 0,
            "model": payload.get("model"),
            "status": script.response_status,
            "error": None,
            "incomplete_details": None,
            "output": output,
            "parallel_tool_calls": bool(payload.get("parallel_tool_calls", True)),
            "tool_choice": "auto",
            "tools": payload.get("tools") or [],
            "previous_response_id": payload.get("previous_response_id"),
            "usage": {
                "input_tokens": script.usage[0],
                "input_tokens_details": {"cached_tokens": script.usage[0] // 2},
                "output_tokens": script.usage[1],
                "output_tokens_details": {"reasoning_tokens": script.usage[1] // 2},
                "total_tokens": sum(script.usage),
            },
        }
        with self._lock:
            self._responses[response["id"]] = response
        return response


@pytest.fixture
def responses_server() -> Iterator[FakeResponsesServer]:
    """A started :class:`FakeResponsesServer`, stopped after the test."""
    with FakeResponsesServer() as server:
        yield server
