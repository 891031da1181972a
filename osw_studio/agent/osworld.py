"""The ``osworld`` agent: OSWorld's PromptAgent, with its observation types and action spaces.

Observation types: ``screenshot``, ``a11y_tree`` (the accessibility tree as OSWorld's table),
``screenshot_a11y_tree`` or ``som`` (set-of-marks: the screenshot tagged with numbered boxes from the tree,
and the boxes' table; the code may name ``tag_N``, the centre of box N; :mod:`osw_studio.agent.som`);
action spaces: ``pyautogui`` (Python code) or ``computer_13`` (JSON actions; not with ``som``, as in OSWorld).

The request has the shape of OSWorld's ``PromptAgent.predict``: a system message (the prompt, then the
task), then for each of the last ``history_window`` steps a user turn with that step's observation (its
screenshot and/or its accessibility table, as sent then) and an assistant turn with the reply, then the
current observation; every content is a list of parts and images carry ``"detail": "high"``. With
``prompts: reference`` the texts are OSWorld's own, read from its installed package
(:mod:`osw_studio.agent.reference`); otherwise they are OSW Studio's templates, which also tell the model
the size of the image it is shown. A turn a person edited shows what actually ran, written in the same
action language.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from osw_studio.actions import (
    CoordinateSpace,
    parse_pyautogui,
    parse_reply,
    render_computer13,
    render_pyautogui,
)
from osw_studio.actions.coords import model_point
from osw_studio.actions.fences import prose_outside
from osw_studio.agent.a11y import linearize_accessibility_tree, trim_to_budget
from osw_studio.agent.images import PreparedImage
from osw_studio.agent.model_agent import Message, ModelAgent, ReplyParser, text_part
from osw_studio.agent.model_client import ModelClient
from osw_studio.agent.prompts import render_prompt
from osw_studio.agent.reference import PromptAgentTexts, ReferencePrompt, prompt_agent_texts, reference_prompt
from osw_studio.agent.som import Marks, tag_names, tag_screenshot
from osw_studio.core.action_languages import language_of_action_space
from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError, SettingsError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings.model import ResolvedProfile

log = logging.getLogger(__name__)

CLIENT_PASSWORD = "password"
"""The guest user's password the prompt offers for sudo (OSWorld's VMs and ours use this one)."""

A11Y_MAX_TOKENS = 10_000
"""Token budget of the accessibility table in one turn (OSWorld's default)."""

_PROMPT_NAMES = {
    ("screenshot", "pyautogui"): "SYS_PROMPT_IN_SCREENSHOT_OUT_CODE",
    ("screenshot", "computer_13"): "SYS_PROMPT_IN_SCREENSHOT_OUT_ACTION",
    ("a11y_tree", "pyautogui"): "SYS_PROMPT_IN_A11Y_OUT_CODE",
    ("a11y_tree", "computer_13"): "SYS_PROMPT_IN_A11Y_OUT_ACTION",
    ("screenshot_a11y_tree", "pyautogui"): "SYS_PROMPT_IN_BOTH_OUT_CODE",
    ("screenshot_a11y_tree", "computer_13"): "SYS_PROMPT_IN_BOTH_OUT_ACTION",
    ("som", "pyautogui"): "SYS_PROMPT_IN_SOM_OUT_TAG",
}
"""OSWorld's system prompt for each (observation type, action space)."""


def hd_image_part(image: PreparedImage) -> dict[str, Any]:
    """An ``image_url`` part as OSWorld's PromptAgent sends it (``detail: high``)."""
    return {"type": "image_url", "image_url": {"url": image.data_url(), "detail": "high"}}


class OSWorldAgent(ModelAgent):
    """OSWorld's prompt agent (see the module docs).

    Attributes:
        prompt_info: Which prompts the requests use: ``source`` (``own`` or the reference's module and
            names), ``sha256`` of their text and ``faithful`` (whether they are OSWorld's own).
    """

    name = kind = "osworld"

    def __init__(
        self, profile: ResolvedProfile, *, client: ModelClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(profile, client=client, api_key=api_key)
        if self.observation_type == "som" and self.action_space != "pyautogui":
            raise SettingsError(
                f"profile {profile.name}: set-of-marks (som) answers in pyautogui code only",
                hint="set the profile's action_space to pyautogui",
            )
        self._trees: dict[int, str | None] = {}
        self._marks: Marks | None = None
        self._system: ReferencePrompt | None = None
        self._texts: PromptAgentTexts | None = None
        if profile.prompts == "reference":
            self._load_reference()

    def _load_reference(self) -> None:
        name = _PROMPT_NAMES[(self.observation_type, self.action_space)]
        system = reference_prompt("mm_agents/prompts.py", name)
        texts = prompt_agent_texts()
        if system is None or texts is None:
            log.warning(
                "profile %s asks for OSWorld's prompts but desktop-env is not installed; "
                "using OSW Studio's own (not leaderboard-faithful)",
                self.profile.name,
            )
            self.prompt_info = {
                "source": "own",
                "faithful": False,
                "reason": "desktop-env is not installed (pip install --no-deps desktop-env==1.0.2)",
            }
            return
        self._system, self._texts = system, texts
        self.prompt_info = {
            "source": f"{system.source}; {texts.source}",
            "sha256": {"system": system.sha256, "turns": texts.sha256},
            "faithful": True,
        }

    def reset(self, task: Any = None) -> None:
        """Start a new episode: forget the history, its images and its tables."""
        super().reset(task)
        self._trees = {}
        self._marks = None

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
        return "a11y_tree" in self.observation_type or self.observation_type == "som"

    @property
    def sends_image(self) -> bool:
        """Whether the user turns carry the (tagged) screenshot."""
        return "screenshot" in self.observation_type or self.observation_type == "som"

    def system_prompt(self, instruction: str, frame: tuple[int, int]) -> str:
        """The system message for ``instruction``; ``frame`` is the size of the image the model sees."""
        if self._system is not None and self._texts is not None:
            # OSWorld formats the prompt with its password; its computer_13 prompts hold JSON braces that
            # make that format raise (PromptAgent cannot be built in those modes), so the placeholder is
            # replaced alone: the same text where OSWorld's works, the prompt as written where it fails.
            system = self._system.text.replace("{CLIENT_PASSWORD}", CLIENT_PASSWORD)
            return system + self._texts.task.format(instruction)
        size = {"screen_width": frame[0], "screen_height": frame[1]}
        return render_prompt(
            "osworld_system",
            observation=render_prompt(f"osworld_observation_{self.observation_type}"),
            action_space=render_prompt(f"osworld_actions_{self.action_space}", **size),
            instruction=instruction,
            **size,
        )

    def user_turn(self, tree: str | None, image: PreparedImage | None, *, current: bool = False) -> Message:
        """The user message of one step (``current``: this step's, which for ``som`` also has the table)."""
        kind = self.observation_type
        if self._texts is not None:
            template = (
                self._texts.current.get(kind, self._texts.steps[kind]) if current else self._texts.steps[kind]
            )
            text = template.format(tree) if "{}" in template else template
        elif kind == "som":
            name = "osworld_step_som" if current else "osworld_history_som"
            text = render_prompt(name, accessibility_tree=tree or "")
        else:
            text = render_prompt(f"osworld_step_{kind}", accessibility_tree=tree or "")
        content: list[dict[str, Any]] = [text_part(text)]
        if self.sends_image and image is not None:
            content.append(hd_image_part(image))
        return {"role": "user", "content": content}

    def assistant_turn(self, step: StepRecord, space: CoordinateSpace) -> Message:
        """The reply at ``step``, or what actually ran (in this action language) when a person changed it."""
        text = (step.response or "").strip()
        if step.executed != step.proposed or not text:
            with contextlib.suppress(ActionParseError):
                if step.executed:
                    if self.action_space == "computer_13":
                        text = render_computer13(step.executed, space, fenced=True)
                    else:
                        text = f"```python\n{render_pyautogui(step.executed, space)}\n```"
        if not text:
            text = self._texts.no_action if self._texts is not None else "(no action)"
        return {"role": "assistant", "content": [text_part(text)]}

    def _tree(self, observation: Observation) -> str | None:
        if not self.wants_accessibility_tree:
            return None
        if self._marks is not None:
            return trim_to_budget(self._marks.table, A11Y_MAX_TOKENS)
        if not observation.accessibility_tree:
            return "(no accessibility tree was available)"
        table = linearize_accessibility_tree(observation.accessibility_tree)
        return trim_to_budget(table, A11Y_MAX_TOKENS)

    async def prepare_step(self, observation: Observation) -> PreparedImage | None:
        """The screenshot as sent (with set-of-marks: tagged first; none without a screenshot)."""
        if self.observation_type == "som":
            self._marks = await asyncio.to_thread(
                tag_screenshot, observation.screenshot, observation.accessibility_tree or ""
            )
            return await self.prepare(observation.model_copy(update={"screenshot": self._marks.image}))
        if "screenshot" in self.observation_type:
            return await self.prepare(observation)
        return None

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """Reads the next step's code or actions (with set-of-marks: ``tag_n`` names the marks' centres)."""
        if self._marks is not None:
            names = {k: model_point(space, *p) for k, p in tag_names(self._marks.boxes).items()}

            def parse(text: str) -> tuple[str | None, list[Action]]:
                return prose_outside(text) or None, parse_pyautogui(text, space, names=names)

            return parse
        fmt = language_of_action_space(self.action_space)
        return lambda text: parse_reply(text, fmt, space)

    def build_messages(
        self, instruction: str, observation: Observation, image: PreparedImage | None
    ) -> tuple[list[Message], CoordinateSpace]:
        """The request's messages for this step (and the frame of the reply), remembering what is sent."""
        size = image.size if image is not None else observation.size
        space = self.coordinate_space(observation.size, size)
        messages: list[Message] = [
            {"role": "system", "content": [text_part(self.system_prompt(instruction, size))]}
        ]
        window = self.profile.history_window
        start = max(0, len(self.history) - window) if window > 0 else len(self.history)
        for index in range(start, len(self.history)):
            messages.append(self.user_turn(self._trees.get(index + 1), self.history_image(index)))
            messages.append(self.assistant_turn(self.history[index], space))
        tree = self._tree(observation)
        messages.append(self.user_turn(tree, image, current=True))
        if image is not None:
            self.remember_image(image)
        self._trees[len(self.history) + 1] = tree
        return messages, space
