"""The client of OpenAI-compatible chat endpoints (OpenAI, gateways, vLLM, SGLang), on ``AsyncOpenAI``.

It streams by default and hands each piece of text to a callback as it arrives (the UI shows the reply
growing), retries what is worth retrying (429 honouring ``Retry-After``, 5xx, timeouts, dropped
connections) with its own loop so that every wait is visible, records usage and latency, keeps
per-token logprobs and a step entropy when the endpoint returns them, and turns every failure into one
:class:`~osw_studio.agent.errors.ModelCallError` that says what happened and what to do.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from osw_studio.agent.errors import (
    CutStream,
    InvalidReply,
    ModelCallError,
    translate_error,
)
from osw_studio.agent.retry import MAX_RETRY_WAIT as MAX_RETRY_WAIT
from osw_studio.agent.retry import RetryCallback as RetryCallback
from osw_studio.core import limits
from osw_studio.core.step import StepRequest, Usage
from osw_studio.core.unicode import well_formed

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from osw_studio.settings.model import ResolvedProfile

TokenCallback = Callable[[str], None]
"""Called with each new piece of the reply's text, in order."""

DEFAULT_MAX_REQUEST_BYTES = 20 * 1024 * 1024
"""OpenAI's own limit on a request with images; local servers accept about the same."""

_NO_KEY = "no-key"  # AsyncOpenAI insists on a key; local servers ignore this one.


@dataclass(frozen=True)
class ModelReply:
    """What one model call produced.

    Attributes:
        text: The reply.
        model: The model that answered (as the endpoint named it).
        usage: Token counts, when the endpoint reported them.
        latency: Seconds from sending the request to the end of the reply (the successful attempt).
        first_token_latency: Seconds until the first text arrived (streaming only).
        logprobs: The log-probability of each generated token, when asked for and returned.
        entropy: The mean entropy (nats) of the token distributions, from the top logprobs.
        finish_reason: ``stop``, ``length``, ...
        retries: How many retries it took.
        request: What was sent: the messages (images as the data URLs sent) and the request's other
            parameters, for the run store.
    """

    text: str
    model: str
    usage: Usage | None = None
    latency: float = 0.0
    first_token_latency: float | None = None
    logprobs: list[float] | None = None
    entropy: float | None = None
    finish_reason: str | None = None
    retries: int = 0
    request: StepRequest | None = field(default=None, repr=False)


def token_entropy(top_logprobs: Sequence[float]) -> float:
    """Entropy (nats) of one token's distribution, seen through its top-k logprobs.

    The probability mass outside the top k is counted as one more outcome, so the value is a lower
    bound of the true entropy that is exact when k covers the distribution.

    >>> round(token_entropy([math.log(0.5), math.log(0.5)]), 4)
    0.6931
    >>> token_entropy([0.0])
    0.0
    """
    probs = [math.exp(lp) for lp in top_logprobs]
    rest = max(0.0, 1.0 - sum(probs))
    return max(0.0, -sum(p * math.log(p) for p in [*probs, rest] if p > 0))


def request_size(messages: Sequence[Mapping[str, Any]]) -> int:
    """Bytes the messages take in the JSON body (images are base64 data URLs inside them).

    >>> request_size([{"role": "user", "content": "hi"}])
    35
    """
    return len(json.dumps(list(messages), ensure_ascii=False).encode())


def sent_request(params: Mapping[str, Any], stream: bool) -> StepRequest:
    """The record of a request: its messages as sent and every other parameter (no copy of the images).

    >>> r = sent_request({"model": "m", "messages": [{"role": "user", "content": "hi"}], "top_p": 0.9}, True)
    >>> r.params
    {'model': 'm', 'top_p': 0.9, 'stream': True}
    """
    rest = {k: v for k, v in params.items() if k != "messages"}
    return StepRequest.model_construct(messages=list(params["messages"]), params={**rest, "stream": stream})


def _human_size(n: int) -> str:
    """Bytes for people.

    >>> _human_size(4000), _human_size(20 * 1024 * 1024)
    ('3.9 KiB', '20.0 MiB')
    """
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


@dataclass
class _Accumulator:
    parts: list[str] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    entropies: list[float] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str = ""
    first_token_at: float | None = None

    def add_logprobs(self, logprobs: Any) -> None:
        for token in getattr(logprobs, "content", None) or []:
            self.logprobs.append(float(token.logprob))
            top = [float(t.logprob) for t in (token.top_logprobs or [])]
            if top:
                self.entropies.append(token_entropy(top))

    def add_usage(self, usage: Any) -> None:
        if usage is not None:
            self.usage = Usage(
                prompt_tokens=usage.prompt_tokens or 0,
                completion_tokens=usage.completion_tokens or 0,
                total_tokens=usage.total_tokens or 0,
                reasoning_tokens=_detail(usage, "completion_tokens_details", "reasoning_tokens"),
                cached_tokens=_detail(usage, "prompt_tokens_details", "cached_tokens"),
            )


