"""Turn a person's mouse, wheel and keyboard input in the viewer into core actions.

:func:`input_event` turns a Qt event into the raw :class:`~osw_studio.tasks.demonstration.InputEvent`
that both a takeover and a demonstration feed to the one input reducer
(:func:`osw_studio.tasks.demonstration.reduce_events`), so a typed word is one ``typing`` action in
either. The single-event helpers below (a key, a release, a wheel turn) name the same rules one event
at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent, QWheelEvent

from osw_studio.core.actions import (
    Action,
    Click,
    DoubleClick,
    DragTo,
    Hotkey,
    MouseButton,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
)
from osw_studio.tasks.demonstration import InputEvent, near, wheel_clicks

_KEY_NAMES: dict[int, str] = {
    Qt.Key.Key_Return: "enter",
    Qt.Key.Key_Enter: "enter",
    Qt.Key.Key_Escape: "esc",
    Qt.Key.Key_Tab: "tab",
    Qt.Key.Key_Backtab: "tab",
    Qt.Key.Key_Backspace: "backspace",
    Qt.Key.Key_Delete: "delete",
    Qt.Key.Key_Insert: "insert",
    Qt.Key.Key_Home: "home",
    Qt.Key.Key_End: "end",
    Qt.Key.Key_PageUp: "pageup",
    Qt.Key.Key_PageDown: "pagedown",
    Qt.Key.Key_Left: "left",
    Qt.Key.Key_Right: "right",
    Qt.Key.Key_Up: "up",
    Qt.Key.Key_Down: "down",
    Qt.Key.Key_Space: "space",
    Qt.Key.Key_CapsLock: "capslock",
    Qt.Key.Key_Print: "printscreen",
    Qt.Key.Key_Menu: "apps",
    **{getattr(Qt.Key, f"Key_F{n}"): f"f{n}" for n in range(1, 25)},
}

_MODIFIER_KEYS = {
    Qt.Key.Key_Control,
    Qt.Key.Key_Shift,
    Qt.Key.Key_Alt,
    Qt.Key.Key_Meta,
    Qt.Key.Key_AltGr,
    Qt.Key.Key_Super_L,
    Qt.Key.Key_Super_R,
}

MODIFIER_NAMES: dict[int, str] = {
    Qt.Key.Key_Control: "ctrl",
    Qt.Key.Key_Shift: "shift",
    Qt.Key.Key_Alt: "alt",
    Qt.Key.Key_AltGr: "alt",
    Qt.Key.Key_Meta: "win",
    Qt.Key.Key_Super_L: "win",
    Qt.Key.Key_Super_R: "win",
}
"""Modifier keys by the name the reducer gives them."""

_MODIFIER_FLAGS = (
    (Qt.KeyboardModifier.ControlModifier, "ctrl"),
    (Qt.KeyboardModifier.AltModifier, "alt"),
    (Qt.KeyboardModifier.MetaModifier, "win"),
    (Qt.KeyboardModifier.ShiftModifier, "shift"),
)

ToScreen = Callable[[QPointF, bool], "tuple[int, int] | None"]
"""Maps a widget position to a guest pixel (clamped to the screen when the flag says so), or None."""


def modifier_names(modifiers: Qt.KeyboardModifier) -> tuple[str, ...]:
    """The names of the modifiers held (``ctrl``, ``alt``, ``win``, ``shift``)."""
    return tuple(name for flag, name in _MODIFIER_FLAGS if modifiers & flag)


def input_event(event: QEvent, to_screen: ToScreen) -> InputEvent | None:
    """The raw input event for a Qt mouse, wheel or key event in the viewer, or None if it is none.

    A release and a move are clamped to the screen (a drag may end in the letterbox); a press or a
    wheel turn off the guest's screen is not input. Auto-repeated key releases are dropped.
    """
    kind = event.type()
    stamp = event.timestamp() if isinstance(event, QMouseEvent | QWheelEvent | QKeyEvent) else 0
    t = stamp / 1000.0 if stamp else time.monotonic()  # synthetic events may carry no time
    mouse = (
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.MouseButtonRelease,
        QEvent.Type.MouseMove,
    )
    if isinstance(event, QMouseEvent) and kind in mouse:
        release = kind == QEvent.Type.MouseButtonRelease
        point = to_screen(event.position(), release or kind == QEvent.Type.MouseMove)
        if point is None:
            return None
        mods = modifier_names(event.modifiers())
        if kind == QEvent.Type.MouseMove:
            return InputEvent("move", t, x=point[0], y=point[1], modifiers=mods)
        button = button_name(event.button())
        if button is None:
            return None
        return InputEvent(
            "up" if release else "down", t, x=point[0], y=point[1], button=button, modifiers=mods
        )
    if isinstance(event, QWheelEvent):
        point = to_screen(event.position(), False)
        if point is None:
            return None
        delta = event.angleDelta()
        return InputEvent("wheel", t, x=point[0], y=point[1], dx=delta.x(), dy=delta.y())
    if isinstance(event, QKeyEvent) and kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        if kind == QEvent.Type.KeyRelease and event.isAutoRepeat():
            return None
        key = event.key()
        name = MODIFIER_NAMES.get(key) or key_name(key, event.text())
        if name is None:
            return None
        return InputEvent(
            "key_down" if kind == QEvent.Type.KeyPress else "key_up",
            t,
            key=name,
            text=event.text(),
            modifiers=modifier_names(event.modifiers()),
        )
    return None


_BUTTONS: dict[Qt.MouseButton, MouseButton] = {
    Qt.MouseButton.LeftButton: "left",
    Qt.MouseButton.RightButton: "right",
    Qt.MouseButton.MiddleButton: "middle",
}


def key_name(key: int, text: str) -> str | None:
    """The pyautogui name of a Qt key (``Key_Return`` -> ``enter``, ``Key_A`` -> ``a``), or None.

    ``text`` is what the key typed; it names plain character keys.
    """
    if key in _KEY_NAMES:
        return _KEY_NAMES[key]
    if Qt.Key.Key_A <= key <= Qt.Key.Key_Z:
        return chr(key).lower()
    if Qt.Key.Key_0 <= key <= Qt.Key.Key_9:
        return chr(key)
    if text and text.isprintable():
        return text.lower()
    return None


def key_action(key: int, text: str, modifiers: Qt.KeyboardModifier) -> Action | None:
    """The action for one key press, or None for a lone modifier or an unknown key."""
    if key in _MODIFIER_KEYS:
        return None
    mods = []
    if modifiers & Qt.KeyboardModifier.ControlModifier:
        mods.append("ctrl")
    if modifiers & Qt.KeyboardModifier.AltModifier:
        mods.append("alt")
    if modifiers & Qt.KeyboardModifier.MetaModifier:
        mods.append("win")
    name = key_name(key, text)
    if mods:
        if modifiers & Qt.KeyboardModifier.ShiftModifier:
            mods.append("shift")
        return Hotkey(keys=[*mods, name]) if name else None
    if text and text.isprintable() and key not in _KEY_NAMES:
        return Typing(text=text)
    if key == Qt.Key.Key_Space:
        return Typing(text=" ")
    if name is None:
        return None
    if modifiers & Qt.KeyboardModifier.ShiftModifier and name not in ("tab",):
        return Hotkey(keys=["shift", name])
    if key == Qt.Key.Key_Backtab:
        return Hotkey(keys=["shift", "tab"])
    return Press(key=name)


def button_name(button: Qt.MouseButton) -> MouseButton | None:
    """``left`` / ``right`` / ``middle`` for a Qt mouse button, None for others."""
    return _BUTTONS.get(button)


def release_action(button: MouseButton, press: tuple[int, int], release: tuple[int, int]) -> Action:
    """The action for a press at ``press`` and a release at ``release`` (guest pixels).

    >>> release_action("left", (10, 10), (11, 10))
    Click(kind='click', x=10, y=10, button='left', clicks=1)
    >>> release_action("left", (10, 10), (200, 50))
    DragTo(kind='drag_to', x=200, y=50, start_x=10, start_y=10, button='left')
    >>> release_action("right", (10, 10), (10, 10))
    RightClick(kind='right_click', x=10, y=10)
    """
    if not near(press, release):
        return DragTo(x=release[0], y=release[1], start_x=press[0], start_y=press[1], button=button)
    if button == "right":
        return RightClick(x=press[0], y=press[1])
    return Click(x=press[0], y=press[1], button=button)


def double_click_action(point: tuple[int, int]) -> DoubleClick:
    """The action for a left double-click at a guest pixel.

    >>> double_click_action((3, 4))
    DoubleClick(kind='double_click', x=3, y=4)
    """
    return DoubleClick(x=point[0], y=point[1])


def triple_click_action(point: tuple[int, int]) -> TripleClick:
    """The action for a left triple-click at a guest pixel (selects a line or paragraph).

    >>> triple_click_action((3, 4))
    TripleClick(kind='triple_click', x=3, y=4)
    """
    return TripleClick(x=point[0], y=point[1])


def wheel_action(angle_x: int, angle_y: int, point: tuple[int, int]) -> Action | None:
    """The scroll for a wheel event (Qt angle deltas in eighths of a degree; 120 is one notch).

    Touchpads send fractions of a notch; a fraction still scrolls one click in its direction.

    >>> wheel_action(0, -240, (5, 6))
    Scroll(kind='scroll', dx=0, dy=-2, x=5, y=6)
    >>> wheel_action(0, 0, (5, 6)) is None
    True
    """
    dx, dy = wheel_clicks(angle_x), wheel_clicks(angle_y)
    if not dx and not dy:
        return None
    return Scroll(dx=dx, dy=dy, x=point[0], y=point[1])
