"""The ``uitars`` agent: UI-TARS and DART-GUI's computer-use prompt and ``Thought: ... Action: ...`` replies.

The request has the shape of OSWorld's ``mm_agents/uitars15_v1.py`` agent: a system message, the prompt
(with the instruction) as the first user turn, then every earlier reply as an assistant turn (its boxes
wrapped in ``<|box_start|>``/``<|box_end|>`` as the models wrote them in training), the screenshots of the
last ``history_window`` steps (the current one included) each as a user turn before its reply, and
finally the current screenshot. Screenshots are sent as grabbed (or at the profile's ``screenshot_size``),
scaled down only when larger than the models' pixel budget, as PNG.

Coordinates follow the profile's coordinate mode: ``smart`` (UI-TARS 1.5 and DART-GUI-7B, OSWorld's
``--model_type qwen25vl``: pixels of the Qwen2.5-VL smart-resize of the image sent) or ``rel1000``
(UI-TARS 1.0, ``qwen2vl``: 0-1000 on both axes). With ``prompts: reference`` the prompt is OSWorld's own,
read from its installed package (:mod:`osw_studio.agent.reference`).
"""

from __future__ import annotations

import contextlib
import math
import re

from osw_studio.actions import CoordinateSpace, parse_uitars, render_uitars
from osw_studio.agent.images import PreparedImage, prepare_image
from osw_studio.agent.model_agent import Message, ModelAgent, ReplyParser, image_part, text_part
from osw_studio.agent.model_client import ModelClient
from osw_studio.agent.prompts import render_prompt
from osw_studio.agent.reference import ReferencePrompt, reference_prompt
from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings.model import ResolvedProfile

CALL_USER = "call_user() # hand the task back to the person: it cannot be done, or you need their help\n"
SYSTEM = "You are a helpful assistant."
MIN_PIXELS = 100 * 28 * 28
"""The smallest image area UI-TARS is sent (and its smart-resize bound), as OSWorld runs it."""
MAX_PIXELS = 16384 * 28 * 28
"""The largest image area UI-TARS is sent (and its smart-resize bound), as OSWorld runs it."""

_BOX = re.compile(r"(start_box|end_box)='\((\d+),\s*(\d+)\)'")


def add_box_tokens(reply: str) -> str:
    r"""A past reply with its points wrapped in box tokens, as UI-TARS wrote them in training.

    Points written ``(x,y)`` without a space are wrapped (OSWorld's agent leaves others as they are).

    >>> add_box_tokens("Thought: go\nAction: click(start_box='(10,20)')")
    "Thought: go\nAction: click(start_box='<|box_start|>(10,20)<|box_end|>')"
    >>> add_box_tokens("Action: wait()")
    'Action: wait()'
    """
    marker = "Action: "
    if marker not in reply or "start_box=" not in reply:
        return reply
    head, *actions = reply.split(marker)
    done = []
    for action in actions:
        action = action.strip()
        for kind, x, y in _BOX.findall(action):
            action = action.replace(f"{kind}='({x},{y})'", f"{kind}='<|box_start|>({x},{y})<|box_end|>'")
        done.append(action)
    return head + marker + "\n\n".join(done)


def budget_size(size: tuple[int, int]) -> tuple[int, int]:
    """The size an image of ``size`` is sent at: scaled to fit ``MIN_PIXELS`` .. ``MAX_PIXELS``.

    >>> budget_size((1920, 1080)), budget_size((4000, 4000)), budget_size((100, 100))
    ((1920, 1080), (3584, 3584), (280, 280))
    """
    width, height = size
    if width * height > MAX_PIXELS:
        factor = math.sqrt(MAX_PIXELS / (width * height))
        width, height = int(width * factor), int(height * factor)
    if width * height < MIN_PIXELS:
        factor = math.sqrt(MIN_PIXELS / (width * height))
        width, height = math.ceil(width * factor), math.ceil(height * factor)
    return (width, height)


