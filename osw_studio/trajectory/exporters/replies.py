"""Replies written as a model writes them: the target of a step a person decided.

A model-decided step's target is the model's raw reply. A step a person edited or performed is written
in the same output format as the model's replies: the same action language (pyautogui code, computer_13
JSON, UI-TARS ``Thought: ... Action: ...``), the same coordinate space, and a thought in the same place:
the person's own note when they gave one, else a short neutral sentence about the actions. Waiting,
finishing and giving up are the prompt's special codes (```` ```WAIT``` ````, ```` ```DONE``` ````,
```` ```FAIL``` ````) in OSWorld's pyautogui language, never code that imitates them.

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
    >>> neutral_thought([Typing(text="hello"), Done()])
    "I type 'hello', then the task is done."
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.core.actions import Action, CallUser, Done, Fail, Wait

Language = Literal["pyautogui", "computer13", "uitars"]

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
    language: Language, actions: Sequence[Action], space: CoordinateSpace, thought: str | None = None
) -> str | None:
    """A reply in ``language`` that performs ``actions`` (screen pixels) in ``space``'s coordinates.

    ``thought`` defaults to :func:`neutral_thought`; ``""`` writes none. Returns None when the language
    cannot express the actions (``call_user`` alone in pyautogui or computer_13, which have no such
    action).
    """
    thought = neutral_thought(actions) if thought is None else thought
    if language == "uitars":
        from osw_studio.actions.uitars import render_uitars

        return render_uitars(list(actions), space, thought=thought)
    acts = [a for a in actions if not isinstance(a, CallUser)]
    if not acts:
        return None
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
