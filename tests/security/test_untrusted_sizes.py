"""A hostile guest or model endpoint sends far more than it should: the host stops reading at a cap.

Each server is real, on 127.0.0.1, and generates its body as it sends it (gzip and br bombs, endless
bodies, screenshots that declare billions of pixels, JSON nested a hundred thousand levels deep). Each
test checks the error is clear and that the host's memory stayed far below what the answer decodes to
(``tracemalloc``'s peak over the call).
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import brotli
import openai
import pytest

from osw_studio.actions.qwen3vl import parse_qwen3vl
from osw_studio.agent.errors import ModelCallError
from osw_studio.agent.images import prepare_image
from osw_studio.agent.model_client import ModelClient
from osw_studio.core import limits
from osw_studio.core.errors import ActionParseError, GuestError, ModelError, TaskError
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.evaluation.registry import GETTERS, GetterContext
from osw_studio.tasks.load import load_task
from tests.security.hostile_http import HostileServer, compressed, png_header, repeated

pytestmark = pytest.mark.timeout(120)

MIB = limits.MIB
BOMB = 256 * MIB
"""What the bombs decode to: 256 MiB (eight times the screenshot cap, four times the model body cap)."""

T = TypeVar("T")

openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9").chat.completions  # noqa: B018 - imported before the peaks are traced


def peak_of(call: Awaitable[T]) -> tuple[T | BaseException, int]:
    """Run ``call``; its result (or exception) and the peak of Python's allocations meanwhile."""
    tracemalloc.start()
    try:
        try:
            result: T | BaseException = asyncio.run(_awaited(call))
        except BaseException as exc:
            result = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


async def _awaited(call: Awaitable[T]) -> T:
    return await call


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    return compressed(repeated(b"\0" * MIB, BOMB), "gzip")


@pytest.fixture(scope="module")
def deflate_bomb() -> bytes:
    return compressed(repeated(b"\0" * MIB, BOMB), "deflate")


@pytest.fixture(scope="module")
def br_bomb() -> bytes:
    return brotli.compress(b"\0" * BOMB, quality=1)


def _pieces(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    return (data[i : i + size] for i in range(0, len(data), size))


def _guest(url: str) -> GuestClient:
    return GuestClient(url, retry=RetryPolicy(attempts=1, delay=0), timeout=30)


async def _call(url: str, method: str) -> Any:
    async with _guest(url) as guest:
        return await getattr(guest, method)()


# --- a guest --------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_a_compressed_screenshot_bomb_is_refused_while_it_decodes(
    encoding: str, request: pytest.FixtureRequest
) -> None:
    bomb = request.getfixturevalue(f"{'br' if encoding == 'br' else encoding}_bomb")
    routes = {"/screenshot": lambda: ({"Content-Encoding": encoding}, _pieces(bomb))}
    with HostileServer(routes) as server:
        error, peak = peak_of(_call(server.url, "screenshot"))
    assert isinstance(error, GuestError), error
    assert "over the 32.0 MiB cap (decoded size)" in str(error), error
    assert peak < 3 * limits.GUEST_SCREENSHOT_BYTES, f"peak {peak / MIB:.0f} MiB"


def test_an_endless_screenshot_is_refused_after_its_cap() -> None:
    routes = {"/screenshot": lambda: ({}, repeated(b"\x89" * MIB, 8 * BOMB))}
    with HostileServer(routes) as server:
        error, peak = peak_of(_call(server.url, "screenshot"))
        sent = server.sent
    assert isinstance(error, GuestError) and "bytes received" in str(error), error
    assert peak < 3 * limits.GUEST_SCREENSHOT_BYTES, f"peak {peak / MIB:.0f} MiB"
    assert sent < 8 * BOMB


def test_a_declared_length_over_the_cap_is_refused_before_the_body() -> None:
    routes = {"/screenshot": lambda: ({"Content-Length": str(10 * BOMB)}, iter(()))}
    with HostileServer(routes) as server:
        error, _ = peak_of(_call(server.url, "screenshot"))
    assert isinstance(error, GuestError) and "declares 2.5 GiB" in str(error), error


def test_a_screenshot_declaring_too_many_pixels_is_refused_before_decoding() -> None:
    # 12000 x 12000: 144 million pixels (432 MB decoded) in a PNG of a few kilobytes, under the 178
    # million at which Pillow's own guard starts (with a warning only).
    png = png_header(12000, 12000)
    routes = {"/screenshot": lambda: ({"Content-Type": "image/png"}, [png])}
    with HostileServer(routes) as server:
        error, peak = peak_of(_call(server.url, "screenshot"))
    assert isinstance(error, GuestError), error
    assert "12000×12000 pixels, over the cap" in str(error), error
    assert peak < 50 * MIB


def test_a_gzip_bomb_as_a_json_answer_is_refused() -> None:
    bomb = compressed(repeated(b" " * MIB, BOMB), "gzip")
    routes = {"/cursor_position": lambda: ({"Content-Encoding": "gzip"}, _pieces(bomb))}
    with HostileServer(routes) as server:
        error, peak = peak_of(_call(server.url, "cursor_position"))
    assert isinstance(error, GuestError) and "decoded size" in str(error), error
    assert peak < 3 * limits.GUEST_JSON_BYTES, f"peak {peak / MIB:.0f} MiB"


@pytest.mark.parametrize("depth", [500, 200_000])
def test_deeply_nested_json_from_a_guest_is_a_clear_error(depth: int) -> None:
    body = b"[" * depth + b"]" * depth
    routes = {"/cursor_position": lambda: ({"Content-Type": "application/json"}, [body])}
    with HostileServer(routes) as server:
        error, _ = peak_of(_call(server.url, "cursor_position"))
    assert isinstance(error, GuestError), repr(error)
    assert f"nested more than {limits.JSON_DEPTH} levels" in str(error), error


