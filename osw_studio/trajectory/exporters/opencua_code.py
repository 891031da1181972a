"""OpenCUA's action syntax: actions as the pyautogui code its models write.

The ``agentnet`` export and the OpenCUA reply of the SFT exports both write it.

Examples:
    >>> from osw_studio.core.actions import Click, Done, Scroll, Typing, Wait
    >>> space = CoordinateSpace(screen=(200, 100), mode="norm")
    >>> print(agentnet_code([Click(x=50, y=25), Typing(text="hi")], space))
    pyautogui.click(x=0.25, y=0.25)
    pyautogui.write(message='hi')
    >>> print(agentnet_code([Scroll(dy=-3, x=100, y=50)], space))
    pyautogui.moveTo(x=0.5, y=0.5)
    pyautogui.scroll(clicks=-3)
    >>> agentnet_code([Wait()], space), agentnet_code([Done()], space)
    ('computer.wait()', "computer.terminate(status='success')")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from osw_studio.actions.coords import CoordinateSpace, model_point
from osw_studio.core.actions import (
    Action,
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


def _call(name: str, **kwargs: Any) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def _at(space: CoordinateSpace, x: int, y: int) -> dict[str, Any]:
    mx, my = model_point(space, x, y)
    return {"x": mx, "y": my}


def _lines(action: Action, space: CoordinateSpace) -> list[str]:
    match action:
        case MoveTo(x=x, y=y):
            return [_call("pyautogui.moveTo", **_at(space, x, y))]
        case Click(x=x, y=y, button=button, clicks=clicks):
            point = _at(space, x, y) if x is not None and y is not None else {}
            if button == "right" and clicks == 1:
                return [_call("pyautogui.rightClick", **point)]
            if button == "middle" and clicks == 1:
                return [_call("pyautogui.middleClick", **point)]
            extra: dict[str, Any] = {}
            if clicks != 1:
                extra["clicks"] = clicks
            if button != "left":
                extra["button"] = button
            return [_call("pyautogui.click", **point, **extra)]
        case RightClick(x=x, y=y) | DoubleClick(x=x, y=y) | TripleClick(x=x, y=y):
            calls = {
                "right_click": "rightClick",
                "double_click": "doubleClick",
                "triple_click": "tripleClick",
            }
            point = _at(space, x, y) if x is not None and y is not None else {}
            return [_call(f"pyautogui.{calls[action.kind]}", **point)]
        case MouseDown(x=x, y=y, button=button) | MouseUp(x=x, y=y, button=button):
            move = [_call("pyautogui.moveTo", **_at(space, x, y))] if x is not None and y is not None else []
            name = "pyautogui.mouseDown" if action.kind == "mouse_down" else "pyautogui.mouseUp"
            extra = {} if button == "left" else {"button": button}
            return [*move, _call(name, **extra)]
        case DragTo(x=x, y=y, start_x=sx, start_y=sy, button=button):
            move = [] if sx is None or sy is None else [_call("pyautogui.moveTo", **_at(space, sx, sy))]
            kwargs: dict[str, Any] = {**_at(space, x, y), "duration": 0.5}
            if button != "left":
                kwargs["button"] = button
            return [*move, _call("pyautogui.dragTo", **kwargs)]
        case Scroll(dx=dx, dy=dy, x=x, y=y):
            move = [_call("pyautogui.moveTo", **_at(space, x, y))] if x is not None and y is not None else []
            lines = [_call("pyautogui.scroll", clicks=dy)] if dy or not dx else []
            if dx:
                lines.append(_call("pyautogui.hscroll", clicks=dx))
            return [*move, *lines]
        case Typing(text=text):
            return [_call("pyautogui.write", message=text)]
        case Press(key=key):
            return [_call("pyautogui.press", keys=key)]
        case KeyDown(key=key):
            return [_call("pyautogui.keyDown", key=key)]
        case KeyUp(key=key):
            return [_call("pyautogui.keyUp", key=key)]
        case Hotkey(keys=keys):
            return [f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})"]  # *args: no keyword form
        case Wait():
            return ["computer.wait()"]
        case Done():
            return [_call("computer.terminate", status="success")]
        case Fail():
            return [_call("computer.terminate", status="failure")]
    return []  # call_user: OpenCUA has no such action; the person shows up as the next step


def agentnet_code(actions: Sequence[Action], space: CoordinateSpace) -> str:
    """Actions as OpenCUA code (see the module docs)."""
    return "\n".join(line for action in actions for line in _lines(action, space))
