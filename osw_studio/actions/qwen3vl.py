r"""Qwen3-VL's ``computer_use`` tool calls: ``Action: ...`` then ``<tool_call>{json}</tool_call>``.

The reply format of OSWorld's Qwen3-VL agent (``mm_agents/qwen3vl_agent.py``): a one-line ``Action:``
(the step's low-level instruction) and a tool call whose arguments name an ``action`` (``left_click``,
``type``, ``key``, ``scroll``, ``wait``, ``terminate`` ...) with its ``coordinate`` / ``text`` / ``keys`` /
``pixels``. Calls are read where OSWorld's parser reads them: between ``<tool_call>`` and ``</tool_call>``
lines, or as a line that is a whole JSON object with ``name`` and ``arguments``. Coordinates are in the
:class:`~osw_studio.actions.coords.CoordinateSpace` given (``rel999`` as OSWorld runs it).

Like OSWorld's agent, ``terminate`` ends the episode as done whatever its ``status`` (its parser writes
DONE for both: a score beside the leaderboard needs the same), a ``wait`` is a wait, ``scroll`` scrolls
where the pointer is, and a call the reference ignores (``answer``, ``hscroll``, another tool) is no
action. Where OSWorld's code breaks, this parser is stricter or reads what was meant: text with quotes
or newlines is typed as written (OSWorld's generated ``typewrite('...')`` is then not valid Python);
``triple_click`` triple-clicks (OSWorld drops it); a call on the same line as ``<tool_call>`` is read
(OSWorld skips it); a key list that is empty or names no key is an error.

Examples:
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc")
    >>> reply = 'Action: Click OK.\n<tool_call>\n{"name": "computer_use", "arguments": '
    >>> reply += '{"action": "left_click", "coordinate": [500, 500]}}\n</tool_call>'
    >>> parse_qwen3vl(reply, space)
    ('Click OK.', [Click(kind='click', x=960, y=540, button='left', clicks=1)])
    >>> print(render_qwen3vl([Hotkey(keys=["ctrl", "s"])], space, instruction="Save."))
    Action: Save.
    <tool_call>
    {"name": "computer_use", "arguments": {"action": "key", "keys": ["ctrl", "s"]}}
    </tool_call>
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from osw_studio.actions.coords import CoordinateSpace, model_point, screen_point
from osw_studio.actions.fences import check_length
from osw_studio.actions.keys import is_valid_key, normalize_key
from osw_studio.core.actions import (
    Action,
    Click,
    Done,
    DoubleClick,
    DragTo,
    Fail,
    Hotkey,
    MoveTo,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
    Wait,
)
from osw_studio.core.errors import ActionParseError
from osw_studio.core.limits import loads_bounded

TOOL = "computer_use"
TOOL_ACTIONS = (
    "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click",
    "double_click", "scroll", "wait", "terminate",
)  # fmt: skip
"""The actions the ``computer_use`` tool offers the model (its prompt's list; ``triple_click`` is not one)."""

# The name OSWorld's agent gives a step without an ``Action:`` line: "Performing <pyautogui name> action".
_PYAUTOGUI_NAMES = {
    "left_click": "click",
    "right_click": "rightClick",
    "middle_click": "middleClick",
    "double_click": "doubleClick",
    "triple_click": "tripleClick",
    "type": "typewrite",
    "scroll": "scroll",
    "mouse_move": "moveTo",
    "left_click_drag": "dragTo",
}


def tool_calls(text: str) -> tuple[str, list[str]]:
    """The reply's ``Action:`` text and the JSON of its tool calls, found where OSWorld's parser looks."""
    instruction = ""
    calls: list[str] = []
    inside = False
    current: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if line.lower().startswith("action:"):
            if not instruction:
                instruction = line.split("Action:")[-1].strip()
            continue
        if line.startswith("<tool_call>"):
            rest = line.removeprefix("<tool_call>").strip()
            if rest.endswith("</tool_call>"):  # the whole call on one line
                calls.append(rest.removesuffix("</tool_call>").strip())
                continue
            inside = True
            if rest:
                current.append(rest)
            continue
        if line.startswith("</tool_call>"):
            if current:
                calls.append("\n".join(current))
                current = []
            inside = False
            continue
        if inside:
            current.append(line)
            continue
        if line.startswith("{") and line.endswith("}"):
            try:
                obj = loads_bounded(line, where="a tool call")
            except ValueError:
                continue
            if isinstance(obj, dict) and "name" in obj and "arguments" in obj:
                calls.append(line)
    if current:
        calls.append("\n".join(current))
    return instruction, calls


def _point(space: CoordinateSpace | None, args: dict[str, Any]) -> tuple[int, int] | None:
    if "coordinate" not in args:
        return None
    value = args["coordinate"]
    if not (isinstance(value, list) and len(value) == 2):
        raise ActionParseError(f"coordinate must be [x, y], got {value!r}")
    x, y = value
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
        raise ActionParseError(f"coordinate must be two numbers, got {value!r}")
    try:
        return screen_point(space, float(x), float(y))
    except ValueError as exc:
        raise ActionParseError(str(exc)) from None


def _keys(value: Any) -> list[str]:
    names = value if isinstance(value, list) else [value]
    keys = []
    for name in names:
        if not isinstance(name, str):
            raise ActionParseError(f"a key must be a name, got {name!r}")
        # OSWorld's parser strips a list written inside the string ("keys=['ctrl'", "'c']").
        name = name.removeprefix("keys=[").removesuffix("]")
        name = name[2:] if name.startswith(("['", '["')) and len(name) > 2 else name
        name = name[:-2] if name.endswith(("']", '"]')) and len(name) > 2 else name
        name = name.strip()
        if not is_valid_key(name):
            raise ActionParseError(f"{name!r} is not a key name")
        keys.append(normalize_key(name))
    if not keys:
        raise ActionParseError("key needs at least one key in keys")
    return keys


def call_actions(args: dict[str, Any], space: CoordinateSpace | None) -> list[Action]:
    """The actions of one ``computer_use`` call's arguments."""
    action = args.get("action")
    point = _point(space, args)
    x, y = point if point is not None else (None, None)
    if action == "left_click":
        return [Click(x=x, y=y)]
    if action == "right_click":
        return [RightClick(x=x, y=y)]
    if action == "middle_click":
        return [Click(x=x, y=y, button="middle")]
    if action == "double_click":
        return [DoubleClick(x=x, y=y)]
    if action == "triple_click":
        return [TripleClick(x=x, y=y)]
    if action == "mouse_move":
        return [MoveTo(x=x or 0, y=y or 0)]
    if action == "left_click_drag":
        return [DragTo(x=x or 0, y=y or 0)]
    if action == "type":
        text = args.get("text", "")
        if not isinstance(text, str):
            raise ActionParseError(f"type needs text, got {text!r}")
        return [Typing(text=text)]
    if action == "key":
        keys = _keys(args.get("keys", []))
        return [Press(key=keys[0])] if len(keys) == 1 else [Hotkey(keys=keys)]
    if action == "scroll":
        pixels = args.get("pixels", 0)
        if not isinstance(pixels, int | float) or isinstance(pixels, bool) or not math.isfinite(pixels):
            raise ActionParseError(f"scroll needs a number of pixels, got {pixels!r}")
        if pixels != int(pixels):
            raise ActionParseError(f"scroll needs whole pixels, got {pixels!r}")
        return [Scroll(dy=int(pixels))]
    if action == "wait":
        return [Wait()]
    if action == "terminate":
        return [Done()]
    return []  # answer, hscroll and unknown actions: OSWorld's agent does nothing for them


def parse_qwen3vl(text: str, space: CoordinateSpace | None = None) -> tuple[str, list[Action]]:
    """The step's low-level instruction and its actions, from a Qwen3-VL reply.

    The instruction is the ``Action:`` line, or (as OSWorld names a step without one) ``Performing
    <name> action`` after its first action.

    Raises:
        ActionParseError: If a tool call is not JSON, lacks its arguments, or has unusable values.
    """
    check_length(text)
    instruction, calls = tool_calls(text)
    actions: list[Action] = []
    first: str | None = None
    for raw in calls:
        try:
            call = loads_bounded(raw, where="a tool call")
        except ValueError as exc:
            raise ActionParseError(f"a tool call is not JSON: {exc}", where=raw[:200]) from None
        if not isinstance(call, dict) or call.get("name") != TOOL:
            continue
        args = call.get("arguments")
        if not isinstance(args, dict) or "action" not in args:
            raise ActionParseError("a computer_use call needs arguments with an action", where=raw[:200])
        found = call_actions(args, space)
        if found and first is None:
            first = args["action"]
        actions += found
    if not instruction and first is not None:
        name = _PYAUTOGUI_NAMES.get(first)
        if name is None and first == "key":
            name = "press" if isinstance(actions[0], Press) else "hotkey"
        instruction = f"Performing {name or first} action"
    return instruction, actions


def _coordinate(space: CoordinateSpace | None, x: int | None, y: int | None) -> dict[str, Any]:
    if x is None or y is None:
        return {}
    return {"coordinate": list(model_point(space, x, y))}


def tool_arguments(action: Action, space: CoordinateSpace | None) -> list[dict[str, Any]]:
    """One action as ``computer_use`` arguments (empty when the tool has no such action)."""
    if isinstance(action, Click):
        name = {"left": "left_click", "right": "right_click", "middle": "middle_click"}[action.button]
        if action.button == "left" and action.clicks > 1:
            name = "double_click" if action.clicks == 2 else "triple_click"
        return [{"action": name, **_coordinate(space, action.x, action.y)}]
    if isinstance(action, RightClick | DoubleClick | TripleClick):
        name = {RightClick: "right_click", DoubleClick: "double_click", TripleClick: "triple_click"}[
            type(action)
        ]
        return [{"action": name, **_coordinate(space, action.x, action.y)}]
    if isinstance(action, MoveTo):
        return [{"action": "mouse_move", **_coordinate(space, action.x, action.y)}]
    if isinstance(action, DragTo):
        start = (
            []
            if action.start_x is None or action.start_y is None
            else [{"action": "mouse_move", **_coordinate(space, action.start_x, action.start_y)}]
        )
        return [*start, {"action": "left_click_drag", **_coordinate(space, action.x, action.y)}]
    if isinstance(action, Typing):
        return [{"action": "type", "text": action.text}]
    if isinstance(action, Press):
        return [{"action": "key", "keys": [action.key]}]
    if isinstance(action, Hotkey):
        return [{"action": "key", "keys": list(action.keys)}]
    if isinstance(action, Scroll) and action.dy:
        move = (
            []
            if action.x is None or action.y is None
            else [{"action": "mouse_move", **_coordinate(space, action.x, action.y)}]
        )
        return [*move, {"action": "scroll", "pixels": action.dy}]
    if isinstance(action, Wait):
        return [{"action": "wait", "time": action.seconds}]
    if isinstance(action, Done):
        return [{"action": "terminate", "status": "success"}]
    if isinstance(action, Fail):
        return [{"action": "terminate", "status": "failure"}]
    return []


def render_qwen3vl(
    actions: Sequence[Action], space: CoordinateSpace | None = None, *, instruction: str | None = None
) -> str:
    """Actions written as a Qwen3-VL reply (for the history of a step a person changed).

    Actions the tool cannot express (key holds, horizontal scrolls) are left out.
    """
    lines = [f"Action: {instruction}"] if instruction else []
    for action in actions:
        for args in tool_arguments(action, space):
            call = json.dumps({"name": TOOL, "arguments": args})
            lines += ["<tool_call>", call, "</tool_call>"]
    return "\n".join(lines)
