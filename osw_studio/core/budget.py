"""Limits that end a run cleanly: a :class:`RunBudget` (tokens, cost, wall time) and a :class:`LoopGuard`.

Both are checked between steps. A run past its budget, or one the loop guard finds stuck, stops taking
steps and is then scored as OSWorld scores any run that ends (its end state evaluated), with its own
status (``budget``, ``stuck``). An attended run the loop guard finds stuck is held for the person
instead. The checks are plain functions of what the run recorded, so the runner and the tests share them.

Examples:
    >>> RunBudget(tokens=1000).exceeded(tokens=1200, cost=None, seconds=1.0)
    'token budget of 1000 used up (1200 tokens)'
    >>> RunBudget(cost=0.5).exceeded(tokens=10, cost=None, seconds=1.0) is None
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field


class RunBudget(BaseModel):
    """The most one run may spend; a missing number is no limit.

    Attributes:
        tokens: Total tokens of the run's model calls.
        cost: Cost of the run's model calls (in the prices' currency); a run whose cost is unknown (no
            price) is not held to it.
        seconds: Wall time since the run began.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: int | None = Field(default=None, ge=1)
    cost: float | None = Field(default=None, gt=0)
    seconds: float | None = Field(default=None, gt=0)

    def exceeded(self, *, tokens: int, cost: float | None, seconds: float) -> str | None:
        """Why the run is over budget, or None while it is not.

        >>> RunBudget(seconds=60).exceeded(tokens=0, cost=None, seconds=61.2)
        'wall-time budget of 60 s used up (61 s)'
        >>> RunBudget(cost=0.5).exceeded(tokens=0, cost=0.75, seconds=0)
        'cost budget of 0.5 used up (0.75)'
        """
        if self.tokens is not None and tokens >= self.tokens:
            return f"token budget of {self.tokens} used up ({tokens} tokens)"
        if self.cost is not None and cost is not None and cost >= self.cost:
            return f"cost budget of {self.cost:g} used up ({cost:.4g})"
        if self.seconds is not None and seconds >= self.seconds:
            return f"wall-time budget of {self.seconds:g} s used up ({seconds:.0f} s)"
        return None


def screen_key(screenshot: bytes) -> str:
    """A short digest of a screen's bytes: equal screens, equal keys."""
    return hashlib.blake2b(screenshot, digest_size=16).hexdigest()


@dataclass
class LoopGuard:
    """Finds a run going round in circles, from each step's screen and the actions it ran.

    Attributes:
        repeats: The same actions on an unchanged screen this many times in a row is stuck (0: off).
        still_steps: This many steps in a row after which the screen has not changed is stuck (0: off).
    """

    repeats: int = 0
    still_steps: int = 0
    _steps: list[tuple[str, str]] = field(default_factory=list)

    @property
    def enabled(self) -> bool:
        """Whether either check is on."""
        return self.repeats > 0 or self.still_steps > 0

    def record(self, screen: str, actions: Sequence[object]) -> None:
        """A step ran ``actions`` on the screen whose key is ``screen``."""
        self._steps.append((screen, repr(list(actions))))
        del self._steps[: -max(self.repeats, self.still_steps, 1)]

    def forget(self) -> None:
        """Start counting afresh (a person stepped in)."""
        self._steps.clear()

    def check(self, screen: str) -> str | None:
        """Why the run is stuck now that the screen's key is ``screen``, or None.

        >>> guard = LoopGuard(repeats=3, still_steps=5)
        >>> for _ in range(3):
        ...     guard.record("a", ["click"])
        >>> guard.check("b") is None, guard.check("a")
        (True, 'the same actions ran 3 times on an unchanged screen')
        """
        still = 0
        for key, _ in reversed(self._steps):
            if key != screen:
                break
            still += 1
        if self.repeats and still >= self.repeats:
            last = [actions for _, actions in self._steps[-self.repeats :]]
            if len(set(last)) == 1:
                return f"the same actions ran {self.repeats} times on an unchanged screen"
        if self.still_steps and still >= self.still_steps:
            return f"the screen did not change in {self.still_steps} steps in a row"
        return None
