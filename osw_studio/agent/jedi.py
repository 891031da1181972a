"""The ``jedi`` agent: a planner and a grounder, as OSWorld's ``mm_agents/jedi_7b_agent.py`` runs Jedi-7B.

Two models take part in each step. The planner (the profile's model, ``gpt-4o`` by default) sees a
system prompt (with the step number and the 15 steps OSWorld's agent allows), then for each earlier step
a user turn (its screenshot for the newest ``history_window`` steps, else the text ``Observation:`` and
the caption the planner wrote for it) and an assistant turn (``Thought:``, ``Action:`` and the list of
that step's final code, written as a Python list), then the screenshot and the instruction text. Its
reply holds fenced pyautogui code (or ``WAIT``, ``DONE``, ``FAIL``); a reply with none is asked again with
a reminder added as a user turn, ``parse_tries`` calls in all (OSWorld: six), after which the step runs
nothing. In the code, each pointer call written right after a ``#`` comment (``moveTo``, ``click``,
``rightClick``, ``doubleClick``, ``middleClick``, ``dragTo`` with two numbers) is placed by the grounder
(the profile's ``grounder`` endpoint, ``jedi-7b``): it sees its own system prompt (naming the Qwen2.5-VL
smart-resize of the screenshot, at most 2700 patches of 28x28) and the screenshot with the comment, and
answers a ``computer_use`` tool call whose coordinate, in that resized frame, is scaled to the screenshot
and written into the call. Both models are sent ``temperature``, ``top_p`` and ``max_tokens``; screenshots
are sent as grabbed, PNG, ``detail: high``. With ``prompts: reference`` every text is OSWorld's own, read
from its source (:func:`osw_studio.agent.reference.jedi_prompts`).

The grounder's key is read from the variable its ``api_key_env`` names (none: no key is sent, as local
servers need none).
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from osw_studio.actions import CoordinateSpace, parse_pyautogui, smart_resize
from osw_studio.agent.base import Prediction, TokenCallback
from osw_studio.agent.images import PreparedImage
from osw_studio.agent.model_agent import Message, ModelAgent, text_part
from osw_studio.agent.model_client import ModelClient, ModelReply
from osw_studio.agent.osworld import hd_image_part
from osw_studio.agent.reference import JediPrompts, jedi_prompts
from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import ReplyAttempt
from osw_studio.settings.model import ResolvedProfile

MAX_STEPS = 15
"""The steps OSWorld's agent tells the planner it has (its class default; no run script sets it)."""
GROUNDER_FACTOR = 28
GROUNDER_MAX_PIXELS = 2700 * 28 * 28
"""The largest area the grounder is told the screenshot has (2700 patches of 28x28)."""
WORDS = ("WAIT", "DONE", "FAIL")
_FENCE = re.compile(r"```(?:\w+\s+)?(.*?)```", re.DOTALL)
_POINTER = re.compile(
    r"""(?P<comment>\#.*?)\n
    (?P<call>pyautogui\.(?:moveTo|click|rightClick|doubleClick|middleClick|dragTo)
      \((?:x=)?(?P<x>\d+)(?:,\s*|\s*,\s*y=)(?P<y>\d+)(?:,\s*duration=[\d.]+)?\))""",
    re.DOTALL | re.VERBOSE,
)
"""A pointer call right after a comment, which the grounder places."""
_TAGS = (("<tool_call>", "</tool_call>"), ("\u2697", "\u2697"))

OWN_PLANNER = """You operate an Ubuntu desktop with pyautogui, step {current_step} of at most {max_steps}.
For each step, answer in three parts:
Observation:
what the screenshot shows, in one line
Thought:
what to do next and why, in one line
Action:
one fenced python block of pyautogui code. Write a comment naming the target element on the line right
before each pointer call (moveTo, click, rightClick, doubleClick, middleClick, dragTo); its coordinates are
found from that comment. Answer WAIT to wait, DONE when the task is done, FAIL when it cannot be done.
"""
OWN_GROUNDER = (
    "Locate the element described on the screenshot of {width}x{height} pixels. Answer with "
    '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}'
    "</tool_call> in pixels of that size."
)
OWN_USER = "Give the next step for this screenshot, given the earlier ones.\n\nInstruction: {instruction}\n\n"
OWN_REMINDER = "That reply has no code block. Answer again, with code."


