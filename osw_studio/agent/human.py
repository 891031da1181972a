"""The ``human`` agent: waits for a person's actions, given by the UI or the CLI.

``predict`` waits on a queue that :meth:`HumanAgent.submit` feeds; the runner records these steps
with ``source="human"``. :meth:`HumanAgent.submit_threadsafe` is for callers on another thread
(a CLI reading stdin).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.core.actions import Action, dump_actions
from osw_studio.core.observation import Observation
from osw_studio.core.task import Task


class HumanAgent(Agent):
    """Proposes whatever a person submits, one submission per step."""

    name = kind = "human"
    model_name = "human"

    def __init__(self) -> None:
        super().__init__()
        self._queue: asyncio.Queue[list[Action]] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.waiting = False

    def reset(self, task: Task | None = None) -> None:
        """Start a new episode; actions submitted for the last one are dropped."""
        super().reset(task)
        while not self._queue.empty():
            self._queue.get_nowait()

    def submit(self, actions: Sequence[Action]) -> None:
        """Give the actions of the next step (from the event loop's thread)."""
        self._queue.put_nowait(list(actions))

    def submit_threadsafe(self, actions: Sequence[Action]) -> None:
        """Give the actions of the next step from any thread (once the agent has started waiting)."""
        if self._loop is None:
            raise RuntimeError("the human agent is not running on an event loop yet")
        self._loop.call_soon_threadsafe(self.submit, actions)

    @property
    def pending(self) -> int:
        """Submissions not yet taken."""
        return self._queue.qsize()

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Wait for the person's next submission."""
        self._loop = asyncio.get_running_loop()
        self.waiting = True
        try:
            actions = await self._queue.get()
        finally:
            self.waiting = False
        text = json.dumps(dump_actions(actions), ensure_ascii=False)
        return Prediction(response=text, actions=actions, coordinate_mode="abs")
