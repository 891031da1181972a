"""The ``qwen3vl`` agent: Qwen3-VL's ``computer_use`` tool calls, as OSWorld's ``qwen3vl_agent.py`` asks.

The request has the shape of OSWorld's ``Qwen3VLAgent`` (``api_backend="openai"``): a system message
describing the ``computer_use`` tool; then, for the last ``history_window`` steps, each step's screenshot
as a user turn (the first of them followed by the instruction text) and its reply as an assistant turn;
and finally the current screenshot (alone, or with the instruction text on the first step). The
instruction text lists, as ``Step n: ...``, the low-level instructions (``Action:`` lines) of the steps
older than the window. Screenshots are resized (bicubic, as Pillow does by default) to the Qwen3-VL
smart-resize of the screenshot (factor 32, at most 16*16*4*12800 pixels) and sent as PNG.

Coordinates follow the profile's mode: ``rel999`` (OSWorld's ``coordinate_type="relative"``, its
default: the model is told the screen is 1000x1000 and its numbers are read as 999ths, truncated) or
``abs`` (``absolute``: pixels of the image sent, scaled to the screen and truncated). Only ``max_tokens``
is sent with the messages: OSWorld's agent leaves temperature and top_p to the server. OSWorld's agent
never asks again: a reply it cannot read runs nothing, stays in the history and the episode goes on;
the preset does the same (``parse_tries`` 1: a step error, the run goes on; a profile may set more
tries, sent without a temperature like every call of this agent). With
``prompts: reference`` the prompt is OSWorld's own, evaluated at run time from its installed package's
source (:func:`osw_studio.agent.reference.qwen3vl_prompt`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from osw_studio.actions import CoordinateSpace, smart_resize
from osw_studio.actions.qwen3vl import TOOL_ACTIONS, parse_qwen3vl, render_qwen3vl, tool_calls
from osw_studio.agent.images import PreparedImage, prepare_image
from osw_studio.agent.model_agent import Message, ModelAgent, ReplyParser, image_part, text_part
from osw_studio.agent.model_client import ModelClient
from osw_studio.agent.prompts import render_prompt
from osw_studio.agent.reference import CodePrompt, qwen3vl_prompt
from osw_studio.core.actions import Action
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings.model import ResolvedProfile

FACTOR = 32
"""Qwen3-VL's patch size (16) times its merge size (2): the smart-resize rounding."""
MIN_PIXELS = 56 * 56
"""The smallest area a screenshot is sent at."""
MAX_PIXELS = 16 * 16 * 4 * 12800
"""The largest area a screenshot is sent at (OSWorld's cap for this agent)."""


def own_tools() -> dict[str, object]:
    """The ``computer_use`` function as OSW Studio's own prompt describes it."""
    return {
        "type": "function",
        "function": {
            "name": "computer_use",
            "description": "Mouse and keyboard on the desktop shown in the screenshot.",
            "parameters": {
                "type": "object",
                "required": ["action"],
                "properties": {
                    "action": {"type": "string", "enum": list(TOOL_ACTIONS), "description": "What to do."},
                    "coordinate": {"type": "array", "description": "[x, y] for mouse actions."},
                    "keys": {"type": "array", "description": "Keys pressed together, for key."},
                    "text": {"type": "string", "description": "The text, for type."},
                    "pixels": {"type": "number", "description": "Scroll amount: up positive, down negative."},
                    "time": {"type": "number", "description": "Seconds, for wait."},
                    "status": {
                        "type": "string",
                        "enum": ["success", "failure"],
                        "description": "For terminate.",
                    },
                },
            },
        },
    }


