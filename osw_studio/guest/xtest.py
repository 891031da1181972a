"""Core actions executed in-process through the X Test extension (python-xlib).

One X connection serves every action; a lock keeps requests from different HTTP requests apart. Text is
typed exactly, any Unicode: a character that the keyboard map has (at level 1 or 2) is typed with its
key (and Shift); any other character gets a spare keycode (one with no keysyms) remapped to its keysym.
Spare keycodes are handed out least recently used first and a remapped keycode is kept, so a client that
reads the keyboard map late still sees the right keysym for the key events it is handling.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from Xlib import X
from Xlib import display as xdisplay
from Xlib.ext import xtest

from osw_studio.core import actions as A
from osw_studio.guest.keysyms import char_keysym, key_keysym

_BUTTONS = {"left": 1, "middle": 2, "right": 3}
_SHIFT_L = 0xFFE1
# Clients re-read the keyboard map when they see MappingNotify; give them a moment before the key event.
_REMAP_SETTLE_S = 0.03
# Apps that track drags (DnD, selections) need intermediate motion events, not a jump.
_DRAG_STEPS = 8
_DRAG_STEP_S = 0.004
# Pointer actions that take microseconds: the server runs them on its event loop, no thread hop.
_QUICK = (A.MoveTo, A.Click, A.RightClick, A.DoubleClick, A.TripleClick, A.MouseDown, A.MouseUp)
_QUICK_MOST = 8


class ActionFailed(Exception):
    """Action ``index`` of a batch could not be executed."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


