"""The ``qwen25vl`` agent: Qwen2.5-VL's ``computer_use`` tool calls, as OSWorld's ``qwen25vl_agent.py`` asks.

The request has the shape of OSWorld's ``Qwen25VLAgent``, the agent OSWorld's ``qwen3vl`` one grew from
(:mod:`osw_studio.agent.qwen3vl`): a system message describing the ``computer_use`` tool; for the last
``history_window`` steps each step's screenshot as a user turn (the first followed by the instruction
text) and its reply as an assistant turn; then the current screenshot. The instruction text lists, as
``Step n: ...``, the low-level instructions of the steps older than the window: each reply's first line
that starts with ``Action:``, ``Step``, ``I will``, ``I'll`` or ``Now I`` (the whole line), else
``Performing <call> action`` after the first pyautogui call it gave. Screenshots are resized (bicubic)
to the Qwen2.5-VL smart-resize (factor 28, at most 14*14*4*1280 pixels) and sent as PNG; the model
points in pixels of that image, scaled to the screen and truncated. ``temperature``, ``top_p`` and
``max_tokens`` are sent. With ``prompts: reference`` the prompt is OSWorld's own, evaluated at run time
from its source (:func:`osw_studio.agent.reference.qwen25vl_prompt`).
"""

from __future__ import annotations

from typing import Any

from osw_studio.actions import CoordinateSpace, smart_resize
from osw_studio.agent.model_agent import ModelAgent
from osw_studio.agent.qwen3vl import Qwen3VLAgent
from osw_studio.agent.reference import CodePrompt, qwen25vl_prompt
from osw_studio.core.step import StepRecord

FACTOR = 28
"""Qwen2.5-VL's patch size (14) times its merge size (2)."""
MIN_PIXELS = 56 * 56
MAX_PIXELS = 14 * 14 * 4 * 1280
"""The largest area a screenshot is sent at (``qwen_vl_utils.smart_resize``'s default, which OSWorld uses)."""
_INSTRUCTION_STARTS = ("action:", "step", "i will", "i'll", "now i")
_CALL_NAMES = {
    "click": "click",
    "right_click": "rightClick",
    "double_click": "doubleClick",
    "typing": "typewrite",
    "move_to": "moveTo",
    "drag_to": "dragTo",
    "scroll": "scroll",
    "press": "press",
}
"""Our action kinds and the pyautogui call OSWorld's agent names in ``Performing <call> action``."""


class Qwen25VLAgent(Qwen3VLAgent):
    """Qwen2.5-VL (see the module docs)."""

    name = kind = "qwen25vl"

    def load_reference(self) -> CodePrompt | None:
        """OSWorld's ``Qwen25VLAgent.predict`` prompt code (None: not found)."""
        return qwen25vl_prompt()

    @property
    def coordinate_type(self) -> str:
        """Always ``absolute``: pixels of the image sent."""
        return "absolute"

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """The Qwen2.5-VL smart-resize of the profile's ``screenshot_size`` (or the screen)."""
        width, height = self.profile.screenshot_size or screen
        h_bar, w_bar = smart_resize(height, width, FACTOR, MIN_PIXELS, MAX_PIXELS)
        return (w_bar, h_bar)

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """Pixels of the image sent, scaled to the screen and truncated."""
        return CoordinateSpace(screen=screen, mode="resized", image=image, rounding="trunc")

    def texts(self, instruction: str, previous: str, image: tuple[int, int]) -> tuple[str, str]:
        """The system prompt and the instruction text for this step."""
        if self._reference is not None:
            values = self._reference.evaluate(instruction=instruction, previous_actions_str=previous)
            return str(values["system_prompt"]), str(values["instruction_prompt"])
        return super().texts(instruction, previous, image)

    @staticmethod
    def instruction_of(step: StepRecord) -> str:
        """A past step's low-level instruction, found in its reply as OSWorld's agent finds it."""
        for line in (step.response or "").split("\n"):
            line = line.strip()
            if line.lower().startswith(_INSTRUCTION_STARTS):
                return line
        for action in step.proposed:
            call = _CALL_NAMES.get(action.kind)
            if action.kind == "click" and getattr(action, "button", "left") == "middle":
                call = "middleClick"
            elif action.kind == "hotkey":
                call = "hotkey" if len(getattr(action, "keys", ())) > 1 else "press"
            if call is not None:
                return f"Performing {call} action"
        return ""

    def sampling(self, temperature: float | None) -> dict[str, Any]:
        """``temperature``, ``top_p`` and ``max_tokens``, as OSWorld's agent sends."""
        return ModelAgent.sampling(self, temperature)
