"""When a model call is retried: the one rule of the chat client and every vendor client."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from osw_studio.agent.errors import ModelCallError, parse_retry_after

T = TypeVar("T")

RetryCallback = Callable[[int, float, ModelCallError], None]
"""Called before a retry with the attempt number (1-based), the wait in seconds and the failure."""

MAX_RETRY_WAIT = 60.0
"""A ``Retry-After`` longer than this is not waited out; the call fails and says how long to wait."""

RETRYABLE = ("rate_limited", "server", "timeout", "cut", "connection")
"""Failures worth another try (a 429, a 5xx or Anthropic's 529, a timeout, a dropped connection)."""


def retry_wait(exc: BaseException, error: ModelCallError, attempt: int, max_retries: int) -> float | None:
    """Seconds to wait before retry ``attempt + 1``, or None when the call fails now.

    A ``Retry-After`` the server sent is honoured up to :data:`MAX_RETRY_WAIT`; otherwise the wait doubles
    from 0.5 s up to 8 s.

    >>> retry_wait(Exception(), ModelCallError("x", reason="server", status=500), 2, 3)
    2.0
    >>> retry_wait(Exception(), ModelCallError("x", reason="auth", status=401), 0, 3) is None
    True
    """
    if attempt >= max_retries or error.reason not in RETRYABLE:
        return None
    if error.status is not None and error.status not in (408, 409, 429) and error.status < 500:
        return None
    response = getattr(exc, "response", None)
    asked = parse_retry_after(dict(response.headers)) if response is not None else None
    if asked is not None:
        return asked if asked <= MAX_RETRY_WAIT else None
    return float(min(8.0, 0.5 * 2**attempt))


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    translate: Callable[[BaseException], ModelCallError],
    max_retries: int,
    on_retry: RetryCallback | None = None,
) -> tuple[T, float, int]:
    """``call()`` until it succeeds or fails for good: ``(its result, when the last try began, retries)``.

    Every failure is ``translate``-d; one worth retrying (:func:`retry_wait`) is told to ``on_retry`` and
    waited out in view, any other raised as the one error.
    """
    attempt = 0
    while True:
        started = time.monotonic()
        try:
            return await call(), started, attempt
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = translate(exc)
            wait = retry_wait(exc, error, attempt, max_retries)
            if wait is None:
                raise error from None
            attempt += 1
            if on_retry is not None:
                on_retry(attempt, wait, error)
            await asyncio.sleep(wait)
