"""The ``opencua`` agent: OpenCUA-7B/32B, as OSWorld's ``mm_agents/opencua`` agent asks them.

The request has the shape of OSWorld's ``OpenCUAAgent`` (``cot_level="l2"``, ``history_type=
"action_history"``): the system prompt; then the earlier steps: those older than the image window as one
assistant turn of ``# Step n:`` texts, the last ``history_window - 1`` each as its screenshot (user) and
its ``# Step n:`` text (assistant); and finally the current screenshot with the task. A step's text is
its ``## Action:`` section, as the model wrote it. Screenshots are sent as grabbed (or at the profile's
``screenshot_size``), PNG, not resized otherwise: the server's processor does the smart-resize.

Coordinates follow the profile's mode: ``smart`` (``coordinate_type="qwen25"``, OpenCUA-7B and 32B:
pixels of the Qwen2.5-VL smart-resize of the image sent, truncated as OSWorld does) or ``norm``
(``relative``: 0-1). Sampling: ``temperature``, ``top_p`` and ``max_tokens`` from the profile (the
preset has ``OpenCUAAgent``'s defaults 0, 0.9, 1500; OpenCUA's README runs OSWorld with them and
``--coordinate_type qwen25``). A reply that cannot be parsed is asked again as OSWorld's agent does
(the preset: five calls, the later ones at ``max(0.2, temperature)``, then the task fails; see
``parse_tries``, ``reask_min_temperature`` and ``parse_exhausted``). The computer's password in the
prompt is the guest's (``password``, as OSWorld's VMs). With ``prompts: reference`` the prompts are
OSWorld's own, read from its installed package (:func:`osw_studio.agent.reference.opencua_prompts`).
"""

from __future__ import annotations

from osw_studio.actions import CoordinateSpace
from osw_studio.actions.coords import MAX_PIXELS
from osw_studio.actions.opencua import parse_opencua, sections
from osw_studio.agent.images import PreparedImage
from osw_studio.agent.model_agent import Message, ModelAgent, ReplyParser, image_part, text_part
from osw_studio.agent.model_client import ModelClient
from osw_studio.agent.prompts import render_prompt
from osw_studio.agent.reference import OpenCUAPrompts, opencua_prompts
from osw_studio.core.actions import Action
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings.model import ResolvedProfile

PASSWORD = "password"
"""The guest's sudo password, told to the model."""
MIN_PIXELS = 3136
"""The smart-resize bounds OSWorld's OpenCUA agent maps ``qwen25`` coordinates with."""


class OpenCUAAgent(ModelAgent):
    """OpenCUA (see the module docs).

    Attributes:
        prompt_info: Which prompt the requests use (``source``, ``sha256``, ``faithful``).
    """

    name = kind = "opencua"

    def __init__(
        self, profile: ResolvedProfile, *, client: ModelClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(profile, client=client, api_key=api_key)
        self._reference: OpenCUAPrompts | None = None
        if profile.prompts == "reference":
            self._reference = opencua_prompts("l2", PASSWORD)
            if self._reference is None:
                self.own_prompts_instead()
            else:
                self.prompt_info = {
                    "source": self._reference.source,
                    "sha256": self._reference.sha256,
                    "faithful": True,
                }

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """Smart-resized pixels of the image sent (truncated, as OSWorld maps them), or the profile's mode."""
        if self.profile.coordinate_mode == "smart":
            return CoordinateSpace(
                screen=screen, mode="smart", image=image, min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS,
                rounding="trunc",
            )  # fmt: skip
        return super().coordinate_space(screen, image)

    def system_prompt(self) -> str:
        """The system message."""
        if self._reference is not None:
            return self._reference.system
        coordinates = {
            "smart": "pixels of the screenshot as you see it",
            "norm": "fractions of the screen from 0 to 1",
        }.get(self.profile.coordinate_mode, "pixels of the screenshot")
        return render_prompt("opencua_system", password=PASSWORD, coordinates=coordinates)

    def task_text(self, instruction: str) -> str:
        """The text beside the current screenshot."""
        if self._reference is not None:
            return self._reference.templates["INSTRUTION_TEMPLATE"].format(instruction=instruction)
        return render_prompt("opencua_instruction", instruction=instruction) + "\n"

    def step_text(self, number: int, step: StepRecord) -> str:
        """``# Step n:`` and the step's ``## Action:`` text, as the history shows it."""
        action = sections(step.response or "").get("action")
        if self._reference is not None:
            head = self._reference.templates["STEP_TEMPLATE"].format(step_num=number)
            return head + self._reference.templates["ACTION_HISTORY_TEMPLATE"].format(action=action)
        return f"# Step {number}:\n## Action:\n{action}\n"

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage
    ) -> tuple[list[Message], CoordinateSpace]:
        """The request's messages for this step (and the frame of the reply), remembering the image."""
        space = self.coordinate_space(observation.size, image.size)
        messages: list[Message] = [{"role": "system", "content": self.system_prompt()}]
        done = len(self.history)
        # OSWorld's window: steps after done - window show their screenshot; older ones are text only.
        cut = done - self.profile.history_window
        texts: list[str] = []
        for index, step in enumerate(self.history):
            text = self.step_text(index + 1, step)
            if index > cut:
                past = self.history_image(index)
                if past is not None:
                    messages.append({"role": "user", "content": [image_part(past)]})
                messages.append({"role": "assistant", "content": text})
            else:
                texts.append(text)
                if index == cut:
                    messages.append({"role": "assistant", "content": "\n".join(texts)})
        messages.append(
            {"role": "user", "content": [image_part(image), text_part(self.task_text(instruction))]}
        )
        self.remember_image(image)
        return messages, space

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """Reads the ``## Thought`` / ``## Action`` / code reply."""

        def parse(text: str) -> tuple[str | None, list[Action]]:
            parsed = parse_opencua(text, space)
            return parsed.thought or parsed.action, parsed.actions

        return parse
