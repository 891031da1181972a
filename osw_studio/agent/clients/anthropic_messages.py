"""The client of Anthropic's Messages API (``POST /v1/messages`` with beta headers), on the official SDK.

Claude's computer use goes through it: the ``betas`` a request names (``computer-use-2025-11-24``...) are
sent as the ``anthropic-beta`` header. It streams by default: thinking and text go to the token callback
as they arrive and each ``tool_use`` block is announced there once its input is complete. Retries follow
the chat client's rules (429, 5xx and Anthropic's 529 "overloaded", timeouts, dropped connections), and
every failure is one :class:`~osw_studio.agent.errors.ModelCallError`; a refused tool version or beta
header says ``unsupported_tool``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from osw_studio.agent.clients.base import NO_KEY, VendorClient
from osw_studio.agent.clients.responses import ToolCallCallback
from osw_studio.agent.clients.usage import TokenUsage
from osw_studio.agent.errors import (
    CutStream,
    InvalidReply,
    ModelCallError,
    Reason,
    _connection_error,
    unsupported_tool,
)
from osw_studio.agent.model_client import RetryCallback, TokenCallback
from osw_studio.agent.retry import with_retries
from osw_studio.core.step import StepRequest

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic


@dataclass(frozen=True)
class MessagesReply:
    """What one Messages call produced.

    Attributes:
        content: The reply's content blocks as the API returned them (``thinking``, ``text``, ``tool_use``).
        text: The text blocks' text.
        thinking: The thinking blocks' text.
        stop_reason: ``end_turn``, ``tool_use``, ``max_tokens``...
        model: The model that answered.
        usage: Token counts (cache reads and writes included), when reported.
        latency: Seconds from sending the request to the end of the reply.
        first_token_latency: Seconds until the first streamed content (streaming only).
        retries: How many retries it took.
        request: The request as sent (``messages`` its messages), for the run store.
    """

    content: list[dict[str, Any]]
    text: str = ""
    thinking: str = ""
    stop_reason: str | None = None
    model: str = ""
    usage: TokenUsage | None = None
    latency: float = 0.0
    first_token_latency: float | None = None
    retries: int = 0
    request: StepRequest | None = field(default=None, repr=False)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The ``tool_use`` blocks, in order."""
        return [block for block in self.content if block.get("type") == "tool_use"]


def anthropic_usage(usage: Any) -> TokenUsage | None:
    """The usage of a Messages reply (``cache_read_input_tokens``, ``cache_creation_input_tokens``).

    Anthropic counts cached input apart from ``input_tokens``; here input is all of it.

    >>> anthropic_usage({"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 90}).input_tokens
    100
    """
    if usage is None:
        return None
    data = usage if isinstance(usage, dict) else usage.model_dump()
    read = int(data.get("cache_read_input_tokens") or 0)
    written = int(data.get("cache_creation_input_tokens") or 0)
    return TokenUsage(
        input_tokens=int(data.get("input_tokens") or 0) + read + written,
        output_tokens=int(data.get("output_tokens") or 0),
        cached_tokens=read,
        cache_write_tokens=written,
    )


