"""The ``uitars`` agent: UI-TARS and DART-GUI's computer-use prompt and ``Thought: ... Action: ...`` replies.

The conversation is the one these models were trained on: the prompt (with the instruction) as the
first user turn, then for each earlier step the screenshot (only for the last ``history_window`` steps,
five by default) and the model's reply, then the current screenshot. Coordinates follow the profile's
coordinate mode: ``smart`` (UI-TARS 1.5: pixels of the Qwen smart-resized image, which is exactly what is
sent) or ``rel1000`` (UI-TARS 1.0 and DART-GUI: 0-1000 on both axes).
"""

from __future__ import annotations

import contextlib
import time

from osw_studio.actions import CoordinateSpace, parse_uitars, render_uitars, smart_resize
from osw_studio.agent.base import Prediction, TokenCallback
from osw_studio.agent.model_agent import Message, ModelAgent, image_part
from osw_studio.agent.prompts import render_prompt
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord

CALL_USER = (
    "call_user() # Submit the task and call the user when the task is unsolvable, or when you need the "
    "user's help.\n"
)


class UITarsAgent(ModelAgent):
    """UI-TARS / DART-GUI (see the module docs)."""

    name = kind = "uitars"
    language = "English"

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """Smart mode sends the smart-resized image itself, so the model's pixels are the image's pixels."""
        if self.profile.coordinate_mode == "smart" and self.profile.screenshot_size is None:
            height, width = smart_resize(screen[1], screen[0])
            return (width, height)
        return self.profile.screenshot_size

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """The model's frame: smart-resized pixels of the screen, or the profile's mode."""
        mode = self.profile.coordinate_mode
        if mode == "smart":
            return CoordinateSpace(screen=screen, mode="smart")
        if mode == "abs" and image != screen:
            mode = "resized"
        return CoordinateSpace(screen=screen, mode=mode, image=image)

    def prompt(self, instruction: str) -> str:
        """The first user turn."""
        return render_prompt(
            "uitars_computer", instruction=instruction, language=self.language, call_user=CALL_USER
        )

    def assistant_turn(self, step: StepRecord, space: CoordinateSpace) -> Message:
        """The reply at ``step``, or what actually ran written as UI-TARS actions when a person changed it."""
        text = step.response or ""
        if step.executed != step.proposed or not text:
            with contextlib.suppress(ActionParseError):
                text = render_uitars(step.executed, space, thought=step.thought)
        return {"role": "assistant", "content": text or "Action: wait()"}

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Ask the model for ``Thought: ... Action: ...``."""
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        image = await self.prepare(observation)
        space = self.coordinate_space(observation.size, image.size)
        messages: list[Message] = [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": [{"type": "text", "text": self.prompt(instruction)}]},
        ]
        # The current screenshot counts in the window: history gets window - 1 images.
        with_images = max(0, self.profile.history_window - 1)
        first_image = len(self.history) - with_images
        for index, step in enumerate(self.history):
            past = self.history_image(index)
            if index >= first_image and past is not None:
                messages.append({"role": "user", "content": [image_part(past)]})
            messages.append(self.assistant_turn(step, space))
        messages.append({"role": "user", "content": [image_part(image)]})
        self.remember_image(image)
        timings["prepare"] = time.perf_counter() - t0
        reply = await self.ask(messages, on_token, timings)

        def parse(text: str) -> tuple[str | None, list]:  # type: ignore[type-arg]
            parsed = parse_uitars(text, space)
            return parsed.thought, list(parsed.actions)

        return self.prediction(reply, space, parse, timings)