class XTestInput:
    """Executes core actions on one X display.

    Args:
        display_name: The X display, e.g. ``":1"``.
    """

    def __init__(self, display_name: str) -> None:
        self._display: Any = xdisplay.Display(display_name)
        if not self._display.query_extension("XTEST").present:
            raise RuntimeError(f"the X display {display_name} has no XTEST extension")
        self._lock = threading.Lock()
        self._keymap: dict[int, tuple[int, int]] = {}
        self._spare: OrderedDict[int, int] = OrderedDict()  # keycode -> keysym mapped there (0: none)
        self._load_keymap()

    def close(self) -> None:
        """Close the X connection."""
        self._display.close()

    def pointer(self) -> tuple[int, int]:
        """The pointer position in screen pixels."""
        with self._lock:
            reply = self._display.screen().root.query_pointer()
            return int(reply.root_x), int(reply.root_y)

    def execute(self, actions: Sequence[A.Action]) -> int:
        """Execute ``actions`` in order and return how many ran.

        Raises:
            ActionFailed: With the index of the action that failed; the ones before it ran.
        """
        with self._lock:
            return self._execute(actions)

    def _execute(self, actions: Sequence[A.Action]) -> int:
        for index, action in enumerate(actions):
            try:
                self._run(action)
                self._display.sync()
            except ActionFailed:
                raise
            except Exception as exc:
                raise ActionFailed(index, f"{action.kind} failed: {exc}") from exc
            finally:
                self._drain_events()
        return len(actions)

    def execute_now(self, actions: Sequence[A.Action]) -> int | None:
        """Execute a few pointer actions (moves, clicks, button presses) at once, or return None.

        None, with nothing done, when the batch holds any other action or another batch is running:
        the caller then runs :meth:`execute` in a thread. A click costs a few X requests and one
        round trip, less than handing it to a thread.

        Raises:
            ActionFailed: As :meth:`execute`.
        """
        if len(actions) > _QUICK_MOST or not all(isinstance(a, _QUICK) for a in actions):
            return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self._execute(actions)
        finally:
            self._lock.release()

    def _drain_events(self) -> None:
        # Every client receives MappingNotify after a remap; nobody reads this connection's events, so
        # drop them instead of letting python-xlib queue them forever.
        while self._display.pending_events():
            self._display.next_event()

    # -- dispatch --------------------------------------------------------------------------------

    def _run(self, action: A.Action) -> None:
        match action:
            case A.MoveTo(x=x, y=y):
                self._move(x, y)
            case A.Click(x=x, y=y, button=button, clicks=clicks):
                self._click(x, y, _BUTTONS[button], clicks)
            case A.RightClick(x=x, y=y):
                self._click(x, y, 3, 1)
            case A.DoubleClick(x=x, y=y):
                self._click(x, y, 1, 2)
            case A.TripleClick(x=x, y=y):
                self._click(x, y, 1, 3)
            case A.MouseDown(x=x, y=y, button=button):
                self._move_if(x, y)
                self._button(_BUTTONS[button], True)
            case A.MouseUp(x=x, y=y, button=button):
                self._move_if(x, y)
                self._button(_BUTTONS[button], False)
            case A.DragTo():
                self._drag(action)
            case A.Scroll(dx=dx, dy=dy, x=x, y=y):
                self._move_if(x, y)
                self._scroll(dx, dy)
            case A.Typing(text=text):
                self._type(text)
            case A.Press(key=key):
                keysym = key_keysym(key)
                self._key(keysym, True)
                self._key(keysym, False)
            case A.KeyDown(key=key):
                self._key(key_keysym(key), True)
            case A.KeyUp(key=key):
                self._key(key_keysym(key), False)
            case A.Hotkey(keys=keys):
                keysyms = [key_keysym(k) for k in keys]
                for keysym in keysyms:
                    self._key(keysym, True)
                for keysym in reversed(keysyms):
                    self._key(keysym, False)
            case A.Wait(seconds=seconds):
                self._display.sync()
                time.sleep(seconds)
            case A.Done() | A.Fail() | A.CallUser():
                pass  # markers for the runner; nothing happens on the desktop

    # -- pointer ---------------------------------------------------------------------------------

    def _move(self, x: int, y: int) -> None:
        xtest.fake_input(self._display, X.MotionNotify, x=x, y=y)

    def _move_if(self, x: int | None, y: int | None) -> None:
        if x is not None and y is not None:
            self._move(x, y)

    def _button(self, button: int, down: bool) -> None:
        xtest.fake_input(self._display, X.ButtonPress if down else X.ButtonRelease, button)

    def _click(self, x: int | None, y: int | None, button: int, clicks: int) -> None:
        self._move_if(x, y)
        for _ in range(clicks):
            self._button(button, True)
            self._button(button, False)

    def _drag(self, action: A.DragTo) -> None:
        if action.start_x is not None and action.start_y is not None:
            self._move(action.start_x, action.start_y)
        start_x, start_y = self._where()
        button = _BUTTONS[action.button]
        self._button(button, True)
        self._display.sync()
        for step in range(1, _DRAG_STEPS + 1):
            x = start_x + (action.x - start_x) * step // _DRAG_STEPS
            y = start_y + (action.y - start_y) * step // _DRAG_STEPS
            self._move(x, y)
            self._display.sync()
            time.sleep(_DRAG_STEP_S)
        self._button(button, False)

    def _where(self) -> tuple[int, int]:
        reply = self._display.screen().root.query_pointer()
        return int(reply.root_x), int(reply.root_y)

    def _scroll(self, dx: int, dy: int) -> None:
        # X wheel buttons: 4 up, 5 down, 6 left, 7 right (pyautogui's signs: dy > 0 up, dx > 0 right).
        for button, count in ((4 if dy > 0 else 5, abs(dy)), (7 if dx > 0 else 6, abs(dx))):
            for _ in range(count):
                self._button(button, True)
                self._button(button, False)

    # -- keyboard --------------------------------------------------------------------------------

    def _load_keymap(self) -> None:
        info = self._display.display.info
        first, count = info.min_keycode, info.max_keycode - info.min_keycode + 1
        mapping = self._display.get_keyboard_mapping(first, count)
        self._keymap.clear()
        for offset, keysyms in enumerate(mapping):
            keycode = first + offset
            # keycode 8 is the lowest XKB keycode and some clients ignore it; never use it as spare.
            if not any(keysyms) and keycode > 8:
                self._spare.setdefault(keycode, 0)
                continue
            for level, keysym in enumerate(keysyms[:2]):
                if keysym and (keysym not in self._keymap or self._keymap[keysym][1] > level):
                    self._keymap[keysym] = (keycode, level)

    def _keycode(self, keysym: int) -> tuple[int, int]:
        """Keycode and level (0 plain, 1 shifted) that produce ``keysym``, remapping a spare if needed."""
        found = self._keymap.get(keysym)
        if found is not None:
            return found
        for keycode, mapped in self._spare.items():
            if mapped == keysym:
                self._spare.move_to_end(keycode)
                return keycode, 0
        if not self._spare:
            raise RuntimeError("no spare keycode to type this character")
        keycode = next(iter(self._spare))  # least recently used
        per_code = len(self._display.get_keyboard_mapping(keycode, 1)[0]) or 2
        self._display.change_keyboard_mapping(keycode, [(keysym,) * per_code])
        self._display.sync()
        self._spare[keycode] = keysym
        self._spare.move_to_end(keycode)
        time.sleep(_REMAP_SETTLE_S)
        return keycode, 0

    def _key(self, keysym: int, down: bool) -> None:
        keycode, _level = self._keycode(keysym)
        xtest.fake_input(self._display, X.KeyPress if down else X.KeyRelease, keycode)

    def _type(self, text: str) -> None:
        shift_code = self._keycode(_SHIFT_L)[0]
        for char in text:
            keycode, level = self._keycode(char_keysym(char))
            if level:
                xtest.fake_input(self._display, X.KeyPress, shift_code)
            xtest.fake_input(self._display, X.KeyPress, keycode)
            xtest.fake_input(self._display, X.KeyRelease, keycode)
            if level:
                xtest.fake_input(self._display, X.KeyRelease, shift_code)
