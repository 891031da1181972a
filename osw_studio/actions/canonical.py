r"""One canonical form for action lists that do the same thing, so that round trips can be compared.

Action languages say the same thing in different ways: ``CLICK`` with ``num_clicks`` 2 is a double
click, ``moveTo`` then ``dragTo`` is a drag with a start point, a pasted line then Enter is typing a
newline. :func:`canonical_actions` rewrites a list into one form without changing what it does on screen.

Examples:
    >>> canonical_actions([MoveTo(x=1, y=2), DragTo(x=5, y=6)])
    [DragTo(kind='drag_to', x=5, y=6, start_x=1, start_y=2, button='left')]
    >>> canonical_actions([Click(x=3, y=4, clicks=2), Typing(text="a"), Press(key="enter"), Typing(text="b")])
    [DoubleClick(kind='double_click', x=3, y=4), Typing(kind='typing', text='a\nb')]
    >>> canonical_actions([Scroll(dy=-5, x=1, y=1), Scroll(dx=2, x=1, y=1)])
    [Scroll(kind='scroll', dx=2, dy=-5, x=1, y=1)]
"""

from __future__ import annotations

from collections.abc import Sequence

from osw_studio.core.actions import (
    Action,
    Click,
    DoubleClick,
    DragTo,
    MouseDown,
    MouseUp,
    MoveTo,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
)


def canonical_action(action: Action) -> Action:
    """The specific kind for a generic click: left double, left triple and right single clicks.

    Examples:
        >>> canonical_action(Click(button="right"))
        RightClick(kind='right_click', x=None, y=None)
    """
    if isinstance(action, Click):
        if action.button == "left" and action.clicks == 2:
            return DoubleClick(x=action.x, y=action.y)
        if action.button == "left" and action.clicks == 3:
            return TripleClick(x=action.x, y=action.y)
        if action.button == "right" and action.clicks == 1:
            return RightClick(x=action.x, y=action.y)
    return action


_POINTED = (Click, RightClick, DoubleClick, TripleClick, MouseDown, MouseUp, Scroll)


def canonical_actions(actions: Sequence[Action]) -> list[Action]:
    """Rewrite ``actions`` into the canonical form (see the module docs); the screen effect is the same.

    Examples:
        >>> canonical_actions([Scroll(dy=1, x=0, y=0), MoveTo(x=0, y=0), Scroll(dx=3)])
        [Scroll(kind='scroll', dx=3, dy=1, x=0, y=0)]
    """
    out: list[Action] = []
    for action in actions:
        _push(out, canonical_action(action))
    return out


def _push(out: list[Action], action: Action) -> None:
    """Append ``action`` to ``out``, merging it with the action before when they say one thing."""
    last = out[-1] if out else None
    if isinstance(last, MoveTo):
        if isinstance(action, DragTo) and action.start_x is None:
            out.pop()
            _push(out, action.model_copy(update={"start_x": last.x, "start_y": last.y}))
            return
        if isinstance(action, _POINTED) and action.x is None:
            # The move becomes the action's own point, which may in turn merge with what came before.
            out.pop()
            _push(out, action.model_copy(update={"x": last.x, "y": last.y}))
            return
    if (
        isinstance(last, Scroll)
        and isinstance(action, Scroll)
        and (action.x is None or (last.x, last.y) == (action.x, action.y))
        and last.dx == 0
        and action.dy == 0
    ):
        out[-1] = last.model_copy(update={"dx": action.dx})
        return
    if isinstance(action, Typing) or (isinstance(action, Press) and action.key == "enter"):
        text = action.text if isinstance(action, Typing) else "\n"
        if isinstance(last, Typing) or (isinstance(action, Typing) and _is_enter(last)):
            before = last.text if isinstance(last, Typing) else "\n"
            out[-1] = Typing(text=before + text)
            return
    out.append(action)


def _is_enter(action: Action | None) -> bool:
    return isinstance(action, Press) and action.key == "enter"
