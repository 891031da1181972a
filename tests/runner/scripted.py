"""A scripted agent for runner tests: replies written in advance, parsed by the real pyautogui parser."""

from __future__ import annotations

import asyncio

from osw_studio.actions import parse_reply
from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation

HANG = "<hang>"
"""A reply that never comes: the predict call waits until it is cancelled."""


class ScriptedAgent(Agent):
    """Answers each step with the next scripted reply (pyautogui code, ``DONE``, ``FAIL``...)."""

    name = kind = "scripted"
    model_name = "scripted"

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies = list(replies)
        self.calls = 0
        self.cancelled = 0
        self.seen: list[Observation] = []

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        self.calls += 1
        self.seen.append(observation)
        reply = self.replies.pop(0) if self.replies else "DONE"
        if reply == HANG:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        if on_token is not None:
            on_token(reply)
        try:
            thought, actions = parse_reply(reply, "pyautogui")
        except ActionParseError as exc:
            return Prediction(response=reply, error=str(exc))
        return Prediction(response=reply, thought=thought, actions=actions, coordinate_mode="abs")
