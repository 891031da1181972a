"""The Anthropic Messages client against a real fake server on 127.0.0.1: streaming, betas, errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from osw_studio.agent.clients.anthropic_messages import MessagesClient
from osw_studio.agent.errors import ModelCallError
from tests.fakes.messages_server import FakeMessagesServer, Turn, text, thinking, tool_use

pytestmark = pytest.mark.timeout(30)

COMPUTER = {
    "type": "computer_20251124",
    "name": "computer",
    "display_width_px": 1280,
    "display_height_px": 720,
}
BETA = "computer-use-2025-11-24"
CLICK = {"action": "left_click", "coordinate": [640, 360]}


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer(api_key="right") as started:
        yield started


def request(**extra: Any) -> dict[str, Any]:
    return {
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Save the file."}],
        "tools": [COMPUTER],
        "betas": [BETA],
        **extra,
    }


@pytest.mark.parametrize("stream", [True, False])
async def test_reply_blocks_usage_and_request(server: FakeMessagesServer, stream: bool) -> None:
    server.queue(Turn([thinking("The save button."), text("Saving."), tool_use("computer", CLICK)]))
    async with MessagesClient(
        base_url=server.base_url, model="claude-sonnet-4-5", api_key="right", max_retries=0, stream=stream
    ) as client:
        reply = await client.create(request())
    assert (reply.thinking, reply.text, reply.stop_reason) == ("The save button.", "Saving.", "tool_use")
    [use] = reply.tool_uses
    assert use["input"] == CLICK and use["id"] == "toolu_1_2"
    assert reply.content[0]["signature"] == "sig"
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.cached_tokens, reply.usage.cache_write_tokens) == (
        480,
        400,
        30,
    )
    sent = server.message_requests[0]
    assert sent.headers["anthropic-beta"] == BETA
    assert "betas" not in sent.json  # a header, not a body key
    assert reply.request is not None and reply.request.params["betas"] == [BETA]


async def test_streaming_hands_thinking_text_and_tool_uses_over_as_they_arrive(
    server: FakeMessagesServer,
) -> None:
    server.queue(Turn([thinking("Look first."), tool_use("computer", CLICK)]))
    pieces: list[str] = []
    uses: list[dict[str, Any]] = []
    async with MessagesClient(
        base_url=server.base_url, model="claude-sonnet-4-5", api_key="right", max_retries=0
    ) as client:
        await client.create(request(), on_token=pieces.append, on_tool_call=uses.append)
    assert len(pieces) > 2
    joined = "".join(pieces)
    assert joined.startswith("Look first.")
    assert '[tool_use computer: {"action": "left_click", "coordinate": [640, 360]}]' in joined
    assert [u["input"] for u in uses] == [CLICK]


async def test_a_cut_stream_and_an_overload_retry(server: FakeMessagesServer) -> None:
    server.queue(Turn([text("a"), tool_use("computer", CLICK)], cut_after=1))
    async with MessagesClient(
        base_url=server.base_url, model="claude-sonnet-4-5", api_key="right", max_retries=0
    ) as client:
        with pytest.raises(ModelCallError) as cut:
            await client.create(request())
    assert cut.value.reason == "cut"
    server.queue(
        Turn(status=529, error_type="overloaded_error", message="Overloaded", headers={"retry-after": "0"}),
        Turn([text("ok")]),
    )
    async with MessagesClient(
        base_url=server.base_url, model="claude-sonnet-4-5", api_key="right", max_retries=1
    ) as client:
        reply = await client.create(request())
    assert (reply.text, reply.retries) == ("ok", 1)


@pytest.mark.parametrize(
    ("change", "reason", "said"),
    [
        ({"api_key": "wrong"}, "auth", "rejected the API key (401)"),
        ({"model": "claude-9"}, "unknown_model", "does not serve model 'claude-9'"),
        ({"path": "/v1"}, "not_found", "without /v1"),
        (
            {"betas": []},
            "unsupported_tool",
            "requires the beta header anthropic-beta: computer-use-2025-11-24",
        ),
        ({"tool": "computer_20991231"}, "unsupported_tool", "Input tag 'computer_20991231'"),
    ],
)
async def test_errors_say_what_is_wrong(
    server: FakeMessagesServer, change: dict[str, Any], reason: str, said: str
) -> None:
    base = server.base_url + change.get("path", "")
    body = request(
        betas=change.get("betas", [BETA]), tools=[{**COMPUTER, "type": change.get("tool", COMPUTER["type"])}]
    )
    async with MessagesClient(
        base_url=base,
        model=change.get("model", "claude-sonnet-4-5"),
        api_key=change.get("api_key", "right"),
        max_retries=0,
    ) as client:
        with pytest.raises(ModelCallError) as failed:
            await client.create(body)
    assert failed.value.reason == reason, failed.value
    assert said in str(failed.value) + (failed.value.hint or "")
