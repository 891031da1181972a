"""Replies written as a model writes them: the target of a step a person decided.

A model-decided step's target is the model's raw reply. A step a person edited or performed is written
in the same output format as the model's replies: the same action language (pyautogui code, computer_13
JSON, UI-TARS ``Thought: ... Action: ...``, Qwen3-VL's ``Action:`` line and ``computer_use`` tool calls,
OpenCUA's ``## Thought`` / ``## Action`` / code block), the same coordinate space, and a thought in the
same place: the person's own note when they gave one, else a short neutral sentence about the actions.
Waiting, finishing and giving up are the prompt's special codes (```` ```WAIT``` ````, ```` ```DONE``` ````,
```` ```FAIL``` ````) in OSWorld's pyautogui language, never code that imitates them; Qwen3-VL's are its
``wait`` and ``terminate`` tool actions (a give-up is ``status: failure``, which OSWorld's reader, and ours,
take as done), OpenCUA's ``computer.wait()`` and ``computer.terminate(...)``.
A step the language cannot say as it ran gets no reply (None): ``call_user`` alone; in Qwen3-VL an
action its tool lacks (a held key, a sideways scroll, a triple click); in OpenCUA a wait or an end together with other
actions (its reader takes a block that mentions ``computer.wait`` or ``computer.terminate`` as that
alone).

Examples:
    >>> from osw_studio.core.actions import Click, Done, Typing
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="abs")
    >>> print(write_reply("pyautogui", [Click(x=5, y=6), Typing(text="hi")], space, "Open it."))
    Open it.
    ```python
    pyautogui.click(5, 6)
    pyautogui.write('hi')
    ```
    >>> print(write_reply("pyautogui", [Done()], space, "All set."))
    All set.
    ```DONE```
    >>> print(write_reply("uitars", [Click(x=960, y=540)], CoordinateSpace(screen=(1920, 1080), mode="rel1000")))
    Thought: I click there.
    Action: click(start_box='<|box_start|>(500,500)<|box_end|>')
    >>> rel999 = CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc")
    >>> print(write_reply("qwen3vl", [Click(x=960, y=540)], rel999, "Click the button."))
    Action: Click the button.
    <tool_call>
    {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 500]}}
    </tool_call>
    >>> smart = CoordinateSpace(screen=(1920, 1080), mode="smart", rounding="trunc")
    >>> print(write_reply("opencua", [Click(x=960, y=540)], smart, "The button saves it."))
    ## Thought:
    The button saves it.
    <BLANKLINE>
    ## Action:
    I click there.
    <BLANKLINE>
    ## Code:
    ```python
    pyautogui.click(x=966, y=546)
    ```
    >>> neutral_thought([Typing(text="hello"), Done()])
    "I type 'hello', then the task is done."
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.core.actions import Action, CallUser, Done, Fail, Wait
from osw_studio.trajectory.exporters.opencua_code import agentnet_code

Language = Literal["pyautogui", "computer13", "uitars", "qwen3vl", "opencua"]
"""The action languages replies are written in (a run's follows its agent and action space)."""

_PHRASES = {
    "click": "click there",
    "double_click": "double-click there",
    "triple_click": "triple-click there",
    "right_click": "right-click there",
    "move_to": "move the pointer there",
    "mouse_down": "press the mouse button there",
    "mouse_up": "release the mouse button there",
    "drag_to": "drag it there",
    "wait": "wait for the screen to change",
    "done": "the task is done",
    "fail": "the task cannot be done",
    "call_user": "I need the user's help",
}


def _phrase(action: Action) -> str:
    text = getattr(action, "text", None)
    if action.kind == "typing" and isinstance(text, str):
        return f"type {text!r}"
    if action.kind == "scroll":
        dy = getattr(action, "dy", 0)
        return "scroll down" if dy < 0 else "scroll up" if dy > 0 else "scroll sideways"
    if action.kind in ("press", "key_down", "key_up"):
        verb = {"press": "press", "key_down": "hold", "key_up": "release"}[action.kind]
        return f"{verb} {getattr(action, 'key', '')}"
    if action.kind == "hotkey":
        return "press " + "+".join(getattr(action, "keys", []))
    return _PHRASES.get(action.kind, action.kind.replace("_", " "))


def neutral_thought(actions: Sequence[Action]) -> str:
    """A short sentence that says what the actions do, without coordinates (they belong to the action)."""
    phrases = [_phrase(a) for a in actions] or ["wait"]
    text = ", then ".join(phrases)
    if not text.startswith("I ") and not text.startswith("the task"):
        text = "I " + text
    return text[0].upper() + text[1:] + "."


def write_reply(
    language: Language,
    actions: Sequence[Action],
    space: CoordinateSpace,
    thought: str | None = None,
    *,
    instruction: str | None = None,
) -> str | None:
    """A reply in ``language`` that performs ``actions`` (screen pixels) in ``space``'s coordinates.

    ``thought`` defaults to :func:`neutral_thought`; ``""`` writes none. OpenCUA's ``## Action:``
    section is ``instruction`` (default: the neutral sentence). Returns None when the language cannot
    express the actions (see the module docs).
    """
    thought = neutral_thought(actions) if thought is None else thought
    if language == "uitars":
        from osw_studio.actions.uitars import render_uitars

        return render_uitars(list(actions), space, thought=thought)
    acts = [a for a in actions if not isinstance(a, CallUser)]
    if not acts:
        return None
    if language == "qwen3vl":
        from osw_studio.actions.qwen3vl import TOOL_ACTIONS, render_qwen3vl, tool_arguments

        calls = [tool_arguments(a, space) for a in acts]
        if not all(calls) or any(c["action"] not in TOOL_ACTIONS for call in calls for c in call):
            return None
        return render_qwen3vl(acts, space, instruction=thought or None)
    if language == "opencua":
        return _opencua_reply(acts, space, thought, instruction)
    if language == "computer13":
        from osw_studio.actions.computer13 import render_computer13

        body = render_computer13(acts, space, fenced=True)
        return f"{thought}\n{body}" if thought else body
    from osw_studio.actions.pyautogui import render_pyautogui

    blocks: list[str] = []
    code: list[Action] = []
    for action in [*acts, None]:
        special = (
            "WAIT"
            if isinstance(action, Wait)
            else "DONE"
            if isinstance(action, Done)
            else "FAIL"
            if isinstance(action, Fail)
            else None
        )
        if action is not None and special is None:
            code.append(action)
            continue
        if code:
            blocks.append(f"```python\n{render_pyautogui(code, space)}\n```")
            code = []
        if special is not None:
            blocks.append(f"```{special}```")
    return "\n".join([thought, *blocks] if thought else blocks)


def _opencua_reply(
    actions: Sequence[Action], space: CoordinateSpace, thought: str, instruction: str | None
) -> str | None:
    """An OpenCUA reply: ``## Thought`` (when there is one), ``## Action`` and its code block."""
    special = any(isinstance(a, Wait | Done | Fail) for a in actions)
    if special and len(actions) > 1:
        return None
    code = agentnet_code(actions, space)
    if not code:
        return None
    head = f"## Thought:\n{thought}\n\n" if thought else ""
    fence = "code" if special else "python"
    action = instruction or neutral_thought(actions)
    return f"{head}## Action:\n{action}\n\n## Code:\n```{fence}\n{code}\n```"
