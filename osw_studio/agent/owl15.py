"""The ``owl15`` agent: GUI-Owl-1.5's ``computer_use`` calls, as OSWorld's ``mm_agents/owl15_agent.py`` asks.

OSWorld's agent keeps one conversation and trims it before each call; the request here is that trimmed
conversation, built afresh each step: a system message with the tool's description; the first user turn
holding the instruction text and, once ``history_window`` steps are done, ``Previous actions:`` with the
conclusion of each step older than the window (a reply's text before its tool call, after its last
``Action:`` line break); then the steps' screenshots as user turns and their replies as assistant turns,
of which only the newest ``history_window`` screenshots and ``history_window - 1`` replies are kept, and
user turns that end up next to each other merged into one. Screenshots are resized (bicubic) to the
smart-resize of factor 32 within 2645 image tokens and sent inline as PNG (OSWorld uploads them to a
cloud bucket and sends the link). The model's numbers are thousandths of the screen, truncated.
``temperature``, ``top_p`` and ``max_tokens`` are sent. A reply that cannot be read is asked again with
the same request, twenty calls in all, and then the task ends as done. With ``prompts: reference`` the
prompts are OSWorld's own, read from its source (:func:`osw_studio.agent.reference.owl15_prompt`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from osw_studio.actions import CoordinateSpace, smart_resize
from osw_studio.actions.fences import check_length
from osw_studio.actions.qwen3vl import call_actions, tool_calls
from osw_studio.agent.images import PreparedImage
from osw_studio.agent.model_agent import Message, ModelAgent, ReplyParser, image_part, text_part
from osw_studio.agent.qwen3vl import Qwen3VLAgent
from osw_studio.agent.reference import CodePrompt, owl15_prompt
from osw_studio.core.actions import Action, Done, Fail, Hotkey, Press, Typing, Wait
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord

FACTOR = 32
MIN_PIXELS = 32 * 32
MAX_PIXELS = 32 * 32 * 2645
"""2645 image tokens of 32x32 pixels: the most a screenshot is sent at."""
_CHINESE = re.compile(r"[\u4e00-\u9fff]")
_ALIASES = {"click": "left_click", "drag": "left_click_drag"}


def conclusion(reply: str) -> str:
    """A step's conclusion as the history lists it: before its tool call, after its last ``Action:`` line."""
    return reply.split("<tool_call>")[0].split("\nAction:")[-1].strip()


def owl_actions(args: dict[str, Any], space: CoordinateSpace) -> list[Action]:
    """The actions of one ``computer_use`` call as OSWorld's GUI-Owl-1.5 agent runs them."""
    action = _ALIASES.get(args.get("action"), args.get("action"))  # type: ignore[arg-type]
    if action == "type":
        content = args.get("text")
        if not isinstance(content, str):
            raise ActionParseError(f"type needs text, got {content!r}")
        newline = content.endswith(("\n", "\\n"))
        if _CHINESE.search(content):  # pasted as written, without clearing; Enter only after a newline
            text = content.rstrip("\\n").rstrip("\n")
            return [*([Typing(text=text)] if text else []), *([Press(key="enter")] if newline else [])]
        out: list[Action] = []
        if int(args.get("clear", 0)) == 1:
            out += [Hotkey(keys=["ctrl", "a"]), Press(key="backspace")]
        if content.strip():
            out.append(Typing(text=content.strip()))
        if content and (newline or int(args.get("enter", 0)) == 1):
            out.append(Press(key="enter"))
        return out
    if action == "terminate":
        return [Done()] if args.get("status") == "success" else [Fail()]
    if action == "wait":  # it sleeps the call's time (1 s without one)
        seconds = args.get("time", 1)
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not 0 <= seconds <= 600:
            raise ActionParseError(f"wait needs a time in seconds, got {seconds!r}")
        return [Wait(seconds=float(seconds))]
    if action == "answer":
        return [Done(message=str(args.get("text", "")))]
    return call_actions({**args, "action": action}, space)


