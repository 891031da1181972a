"""The demonstration reducer: raw viewer input becomes the actions a replay performs."""

from __future__ import annotations

from osw_studio.core.actions import dump_actions
from osw_studio.tasks.demonstration import InputEvent, reduce_events


def actions(events: list[InputEvent], **kw: float) -> list[dict[str, object]]:
    return [a for step in reduce_events(events, **kw) for a in dump_actions(step.actions)]


def keys(text: str, t: float = 0.0, frame: int = 0) -> list[InputEvent]:
    out = []
    for i, ch in enumerate(text):
        out.append(InputEvent("key_down", t + i * 0.05, key=ch.lower(), text=ch, frame=frame))
        out.append(InputEvent("key_up", t + i * 0.05 + 0.02, key=ch.lower(), frame=frame))
    return out


def key(name: str, t: float, text: str = "", mods: tuple[str, ...] = (), frame: int = 0) -> list[InputEvent]:
    return [
        InputEvent("key_down", t, key=name, text=text, modifiers=mods, frame=frame),
        InputEvent("key_up", t + 0.02, key=name, modifiers=mods, frame=frame),
    ]


def click(t: float, x: int = 100, y: int = 50, button: str = "left", frame: int = 0) -> list[InputEvent]:
    return [
        InputEvent("down", t, x=x, y=y, button=button, frame=frame),  # type: ignore[arg-type]
        InputEvent("up", t + 0.05, x=x, y=y, button=button, frame=frame),  # type: ignore[arg-type]
    ]


def test_key_presses_merge_into_one_typing_with_enter_as_newline() -> None:
    events = keys("echo Hi > f") + key("enter", 1.0, "\r")
    assert actions(events) == [{"kind": "typing", "text": "echo Hi > f\n"}]


def test_enter_alone_is_a_press_and_special_keys_split_typing() -> None:
    events = (
        key("enter", 0, "\r") + keys("ab", 0.5) + key("left", 1.0) + keys("c", 1.5) + key("esc", 2, "\x1b")
    )
    assert actions(events) == [
        {"kind": "press", "key": "enter"},
        {"kind": "typing", "text": "ab"},
        {"kind": "press", "key": "left"},
        {"kind": "typing", "text": "c"},
        {"kind": "press", "key": "esc"},
    ]


def test_backspace_takes_back_typed_characters_then_presses() -> None:
    events = keys("helo", 0) + key("backspace", 1, "\b") + keys("lo", 2)
    assert actions(events) == [{"kind": "typing", "text": "hello"}]
    assert actions(key("backspace", 0, "\b")) == [{"kind": "press", "key": "backspace"}]


def test_unicode_text_is_typed_exactly() -> None:
    assert actions(keys("héllo ✓")) == [{"kind": "typing", "text": "héllo ✓"}]


def test_modifier_combos_are_hotkeys_in_a_fixed_order() -> None:
    ctrl_s = [
        InputEvent("key_down", 0, key="ctrl", modifiers=("ctrl",)),
        *key("s", 0.1, "\x13", ("ctrl",)),
        InputEvent("key_up", 0.2, key="ctrl"),
    ]
    assert actions(ctrl_s) == [{"kind": "hotkey", "keys": ["ctrl", "s"]}]
    assert actions(key("t", 0, "T", ("shift", "ctrl"))) == [
        {"kind": "hotkey", "keys": ["ctrl", "shift", "t"]}
    ]
    assert actions(key("f4", 0, "", ("alt",))) == [{"kind": "hotkey", "keys": ["alt", "f4"]}]


def test_shift_with_a_letter_types_it_but_with_a_special_key_is_a_hotkey() -> None:
    shift = [InputEvent("key_down", 0, key="shift", modifiers=("shift",))]
    assert actions([*shift, *key("a", 0.1, "A", ("shift",))]) == [{"kind": "typing", "text": "A"}]
    assert actions([*shift, *key("tab", 0.1, "", ("shift",))]) == [
        {"kind": "hotkey", "keys": ["shift", "tab"]}
    ]


def test_a_lone_modifier_is_pressed() -> None:
    events = [InputEvent("key_down", 0, key="win"), InputEvent("key_up", 0.1, key="win")]
    assert actions(events) == [{"kind": "press", "key": "win"}]


def test_typing_before_a_hotkey_keeps_its_order() -> None:
    events = keys("milk", 0) + key("s", 1, "", ("ctrl",))
    assert actions(events) == [{"kind": "typing", "text": "milk"}, {"kind": "hotkey", "keys": ["ctrl", "s"]}]


def test_press_and_release_at_one_spot_is_a_click_by_button() -> None:
    assert actions(click(0)) == [{"kind": "click", "x": 100, "y": 50}]
    assert actions(click(0, button="right")) == [{"kind": "right_click", "x": 100, "y": 50}]
    assert actions(click(0, button="middle")) == [{"kind": "click", "x": 100, "y": 50, "button": "middle"}]


def test_a_small_wobble_is_still_a_click() -> None:
    events = [
        InputEvent("down", 0, x=10, y=10),
        InputEvent("move", 0.02, x=12, y=11),
        InputEvent("up", 0.05, x=12, y=11),
    ]
    assert actions(events) == [{"kind": "click", "x": 10, "y": 10}]


