"""Plain-language descriptions of actions, for AgentNet's ``action`` field and the HTML report.

Examples:
    >>> from osw_studio.core.actions import Click, Hotkey, Typing
    >>> describe_action(Click(x=10, y=20))
    'Click at (10, 20)'
    >>> describe_actions([Typing(text="hi"), Hotkey(keys=["ctrl", "s"])])
    "Type 'hi'; Press ctrl+s"
"""

from __future__ import annotations

from collections.abc import Sequence

from osw_studio.core.actions import (
    Action,
    Click,
    Done,
    DragTo,
    Fail,
    Hotkey,
    KeyDown,
    KeyUp,
    MoveTo,
    Press,
    Scroll,
    Typing,
    Wait,
)

_VERBS = {
    "right_click": "Right-click",
    "double_click": "Double-click",
    "triple_click": "Triple-click",
    "mouse_down": "Press the mouse button",
    "mouse_up": "Release the mouse button",
}


def describe_action(action: Action) -> str:
    """One action in a few words."""
    point = action.point
    at = f" at ({point[0]}, {point[1]})" if point else ""
    if isinstance(action, MoveTo):
        return f"Move the pointer to ({action.x}, {action.y})"
    if isinstance(action, Click):
        verb = "Click" if action.button == "left" else f"Click the {action.button} button"
        return verb + (f" {action.clicks} times" if action.clicks > 1 else "") + at
    if action.kind in _VERBS:
        return _VERBS[action.kind] + at
    if isinstance(action, DragTo):
        start = f" from ({action.start_x}, {action.start_y})" if action.start_x is not None else ""
        return f"Drag{start} to ({action.x}, {action.y})"
    if isinstance(action, Scroll):
        parts = []
        if action.dy:
            parts.append(f"{'up' if action.dy > 0 else 'down'} {abs(action.dy)}")
        if action.dx:
            parts.append(f"{'right' if action.dx > 0 else 'left'} {abs(action.dx)}")
        return f"Scroll {' and '.join(parts) or 'by 0'}{at}"
    if isinstance(action, Typing):
        return f"Type {action.text!r}"
    if isinstance(action, Press):
        return f"Press {action.key}"
    if isinstance(action, KeyDown):
        return f"Hold {action.key}"
    if isinstance(action, KeyUp):
        return f"Release {action.key}"
    if isinstance(action, Hotkey):
        return f"Press {'+'.join(action.keys)}"
    if isinstance(action, Wait):
        return f"Wait {action.seconds:g} s"
    if isinstance(action, Done):
        return "Finish: the task is done"
    if isinstance(action, Fail):
        return "Give up: the task cannot be done"
    return "Ask the user for help"


def describe_actions(actions: Sequence[Action]) -> str:
    """Several actions, separated by ``; ``."""
    return "; ".join(describe_action(a) for a in actions)