class Qwen3VLAgent(ModelAgent):
    """Qwen3-VL (see the module docs).

    Attributes:
        prompt_info: Which prompt the requests use (``source``, ``sha256``, ``faithful``).
    """

    name = kind = "qwen3vl"

    def __init__(
        self, profile: ResolvedProfile, *, client: ModelClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(profile, client=client, api_key=api_key)
        self._reference: CodePrompt | None = None
        if profile.prompts == "reference":
            self._reference = self.load_reference()
            if self._reference is None:
                self.own_prompts_instead()
            else:
                self.prompt_info = {
                    "source": self._reference.source,
                    "sha256": self._reference.sha256,
                    "faithful": True,
                }

    def load_reference(self) -> CodePrompt | None:
        """OSWorld's prompt code for ``prompts: reference`` (None: not found)."""
        return qwen3vl_prompt()

    @property
    def coordinate_type(self) -> str:
        """OSWorld's name for the profile's coordinate mode: ``absolute`` or ``relative``."""
        return "absolute" if self.profile.coordinate_mode in ("abs", "resized") else "relative"

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """The Qwen3-VL smart-resize of the profile's ``screenshot_size`` (or the screen)."""
        width, height = self.profile.screenshot_size or screen
        h_bar, w_bar = smart_resize(height, width, FACTOR, MIN_PIXELS, MAX_PIXELS)
        return (w_bar, h_bar)

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """The model's frame: 999ths of the screen, or pixels of the image sent, truncated as OSWorld does."""
        mode = self.profile.coordinate_mode
        if mode in ("abs", "resized"):
            return CoordinateSpace(screen=screen, mode="resized", image=image, rounding="trunc")
        if mode == "rel999":
            return CoordinateSpace(screen=screen, mode="rel999", rounding="trunc")
        return super().coordinate_space(screen, image)

    async def prepare(self, observation: Observation) -> PreparedImage:
        """The screenshot as sent: PNG at :meth:`image_size`, resized bicubic."""
        return await asyncio.to_thread(
            prepare_image,
            observation.screenshot,
            size=self.image_size(observation.size),
            fmt="png",
            resample="bicubic",
        )

    def texts(self, instruction: str, previous: str, image: tuple[int, int]) -> tuple[str, str]:
        """The system prompt and the instruction text for this step."""
        if self._reference is not None:
            values = self._reference.evaluate(
                self_coordinate_type=self.coordinate_type,
                processed_width=image[0],
                processed_height=image[1],
                instruction=instruction,
                previous_actions_str=previous,
            )
            return str(values["system_prompt"]), str(values["instruction_prompt"])
        resolution = (
            f"pixels of the {image[0]}x{image[1]} screenshot"
            if self.coordinate_type == "absolute"
            else "on a 1000x1000 grid over the screen"
        )
        system = render_prompt("qwen3vl_system", tools=json.dumps(own_tools()), resolution=resolution)
        return system, render_prompt("qwen3vl_instruction", instruction=instruction, previous=previous)

    @staticmethod
    def instruction_of(step: StepRecord) -> str:
        """A past step's low-level instruction: its parsed ``Action:`` line.

        A reply whose tool call did not parse still has one: OSWorld keeps it, so it is read again.
        """
        if step.thought is not None:
            return step.thought
        return tool_calls(step.response or "")[0]

    def reply_text(self, step: StepRecord, space: CoordinateSpace) -> str:
        """The reply at ``step``, or what actually ran written as a tool call when a person changed it."""
        text = step.response or ""
        if step.executed != step.proposed or not text.strip():
            text = render_qwen3vl(step.executed, space, instruction=step.thought) or text
        return text

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage
    ) -> tuple[list[Message], CoordinateSpace]:
        """The request's messages for this step (and the frame of the reply), remembering the image."""
        space = self.coordinate_space(observation.size, image.size)
        window = self.profile.history_window
        done = len(self.history)
        older = [
            f"Step {i + 1}: {self.instruction_of(self.history[i])}" for i in range(max(0, done - window))
        ]
        system, task = self.texts(instruction, "\n".join(older) or "None", image.size)
        messages: list[Message] = [{"role": "system", "content": [text_part(system)]}]
        shown = min(window, done)
        for offset in range(shown):
            index = done - shown + offset
            past = self.history_image(index)
            if past is not None:
                parts = [image_part(past)]
                if offset == 0:
                    parts.append(text_part(task))
                messages.append({"role": "user", "content": parts})
            text = self.reply_text(self.history[index], space)
            messages.append({"role": "assistant", "content": [text_part(text)]})
        current = [image_part(image)] if shown else [image_part(image), text_part(task)]
        messages.append({"role": "user", "content": current})
        self.remember_image(image)
        return messages, space

    def sampling(self, temperature: float | None) -> dict[str, Any]:
        """``max_tokens`` only, as OSWorld's agent sends (``temperature``: ignored)."""
        return {"max_tokens": self.profile.max_tokens}

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """Reads ``Action: ...`` and a ``computer_use`` tool call."""

        def parse(text: str) -> tuple[str | None, list[Action]]:
            return parse_qwen3vl(text, space)

        return parse
