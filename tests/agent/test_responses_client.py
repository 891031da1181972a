"""The Responses API client against a real fake server on 127.0.0.1: streaming, chaining, errors."""

from __future__ import annotations

import pytest

from osw_studio.agent.clients.responses import ResponsesClient
from osw_studio.agent.errors import ModelCallError
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message, reasoning

pytestmark = pytest.mark.timeout(30)

CLICK = {"type": "click", "x": 10, "y": 20, "button": "left"}


def client(
    server: FakeResponsesServer, *, stream: bool = True, model: str = "gpt-5.4", **kw: object
) -> ResponsesClient:
    return ResponsesClient(
        base_url=server.base_url, model=model, api_key="k", max_retries=0, stream=stream, **kw
    )  # type: ignore[arg-type]


def first_input(text: str = "Open the file.") -> list[dict[str, object]]:
    return [{"role": "user", "content": [{"type": "input_text", "text": text}]}]


@pytest.mark.parametrize("stream", [True, False])
async def test_reply_items_text_reasoning_and_usage(
    responses_server: FakeResponsesServer, stream: bool
) -> None:
    responses_server.queue(
        Script(
            [reasoning("The file menu is top left."), computer_call(CLICK, {"type": "type", "text": "hi"})]
        )
    )
    async with client(responses_server, stream=stream) as c:
        reply = await c.create({"input": first_input(), "tools": [{"type": "computer"}]})
    assert reply.response_id == "resp_1"
    assert reply.reasoning == "The file menu is top left."
    [call] = reply.tool_calls
    assert call["actions"] == [CLICK, {"type": "type", "text": "hi"}]
    assert call["call_id"] == "call_1_1"
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (100, 20)
    assert (reply.usage.cached_tokens, reply.usage.reasoning_tokens) == (50, 10)
    assert reply.request is not None
    assert reply.request.messages == first_input()
    assert reply.request.params == {"model": "gpt-5.4", "tools": [{"type": "computer"}], "stream": stream}
    sent = responses_server.response_requests[0].json
    assert sent.get("stream", False) is stream


async def test_streaming_hands_reasoning_text_and_tool_calls_over_as_they_arrive(
    responses_server: FakeResponsesServer,
) -> None:
    responses_server.queue(Script([reasoning("Click it."), message("On it."), computer_call(CLICK)]))
    pieces: list[str] = []
    calls: list[dict[str, object]] = []
    async with client(responses_server) as c:
        await c.create({"input": first_input()}, on_token=pieces.append, on_tool_call=calls.append)
    assert len(pieces) > 3  # the deltas, not one piece at the end
    joined = "".join(pieces)
    assert joined.startswith("Click it.\nOn it.")
    assert "[computer_call: click button='left' x=10 y=20]" in joined
    assert [c["type"] for c in calls] == ["computer_call"]


async def test_chaining_needs_each_computer_call_answered(responses_server: FakeResponsesServer) -> None:
    responses_server.queue(Script([computer_call(CLICK)]), Script([message("Done.")]))
    async with client(responses_server) as c:
        first = await c.create({"input": first_input()})
        with pytest.raises(ModelCallError) as refused:
            await c.create({"previous_response_id": first.response_id, "input": first_input("go on")})
        assert refused.value.reason == "bad_request"
        assert "No tool output found for computer call call_1_0" in refused.value.message
        shot = {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA=="}
        output = {"type": "computer_call_output", "call_id": "call_1_0", "output": shot}
        second = await c.create({"previous_response_id": first.response_id, "input": [output]})
    assert second.text == "Done."


async def test_a_cut_stream_is_a_cut_error(responses_server: FakeResponsesServer) -> None:
    responses_server.queue(Script([reasoning("a"), computer_call(CLICK)], cut_after=1))
    async with client(responses_server) as c:
        with pytest.raises(ModelCallError) as cut:
            await c.create({"input": first_input()})
    assert cut.value.reason == "cut"


async def test_a_failed_response_is_a_server_error(responses_server: FakeResponsesServer) -> None:
    responses_server.queue(Script([], response_status="failed"))
    async with client(responses_server, stream=False) as c:
        with pytest.raises(ModelCallError) as failed:
            await c.create({"input": first_input()})
    assert failed.value.reason == "server"


async def test_retries_a_429_then_answers(responses_server: FakeResponsesServer) -> None:
    responses_server.queue(
        Script.error(429, "slow down", headers={"retry-after-ms": "10"}), Script([message("ok")])
    )
    waits: list[float] = []
    async with ResponsesClient(base_url=responses_server.base_url, model="gpt-5.4", max_retries=1,
                               on_retry=lambda n, w, e: waits.append(w)) as c:  # fmt: skip
        reply = await c.create({"input": first_input()})
    assert (reply.text, reply.retries, waits) == ("ok", 1, [0.01])


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"api_key": "wrong"}, "auth"),
        ({"model": "gpt-9"}, "unknown_model"),
        ({"path": "/nothing"}, "not_found"),
        ({"tool": "computer_20251124"}, "unsupported_tool"),
    ],
)
async def test_errors_say_what_is_wrong(kwargs: dict[str, str], reason: str) -> None:
    with FakeResponsesServer(api_key="right", tools=("computer",)) as server:
        base = server.base_url.replace("/v1", kwargs.get("path", "/v1"))
        async with ResponsesClient(base_url=base, model=kwargs.get("model", "gpt-5.4"), max_retries=0,
                                   api_key=kwargs.get("api_key", "right")) as c:  # fmt: skip
            with pytest.raises(ModelCallError) as failed:
                await c.create({"input": first_input(), "tools": [{"type": kwargs.get("tool", "computer")}]})
    assert failed.value.reason == reason, failed.value
    if reason == "unsupported_tool":
        assert "computer_20251124" in failed.value.message
        assert failed.value.hint is not None and "preset" in failed.value.hint
