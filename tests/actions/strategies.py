"""Hypothesis strategies for actions and what each action language keeps of them."""

from __future__ import annotations

from hypothesis import strategies as st

from osw_studio.actions import CoordinateSpace
from osw_studio.actions.keys import CANONICAL_KEYS
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

SCREEN = (1920, 1080)
SPACES = {
    "abs": CoordinateSpace(screen=SCREEN, mode="abs"),
    "resized": CoordinateSpace(screen=SCREEN, mode="resized", image=(1280, 720)),
    "smart": CoordinateSpace(screen=SCREEN, mode="smart"),
    "smart-small": CoordinateSpace(screen=SCREEN, mode="smart", max_pixels=1280 * 28 * 28),
    "rel1000": CoordinateSpace(screen=SCREEN, mode="rel1000"),
    "norm": CoordinateSpace(screen=SCREEN, mode="norm"),
}

xs = st.integers(0, SCREEN[0] - 1)
ys = st.integers(0, SCREEN[1] - 1)
opt_points = st.one_of(st.just((None, None)), st.tuples(xs, ys))
buttons = st.sampled_from(["left", "right", "middle"])
keys = st.sampled_from(CANONICAL_KEYS)
texts = st.text(max_size=40)
messages = st.one_of(st.none(), st.text(min_size=1, max_size=30))


def _pointed(model: type, **extra: st.SearchStrategy[object]) -> st.SearchStrategy[Action]:
    return st.builds(lambda p, **kw: model(x=p[0], y=p[1], **kw), opt_points, **extra)


actions: st.SearchStrategy[Action] = st.one_of(
    st.builds(MoveTo, x=xs, y=ys),
    _pointed(Click, button=buttons, clicks=st.integers(1, 3)),
    _pointed(RightClick),
    _pointed(DoubleClick),
    _pointed(TripleClick),
    _pointed(MouseDown, button=buttons),
    _pointed(MouseUp, button=buttons),
    st.builds(
        lambda end, start, button: DragTo(
            x=end[0], y=end[1], start_x=start[0], start_y=start[1], button=button
        ),
        st.tuples(xs, ys),
        opt_points,
        buttons,
    ),
    _pointed(Scroll, dx=st.integers(-30, 30), dy=st.integers(-30, 30)),
    st.builds(Typing, text=texts),
    st.builds(Press, key=keys),
    st.builds(KeyDown, key=keys),
    st.builds(KeyUp, key=keys),
    st.builds(Hotkey, keys=st.lists(keys, min_size=1, max_size=4)),
    st.builds(Wait, seconds=st.floats(0, 3600, allow_nan=False, allow_infinity=False)),
    st.builds(Done, message=messages),
    st.builds(Fail, message=messages),
    st.builds(CallUser, message=messages),
)
"""Any action with screen-pixel coordinates on a 1920x1080 screen."""

ACTION_KINDS_COVERED = (
    MoveTo, Click, RightClick, DoubleClick, TripleClick, MouseDown, MouseUp, DragTo, Scroll, Typing,
    Press, KeyDown, KeyUp, Hotkey, Wait, Done, Fail, CallUser,
)  # fmt: skip


def kept_by(language: str, action: Action) -> Action | None:
    """What ``language`` can say of ``action``: ``None`` if it has no form there at all."""
    if language == "pyautogui":
        if isinstance(action, CallUser):
            return None
        if isinstance(action, Done | Fail):
            return type(action)()
    return action
