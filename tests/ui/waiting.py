"""Waiting for what a person would see, on the running Qt/asyncio loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(predicate: Callable[[], bool], seconds: float = 20.0) -> None:
    """Let the loop run until ``predicate()`` holds (fails after ``seconds``, a hang guard, not a timing)."""
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 (widget state has no event to await)
            await asyncio.sleep(0.02)
