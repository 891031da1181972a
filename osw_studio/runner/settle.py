"""Waiting for the screen to settle after an action, instead of OSWorld's fixed two-second sleep.

After each action the runner grabs small frames until ``stable_frames`` consecutive grabs are identical
(the app has finished redrawing) or ``cap`` seconds have passed, whichever comes first. A fast action on
a quiet screen thus costs a few polls, a slow one waits up to the cap.

Examples:
    >>> import asyncio
    >>> frames = iter([b"a", b"b", b"b", b"b"])
    >>> async def grab() -> bytes:
    ...     return next(frames)
    >>> async def no_sleep(seconds: float) -> None:
    ...     pass
    >>> report = asyncio.run(settle(grab, SettlePolicy(stable_frames=2), sleep=no_sleep))
    >>> report.stable, report.frames
    (True, 3)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass
class SettlePolicy:
    """How long to wait for a stable screen after each action.

    Attributes:
        poll_interval: Seconds between two grabs.
        stable_frames: How many identical grabs in a row count as settled (1 means "one grab after
            ``min_wait``"; 0 turns settling off).
        cap: The longest wait in seconds, however busy the screen is.
        min_wait: Seconds to wait before the first grab (for apps that start redrawing late).
    """

    poll_interval: float = 0.1
    stable_frames: int = 2
    cap: float = 2.0
    min_wait: float = 0.0

    @classmethod
    def fixed(cls, seconds: float) -> SettlePolicy:
        """OSWorld's behaviour: sleep ``seconds`` and never look at the screen.

        >>> SettlePolicy.fixed(2.0)
        SettlePolicy(poll_interval=0.1, stable_frames=0, cap=2.0, min_wait=2.0)
        """
        return cls(stable_frames=0, cap=seconds, min_wait=seconds)

    @classmethod
    def off(cls) -> SettlePolicy:
        """No wait at all (benchmarks, tests of the runner itself)."""
        return cls(stable_frames=0, cap=0.0, min_wait=0.0)


@dataclass(frozen=True)
class SettleReport:
    """What a settle wait did.

    Attributes:
        waited: Seconds spent.
        frames: Grabs taken.
        stable: Whether the screen was stable at the end (False when the cap cut the wait short).
    """

    waited: float
    frames: int
    stable: bool


async def settle(
    grab: Callable[[], Awaitable[bytes]],
    policy: SettlePolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> SettleReport:
    """Wait until ``grab`` returns the same frame ``policy.stable_frames`` times in a row, up to the cap.

    Args:
        grab: Returns the current screen as bytes; identical bytes mean an identical screen (a
            deterministic encoding such as PNG, or a downscaled JPEG of the same pixels).
        policy: The limits.
        sleep: The sleep to use (injectable for tests).
        clock: The monotonic clock to use (injectable for tests).

    Returns:
        How long it waited and whether the screen was stable.
    """
    start = clock()
    if policy.min_wait > 0:
        await sleep(policy.min_wait)
    if policy.stable_frames <= 0:
        return SettleReport(waited=clock() - start, frames=0, stable=True)
    frames = 0
    last: bytes | None = None
    same = 0
    while True:
        frame = await grab()
        frames += 1
        same = same + 1 if frame == last else 1
        last = frame
        if same >= policy.stable_frames:
            return SettleReport(waited=clock() - start, frames=frames, stable=True)
        remaining = policy.cap - (clock() - start)
        if remaining <= 0:
            return SettleReport(waited=clock() - start, frames=frames, stable=False)
        await sleep(min(policy.poll_interval, remaining))
