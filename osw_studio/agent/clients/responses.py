"""The client of OpenAI's Responses API (``POST /responses``), on the official SDK's ``AsyncOpenAI``.

The computer-use agents (GPT-5.4's ``computer`` tool, ``computer-use-preview``) talk to it. It streams by
default: the reasoning summary and the reply's text go to the token callback as they arrive, and each
tool call is announced there as soon as its item is complete, so the step inspector shows the step
growing. It retries what is worth retrying with the chat client's rules (visible waits, ``Retry-After``)
and turns every failure into one :class:`~osw_studio.agent.errors.ModelCallError`; a refused tool
definition says so (``reason="unsupported_tool"``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from osw_studio.agent.clients.base import NO_KEY, VendorClient
from osw_studio.agent.clients.usage import TokenUsage
from osw_studio.agent.errors import CutStream, InvalidReply, ModelCallError
from osw_studio.agent.model_client import (
    DEFAULT_MAX_REQUEST_BYTES,
    RetryCallback,
    TokenCallback,
    request_size,
)
from osw_studio.agent.retry import with_retries
from osw_studio.core.step import StepRequest

if TYPE_CHECKING:
    from openai import AsyncOpenAI


ToolCallCallback = Callable[[dict[str, Any]], None]
"""Called with each tool call item of the reply (a dict in the API's shape) as soon as it is complete."""


@dataclass(frozen=True)
class ResponsesReply:
    """What one Responses call produced.

    Attributes:
        response_id: The response's id (the next request chains to it with ``previous_response_id``).
        output: The output items as the API returned them (``reasoning``, ``message``, ``computer_call``...).
        text: The text of the ``message`` items.
        reasoning: The reasoning summary's text.
        model: The model that answered.
        status: ``completed``, ``incomplete``...
        usage: Token counts, when reported.
        latency: Seconds from sending the request to the end of the reply.
        first_token_latency: Seconds until the first streamed event with content (streaming only).
        retries: How many retries it took.
        request: The request as sent (``messages`` holds the ``input`` items), for the run store.
    """

    response_id: str
    output: list[dict[str, Any]]
    text: str = ""
    reasoning: str = ""
    model: str = ""
    status: str | None = None
    usage: TokenUsage | None = None
    latency: float = 0.0
    first_token_latency: float | None = None
    retries: int = 0
    request: StepRequest | None = field(default=None, repr=False)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The output items that call a tool (``computer_call``, ``function_call``), in order."""
        return [item for item in self.output if str(item.get("type", "")).endswith("_call")]


def output_text(output: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The ``(text, reasoning summary)`` of output items, each part on its own line.

    >>> output_text([{"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look."}]},
    ...              {"type": "message", "content": [{"type": "output_text", "text": "Done."}]}])
    ('Done.', 'Look.')
    """
    texts: list[str] = []
    thoughts: list[str] = []
    for item in output:
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, Mapping) and part.get("type") == "output_text" and part.get("text"):
                    texts.append(str(part["text"]))
        elif item.get("type") == "reasoning":
            for part in item.get("summary") or []:
                if isinstance(part, Mapping) and part.get("text"):
                    thoughts.append(str(part["text"]))
    return "\n".join(texts), "\n".join(thoughts)


def describe_call(item: Mapping[str, Any]) -> str:
    """One line for a tool call, as the live view shows it.

    >>> describe_call({"type": "computer_call", "actions": [{"type": "click", "x": 1, "y": 2}]})
    '[computer_call: click x=1 y=2]'
    """
    actions = item.get("actions")
    if actions is None:
        actions = [item["action"]] if item.get("action") is not None else []
    parts = []
    for action in actions:
        if not isinstance(action, Mapping):
            continue
        args = " ".join(
            f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in action.items() if k != "type"
        )
        parts.append(f"{action.get('type')} {args}".strip())
    if item.get("type") == "function_call":
        parts.append(f"{item.get('name')}({item.get('arguments', '')})")
    return f"[{item.get('type')}: {'; '.join(parts)}]"


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True, warnings=False)
    return value