def planner_codes(reply: str) -> list[str]:
    """The code of a planner reply, one entry per fenced block (a trailing ``DONE``-like word apart)."""
    text = "\n".join(part.strip() for part in reply.split(";") if part.strip())
    if text.strip() in WORDS:
        return [text.strip()]
    codes: list[str] = []
    for block in _FENCE.findall(text):
        block = block.strip()
        lines = block.split("\n")
        if block in WORDS:
            codes.append(block)
        elif lines[-1] in WORDS:
            if len(lines) > 1:
                codes.append("\n".join(lines[:-1]))
            codes.append(lines[-1])
        else:
            codes.append(block)
    return codes


def labelled(reply: str, label: str) -> str:
    """The first line after a ``label:`` line of a planner reply (``Observation``, ``Thought``), or ""."""
    found = re.search(rf"{label}:\n(.*?)\n", reply, re.DOTALL)
    return found.group(1).strip() if found else ""


class NoToolCall(ValueError):
    """A grounder reply with no tool call: OSWorld's agent then writes a call that cannot run."""


def grounded_point(reply: str, size: tuple[int, int], resized: tuple[int, int]) -> tuple[int, int] | None:
    """The grounder's point, scaled from ``resized`` to ``size``; None: the call keeps its numbers.

    Raises:
        NoToolCall: If the reply holds no tool call.
    """
    start = next((s for s, _ in _TAGS if s in reply), None)
    end = next((e for _, e in _TAGS if e in reply), None)
    if start is None or end is None:
        raise NoToolCall("the grounding model's reply has no tool call")
    body = reply.split(start)[1].split(end)[0].strip()
    try:
        try:
            call = json.loads(body)
            arguments = call.get("arguments", {})
        except json.JSONDecodeError:
            arguments = {}
        x, y = arguments.get("coordinate", [-1, -1])[:2]
        point = (int(x * size[0] / resized[0]), int(y * size[1] / resized[1]))
    except (AttributeError, TypeError, ValueError, IndexError, ZeroDivisionError):
        return None
    return None if point == (-1, -1) else point