class UITarsAgent(ModelAgent):
    """UI-TARS / DART-GUI (see the module docs).

    Attributes:
        prompt_info: Which prompt the requests use (``source``, ``sha256``, ``faithful``).
    """

    name = kind = "uitars"
    language = "English"

    def __init__(
        self, profile: ResolvedProfile, *, client: ModelClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(profile, client=client, api_key=api_key)
        self._template: ReferencePrompt | None = None
        self._action_space: ReferencePrompt | None = None
        if profile.prompts == "reference":
            self.load_reference_prompts()

    def load_reference_prompts(self) -> None:
        """Read OSWorld's prompt for ``prompts: reference`` (or record that it is not installed)."""
        template = reference_prompt("mm_agents/uitars15_v1.py", "UITARS_USR_PROMPT_THOUGHT")
        space = reference_prompt("mm_agents/uitars15_v1.py", "UITARS_NORMAL_ACTION_SPACE")
        if template is None or space is None:
            self.own_prompts_instead()
        else:
            self._template, self._action_space = template, space
            self.prompt_info = {
                "source": f"{template.source}; {space.source}",
                "sha256": {"prompt": template.sha256, "action_space": space.sha256},
                "faithful": True,
            }

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """The profile's ``screenshot_size`` (or the screen), kept within the models' pixel budget."""
        return budget_size(self.profile.screenshot_size or screen)

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """The model's frame: smart-resized pixels of the image it was sent, or the profile's mode."""
        mode = self.profile.coordinate_mode
        if mode == "smart":
            return CoordinateSpace(
                screen=screen, mode="smart", image=image, min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS
            )
        if mode == "abs" and image != screen:
            mode = "resized"
        return CoordinateSpace(screen=screen, mode=mode, image=image)

    async def prepare(self, observation: Observation) -> PreparedImage:
        """The screenshot as sent: PNG (UI-TARS is always sent PNG), at :meth:`image_size`."""
        import asyncio

        return await asyncio.to_thread(
            prepare_image, observation.screenshot, size=self.image_size(observation.size), fmt="png"
        )

    def prompt(self, instruction: str) -> str:
        """The first user turn."""
        if self._template is not None and self._action_space is not None:
            return self._template.text.format(
                instruction=instruction, action_space=self._action_space.text, language=self.language
            )
        return render_prompt(
            "uitars_computer", instruction=instruction, language=self.language, call_user=CALL_USER
        )

    def assistant_turn(self, step: StepRecord, space: CoordinateSpace) -> Message:
        """The reply at ``step``, or what actually ran written as UI-TARS actions when a person changed it."""
        text = (step.response or "").strip()
        if step.executed != step.proposed or not text:
            with contextlib.suppress(ActionParseError):
                text = render_uitars(step.executed, space, thought=step.thought)
        return {"role": "assistant", "content": [text_part(add_box_tokens(text or "Action: wait()"))]}

    def opening(self, instruction: str) -> list[Message]:
        """The request's first messages: the system message and the prompt."""
        return [
            {"role": "system", "content": [text_part(SYSTEM)]},
            {"role": "user", "content": [text_part(self.prompt(instruction))]},
        ]

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage
    ) -> tuple[list[Message], CoordinateSpace]:
        """The request's messages for this step (and the frame of the reply), remembering the image."""
        space = self.coordinate_space(observation.size, image.size)
        messages = self.opening(instruction)
        # The current screenshot counts in the window: history gets window - 1 images.
        first_image = len(self.history) - max(0, self.profile.history_window - 1)
        for index, step in enumerate(self.history):
            past = self.history_image(index)
            if index >= first_image and past is not None:
                messages.append({"role": "user", "content": [image_part(past)]})
            messages.append(self.assistant_turn(step, space))
        messages.append({"role": "user", "content": [image_part(image)]})
        self.remember_image(image)
        return messages, space

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """Reads ``Thought: ... Action: ...``."""

        def parse(text: str) -> tuple[str | None, list[Action]]:
            parsed = parse_uitars(text, space)
            return parsed.thought, list(parsed.actions)

        return parse
