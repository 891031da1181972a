"""Target-model profiles: the prompt a chat export uses and how actions are written for that model.

A profile fixes the action language (pyautogui code, computer_13 JSON, UI-TARS text) and a default
coordinate convention (:mod:`osw_studio.actions.coords` modes: ``abs`` screen pixels, ``rel1000``,
``norm`` 0-1, ``smart`` pixels of the smart-resized image). Stored actions are screen pixels; they are
written in the profile's frame only here, through the code generators of :mod:`osw_studio.actions`.

Examples:
    >>> from osw_studio.core.actions import Click
    >>> p = PROFILES["osworld"]
    >>> print(p.render([Click(x=960, y=540)], p.space((1920, 1080)), thought="Open it."))
    Open it.
    ```python
    pyautogui.click(960, 540)
    ```
    >>> print(PROFILES["opencua"].render([Click(x=960, y=540)], PROFILES["opencua"].space((1920, 1080)), ""))
    ## Action:
    I click there.
    <BLANKLINE>
    ## Code:
    ```python
    pyautogui.click(x=966, y=546)
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from osw_studio.actions.coords import CoordinateSpace, CoordMode, Rounding
from osw_studio.core.actions import Action
from osw_studio.core.errors import ExportError
from osw_studio.trajectory.exporters.replies import Language, write_reply

_PYAUTOGUI_SYSTEM = (
    "You are an agent that operates a computer to complete the user's task. At each step you see a "
    "screenshot of the screen ({width}x{height} pixels). First think briefly, then reply with Python code "
    "using pyautogui in one ```python block; coordinates are {coords}. Reply with WAIT to wait, DONE when "
    "the task is complete, or FAIL if it cannot be done."
)
_COMPUTER13_SYSTEM = (
    "You are an agent that operates a computer to complete the user's task. At each step you see a "
    "screenshot of the screen ({width}x{height} pixels). First think briefly, then reply with the actions "
    "as a JSON list of computer_13 actions in one ```json block; coordinates are {coords}."
)
_UITARS_SYSTEM = (
    "You operate a computer through its screen. Each turn shows the task, the actions taken so far and the "
    "newest screenshot; answer with the single next action.\n\n## Reply format\n```\nThought: ...\n"
    "Action: ...\n```\n\n## Actions\nclick(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
    "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
    "right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
    "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\n"
    "hotkey(key='')\ntype(content='')\n"
    "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n"
    "wait()\nfinished(content='xxx')\ncall_user()\n\n## Rules\n- Write the Thought in English.\n"
    "- In the Thought, plan in a few words, then say in one sentence what the next action does and to "
    "which element."
)

_QWEN3VL_SYSTEM = (
    "You operate a computer through its screen ({width}x{height} pixels) with one tool, computer_use, "
    "whose arguments hold an action: key, type, mouse_move, left_click, left_click_drag, right_click, "
    "middle_click, double_click, scroll, wait or terminate; coordinates are {coords}. Each turn, write "
    "one line 'Action: ' saying in one sentence what you do, then the call as JSON inside "
    '<tool_call></tool_call>: {{"name": "computer_use", "arguments": {{"action": ...}}}}.'
)
_OPENCUA_SYSTEM = (
    "You operate a computer through its screen ({width}x{height} pixels). Each turn, reply with a "
    "'## Thought:' section, an '## Action:' section (one sentence: what you do next) and a '## Code:' "
    "section holding one code block: pyautogui calls with keyword arguments, coordinates {coords}, or "
    "computer.wait() to wait, or computer.terminate(status='success' or 'failure') to end the task."
)

_HELPFUL = "You are a helpful assistant."
_UITARS_USER = _UITARS_SYSTEM + "\n\n## Task\n{instruction}"

_COORD_WORDS = {
    "abs": "screen pixels",
    "resized": "pixels of the screenshot as sent",
    "smart": "pixels of the screenshot as the model sees it (smart-resized)",
    "rel1000": "relative, from 0 to 1000 on each axis",
    "norm": "relative, from 0 to 1 on each axis",
    "rel999": "relative, on a 1000x1000 grid over the screen",
}


@dataclass(frozen=True)
class Profile:
    """How one family of models is prompted and how it writes actions.

    Attributes:
        name: The profile's name on the command line.
        language: The action language of the assistant turns.
        coords: The default coordinate convention.
        system: The system prompt (``{width}``, ``{height}`` and ``{coords}`` are filled in).
        user: The first user turn (``{instruction}`` is filled in).
        image_turns: Screenshots go in user turns of their own after the prompt (as UI-TARS agents send
            them), not before the text of the turn they belong to.
        rounding: How the model's numbers are read back to pixels (``trunc``: as OSWorld's Qwen3-VL and
            OpenCUA agents read them).
    """

    name: str
    language: Language
    coords: CoordMode
    system: str
    user: str = "{instruction}"
    image_turns: bool = False
    rounding: Rounding = "round"

    def space(self, screen: tuple[int, int], coords: str | None = None) -> CoordinateSpace:
        """The coordinate space for a screen, in this profile's convention or ``coords``.

        Raises:
            ExportError: If ``coords`` is not a known convention.
        """
        mode = coords or self.coords
        if mode not in _COORD_WORDS or mode == "resized":
            raise ExportError(
                f"unknown coordinate convention {mode!r}", hint="use abs, rel1000, rel999, norm or smart"
            )
        return CoordinateSpace(screen=screen, mode=mode, rounding=self.rounding)

    def system_prompt(self, space: CoordinateSpace) -> str:
        """The system prompt for a screen."""
        width, height = space.screen
        return self.system.format(width=width, height=height, coords=_COORD_WORDS[space.mode])

    def user_prompt(self, instruction: str) -> str:
        """The first user turn."""
        return self.user.format(instruction=instruction)

    def render(
        self, actions: Sequence[Action], space: CoordinateSpace, thought: str | None = None
    ) -> str | None:
        """An assistant turn in this profile's language: ``thought`` and ``actions``.

        ``thought`` None writes a neutral one, ``""`` none. None when the language cannot express the
        actions (``call_user`` in code).
        """
        return write_reply(self.language, actions, space, thought)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("osworld", "pyautogui", "abs", _PYAUTOGUI_SYSTEM, "Task: {instruction}"),
        Profile("computer13", "computer13", "abs", _COMPUTER13_SYSTEM, "Task: {instruction}"),
        # UI-TARS agents send a plain system message, the prompt and instruction as the first user turn,
        # and each screenshot as a user turn of its own.
        Profile("uitars", "uitars", "rel1000", _HELPFUL, _UITARS_USER, image_turns=True),
        Profile("uitars-1.5", "uitars", "smart", _HELPFUL, _UITARS_USER, image_turns=True),
        Profile("qwen2.5-vl", "pyautogui", "smart", _PYAUTOGUI_SYSTEM, "Task: {instruction}"),
        # Qwen3-VL and OpenCUA write their own reply formats, in the frames of the qwen3-vl and
        # opencua-7b presets, and their readers truncate.
        Profile("qwen3-vl", "qwen3vl", "rel999", _QWEN3VL_SYSTEM, "Task: {instruction}", rounding="trunc"),
        Profile("opencua", "opencua", "smart", _OPENCUA_SYSTEM, "Task: {instruction}", rounding="trunc"),
    )
}
"""Profiles by name."""


def get_profile(name: str) -> Profile:
    """A profile by name.

    Raises:
        ExportError: If there is no such profile.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise ExportError(f"unknown profile {name!r}", hint=f"choose one of: {', '.join(PROFILES)}") from None
