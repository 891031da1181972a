"""The ``osworld`` agent: OSWorld's PromptAgent, with its observation types and action spaces.

Observation types: ``screenshot``, ``a11y_tree`` (the accessibility tree as OSWorld's table) or
``screenshot_a11y_tree``; action spaces: ``pyautogui`` (Python code) or ``computer_13`` (JSON actions).
The system prompt states the task; each step is a user turn with the observation and an assistant turn
with the reply. The last ``history_window`` turns are kept; a turn a person edited shows what actually
ran, written in the same action language.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from osw_studio.actions import CoordinateSpace, parse_reply, render_computer13, render_pyautogui
from osw_studio.agent.a11y import linearize_accessibility_tree, trim_to_budget
from osw_studio.agent.base import Prediction, TokenCallback
from osw_studio.agent.model_agent import Message, ModelAgent, image_part, text_part
from osw_studio.agent.prompts import render_prompt
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord

A11Y_MAX_TOKENS = 10_000
"""Token budget of the accessibility table in one turn (OSWorld's default)."""


class OSWorldAgent(ModelAgent):
    """OSWorld's prompt agent (see the module docs)."""

    name = kind = "osworld"

    @property
    def observation_type(self) -> str:
        """``screenshot``, ``a11y_tree`` or ``screenshot_a11y_tree``."""
        return self.profile.observation_type

    @property
    def action_space(self) -> str:
        """``pyautogui`` or ``computer_13`` (a ``uitars`` profile speaks pyautogui here)."""
        return "computer_13" if self.profile.action_space == "computer_13" else "pyautogui"

    @property
    def wants_accessibility_tree(self) -> bool:
        """Whether observations must carry the accessibility tree."""
        return "a11y_tree" in self.observation_type

    def system_prompt(self, instruction: str, screen: tuple[int, int]) -> str:
        """The system message for ``instruction`` on a screen of ``screen`` size."""
        size = {"screen_width": screen[0], "screen_height": screen[1]}
        return render_prompt(
            "osworld_system",
            observation=render_prompt(f"osworld_observation_{self.observation_type}"),
            action_space=render_prompt(f"osworld_actions_{self.action_space}", **size),
            instruction=instruction,
            **size,
        )

    def user_turn(self, observation: Observation | None, tree: str | None, image: Any) -> Message:
        """The user message of one step."""
        text = render_prompt(f"osworld_step_{self.observation_type}", accessibility_tree=tree or "")
        content: list[dict[str, Any]] = [text_part(text)]
        if "screenshot" in self.observation_type and image is not None:
            content.append(image_part(image))
        return {"role": "user", "content": content}

    def assistant_turn(self, step: StepRecord, space: CoordinateSpace) -> Message:
        """The reply at ``step``, or what actually ran (in this action language) when a person changed it."""
        text = step.response or ""
        if step.executed != step.proposed or not text:
            with contextlib.suppress(ActionParseError):
                if self.action_space == "computer_13":
                    text = render_computer13(step.executed, space)
                else:
                    text = f"```python\n{render_pyautogui(step.executed, space)}\n```"
        return {"role": "assistant", "content": text or "(no action)"}

    def _tree(self, observation: Observation) -> str | None:
        if not self.wants_accessibility_tree:
            return None
        if not observation.accessibility_tree:
            return "(no accessibility tree was available)"
        table = linearize_accessibility_tree(observation.accessibility_tree, screen=observation.size)
        return trim_to_budget(table, A11Y_MAX_TOKENS)

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Ask the model for the next step's code or actions."""
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        image = await self.prepare(observation) if "screenshot" in self.observation_type else None
        size = image.size if image is not None else observation.size
        space = self.coordinate_space(observation.size, size)
        messages: list[Message] = [
            {"role": "system", "content": self.system_prompt(instruction, observation.size)}
        ]
        window = self.profile.history_window
        start = max(0, len(self.history) - window)
        for index in range(start, len(self.history)):
            step = self.history[index]
            past_tree = (
                None
                if not self.wants_accessibility_tree
                else "(accessibility tree of an earlier step, omitted)"
            )
            messages.append(self.user_turn(None, past_tree, self.history_image(index)))
            messages.append(self.assistant_turn(step, space))
        messages.append(self.user_turn(observation, self._tree(observation), image))
        if image is not None:
            self.remember_image(image)
        timings["prepare"] = time.perf_counter() - t0
        reply = await self.ask(messages, on_token, timings)
        fmt = "computer13" if self.action_space == "computer_13" else "pyautogui"
        return self.prediction(reply, space, lambda text: parse_reply(text, fmt, space), timings)
