r"""Action parsers (pyautogui code, computer_13 JSON, UI-TARS text), code generators and coordinate spaces.

Every parser is a pure function from a model's reply to :mod:`osw_studio.core.actions` models in screen
pixels, raising :class:`~osw_studio.core.errors.ActionParseError` (what, and where in the text) on
anything it cannot read safely; nothing here ever executes model text. :func:`parse_reply` picks the
parser by format name.

Examples:
    >>> reply = "Clicking OK.\n```python\npyautogui.click(10, 20)\n```"
    >>> thought, actions = parse_reply(reply, "pyautogui")
    >>> thought, actions
    ('Clicking OK.', [Click(kind='click', x=10, y=20, button='left', clicks=1)])
    >>> render("computer13", actions)
    '{"action_type": "CLICK", "parameters": {"button": "left", "x": 10, "y": 20, "num_clicks": 1}}'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from osw_studio.actions.canonical import canonical_action, canonical_actions
from osw_studio.actions.computer13 import parse_computer13, render_computer13
from osw_studio.actions.coords import COORD_MODES, CoordinateSpace, CoordMode, smart_resize
from osw_studio.actions.fences import find_blocks, prose_outside
from osw_studio.actions.keys import KEYBOARD_KEYS, is_valid_key, normalize_key
from osw_studio.actions.pyautogui import parse_pyautogui, render_pyautogui
from osw_studio.actions.uitars import UITarsReply, parse_uitars, render_uitars
from osw_studio.core.action_languages import PARSED
from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError

__all__ = [
    "COORD_MODES",
    "FORMATS",
    "KEYBOARD_KEYS",
    "ActionFormat",
    "CoordMode",
    "CoordinateSpace",
    "UITarsReply",
    "canonical_action",
    "canonical_actions",
    "is_valid_key",
    "normalize_key",
    "parse_computer13",
    "parse_pyautogui",
    "parse_reply",
    "parse_uitars",
    "render",
    "render_computer13",
    "render_pyautogui",
    "render_uitars",
    "smart_resize",
]

ActionFormat = Literal["pyautogui", "computer13", "uitars"]
"""Names of the action languages."""
FORMATS: tuple[str, ...] = PARSED


def parse_reply(text: str, fmt: str, space: CoordinateSpace | None = None) -> tuple[str | None, list[Action]]:
    """Parse a reply in the language ``fmt``; return its reasoning text (if any) and its actions.

    For ``pyautogui`` and ``computer13`` the reasoning is the prose outside fenced blocks; for
    ``uitars`` it is the ``Thought:``. ``space`` defaults to screen pixels, or for ``uitars`` to
    ``smart`` on a 1920x1080 screen (UI-TARS 1.5).

    Raises:
        ActionParseError: If the reply cannot be parsed, or ``fmt`` is unknown.
    """
    if fmt == "uitars":
        reply = parse_uitars(text, space or CoordinateSpace(mode="smart"))
        return reply.thought, reply.actions
    if fmt == "pyautogui":
        actions = parse_pyautogui(text, space)
    elif fmt == "computer13":
        actions = parse_computer13(text, space)
    else:
        raise ActionParseError(f"unknown action format {fmt!r}", hint=f"one of {', '.join(FORMATS)}")
    thought = prose_outside(text) if find_blocks(text) else None
    return thought or None, actions


def render(
    fmt: str, actions: Sequence[Action], space: CoordinateSpace | None = None, thought: str | None = None
) -> str:
    """Write ``actions`` in the language ``fmt`` (the inverse of :func:`parse_reply`).

    Raises:
        ActionParseError: If ``fmt`` is unknown or an action has no form in it.
    """
    if fmt == "uitars":
        return render_uitars(actions, space or CoordinateSpace(mode="smart"), thought=thought)
    if fmt == "pyautogui":
        return render_pyautogui(actions, space)
    if fmt == "computer13":
        return render_computer13(actions, space)
    raise ActionParseError(f"unknown action format {fmt!r}", hint=f"one of {', '.join(FORMATS)}")