def _dump(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        dumped: dict[str, Any] = value.model_dump(exclude_none=True, warnings=False)
        return dumped
    return dict(value or {})


class MessagesClient(VendorClient):
    """Calls one Claude model through the Messages API (the beta endpoint, so tools may need betas).

    Args:
        base_url: The API's base URL (``https://api.anthropic.com``; the SDK adds ``/v1/messages``).
        model: The model id.
        api_key: The key; None sends none.
        timeout: Seconds the endpoint may stay silent.
        max_retries: Retries after a retryable failure.
        stream: Stream replies (needed for the callbacks).
        profile: The profile name, for messages.
        on_retry: Told about each retry and its wait.
        client: An ``AsyncAnthropic`` to use instead of making one (its own retries should be 0).
    """

    endpoint = "/v1/messages"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        stream: bool = True,
        profile: str | None = None,
        on_retry: RetryCallback | None = None,
        client: AsyncAnthropic | None = None,
    ) -> None:
        from anthropic import AsyncAnthropic

        sdk = client or AsyncAnthropic(
            base_url=base_url, api_key=api_key or NO_KEY, timeout=timeout, max_retries=0
        )
        super().__init__(
            sdk, base_url=base_url, model=model, api_key=api_key, timeout=timeout, max_retries=max_retries,
            stream=stream, profile=profile, on_retry=on_retry,
        )  # fmt: skip

    async def create(
        self,
        params: Mapping[str, Any],
        *,
        on_token: TokenCallback | None = None,
        on_tool_call: ToolCallCallback | None = None,
        stream: bool | None = None,
    ) -> MessagesReply:
        """Send one request (``params`` without ``model``) and return the reply.

        Raises:
            ModelCallError: With a ``reason`` for each kind of failure, after the retries.
        """
        body: dict[str, Any] = {"model": self.model, **params}
        use_stream = self.stream if stream is None else stream

        async def call() -> tuple[dict[str, Any], float | None]:
            if use_stream:
                return await self._stream(body, on_token, on_tool_call)
            return _dump(await self._client.beta.messages.create(**body)), None

        (message, first), started, attempt = await with_retries(
            call, translate=self.translate, max_retries=self.max_retries, on_retry=self.on_retry
        )
        content = [dict(block) for block in message.get("content") or []]
        texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
        thoughts = [str(b.get("thinking", "")) for b in content if b.get("type") == "thinking"]
        rest = {k: v for k, v in body.items() if k != "messages"}
        return MessagesReply(
            content=content,
            text="\n".join(t for t in texts if t),
            thinking="\n".join(t for t in thoughts if t),
            stop_reason=message.get("stop_reason"),
            model=str(message.get("model") or self.model),
            usage=anthropic_usage(message.get("usage")),
            latency=time.monotonic() - started,
            first_token_latency=None if first is None else first - started,
            retries=attempt,
            request=StepRequest.model_construct(
                messages=list(body.get("messages") or []), params={**rest, "stream": use_stream}
            ),
        )

    async def _stream(
        self,
        body: dict[str, Any],
        on_token: TokenCallback | None,
        on_tool_call: ToolCallCallback | None,
    ) -> tuple[dict[str, Any], float | None]:
        stream = await self._client.beta.messages.create(**body, stream=True)
        message: dict[str, Any] | None = None
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, list[str]] = {}
        first: float | None = None
        finished = False
        events = 0
        try:
            async for event in stream:
                events += 1
                kind = getattr(event, "type", "")
                if kind == "message_start":
                    message = _dump(getattr(event, "message", None))
                elif kind == "content_block_start":
                    index = int(getattr(event, "index", len(blocks)))
                    blocks[index] = _dump(getattr(event, "content_block", None))
                elif kind == "content_block_delta":
                    index = int(getattr(event, "index", 0))
                    delta = _dump(getattr(event, "delta", None))
                    block = blocks.setdefault(index, {})
                    piece = ""
                    if delta.get("type") == "text_delta":
                        piece = str(delta.get("text", ""))
                        block["text"] = block.get("text", "") + piece
                    elif delta.get("type") == "thinking_delta":
                        piece = str(delta.get("thinking", ""))
                        block["thinking"] = block.get("thinking", "") + piece
                    elif delta.get("type") == "signature_delta":
                        block["signature"] = block.get("signature", "") + str(delta.get("signature", ""))
                    elif delta.get("type") == "input_json_delta":
                        partial.setdefault(index, []).append(str(delta.get("partial_json", "")))
                    if piece:
                        first = first or time.monotonic()
                        if on_token is not None:
                            on_token(piece)
                elif kind == "content_block_stop":
                    index = int(getattr(event, "index", 0))
                    block = blocks.get(index, {})
                    if index in partial:
                        raw = "".join(partial.pop(index))
                        block["input"] = json.loads(raw) if raw else {}
                    if block.get("type") == "tool_use":
                        first = first or time.monotonic()
                        if on_token is not None:
                            on_token(f"\n[tool_use {block.get('name')}: {json.dumps(block.get('input'))}]\n")
                        if on_tool_call is not None:
                            on_tool_call(block)
                elif kind == "message_delta" and message is not None:
                    delta = _dump(getattr(event, "delta", None))
                    if delta.get("stop_reason"):
                        message["stop_reason"] = delta["stop_reason"]
                    usage = _dump(getattr(event, "usage", None))
                    if usage:
                        message["usage"] = {**(message.get("usage") or {}), **usage}
                elif kind == "message_stop":
                    finished = True
        finally:
            await stream.close()
        if events == 0 or message is None:
            raise InvalidReply("the reply held no stream events")
        if not finished:
            raise CutStream("the stream ended before the message was complete")
        message["content"] = [blocks[i] for i in sorted(blocks)]
        return message, first

    def translate(self, exc: BaseException) -> ModelCallError:
        """Whatever the anthropic SDK raised, as the one readable error."""
        import anthropic
        import pydantic

        url = self.base_url.rstrip("/") + self.endpoint
        if isinstance(exc, ModelCallError):
            return exc
        if isinstance(exc, CutStream):
            return ModelCallError("the reply stream was cut short", reason="cut", where=url,
                                  hint="the server dropped the connection mid-reply; try again")  # fmt: skip
        if isinstance(exc, InvalidReply | json.JSONDecodeError | pydantic.ValidationError):
            return ModelCallError(f"the endpoint answered with something else than the Messages API ({exc})",
                                  reason="invalid_reply", where=url,
                                  hint="check that the base URL points at Anthropic's API")  # fmt: skip
        if isinstance(exc, anthropic.APITimeoutError):
            return ModelCallError(f"no answer within {self.timeout:g} s", reason="timeout", where=url,
                                  hint="raise model_provider.timeout if replies are just slow")  # fmt: skip
        if isinstance(exc, anthropic.APIConnectionError):
            return _connection_error(exc, url)
        if isinstance(exc, anthropic.APIStatusError):
            return unsupported_tool(self._status(exc, url)) or self._status(exc, url)
        return _connection_error(exc, url)  # a stream cut by the server arrives as the transport's error

    def _status(self, exc: Any, url: str) -> ModelCallError:
        status = int(exc.status_code)
        body = exc.body if isinstance(exc.body, dict) else {}
        error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
        message = str(error.get("message") or exc.message)[:300]
        kind = str(error.get("type") or "")
        key = f" of profile {self.profile!r}" if self.profile else ""
        reason: Reason
        if status == 401:
            reason, text = "auth", "the endpoint rejected the API key"
            hint = (
                f"check the key{key} (`osw-studio keys set`); it may be wrong or for another provider"
                if self.has_key
                else "no API key was sent; store one with `osw-studio keys set`"
            )
        elif status == 403:
            reason, text, hint = "forbidden", "the key may not use this model", "check the key's permissions"
        elif status == 404 and "model" in message.lower():
            reason, text = "unknown_model", f"the endpoint does not serve model {self.model!r}"
            hint = "check the model id (claude-...)"
        elif status == 404:
            reason, text = "not_found", "nothing answers at this URL"
            hint = "the base URL is the API's root (https://api.anthropic.com), without /v1"
        elif status == 429:
            reason, text = "rate_limited", f"rate limited after {self.max_retries} retries"
            hint = "wait, or lower the number of parallel runs"
        elif status == 413:
            reason, text, hint = "too_large", "the request is too large", "send smaller or fewer screenshots"
        elif status in (400, 422):
            reason, text, hint = (
                "bad_request",
                "the endpoint refused the request",
                "the prompt may be too long",
            )
        elif status >= 500 or kind == "overloaded_error":
            reason, text, hint = (
                "server",
                "the endpoint failed",
                "a failure on the provider's side; try later",
            )
        else:
            reason, text, hint = "http", "HTTP error", "see the message"
        return ModelCallError(
            f"{text} ({status}): {message}", reason=reason, status=status, where=url, hint=hint
        )
