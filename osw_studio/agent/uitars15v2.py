"""The ``uitars15v2`` agent: UI-TARS-1.5 as OSWorld's ``mm_agents/uitars15_v2.py`` runs it (Seed1.5-VL style).

The request has the shape of that agent's: no system message; the first user turn holds its prompt (with
the instruction; without thinking, as its run script runs it by default); then every earlier reply as an
assistant turn, as the model wrote it (no box tokens), the screenshots of the newest ``history_window``
steps (the current one included) each as a user turn before its reply, and the current screenshot.
Screenshots are sent as grabbed, as PNG. The model writes ``<point>x y</point>`` in thousandths of the
screen (``rel1000``, its ``model_type="doubao"``). ``temperature`` and ``max_tokens`` are sent, and no
``top_p`` (its run script's default; a profile's ``top_p`` is not sent). A reply that cannot be read is
asked again with the same request, three calls in all, and then the task fails. With ``prompts:
reference`` the prompt is OSWorld's own, read from its source (:mod:`osw_studio.agent.reference`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from osw_studio.actions import CoordinateSpace, render_uitars
from osw_studio.agent.model_agent import Message, text_part
from osw_studio.agent.prompts import render_prompt
from osw_studio.agent.reference import reference_prompt
from osw_studio.agent.uitars import UITarsAgent
from osw_studio.core.errors import ActionParseError
from osw_studio.core.step import StepRecord

MODULE = "mm_agents/uitars15_v2.py"
"""Where the agent and its prompt are in OSWorld."""
PROMPT = "COMPUTER_USE_NO_THINKING"
"""The prompt its run script sends (``--use_thinking`` is off by default)."""


class UITars15V2Agent(UITarsAgent):
    """UI-TARS-1.5 through OSWorld's v2 agent (see the module docs)."""

    name = kind = "uitars15v2"
    language = "Chinese"
    """Its run script's ``--language`` default."""

    def load_reference_prompts(self) -> None:
        """The v2 agent's prompt from OSWorld (or record its absence)."""
        template = reference_prompt(MODULE, PROMPT)
        if template is None:
            self.own_prompts_instead()
            return
        self._template = template
        self.prompt_info = {
            "source": template.source,
            "sha256": {"prompt": template.sha256},
            "faithful": True,
        }

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """As grabbed (or the profile's ``screenshot_size``): the v2 agent sends the grabbed bytes."""
        return self.profile.screenshot_size

    def prompt(self, instruction: str) -> str:
        """The first user turn's text."""
        if self._template is not None:
            return self._template.text.format(instruction=instruction, language=self.language)
        return render_prompt("uitars_computer", instruction=instruction, language=self.language, call_user="")

    def assistant_turn(self, step: StepRecord, space: CoordinateSpace) -> Message:
        """The reply at ``step`` as written, or what actually ran when a person changed it."""
        text = step.response or ""
        if step.executed != step.proposed or not text.strip():
            with contextlib.suppress(ActionParseError):
                text = render_uitars(step.executed, space, thought=step.thought)
        return {"role": "assistant", "content": text or "Action: wait()"}

    def opening(self, instruction: str) -> list[Message]:
        """The request's first message: the prompt, with no system message."""
        return [{"role": "user", "content": [text_part(self.prompt(instruction))]}]

    def sampling(self, temperature: float | None) -> dict[str, Any]:
        """``temperature`` and ``max_tokens``: its run script leaves top_p to the server."""
        return {"temperature": temperature, "max_tokens": self.profile.max_tokens}
