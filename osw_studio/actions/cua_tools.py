"""The actions of the vendors' computer-use tools, mapped to core actions and back.

OpenAI's computer tool (GPT-5.4's ``computer`` and the older ``computer_use_preview``) sends actions as
objects: ``click`` (``button`` left, right, wheel, back, forward), ``double_click``, ``triple_click``,
``drag`` with a ``path`` of points, ``move``, ``scroll`` (``scroll_x``/``scroll_y``, positive right and
down), ``type``, ``keypress`` with the vendor's key names (``CTRL``, ``ArrowLeft``...), ``wait`` and
``screenshot``. Its points are in the frame of the screenshot the model was sent, so each is read
through the tool's :class:`~osw_studio.actions.coords.CoordinateSpace`.

Examples:
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="resized", image=(960, 540))
    >>> parse_openai_action({"type": "click", "x": 10, "y": 20}, space)
    [Click(kind='click', x=20, y=40, button='left', clicks=1)]
    >>> parse_openai_action({"type": "keypress", "keys": ["CTRL", "ArrowLeft"]}, None)
    [Hotkey(kind='hotkey', keys=['ctrl', 'left'])]
    >>> render_openai_actions([Click(x=20, y=40)], space)
    [{'type': 'click', 'button': 'left', 'x': 10, 'y': 20}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osw_studio.actions.coords import CoordinateSpace, model_point, screen_point
from osw_studio.actions.keys import is_valid_key, normalize_key
from osw_studio.core.actions import (
    Action,
    CallUser,
    Click,
    Done,
    DoubleClick,
    DragTo,
    Fail,
    Hotkey,
    KeyDown,
    KeyUp,
    MouseDown,
    MouseUp,
    MoveTo,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
    Wait,
)
from osw_studio.core.errors import ActionParseError

__all__ = [
    "OPENAI_KEYS",
    "openai_key",
    "parse_openai_action",
    "parse_openai_actions",
    "render_openai_actions",
]

OPENAI_KEYS: dict[str, str] = {
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "arrowup": "up",
    "cmd": "command",
    "meta": "win",
    "super": "win",
    "control": "ctrl",
    "escape": "esc",
    "return": "enter",
    "del": "delete",
}
"""OpenAI's key names (the browser's ``KeyboardEvent.key`` and xdotool's) that pyautogui spells otherwise."""

_BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle"}


def openai_key(name: str) -> str:
    """The pyautogui name of a key as OpenAI's tool names it.

    Raises:
        ActionParseError: If no key has that name.

    >>> [openai_key(k) for k in ["ENTER", "ArrowUp", "space", "S", "Page_Down"]]
    ['enter', 'up', 'space', 's', 'pagedown']
    """
    # The tool names keys, not characters: "S" is the S key (a capital would add shift), as OSWorld reads it.
    key = OPENAI_KEYS.get(name.strip().lower(), name) if len(name) > 1 else name.lower()
    key = normalize_key(key)
    if not is_valid_key(key):
        raise ActionParseError(f"the computer tool pressed an unknown key {name!r}")
    return key


def _number(action: Mapping[str, Any], name: str) -> float:
    value = action.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ActionParseError(f"the computer tool's {action.get('type')!r} action has no number {name!r}")
    return float(value)


def _point(action: Mapping[str, Any], space: CoordinateSpace | None) -> tuple[int, int]:
    try:
        return screen_point(space, _number(action, "x"), _number(action, "y"))
    except ValueError as exc:
        raise ActionParseError(f"the computer tool's {action.get('type')!r} action: {exc}") from None


def _path_point(point: Any, space: CoordinateSpace | None) -> tuple[int, int]:
    if isinstance(point, Mapping):
        return _point({"type": "drag", **point}, space)
    if isinstance(point, list | tuple) and len(point) == 2:
        return _point({"type": "drag", "x": point[0], "y": point[1]}, space)
    raise ActionParseError(f"the computer tool's drag path holds {point!r}, not a point")