class Owl15Agent(Qwen3VLAgent):
    """GUI-Owl-1.5 (see the module docs)."""

    name = kind = "owl15"

    def load_reference(self) -> CodePrompt | None:
        """OSWorld's GUI-Owl-1.5 prompts (None: not found)."""
        return owl15_prompt()

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """The smart-resize of the profile's ``screenshot_size`` (or the screen) within 2645 tokens."""
        width, height = self.profile.screenshot_size or screen
        h_bar, w_bar = smart_resize(height, width, FACTOR, MIN_PIXELS, MAX_PIXELS)
        return (w_bar, h_bar)

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """Thousandths of the screen, truncated."""
        return CoordinateSpace(screen=screen, mode="rel1000", rounding="trunc")

    def owl_texts(self, instruction: str) -> tuple[str, str, str, str]:
        """The system prompt, the instruction text and the two texts that list old steps."""
        if self._reference is not None:
            values = self._reference.evaluate(instruction=instruction, self_use_history=1)
            keys = ("system_prompt", "instruction_prompt", "history_head", "history_step")
            return tuple(str(values[k]) for k in keys)  # type: ignore[return-value]
        system, task = self.texts(instruction, "", (1000, 1000))
        return system, task, "\n\nEarlier steps:\n1. ", "\n%d. "

    @staticmethod
    def instruction_of(step: StepRecord) -> str:
        """A past step's conclusion (:func:`conclusion`)."""
        return conclusion(step.response or "")

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage
    ) -> tuple[list[Message], CoordinateSpace]:
        """The trimmed conversation for this step (and the frame of the reply), remembering the image."""
        space = self.coordinate_space(observation.size, image.size)
        window = self.profile.history_window
        done = len(self.history)
        system, task, head, later = self.owl_texts(instruction)
        if done >= window:
            task += head + self.instruction_of(self.history[0])
            for k in range(1, done - window + 1):
                task += later % (k + 1) + self.instruction_of(self.history[k])
        images = [self.history_image(i) for i in range(done)] + [image]
        first_image = len(images) - window
        first_reply = done - (window - 1)
        turns: list[Message] = [{"role": "system", "content": [text_part(system)]}]
        user: list[dict[str, Any]] = [text_part(task)]
        for number, shot in enumerate(images):
            if number >= first_image and shot is not None:
                user.append(image_part(shot))
            if number < done and number >= first_reply:
                if user:
                    turns.append({"role": "user", "content": user})
                reply = self.reply_text(self.history[number], space)
                turns.append({"role": "assistant", "content": [text_part(reply)]})
                user = []
        if user:
            turns.append({"role": "user", "content": user})
        self.remember_image(image)
        return turns, space

    def sampling(self, temperature: float | None) -> dict[str, Any]:
        """``temperature``, ``top_p`` and ``max_tokens``, as OSWorld's agent sends."""
        return ModelAgent.sampling(self, temperature)

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """Reads the reply's ``computer_use`` tool calls as OSWorld's GUI-Owl-1.5 agent does."""

        def parse(text: str) -> tuple[str | None, list[Action]]:
            check_length(text)
            _, calls = tool_calls(text)
            if not calls:
                raise ActionParseError("no computer_use tool call", where=text[:200])
            actions: list[Action] = []
            for raw in calls:
                try:
                    call = json.loads(raw)
                except ValueError as exc:
                    raise ActionParseError(f"a tool call is not JSON: {exc}", where=raw[:200]) from None
                args = call.get("arguments") if isinstance(call, dict) else None
                if not isinstance(args, dict) or "action" not in args:
                    raise ActionParseError(
                        "a computer_use call needs arguments with an action", where=raw[:200]
                    )
                found = owl_actions(args, space)
                if any(isinstance(a, Done | Fail) for a in found):  # the reply's other calls do not run
                    return conclusion(text), found
                actions += found
            return conclusion(text), actions

        return parse