def test_quick_repeats_become_double_and_triple_clicks() -> None:
    assert actions(click(0) + click(0.2)) == [{"kind": "double_click", "x": 100, "y": 50}]
    assert actions(click(0) + click(0.2) + click(0.4)) == [{"kind": "triple_click", "x": 100, "y": 50}]
    four = actions(click(0) + click(0.2) + click(0.4) + click(0.6))
    assert four == [{"kind": "triple_click", "x": 100, "y": 50}, {"kind": "click", "x": 100, "y": 50}]


def test_slow_or_distant_repeats_stay_single_clicks() -> None:
    slow = actions(click(0) + click(1.0))
    assert slow == [{"kind": "click", "x": 100, "y": 50}] * 2
    apart = actions(click(0) + click(0.2, x=300))
    assert apart == [{"kind": "click", "x": 100, "y": 50}, {"kind": "click", "x": 300, "y": 50}]
    # the desktop's own interval decides
    assert actions(click(0) + click(1.0), double_click=1.5) == [{"kind": "double_click", "x": 100, "y": 50}]


def test_press_move_release_is_a_drag_with_its_start() -> None:
    events = [
        InputEvent("down", 0, x=10, y=20),
        InputEvent("move", 0.1, x=40, y=25),
        InputEvent("move", 0.2, x=90, y=30),
        InputEvent("up", 0.3, x=90, y=30),
    ]
    assert actions(events) == [{"kind": "drag_to", "x": 90, "y": 30, "start_x": 10, "start_y": 20}]


def test_a_release_without_position_ends_the_drag_where_the_pointer_last_moved() -> None:
    events = [InputEvent("down", 0, x=10, y=20), InputEvent("move", 0.1, x=80, y=20), InputEvent("up", 0.3)]
    assert actions(events) == [{"kind": "drag_to", "x": 80, "y": 20, "start_x": 10, "start_y": 20}]


def test_modifiers_held_during_a_click_wrap_it() -> None:
    events = [
        InputEvent("down", 0, x=5, y=6, modifiers=("ctrl",)),
        InputEvent("up", 0.05, x=5, y=6, modifiers=("ctrl",)),
    ]
    assert actions(events) == [
        {"kind": "key_down", "key": "ctrl"},
        {"kind": "click", "x": 5, "y": 6},
        {"kind": "key_up", "key": "ctrl"},
    ]


def test_wheel_turns_add_up_to_one_scroll_per_spot_and_direction() -> None:
    events = [InputEvent("wheel", t / 10, x=50, y=60, dy=-120) for t in range(3)]
    assert actions(events) == [{"kind": "scroll", "dy": -3, "x": 50, "y": 60}]
    touchpad = [InputEvent("wheel", 0, x=1, y=1, dx=30)]
    assert actions(touchpad) == [{"kind": "scroll", "dx": 1, "x": 1, "y": 1}]
    back_and_forth = [InputEvent("wheel", 0, x=1, y=1, dy=-120), InputEvent("wheel", 0.1, x=1, y=1, dy=240)]
    assert actions(back_and_forth) == [
        {"kind": "scroll", "dy": -1, "x": 1, "y": 1},
        {"kind": "scroll", "dy": 2, "x": 1, "y": 1},
    ]
    later = [InputEvent("wheel", 0, x=1, y=1, dy=120), InputEvent("wheel", 5, x=1, y=1, dy=120)]
    assert len(actions(later)) == 2


def test_hover_and_stray_events_do_nothing() -> None:
    events = [
        InputEvent("move", 0, x=1, y=1),
        InputEvent("up", 0.1, x=1, y=1),  # a release whose press was outside the viewer
        InputEvent("key_up", 0.2, key="a"),
        InputEvent("wheel", 0.3, x=1, y=1),  # no delta
    ]
    assert actions(events) == []


def test_actions_are_grouped_by_the_screen_their_first_event_saw() -> None:
    events = (
        click(0, frame=1)
        + keys("ab", 1.0, frame=2)
        + keys("cd", 1.2, frame=3)  # the screen changed while typing: still one typing
        + key("s", 2.0, "", ("ctrl",), frame=3)
        + click(3.0, x=400, frame=4)
    )
    steps = reduce_events(events)
    assert [(s.frame, dump_actions(s.actions)) for s in steps] == [
        (1, [{"kind": "click", "x": 100, "y": 50}]),
        (2, [{"kind": "typing", "text": "abcd"}]),
        (3, [{"kind": "hotkey", "keys": ["ctrl", "s"]}]),
        (4, [{"kind": "click", "x": 400, "y": 50}]),
    ]
    assert steps[1].describe() == "typing 'abcd'"


def test_a_click_waiting_for_its_double_is_kept_in_order_before_typing() -> None:
    events = click(0) + keys("x", 0.1)
    assert actions(events) == [{"kind": "click", "x": 100, "y": 50}, {"kind": "typing", "text": "x"}]


def test_no_events_no_steps() -> None:
    assert reduce_events([]) == []