def parse_openai_action(action: Mapping[str, Any], space: CoordinateSpace | None) -> list[Action]:
    """The core actions of one computer-tool action (a long drag is several).

    Raises:
        ActionParseError: If the action is unknown or its arguments are not usable.
    """
    if not isinstance(action, Mapping):
        raise ActionParseError(f"the computer tool sent {action!r}, not an action object")
    kind = action.get("type")
    if kind == "click":
        x, y = _point(action, space)
        button = action.get("button", "left")
        if button not in _BUTTONS:
            raise ActionParseError(
                f"the computer tool clicked the {button!r} button, which has no X button here"
            )
        if button == "right":
            return [RightClick(x=x, y=y)]
        return [Click(x=x, y=y, button=_BUTTONS[button])]
    if kind == "double_click":
        return [DoubleClick(x=_point(action, space)[0], y=_point(action, space)[1])]
    if kind == "triple_click":
        return [TripleClick(x=_point(action, space)[0], y=_point(action, space)[1])]
    if kind == "move":
        x, y = _point(action, space)
        return [MoveTo(x=x, y=y)]
    if kind == "drag":
        path = action.get("path")
        if not isinstance(path, list) or len(path) < 2:
            raise ActionParseError("the computer tool's drag has no path of two or more points")
        points = [_path_point(p, space) for p in path]
        if len(points) == 2:
            (sx, sy), (ex, ey) = points
            return [DragTo(start_x=sx, start_y=sy, x=ex, y=ey)]
        (sx, sy), *middle, (ex, ey) = points
        return [MouseDown(x=sx, y=sy), *(MoveTo(x=x, y=y) for x, y in middle), MouseUp(x=ex, y=ey)]
    if kind == "scroll":
        x, y = _point(action, space)
        dx = round(float(action.get("scroll_x") or 0))
        dy = round(float(action.get("scroll_y") or 0))
        return [Scroll(x=x, y=y, dx=dx, dy=-dy)]
    if kind == "type":
        text = action.get("text")
        if not isinstance(text, str):
            raise ActionParseError("the computer tool's type action has no text")
        return [Typing(text=text)] if text else [Wait(seconds=0.1)]
    if kind == "keypress":
        keys = action.get("keys")
        if isinstance(keys, str):
            keys = [keys]
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise ActionParseError("the computer tool's keypress has no keys")
        names = [openai_key(k) for k in keys]
        return [Press(key=names[0])] if len(names) == 1 else [Hotkey(keys=names)]
    if kind == "wait":
        ms = action.get("ms", 1000)
        seconds = float(ms) / 1000 if isinstance(ms, int | float) and not isinstance(ms, bool) else 1.0
        return [Wait(seconds=max(0.1, seconds))]
    if kind == "screenshot":
        return [Wait(seconds=0.1)]  # the screenshot after the batch is its answer; OSWorld pauses 0.1 s
    raise ActionParseError(f"the computer tool sent an unknown action {kind!r}")


def parse_openai_actions(actions: Sequence[Mapping[str, Any]], space: CoordinateSpace | None) -> list[Action]:
    """The core actions of a batch of computer-tool actions, in order.

    Raises:
        ActionParseError: Naming the batch position of the first action that cannot be read.
    """
    out: list[Action] = []
    for index, action in enumerate(actions):
        try:
            out.extend(parse_openai_action(action, space))
        except ActionParseError as exc:
            raise ActionParseError(f"action {index + 1} of {len(actions)}: {exc}") from None
    return out


def _model_xy(space: CoordinateSpace | None, x: int, y: int) -> dict[str, int]:
    mx, my = model_point(space, x, y)
    return {"x": round(mx), "y": round(my)}


def render_openai_actions(actions: Sequence[Action], space: CoordinateSpace | None) -> list[dict[str, Any]]:
    """What a person did, as computer-tool actions in the model's frame (for the conversation's history).

    Actions the tool has no word for (a key held down, the end of the task) are left out; a click without
    a point is a click where the pointer is, which the tool cannot say either.
    """
    out: list[dict[str, Any]] = []
    for action in actions:
        point = action.point
        if isinstance(action, Click | RightClick | DoubleClick | TripleClick) and point is not None:
            if (isinstance(action, Click) and action.clicks == 1) or isinstance(action, RightClick):
                button = "right" if isinstance(action, RightClick) else action.button
                out.append({"type": "click", "button": "wheel" if button == "middle" else button,
                            **_model_xy(space, *point)})  # fmt: skip
            else:
                double = isinstance(action, DoubleClick) or (isinstance(action, Click) and action.clicks == 2)
                out.append({"type": "double_click" if double else "triple_click", **_model_xy(space, *point)})
        elif isinstance(action, MoveTo):
            out.append({"type": "move", **_model_xy(space, action.x, action.y)})
        elif isinstance(action, DragTo) and action.start_x is not None and action.start_y is not None:
            start = _model_xy(space, action.start_x, action.start_y)
            out.append({"type": "drag", "path": [start, _model_xy(space, action.x, action.y)]})
        elif isinstance(action, Scroll):
            where = _model_xy(space, *point) if point is not None else {"x": 0, "y": 0}
            out.append({"type": "scroll", **where, "scroll_x": action.dx, "scroll_y": -action.dy})
        elif isinstance(action, Typing):
            out.append({"type": "type", "text": action.text})
        elif isinstance(action, Press):
            out.append({"type": "keypress", "keys": [action.key]})
        elif isinstance(action, Hotkey):
            out.append({"type": "keypress", "keys": list(action.keys)})
        elif isinstance(action, Wait):
            out.append({"type": "wait", "ms": round(action.seconds * 1000)})
        elif isinstance(action, Done | Fail | CallUser | KeyDown | KeyUp | MouseDown | MouseUp | Click):
            continue
    return out