class JediAgent(ModelAgent):
    """A planner and a grounding model (see the module docs).

    Args:
        profile: The resolved profile; its ``grounder`` names the grounding endpoint.
        client: The planner's client (default: one made from the profile and ``api_key``).
        api_key: The planner's key.
        grounder_client: The grounder's client (default: one made from ``profile.grounder``).
    """

    name = kind = "jedi"

    def __init__(
        self,
        profile: ResolvedProfile,
        *,
        client: ModelClient | None = None,
        api_key: str | None = None,
        grounder_client: ModelClient | None = None,
    ) -> None:
        super().__init__(profile, client=client, api_key=api_key)
        grounder = profile.grounder
        self.grounder_model = (grounder.model if grounder else None) or "jedi-7b"
        if grounder_client is None:
            key_env = grounder.api_key_env if grounder else None
            key = os.environ.get(key_env, "").strip() or None if key_env else None
            if key:
                self.secrets = (*self.secrets, key)
            grounder_client = ModelClient(
                base_url=(grounder.base_url if grounder else None) or profile.base_url,
                model=self.grounder_model,
                api_key=key,
                timeout=profile.timeout,
                max_retries=profile.max_retries,
                profile=profile.name,
            )
        self.grounder_client = grounder_client
        self._prompts: JediPrompts | None = None
        if profile.prompts == "reference":
            self._prompts = jedi_prompts()
            if self._prompts is None:
                self.own_prompts_instead()
            else:
                self.prompt_info = {
                    "source": self._prompts.source,
                    "sha256": self._prompts.sha256,
                    "faithful": True,
                }
        # Per recorded step (1-based): the planner's caption, its thought and the step's final code.
        self._steps: dict[int, tuple[str, str, list[str]]] = {}

    def reset(self, task: Any = None) -> None:
        """Start a new episode."""
        super().reset(task)
        self._steps = {}

    async def aclose(self) -> None:
        """Close both model clients."""
        await super().aclose()
        await self.grounder_client.aclose()

    def texts(self, instruction: str) -> tuple[str, str, str, str]:
        """The planner's system prompt and user text, the reminder, and the grounder's system prompt."""
        if self._prompts is not None:
            user = str(self._prompts.user.evaluate(instruction=instruction)["user_prompt"])
            return self._prompts.planner, user, self._prompts.reminder, self._prompts.grounder
        return OWN_PLANNER, OWN_USER.format(instruction=instruction), OWN_REMINDER, OWN_GROUNDER

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage
    ) -> tuple[list[Message], CoordinateSpace]:
        """The planner's messages for this step (and the frame of its code), remembering the image."""
        planner, user, _, _ = self.texts(instruction)
        step = len(self.history) + 1
        system = planner.replace("{current_step}", str(step)).replace("{max_steps}", str(MAX_STEPS))
        messages: list[Message] = [{"role": "system", "content": [text_part(system)]}]
        first_image = max(0, len(self.history) - self.profile.history_window)
        for index in range(len(self.history)):
            said_then = self.history[index].response or ""  # a step not planned here: its reply's words
            default: tuple[str, str, list[str]] = (
                labelled(said_then, "Observation"),
                labelled(said_then, "Thought"),
                [],
            )
            caption, thought, codes = self._steps.get(index + 1, default)
            shown = self.history_image(index) if index >= first_image else None
            content = [hd_image_part(shown)] if shown is not None else [text_part(f"Observation: {caption}")]
            messages.append({"role": "user", "content": content})
            said = f"Thought:\n{thought}\nAction:\n{codes!r}"
            messages.append({"role": "assistant", "content": [text_part(said)]})
        messages.append({"role": "user", "content": [hd_image_part(image), text_part(user)]})
        self.remember_image(image)
        return messages, self.coordinate_space(observation.size, image.size)

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Ask the planner (again while its reply has no code), then the grounder for each pointer call."""
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        image = await self.prepare(observation)
        messages, space = self.build_messages(instruction, observation, image)
        timings["prepare"] = time.perf_counter() - t0
        _, _, reminder, grounder_prompt = self.texts(instruction)
        attempts: list[ReplyAttempt] = []
        reply = await self.ask(messages, on_token, timings)
        codes = planner_codes(reply.text)
        for _ in range(max(1, self.profile.parse_tries) - 1):
            if codes:
                break
            attempts.append(
                ReplyAttempt(response=reply.text, error="no code", temperature=self.profile.temperature)
            )
            messages = [*messages, {"role": "user", "content": [text_part(reminder)]}]
            reply = await self.ask(messages, on_token, timings)
            codes = planner_codes(reply.text)
        t1 = time.perf_counter()
        rh, rw = smart_resize(image.size[1], image.size[0], GROUNDER_FACTOR, max_pixels=GROUNDER_MAX_PIXELS)
        grounder_system = grounder_prompt.replace("{height}", str(rh)).replace("{width}", str(rw))
        final: list[str] = []  # as the history shows them
        runnable: list[str] = []
        error: str | None = None
        for code in codes:
            placed, broken = await self.ground(code, image, grounder_system, (rw, rh), timings)
            final.append(placed)
            if broken:
                error = error or "the grounding model's reply has no tool call; that code is not run"
            else:
                runnable.append(placed)
        actions: list[Action] = []
        try:
            for code in runnable:
                actions += parse_pyautogui(code, space)
        except ActionParseError as exc:
            error, actions = error or str(exc), []
        timings["ground"] = time.perf_counter() - t1 - timings.get("grounder", 0.0)
        index = len(self.history) + 1
        self._steps[index] = (labelled(reply.text, "Observation"), labelled(reply.text, "Thought"), final)
        prediction = self.prediction(
            reply, space, lambda _: (labelled(reply.text, "Thought") or None, actions), timings
        )
        prediction.attempts = attempts
        if error is not None and not actions:
            prediction.error = error
        return prediction

    async def ground(
        self,
        code: str,
        image: PreparedImage,
        system: str,
        resized: tuple[int, int],
        timings: dict[str, float],
    ) -> tuple[str, bool]:
        """``code`` with each commented pointer call placed by the grounder, and whether it cannot run.

        A grounder reply with no tool call leaves the call without numbers, as OSWorld's agent writes it
        (``doubleClick(, [])``): the code is kept for the history but not run.
        """
        out = code
        broken = False
        for found in _POINTER.finditer(code):
            comment = found.group("comment").split("#")[1].strip()
            messages: list[Message] = [
                {"role": "system", "content": [text_part(system)]},
                {"role": "user", "content": [hd_image_part(image), text_part("\n" + comment)]},
            ]
            t0 = time.perf_counter()
            reply: ModelReply = await self.grounder_client.complete(
                messages, **self.sampling(self.profile.temperature)
            )
            timings["grounder"] = timings.get("grounder", 0.0) + time.perf_counter() - t0
            try:
                point: tuple[object, object] | None = grounded_point(reply.text, image.size, resized)
            except NoToolCall:
                point, broken = ("", []), True
            if point is None:
                continue
            call = found.group("call")
            head, _, rest = call.partition("(")
            placed = f"{head}({point[0]}, {point[1]}"
            placed += f", {rest.split(',')[-1]}" if "duration" in rest else ")"
            out = out.replace(call, placed)
        return out, broken
