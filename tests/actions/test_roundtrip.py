"""Round trips: parse(render(actions)) gives the same actions, in every language and coordinate mode."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osw_studio.actions import (
    CoordinateSpace,
    canonical_actions,
    parse_computer13,
    parse_pyautogui,
    parse_uitars,
    render_computer13,
    render_pyautogui,
    render_uitars,
)
from osw_studio.core.actions import ACTION_KINDS, Action, CallUser, DragTo, Scroll, Typing
from osw_studio.core.errors import ActionParseError
from tests.actions.strategies import ACTION_KINDS_COVERED, SPACES, actions, kept_by

LANGUAGES = ("pyautogui", "computer13", "uitars")
POINT_FIELDS = ("x", "y", "start_x", "start_y")


def round_trip(language: str, items: list[Action], space: CoordinateSpace) -> list[Action]:
    if language == "pyautogui":
        return parse_pyautogui(render_pyautogui(items, space), space)
    if language == "computer13":
        return parse_computer13(render_computer13(items, space), space)
    return parse_uitars(render_uitars(items, space, thought="t"), space).actions


def assert_close(got: list[Action], want: list[Action], tolerance: int) -> None:
    """Equal, except that each coordinate may move by ``tolerance`` pixels."""
    assert [a.kind for a in got] == [a.kind for a in want], (got, want)
    for g, w in zip(got, want, strict=True):
        gd: dict[str, Any] = g.model_dump()
        wd: dict[str, Any] = w.model_dump()
        for name in POINT_FIELDS:
            if name in gd and gd[name] is not None and wd[name] is not None:
                assert abs(gd.pop(name) - wd.pop(name)) <= tolerance, (g, w)
        assert gd == wd, (g, w)


def test_strategies_cover_every_action_kind() -> None:
    assert sorted(model.model_fields["kind"].default for model in ACTION_KINDS_COVERED) == sorted(
        ACTION_KINDS
    )


@pytest.mark.parametrize("mode", sorted(SPACES))
@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=60, deadline=None)
@given(items=st.lists(actions, min_size=1, max_size=6))
def test_round_trip_keeps_what_the_language_can_say(language: str, mode: str, items: list[Action]) -> None:
    space = SPACES[mode]
    sayable = [kept for kept in (kept_by(language, a) for a in items) if kept is not None]
    if not sayable:
        return
    got = round_trip(language, sayable, space)
    assert_close(canonical_actions(got), canonical_actions(sayable), space.round_trip_error)


def _exact(language: str, action: Action) -> bool:
    """Whether ``language`` writes ``action`` as exactly one call of its own kind."""
    if isinstance(action, DragTo) and action.start_x is not None and language != "uitars":
        return False
    if isinstance(action, Scroll) and action.dx and action.dy:
        return False
    if language == "pyautogui" and isinstance(action, Typing) and "\n" in action.text:
        return action.text.isascii() and all(" " <= c <= "~" or c in "\n\t" for c in action.text)
    if language == "computer13":
        if action.kind == "triple_click":
            return False
        if action.kind in ("mouse_down", "mouse_up", "scroll") and action.point is not None:
            return False
    if language == "uitars" and action.kind == "click":
        return (action.button, getattr(action, "clicks", 1)) not in {
            ("left", 2),
            ("left", 3),
            ("right", 1),
        }
    return True


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=300, deadline=None)
@given(action=actions)
def test_round_trip_is_exact_for_single_actions_in_screen_pixels(language: str, action: Action) -> None:
    kept = kept_by(language, action)
    if kept is None or not _exact(language, kept):
        return
    space = SPACES["abs"]
    assert round_trip(language, [kept], space) == [kept]


def test_pyautogui_refuses_to_write_call_user() -> None:
    with pytest.raises(ActionParseError, match="call_user has no pyautogui form"):
        render_pyautogui([CallUser()])


def test_generated_pyautogui_code_uses_literal_arguments_only() -> None:
    import ast

    code = render_pyautogui(
        [DragTo(x=5, y=6, start_x=1, start_y=2), Typing(text="naïve\ncafé"), Scroll(dx=2, dy=-3, x=4, y=4)]
    )
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            for value in [*node.args, *(k.value for k in node.keywords)]:
                ast.literal_eval(value)  # raises ValueError on anything but a literal


@pytest.mark.parametrize("language", ["pyautogui", "computer13"])
def test_repeated_pointed_scrolls_round_trip(language: str) -> None:
    # A scroll at a point is written as a move then a scroll; two in a row must still compare equal.
    items: list[Action] = [Scroll(dx=0, dy=0, x=0, y=0), Scroll(dx=0, dy=0, x=0, y=0)]
    space = SPACES["norm"]
    got = round_trip(language, items, space)
    assert canonical_actions(got) == canonical_actions(items) == [Scroll(dx=0, dy=0, x=0, y=0)]