def test_an_honest_compressed_answer_still_reads() -> None:
    body = json.dumps([12, 34]).encode()
    for encoding, data in (
        ("gzip", compressed([body], "gzip")),
        ("deflate", compressed([body], "deflate")),
        ("br", brotli.compress(body)),
        ("gzip, br", brotli.compress(compressed([body], "gzip"))),
    ):
        routes = {"/cursor_position": lambda e=encoding, d=data: ({"Content-Encoding": e}, [d])}  # type: ignore[misc]
        with HostileServer(routes) as server:
            assert asyncio.run(_call(server.url, "cursor_position")) == (12, 34), encoding


# --- a model endpoint -----------------------------------------------------------------------------


def _event(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def _delta(text: str) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [choice]}


def _stream_bomb(text_bytes: int) -> bytes:
    """A gzip-encoded event stream whose deltas add up to ``text_bytes`` characters, never finished."""
    event = _event(_delta("a" * 8192))
    return compressed(repeated(event, text_bytes // 8192 * len(event)), "gzip")


async def _complete(url: str, *, stream: bool) -> Any:
    client = ModelClient(base_url=f"{url}/v1", model="m", max_retries=0, stream=stream, timeout=30)
    try:
        return await client.complete([{"role": "user", "content": "hi"}])
    finally:
        await client.aclose()


def test_a_gzip_encoded_model_stream_that_decodes_to_a_quarter_gigabyte_is_cut() -> None:
    bomb = _stream_bomb(BOMB // 4)
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
    routes = {"POST /v1/chat/completions": lambda: (headers, _pieces(bomb))}
    with HostileServer(routes) as server:
        error, peak = peak_of(_complete(server.url, stream=True))
    assert isinstance(error, ModelCallError), repr(error)
    assert error.reason == "invalid_reply"
    assert f"over the cap of {limits.MODEL_REPLY_CHARS:,}" in str(error), error
    partial = getattr(error, "partial", "")
    assert len(partial) == limits.STORED_REPLY_CHARS and set(partial) == {"a"}
    assert peak < 200 * MIB, f"peak {peak / MIB:.0f} MiB"


def test_a_model_stream_of_empty_events_stops_at_the_body_cap() -> None:
    empty = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}
    event = _event({**empty, "padding": " " * MIB})
    bomb = compressed(repeated(event, 2 * limits.MODEL_BODY_BYTES), "gzip")
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
    routes = {"POST /v1/chat/completions": lambda: (headers, _pieces(bomb))}
    with HostileServer(routes) as server:
        error, peak = peak_of(_complete(server.url, stream=True))
    assert isinstance(error, ModelCallError), repr(error)
    assert "over the 64.0 MiB cap (decoded size)" in str(error), error
    assert peak < 3 * limits.MODEL_BODY_BYTES, f"peak {peak / MIB:.0f} MiB"


def test_a_non_streamed_gzip_body_that_decodes_to_a_quarter_gigabyte_is_refused(gzip_bomb: bytes) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    routes = {"POST /v1/chat/completions": lambda: (headers, _pieces(gzip_bomb))}
    with HostileServer(routes) as server:
        error, peak = peak_of(_complete(server.url, stream=False))
    assert isinstance(error, ModelCallError), repr(error)
    assert "over the 64.0 MiB cap" in str(error), error
    assert peak < 3 * limits.MODEL_BODY_BYTES, f"peak {peak / MIB:.0f} MiB"


def test_a_stream_event_nested_too_deeply_is_a_clear_error() -> None:
    deep = b"data: " + b"[" * 200_000 + b"]" * 200_000 + b"\n\n"
    routes = {"POST /v1/chat/completions": lambda: ({"Content-Type": "text/event-stream"}, [deep])}
    with HostileServer(routes) as server:
        error, _ = peak_of(_complete(server.url, stream=True))
    assert isinstance(error, ModelCallError) and error.reason == "invalid_reply", repr(error)


# --- a reply's tool call, a task file -------------------------------------------------------------


def test_a_tool_call_nested_too_deeply_is_a_parse_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    reply = f'<tool_call>\n{{"name": "computer_use", "arguments": {deep}}}\n</tool_call>'
    with pytest.raises(ActionParseError, match="nested more than"):
        parse_qwen3vl(reply, None)


@pytest.mark.parametrize("depth", [500, 100_000])
def test_a_task_file_nested_too_deeply_is_a_task_error(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"id": "deep", "instruction": "x", "config": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(TaskError, match=f"nested more than {limits.JSON_DEPTH} levels"):
        load_task(path)


def test_an_image_declaring_too_many_pixels_is_not_decoded_for_the_model() -> None:
    with pytest.raises(ModelError, match="12000×12000 pixels, over the cap"):
        prepare_image(png_header(12000, 12000), size=(1280, 720))


def test_a_vlc_status_bomb_from_the_guest_is_no_status(tmp_path: Path) -> None:
    bomb = compressed(repeated(b"<" * MIB, BOMB), "gzip")
    routes = {"/requests/status.xml": lambda: ({"Content-Encoding": "gzip"}, _pieces(bomb))}

    async def fetch(url: str) -> Any:
        async with GuestClient("http://127.0.0.1:9") as guest:
            ctx = GetterContext(guest=guest, cache_dir=tmp_path, vlc_url=url)
            return await GETTERS.get("vlc_playing_info")(ctx, {"dest": "status.xml"})

    with HostileServer(routes) as server:
        value, peak = peak_of(fetch(server.url))
    assert value is None, value
    assert not (tmp_path / "status.xml").exists()
    assert peak < 3 * limits.GUEST_JSON_BYTES, f"peak {peak / MIB:.0f} MiB"
