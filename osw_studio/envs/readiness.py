"""Readiness after a task's setup: the screen the first observation shows is the one the task means.

A ``launch`` step only starts a program; on a loaded machine its window can take many seconds to show,
and a solution (or an agent) that types before it does types into nothing. So after the setup steps
the runner waits, within one bounded budget, for

1. every program a ``launch`` step started to show a window (or to end, or to prove windowless: see
   ``osw_studio.guest.launched``), asked of the guest; a program still without a window when the
   budget runs out fails the setup with an error naming its step;
2. then the screen to stop changing (:data:`STABLE_FRAMES` identical screenshots in a row), so the
   window has drawn its content (a text editor loads its file after it maps).

An ``open`` step needs none of this: the guest already waits there for the file's window. A guest that
cannot report its launches (OSWorld's server) gets the screen wait only.

Examples:
    >>> pending = [Launched("config[1] (type 'launch')", 41, "mousepad report.txt")]
    >>> waiting({41: "waiting"}, pending)[0].command
    'mousepad report.txt'
    >>> waiting({41: "window"}, pending)
    []
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from osw_studio.core.errors import GuestError
from osw_studio.envs.guest_client import GuestClient

log = logging.getLogger(__name__)

READY_TIMEOUT = 90.0
"""Seconds, in all, that the windows and the screen may take to be ready after setup."""

STABLE_FRAMES = 3
"""Identical screenshots in a row that count as a settled screen."""

STABLE_CAP = 15.0
"""The longest the screen wait may take (a clock or a blinking cursor never settles: go on then)."""

POLL = 0.3
"""Seconds between two questions to the guest."""


@dataclass(frozen=True)
class Launched:
    """A program a setup step started.

    Attributes:
        where: The step, as setup errors name it (``config[1] (type 'launch') of 5 steps``).
        pid: Its PID in the guest.
        command: Its command, for the error message.
    """

    where: str
    pid: int
    command: str


def waiting(states: dict[int, str], launched: list[Launched]) -> list[Launched]:
    """The launched programs whose window the guest still waits for."""
    return [item for item in launched if states.get(item.pid) == "waiting"]


async def wait_ready(
    guest: GuestClient,
    launched: list[Launched],
    *,
    budget: float = READY_TIMEOUT,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Wait until the launched programs show their windows, then until the screen is stable.

    Raises:
        GuestError: If a program still shows no window after ``budget`` seconds, naming its step.
    """
    deadline = clock() + budget
    if launched:
        pids = [item.pid for item in launched]
        while True:
            states = await guest.launched_state(pids)
            if states is None:
                break  # the guest cannot tell: the screen wait below is all we have
            late = waiting(states, launched)
            if not late:
                break
            if clock() >= deadline:
                first = late[0]
                raise GuestError(
                    f"the program {first.command!r} showed no window within {budget:g} s",
                    where=first.where,
                    hint="the app may be missing or failing to start in the guest (see its log), "
                    "or the machine is too loaded",
                )
            await sleep(POLL)
    await _stable_screen(guest, min(STABLE_CAP, max(0.0, deadline - clock())), sleep=sleep, clock=clock)


async def _stable_screen(
    guest: GuestClient,
    cap: float,
    *,
    sleep: Callable[[float], Awaitable[None]],
    clock: Callable[[], float],
) -> None:
    start = clock()
    last: bytes | None = None
    same = 0
    while True:
        try:
            frame = await guest.screenshot(format="jpeg", max_width=480)
        except GuestError as exc:  # only ends the wait: the first observation reports real trouble
            log.warning("setup: screen wait ended early: %s", exc)
            return
        same = same + 1 if frame == last else 1
        last = frame
        if same >= STABLE_FRAMES:
            return
        if clock() - start >= cap:
            log.info("setup: the screen kept changing for %g s; going on", cap)
            return
        await sleep(POLL)