def _detail(usage: Any, group: str, name: str) -> int | None:
    """A token count the API reports in a details group (``None`` when it does not report it)."""
    value = getattr(getattr(usage, group, None), name, None)
    return int(value) if isinstance(value, int) else None


class ModelClient:
    """Calls one model at one OpenAI-compatible endpoint.

    Args:
        base_url: The endpoint's base URL (``.../v1``).
        model: The model id.
        api_key: The key; None for servers that need none.
        timeout: Seconds the endpoint may stay silent (connecting, before the reply, between chunks).
        max_retries: Retries after a retryable failure (429, 5xx, timeout, dropped connection).
        stream: Stream replies (needed for ``on_token``).
        max_request_bytes: Refuse to send requests larger than this.
        profile: The profile name, for messages.
        on_retry: Told about each retry and its wait.
        client: An ``AsyncOpenAI`` to use instead of making one (its own retries should be 0).
    """

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

        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.stream = stream
        self.max_request_bytes = max_request_bytes
        self.profile = profile
        self.on_retry = on_retry
        self.has_key = bool(api_key)
        # Retries are ours (visible, Retry-After honoured); the SDK's own loop stays off.
        self._client = client or AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or _NO_KEY,
            timeout=timeout,
            max_retries=0,
            http_client=_bounded_http_client(),
        )

    @classmethod
    def from_profile(
        cls, profile: ResolvedProfile, *, api_key: str | None = None, **kwargs: Any
    ) -> ModelClient:
        """A client for a resolved settings profile.

        ``api_key`` comes from :func:`osw_studio.settings.secrets.find_api_key`.
        """
        return cls(
            base_url=profile.base_url,
            model=profile.model,
            api_key=api_key,
            timeout=profile.timeout,
            max_retries=profile.max_retries,
            profile=profile.name,
            **kwargs,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- calls --------------------------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        temperature: float | None = None,
        top_p: float | None = None,
        max_tokens: int | None = None,
        frequency_penalty: float | None = None,
        logprobs: bool = False,
        top_logprobs: int = 5,
        on_token: TokenCallback | None = None,
        stream: bool | None = None,
    ) -> ModelReply:
        """Send a chat completion request and return the reply.

        Raises:
            ModelCallError: With a ``reason`` for each kind of failure, after the retries.
        """
        size = request_size(messages)
        if size > self.max_request_bytes:
            raise ModelCallError(
                f"the request is {_human_size(size)}, over the {_human_size(self.max_request_bytes)} cap",
                reason="too_large",
                where=self.base_url,
                hint="send smaller screenshots (profile screenshot_size, image_format jpeg) or fewer "
                "history images",
            )
        params: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if temperature is not None:
            params["temperature"] = temperature
        if top_p is not None:
            params["top_p"] = top_p
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if frequency_penalty is not None:
            params["frequency_penalty"] = frequency_penalty
        if logprobs:
            params["logprobs"] = True
            if top_logprobs:
                params["top_logprobs"] = top_logprobs
        use_stream = self.stream if stream is None else stream
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                if use_stream:
                    acc = await self._stream(params, on_token, started)
                else:
                    acc = await self._once(params)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = self._translate(exc)
                wait = self._retry_wait(exc, error, attempt)
                if wait is None:
                    raise error from None
                attempt += 1
                if self.on_retry is not None:
                    self.on_retry(attempt, wait, error)
                await asyncio.sleep(wait)
                continue
            finished = time.monotonic()
            return ModelReply(
                text=well_formed("".join(acc.parts)),  # a lone surrogate ("\ud800") is valid JSON
                model=acc.model or self.model,
                usage=acc.usage,
                latency=finished - started,
                first_token_latency=None if acc.first_token_at is None else acc.first_token_at - started,
                logprobs=acc.logprobs or None,
                entropy=(sum(acc.entropies) / len(acc.entropies)) if acc.entropies else None,
                finish_reason=acc.finish_reason,
                retries=attempt,
                request=sent_request(params, use_stream),
            )

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
            raise self._translate(exc, endpoint="/models") from None

    async def _once(self, params: dict[str, Any]) -> _Accumulator:
        # The body is read against limits.MODEL_BODY_BYTES by the HTTP client (decoded size included).
        completion = await self._client.chat.completions.create(**params)
        acc = _Accumulator(model=completion.model or "")
        if not completion.choices:
            raise InvalidReply("the reply has no choices")
        choice = completion.choices[0]
        text = choice.message.content or ""
        if len(text) > limits.MODEL_REPLY_CHARS:
            raise ReplyTooLong(text[: limits.STORED_REPLY_CHARS], len(text))
        acc.parts.append(text)
        acc.finish_reason = choice.finish_reason
        acc.add_logprobs(choice.logprobs)
        acc.add_usage(completion.usage)
        return acc

    async def _stream(
        self, params: dict[str, Any], on_token: TokenCallback | None, started: float
    ) -> _Accumulator:
        acc = _Accumulator()
        stream = await self._client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        events = 0
        length = 0
        try:
            async for chunk in stream:
                events += 1
                acc.model = acc.model or chunk.model or ""
                acc.add_usage(chunk.usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                text = choice.delta.content if choice.delta else None
                if text:
                    if acc.first_token_at is None:
                        acc.first_token_at = time.monotonic()
                    acc.parts.append(text)
                    length += len(text)
                    if length > limits.MODEL_REPLY_CHARS:
                        raise ReplyTooLong("".join(acc.parts), length)
                    if on_token is not None:
                        on_token(well_formed(text))
                acc.add_logprobs(choice.logprobs)
                if choice.finish_reason:
                    acc.finish_reason = choice.finish_reason
        finally:
            await stream.close()
        if events == 0:
            # Not one server-sent event: the URL answered something else (a web page, a proxy's
            # login form), not a stream that was cut.
            raise InvalidReply("the reply held no stream events")
        if acc.finish_reason is None:
            raise CutStream("the stream ended before the reply was finished")
        return acc

    # --- failures -----------------------------------------------------------------------------------

    def _translate_limits(self, exc: BaseException) -> ModelCallError | None:
        """The error for a reply over a cap (another try would be as long), or None for other failures."""
        chain: list[BaseException] = []
        current: BaseException | None = exc
        while current is not None and current not in chain:
            chain.append(current)
            current = current.__cause__ or current.__context__
        over = next((e for e in chain if isinstance(e, limits.LimitExceeded | RecursionError)), None)
        if over is None:
            return None
        if isinstance(over, RecursionError):
            message = f"the reply's JSON nests too deeply to read (over {limits.JSON_DEPTH} levels)"
        else:
            message = str(over)
        error = ModelCallError(
            message,
            reason="invalid_reply",
            where=self.base_url,
            hint="the endpoint sent far more than any model reply; check its settings (max_tokens) "
            "and that the base URL is the model server",
        )
        if isinstance(over, ReplyTooLong):
            error.partial, _ = limits.bounded_prefix(over.text)  # type: ignore[attr-defined]
            error.length = over.length  # type: ignore[attr-defined]
        return error

    def _retry_wait(self, exc: BaseException, error: ModelCallError, attempt: int) -> float | None:
        from osw_studio.agent.retry import retry_wait  # the one rule of every model client

        return retry_wait(exc, error, attempt, self.max_retries)

    def _translate(self, exc: BaseException, *, endpoint: str = "/chat/completions") -> ModelCallError:
        over = self._translate_limits(exc)
        if over is not None:
            return over
        return translate_error(
            exc,
            url=self.base_url + endpoint,
            model=self.model,
            timeout=self.timeout,
            max_retries=self.max_retries,
            profile=self.profile,
            has_key=self.has_key,
        )


class ReplyTooLong(limits.LimitExceeded):
    """A streamed reply went over :data:`~osw_studio.core.limits.MODEL_REPLY_CHARS`; ``text`` is its start."""

    def __init__(self, text: str, length: int) -> None:
        super().__init__(
            f"the reply is over {length:,} characters, over the cap of {limits.MODEL_REPLY_CHARS:,}"
        )
        self.text = text
        self.length = length


def _bounded_http_client() -> Any:
    """The SDK's default HTTP client, answers capped at :data:`~osw_studio.core.limits.MODEL_BODY_BYTES`."""
    from openai import DefaultAsyncHttpxClient

    from osw_studio.core.bounded_http import accept_encoding, bound_responses

    client = DefaultAsyncHttpxClient(headers={"Accept-Encoding": accept_encoding()})
    return bound_responses(client, limits.MODEL_BODY_BYTES, "the model endpoint's answer")
