"""The model client against a real OpenAI-compatible server on 127.0.0.1: replies, streams and failures."""

from __future__ import annotations

import asyncio
import math

import pytest

from osw_studio.agent.errors import ModelCallError
from osw_studio.agent.model_client import ModelClient, token_entropy
from osw_studio.core.errors import ModelError
from osw_studio.envs.local import free_port
from tests.fakes.openai_server import FakeOpenAIServer, Reply, TokenLogprob

MESSAGES = [{"role": "user", "content": "Where is the Save button?"}]
pytestmark = pytest.mark.timeout(20)


def client(server: FakeOpenAIServer, **kwargs: object) -> ModelClient:
    options: dict[str, object] = {
        "base_url": server.base_url,
        "model": "test-model",
        "api_key": "k",
        "max_retries": 0,
    }
    options.update(kwargs)
    return ModelClient(**options)  # type: ignore[arg-type]


async def fail(c: ModelClient, **kwargs: object) -> ModelCallError:
    async with c:
        with pytest.raises(ModelCallError) as info:
            await c.complete(MESSAGES, **kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, ModelError)
    return info.value


async def test_a_plain_reply_with_usage_and_latency(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply(text="pyautogui.click(10, 20)", usage=(120, 9)))
    async with client(openai_server, stream=False) as c:
        reply = await c.complete(MESSAGES, temperature=0.2, top_p=0.9, max_tokens=64)
    assert reply.text == "pyautogui.click(10, 20)"
    assert reply.usage is not None and (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (120, 9)
    assert reply.latency > 0 and reply.finish_reason == "stop" and reply.retries == 0
    sent = openai_server.chat_requests[0].json
    assert (sent["model"], sent["temperature"], sent["top_p"], sent["max_tokens"]) == (
        "test-model",
        0.2,
        0.9,
        64,
    )
    assert sent["messages"] == MESSAGES and not sent.get("stream")


async def test_streaming_hands_each_piece_to_the_callback(openai_server: FakeOpenAIServer) -> None:
    text = "Thought: the button is top left.\nAction: click(start_box='(10,20)')"
    openai_server.queue(Reply(text=text, usage=(50, 20)))
    pieces: list[str] = []
    async with client(openai_server) as c:
        reply = await c.complete(MESSAGES, on_token=pieces.append)
    assert len(pieces) > 5 and "".join(pieces) == text == reply.text
    assert reply.usage is not None and reply.usage.total_tokens == 70
    assert reply.first_token_latency is not None and reply.first_token_latency <= reply.latency
    assert openai_server.chat_requests[0].json["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True])
async def test_logprobs_and_step_entropy(openai_server: FakeOpenAIServer, stream: bool) -> None:
    half = math.log(0.5)
    tokens = [TokenLogprob("ok", half, (("ok", half), ("no", half))), TokenLogprob("!", 0.0, (("!", 0.0),))]
    openai_server.queue(Reply(text="ok!", chunk_chars=2, logprobs=tokens))
    async with client(openai_server, stream=stream) as c:
        reply = await c.complete(MESSAGES, logprobs=True)
    assert reply.logprobs == [half, 0.0]
    assert reply.entropy == pytest.approx((token_entropy([half, half]) + 0.0) / 2)
    assert openai_server.chat_requests[0].json["top_logprobs"] == 5


async def test_no_logprobs_when_the_endpoint_returns_none(openai_server: FakeOpenAIServer) -> None:
    async with client(openai_server) as c:
        reply = await c.complete(MESSAGES, logprobs=True)
    assert reply.logprobs is None and reply.entropy is None


@pytest.mark.parametrize("stream", [False, True])
async def test_401_blames_the_key(stream: bool) -> None:
    with FakeOpenAIServer(api_key="right") as server:
        error = await fail(client(server, api_key="wrong", stream=stream, profile="work"))
        assert (error.reason, error.status) == ("auth", 401)
        assert "rejected the API key (401)" in str(error) and "check the key of profile 'work'" in str(error)
        error = await fail(client(server, api_key=None, profile="work"))
        assert "no API key was sent" in str(error) and "keys set --profile work" in str(error)


async def test_403_is_explained(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply.error(403, "Project does not have access to model"))
    error = await fail(client(openai_server))
    assert error.reason == "forbidden" and "(403): Project does not have access to model" in str(error)


async def test_404_on_the_path_points_at_the_base_url(openai_server: FakeOpenAIServer) -> None:
    error = await fail(client(openai_server, base_url=openai_server.root_url))
    assert error.reason == "not_found" and error.where == f"{openai_server.root_url}/chat/completions"
    assert "with or without /v1" in str(error)


async def test_404_for_an_unknown_model_names_it(openai_server: FakeOpenAIServer) -> None:
    error = await fail(client(openai_server, model="gpt-9"))
    assert error.reason == "unknown_model" and "does not serve model 'gpt-9'" in str(error)


async def test_429_waits_as_long_as_retry_after_says(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply.error(429, "slow down", headers={"Retry-After": "1"}), Reply(text="done"))
    waits: list[tuple[int, float, str]] = []
    c = client(
        openai_server, max_retries=2, on_retry=lambda n, wait, err: waits.append((n, wait, err.reason))
    )
    async with c:
        reply = await c.complete(MESSAGES)
    assert reply.text == "done" and reply.retries == 1
    assert waits == [(1, 1.0, "rate_limited")]
    first, second = openai_server.chat_requests
    assert second.received_at - first.received_at >= 0.9, "the retry came before Retry-After allowed"


async def test_429_after_the_last_retry_says_how_long_to_wait(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply.error(429, "Rate limit reached", headers={"Retry-After": "120"}))
    error = await fail(client(openai_server, max_retries=3))
    assert error.reason == "rate_limited" and "it asks to wait 120 s" in str(error)
    assert len(openai_server.chat_requests) == 1, "a wait over a minute is not sat out"


async def test_500_fails_and_is_retried(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply.error(500, "CUDA out of memory", type="server_error"))
    error = await fail(client(openai_server))
    assert (error.reason, error.status) == ("server", 500) and "CUDA out of memory" in str(error)
    openai_server.queue(Reply.error(503, "loading"), Reply(text="fine"))
    async with client(openai_server, max_retries=1) as c:
        reply = await c.complete(MESSAGES)
    assert (reply.text, reply.retries) == ("fine", 1)


async def test_an_html_error_page_is_not_dumped_on_the_user(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply(status=502, body="<html><body><h1>502 Bad Gateway</h1></body></html>"))
    error = await fail(client(openai_server, stream=False))
    assert error.reason == "server" and "<html>" not in str(error) and "(502)" in str(error)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_slow_reply_times_out(openai_server: FakeOpenAIServer, stream: bool) -> None:
    openai_server.queue(Reply(delay=10))
    error = await fail(client(openai_server, timeout=0.3, stream=stream))
    assert error.reason == "timeout" and "no answer within 0.3 s" in str(error)


async def test_a_stalled_stream_times_out(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply(text="abcdefgh", chunk_delay=10))
    error = await fail(client(openai_server, timeout=0.3))
    assert error.reason == "timeout"


async def test_a_stream_cut_short(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply(text="Thought: first I open the menu", cut_after=3))
    pieces: list[str] = []
    error = await fail(client(openai_server), on_token=pieces.append)
    assert error.reason == "cut" and "before the reply was complete" in str(error)
    assert "".join(pieces) == "Thought: fir"


@pytest.mark.parametrize("stream", [False, True])
async def test_invalid_json(openai_server: FakeOpenAIServer, stream: bool) -> None:
    openai_server.queue(Reply(invalid_json=True))
    error = await fail(client(openai_server, stream=stream))
    assert error.reason == "invalid_reply" and "invalid JSON" in str(error)


async def test_connection_refused() -> None:
    port = free_port()  # free, so nothing listens there
    error = await fail(ModelClient(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0))
    assert error.reason == "refused" and f"connection refused by 127.0.0.1:{port}" in str(error)


async def test_https_to_a_plain_http_server_is_a_tls_error(openai_server: FakeOpenAIServer) -> None:
    url = openai_server.base_url.replace("http://", "https://")
    error = await fail(ModelClient(base_url=url, model="test-model", max_retries=0))
    assert error.reason == "tls" and "TLS handshake" in str(error) and "use http://" in str(error)


async def test_requests_over_the_size_cap_are_not_sent(openai_server: FakeOpenAIServer) -> None:
    big = [{"role": "user", "content": "x" * 5000}]
    async with client(openai_server, max_request_bytes=4000) as c:
        with pytest.raises(ModelCallError) as info:
            await c.complete(big)
    assert info.value.reason == "too_large" and "over the 3.9 KiB cap" in str(info.value)
    assert openai_server.chat_requests == []


async def test_stopping_cancels_the_call_in_flight(openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply(delay=10))
    async with client(openai_server, timeout=30) as c:
        task = asyncio.create_task(c.complete(MESSAGES))
        assert await asyncio.to_thread(openai_server.wait_for_requests, 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
