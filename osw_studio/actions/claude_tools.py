"""The actions of Claude's ``computer`` tool (``computer_20251124``), mapped to core actions and back.

Each ``tool_use`` carries one action in its ``input``: ``left_click``, ``right_click``, ``middle_click``,
``double_click``, ``triple_click`` (``text`` names modifier keys held during the click), ``left_press``,
``left_mouse_down``/``left_mouse_up``, ``mouse_move``, ``left_click_drag`` (from ``start_coordinate``
when given), ``scroll`` (``scroll_direction``, ``scroll_amount``, ``text`` a modifier), ``type``,
``key`` with xdotool's key names joined by ``+``, ``hold_key``, ``wait``, ``screenshot`` and ``zoom``
(a ``region`` of the screen seen at full resolution). Points are in the tool's frame (the display size
it was declared with, 1280x720), read through a :class:`~osw_studio.actions.coords.CoordinateSpace`.

Examples:
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="resized", image=(1280, 720), rounding="trunc")
    >>> parse_claude_action({"action": "left_click", "coordinate": [100, 50]}, space)
    [Click(kind='click', x=150, y=75, button='left', clicks=1)]
    >>> parse_claude_action({"action": "key", "text": "ctrl+Page_Down"}, space)
    [Hotkey(kind='hotkey', keys=['ctrl', 'pagedown'])]
    >>> render_claude_actions([Click(x=150, y=75)], space)
    [{'action': 'left_click', 'coordinate': [100, 50]}]
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

__all__ = ["CLAUDE_KEYS", "claude_key", "parse_claude_action", "render_claude_actions", "zoom_region"]

CLAUDE_KEYS: dict[str, str] = {
    "page_down": "pagedown",
    "page_up": "pageup",
    "super_l": "win",
    "super": "command",
    "escape": "esc",
}
"""xdotool key names Claude uses that pyautogui spells otherwise (as OSWorld's agent converts them)."""


def claude_key(name: str) -> str:
    """The pyautogui name of one key as Claude's tool names it.

    Raises:
        ActionParseError: If no key has that name.

    >>> [claude_key(k) for k in ["Return", "ctrl", "Page_Up", "a"]]
    ['enter', 'ctrl', 'pageup', 'a']
    """
    lowered = name.strip().lower()
    key = normalize_key(CLAUDE_KEYS.get(lowered, lowered))
    if not is_valid_key(key):
        raise ActionParseError(f"the computer tool pressed an unknown key {name!r}")
    return key


def _keys(text: Any, action: str) -> list[str]:
    if not isinstance(text, str) or not text.strip():
        raise ActionParseError(f"the computer tool's {action!r} action has no keys in 'text'")
    return [claude_key(k) for k in text.split("+")]


def _point(value: Any, name: str, action: str, space: CoordinateSpace | None) -> tuple[int, int]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise ActionParseError(f"the computer tool's {action!r} action has no point {name!r} [x, y]")
    try:
        return screen_point(space, float(value[0]), float(value[1]))
    except ValueError as exc:
        raise ActionParseError(f"the computer tool's {action!r} action: {exc}") from None


def zoom_region(tool_input: Mapping[str, Any], space: CoordinateSpace | None) -> tuple[int, int, int, int]:
    """The screen rectangle ``(left, top, right, bottom)`` a ``zoom`` action asks to see.

    Raises:
        ActionParseError: If ``region`` is not four numbers enclosing an area.
    """
    region = tool_input.get("region")
    if not isinstance(region, list | tuple) or len(region) != 4:
        raise ActionParseError("the computer tool's 'zoom' action has no region [x0, y0, x1, y1]")
    x0, y0 = _point(list(region[:2]), "region", "zoom", space)
    x1, y1 = _point(list(region[2:]), "region", "zoom", space)
    if space is not None and space.image is not None:  # edges, not pixels: the far edge is the screen's
        (sw, sh), (iw, ih) = space.screen, space.image
        x0, x1 = (min(sw, int(float(v) * sw / iw)) for v in (region[0], region[2]))
        y0, y1 = (min(sh, int(float(v) * sh / ih)) for v in (region[1], region[3]))
    left, right = sorted((x0, x1))
    top, bottom = sorted((y0, y1))
    if right - left < 1 or bottom - top < 1:
        raise ActionParseError("the computer tool's 'zoom' region encloses no area")
    return left, top, right, bottom


def _held(text: Any, inner: list[Action], action: str) -> list[Action]:
    if not text:
        return inner
    keys = _keys(text, action)
    return [*(KeyDown(key=k) for k in keys), *inner, *(KeyUp(key=k) for k in reversed(keys))]


_CLICKS = ("left_click", "click", "right_click", "middle_click", "double_click", "triple_click")


def _click(action: str, x: int | None, y: int | None) -> Action:
    if action == "right_click":
        return RightClick(x=x, y=y)
    if action == "double_click":
        return DoubleClick(x=x, y=y)
    if action == "triple_click":
        return TripleClick(x=x, y=y)
    return Click(x=x, y=y, button="middle" if action == "middle_click" else "left")


def parse_claude_action(tool_input: Mapping[str, Any], space: CoordinateSpace | None) -> list[Action]:
    """The core actions of one ``computer`` tool use (a key combination held around a click is several).

    Raises:
        ActionParseError: If the action is unknown or its arguments are not usable.
    """
    if not isinstance(tool_input, Mapping):
        raise ActionParseError(f"the computer tool sent {tool_input!r}, not an input object")
    action = tool_input.get("action")
    action = {"left click": "left_click", "right click": "right_click"}.get(str(action), action)
    text = tool_input.get("text")
    coordinate = tool_input.get("coordinate")

    def point(name: str = "coordinate") -> tuple[int, int]:
        return _point(tool_input.get(name), name, str(action), space)

    if action in _CLICKS or action == "left_press":
        x, y = point() if coordinate is not None else (None, None)
        if action == "left_press":
            inner: list[Action] = [MouseDown(x=x, y=y), Wait(seconds=1.0), MouseUp(x=x, y=y)]
        else:
            inner = [_click(str(action), x, y)]
        return _held(text, inner, str(action))
    if action == "left_mouse_down":
        return [MouseDown()]
    if action == "left_mouse_up":
        return [MouseUp()]
    if action == "hold_key":
        return [KeyDown(key=k) for k in _keys(text, action)]
    if action == "mouse_move":
        x, y = point()
        return [MoveTo(x=x, y=y)]
    if action == "left_click_drag":
        x, y = point()
        if tool_input.get("start_coordinate"):
            sx, sy = point("start_coordinate")
            return [DragTo(start_x=sx, start_y=sy, x=x, y=y)]
        return [DragTo(x=x, y=y)]
    if action == "key":
        keys = _keys(text, action)
        return [Press(key=keys[0])] if len(keys) == 1 else [Hotkey(keys=keys)]
    if action == "type":
        if not isinstance(text, str):
            raise ActionParseError("the computer tool's 'type' action has no text")
        return [Typing(text=text)] if text else [Wait(seconds=0.1)]
    if action == "scroll":
        direction = tool_input.get("scroll_direction")
        amount = tool_input.get("scroll_amount")
        if direction not in ("up", "down", "left", "right"):
            raise ActionParseError(f"the computer tool scrolled in no direction ({direction!r})")
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            raise ActionParseError("the computer tool's 'scroll' action has no scroll_amount")
        x, y = point() if coordinate is not None else (None, None)
        steps = round(amount)
        dx = {"right": steps, "left": -steps}.get(str(direction), 0)
        dy = {"up": steps, "down": -steps}.get(str(direction), 0)
        return _held(text, [Scroll(x=x, y=y, dx=dx, dy=dy)], action)
    if action == "wait":
        return [Wait(seconds=0.5)]
    if action == "screenshot":
        return [Wait(seconds=0.1)]  # the screenshot after the batch is its answer
    if action == "zoom":
        zoom_region(tool_input, space)  # checked now; the crop is taken of the screen after the batch
        return [Wait(seconds=0.1)]
    if action == "done":
        return [Done()]
    if action == "fail":
        return [Fail()]
    if action == "call_user":
        return [CallUser()]
    raise ActionParseError(f"the computer tool sent an unknown action {action!r}")


def _xy(space: CoordinateSpace | None, x: int, y: int) -> list[int]:
    mx, my = model_point(space, x, y)
    return [round(mx), round(my)]


def render_claude_actions(actions: Sequence[Action], space: CoordinateSpace | None) -> list[dict[str, Any]]:
    """What a person did, as ``computer`` tool inputs in the tool's frame (for the conversation's history).

    Actions the tool has no word for (the end of the task) are left out.
    """
    out: list[dict[str, Any]] = []
    names = {RightClick: "right_click", DoubleClick: "double_click", TripleClick: "triple_click"}
    for action in actions:
        point = action.point
        where = {} if point is None else {"coordinate": _xy(space, *point)}
        if isinstance(action, Click):
            name = {2: "double_click", 3: "triple_click"}.get(action.clicks)
            name = name or ("middle_click" if action.button == "middle" else f"{action.button}_click")
            out.append({"action": name, **where})
        elif isinstance(action, RightClick | DoubleClick | TripleClick):
            out.append({"action": names[type(action)], **where})
        elif isinstance(action, MoveTo):
            out.append({"action": "mouse_move", **where})
        elif isinstance(action, DragTo):
            drag: dict[str, Any] = {"action": "left_click_drag", "coordinate": _xy(space, action.x, action.y)}
            if action.start_x is not None and action.start_y is not None:
                drag["start_coordinate"] = _xy(space, action.start_x, action.start_y)
            out.append(drag)
        elif isinstance(action, MouseDown | MouseUp):
            out.append({"action": "left_mouse_down" if isinstance(action, MouseDown) else "left_mouse_up"})
        elif isinstance(action, Scroll):
            direction = (
                "up" if action.dy > 0 else "down" if action.dy < 0 else "right" if action.dx > 0 else "left"
            )
            amount = abs(action.dy or action.dx)
            out.append({"action": "scroll", **where, "scroll_direction": direction, "scroll_amount": amount})
        elif isinstance(action, Typing):
            out.append({"action": "type", "text": action.text})
        elif isinstance(action, Press):
            out.append({"action": "key", "text": action.key})
        elif isinstance(action, Hotkey):
            out.append({"action": "key", "text": "+".join(action.keys)})
        elif isinstance(action, KeyDown):
            out.append({"action": "hold_key", "text": action.key})
        elif isinstance(action, Wait):
            out.append({"action": "wait"})
        elif isinstance(action, Done | Fail | CallUser | KeyUp):
            continue
    return out