class ResponsesClient(VendorClient):
    """Calls one model through OpenAI's Responses API.

    Args:
        base_url: The API's base URL (``https://api.openai.com/v1``).
        model: The model id.
        api_key: The key; None sends none.
        timeout: Seconds the endpoint may stay silent.
        max_retries: Retries after a retryable failure (429, 5xx, timeout, dropped connection).
        stream: Stream replies (needed for the callbacks).
        max_request_bytes: Refuse to send requests larger than this.
        profile: The profile name, for messages.
        on_retry: Told about each retry and its wait.
        client: An ``AsyncOpenAI`` to use instead of making one (its own retries should be 0).
    """

    endpoint = "/responses"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        stream: bool = True,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        profile: str | None = None,
        on_retry: RetryCallback | None = None,
        client: AsyncOpenAI | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        sdk = client or AsyncOpenAI(
            base_url=base_url, api_key=api_key or NO_KEY, timeout=timeout, max_retries=0
        )
        super().__init__(
            sdk, base_url=base_url, model=model, api_key=api_key, timeout=timeout, max_retries=max_retries,
            stream=stream, profile=profile, on_retry=on_retry,
        )  # fmt: skip
        self.max_request_bytes = max_request_bytes

    async def list_models(self) -> list[str]:
        """The ids ``GET /models`` lists.

        Raises:
            ModelCallError: If the endpoint does not answer it.
        """
        try:
            page = await self._client.models.list()
            return sorted(m.id for m in page.data)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise self.translate(exc) from None

    async def create(
        self,
        params: Mapping[str, Any],
        *,
        on_token: TokenCallback | None = None,
        on_tool_call: ToolCallCallback | None = None,
        stream: bool | None = None,
    ) -> ResponsesReply:
        """Send one request (``params`` without ``model``: the client's is added) and return the reply.

        Raises:
            ModelCallError: With a ``reason`` for each kind of failure, after the retries.
        """
        body: dict[str, Any] = {"model": self.model, **params}
        size = request_size(list(body.get("input") or []))
        if size > self.max_request_bytes:
            raise ModelCallError(
                f"the request is {size / 1024 / 1024:.1f} MiB, over the "
                f"{self.max_request_bytes / 1024 / 1024:.1f} MiB cap",
                reason="too_large",
                where=self.base_url,
                hint="send smaller screenshots (profile screenshot_size, image_format jpeg)",
            )
        use_stream = self.stream if stream is None else stream

        async def call() -> tuple[dict[str, Any], float | None]:
            if use_stream:
                answer = await self._stream(body, on_token, on_tool_call)
            else:
                answer = _dump(await self._client.responses.create(**body)), None
            self._check(answer[0])
            return answer

        (response, first), started, attempt = await with_retries(
            call, translate=self.translate, max_retries=self.max_retries, on_retry=self.on_retry
        )
        finished = time.monotonic()
        output = [dict(item) for item in response.get("output") or []]
        text, reasoning = output_text(output)
        rest = {k: v for k, v in body.items() if k != "input"}
        return ResponsesReply(
            response_id=str(response.get("id") or ""),
            output=output,
            text=text,
            reasoning=reasoning,
            model=str(response.get("model") or self.model),
            status=response.get("status"),
            usage=TokenUsage.from_responses(response.get("usage")),
            latency=finished - started,
            first_token_latency=None if first is None else first - started,
            retries=attempt,
            request=StepRequest.model_construct(
                messages=list(body.get("input") or []), params={**rest, "stream": use_stream}
            ),
        )

    async def _stream(
        self,
        body: dict[str, Any],
        on_token: TokenCallback | None,
        on_tool_call: ToolCallCallback | None,
    ) -> tuple[dict[str, Any], float | None]:
        stream = await self._client.responses.create(**body, stream=True)
        final: dict[str, Any] | None = None
        first: float | None = None
        events = 0
        try:
            async for event in stream:
                events += 1
                kind = getattr(event, "type", "")
                if kind in ("response.reasoning_summary_text.delta", "response.output_text.delta"):
                    delta = str(getattr(event, "delta", "") or "")
                    if delta:
                        first = first or time.monotonic()
                        if on_token is not None:
                            on_token(delta)
                elif kind == "response.reasoning_summary_part.done" and on_token is not None:
                    on_token("\n")
                elif kind == "response.output_item.done":
                    item = _dump(getattr(event, "item", None)) or {}
                    if str(item.get("type", "")).endswith("_call"):
                        first = first or time.monotonic()
                        if on_token is not None:
                            on_token(("\n" if events > 1 else "") + describe_call(item) + "\n")
                        if on_tool_call is not None:
                            on_tool_call(item)
                elif kind in ("response.completed", "response.incomplete", "response.failed"):
                    final = _dump(getattr(event, "response", None))
        finally:
            await stream.close()
        if events == 0:
            raise InvalidReply("the reply held no stream events")
        if final is None:
            raise CutStream("the stream ended before the response was complete")
        return final, first

    def _check(self, response: Mapping[str, Any]) -> None:
        error = response.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        if message or response.get("status") == "failed":
            raise ModelCallError(
                f"the model failed to answer: {message or 'the response has status failed'}",
                reason="server",
                where=self.base_url + self.endpoint,
                hint="a failure on the provider's side; try again later",
            )

    def translate(self, exc: BaseException) -> ModelCallError:
        """``exc`` as the one readable error, with the Responses API's own diagnoses."""
        from osw_studio.agent.errors import translate_error, unsupported_tool

        if isinstance(exc, ModelCallError):
            return exc
        error = translate_error(
            exc,
            url=self.base_url + self.endpoint,
            model=self.model,
            timeout=self.timeout,
            max_retries=self.max_retries,
            profile=self.profile,
            has_key=self.has_key,
        )
        return unsupported_tool(error) or error
