"""The ``dart`` agent: DART-GUI-7B as OSWorld runs it, through DART-GUI's own agent in its ``dart_mode``.

The request has the shape of OSWorld's ``mm_agents/dart_gui_agent.py``: a plain system message, then one
user turn holding DART-GUI's prompt (with the instruction) and the first screenshot; each later step adds
the reply before it as an assistant turn (its points wrapped in box tokens, as for UI-TARS) and then its
own screenshot as a user turn. Only the newest ``history_window`` screenshots (the current one
included; the first one is dropped from the prompt turn when it gets too old) and the newest
``history_texts`` replies are kept. Screenshots are sent as grabbed, as PNG; the model writes UI-TARS-1.5
actions in pixels of the Qwen2.5-VL smart-resize of the screenshot (``smart``).

Its replies end the episode as OSWorld's agent ends it: ``finished`` is done, unless the reply says it
could not do the task with one of DART-GUI's failure words (then it fails); ``call_user()`` fails
(unattended, through the preset's ``call_user_tries`` of 0); a reply that cannot be read ends the
episode as done. With ``prompts: reference`` the prompt and the failure words are DART-GUI's own, read
from an OSWorld checkout (:mod:`osw_studio.agent.reference`).
"""

from __future__ import annotations

from typing import Any

from osw_studio.actions import CoordinateSpace
from osw_studio.agent.images import PreparedImage
from osw_studio.agent.model_agent import Message, ReplyParser, image_part, text_part
from osw_studio.agent.prompts import render_prompt
from osw_studio.agent.reference import reference_prompt, reference_words
from osw_studio.agent.uitars import UITarsAgent
from osw_studio.core.actions import Action, Done, Fail
from osw_studio.core.observation import Observation

PROMPTS = "mm_agents/dart_gui/prompts.py"
"""Where DART-GUI's prompt and failure words are in OSWorld."""
SYSTEM = "You are a helpful assistant."


class DartAgent(UITarsAgent):
    """DART-GUI's own agent (see the module docs)."""

    name = kind = "dart"

    def load_reference_prompts(self) -> None:
        """DART-GUI's ``dart_mode`` prompt and failure words from OSWorld (or record their absence)."""
        template = reference_prompt(PROMPTS, "COMPUTER_USE_PROMPT")
        words = reference_words(PROMPTS, "FAILURE_INDICATORS")
        if template is None:
            self.own_prompts_instead()
            return
        self._template = template
        self._failure_words = words or ()
        self.prompt_info = {
            "source": template.source,
            "sha256": {"prompt": template.sha256},
            "faithful": True,
        }

    _failure_words: tuple[str, ...] = ()

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """As grabbed (or the profile's ``screenshot_size``): DART-GUI's agent sends the grabbed bytes."""
        return self.profile.screenshot_size

    def prompt(self, instruction: str) -> str:
        """The first user turn's text."""
        if self._template is not None:
            return self._template.text.format(instruction=instruction, language=self.language)
        return render_prompt("uitars_computer", instruction=instruction, language=self.language, call_user="")

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage
    ) -> tuple[list[Message], CoordinateSpace]:
        """The request's messages for this step (and the frame of the reply), remembering the image."""
        space = self.coordinate_space(observation.size, image.size)
        current = len(self.history) + 1  # this step's number; step k's screenshot is image k
        first_image = current - max(1, self.profile.history_window) + 1
        texts = self.profile.history_texts
        first_text = 1 if texts is None else current - 1 - texts + 1

        def image_of(step: int) -> PreparedImage | None:
            if step < first_image:
                return None
            return image if step == current else self.history_image(step - 1)

        opening: list[dict[str, Any]] = [text_part(self.prompt(instruction))]
        first = image_of(1)
        if first is not None:
            opening.append(image_part(first))
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": opening},
        ]
        for number, step in enumerate(self.history, 1):
            if number >= first_text:
                messages.append(self.assistant_turn(step, space))
            later = image_of(number + 1)
            if later is not None:
                messages.append({"role": "user", "content": [image_part(later)]})
        self.remember_image(image)
        return messages, space

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """UI-TARS actions; a ``finished`` reply with a failure word fails.

        ``call_user()`` stays a hand-back: unattended, the preset's ``call_user_tries`` of 0 fails the
        episode at once as OSWorld's agent does; attended, the person answers.
        """
        parse_uitars = super().reply_parser(space)
        words = self._failure_words

        def parse(text: str) -> tuple[str | None, list[Action]]:
            thought, actions = parse_uitars(text)
            ended: list[Action] = []
            for action in actions:
                if isinstance(action, Done) and any(word in text for word in words):
                    ended.append(Fail(message=action.message))
                else:
                    ended.append(action)
            return thought, ended

        return parse
