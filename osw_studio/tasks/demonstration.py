"""Reduce a person's raw input (a demonstration) to core actions, grouped by the screen they acted on.

The viewer records what a person does as :class:`InputEvent` objects: mouse moves, presses and releases
with guest pixels and times, wheel turns, key presses and releases with pyautogui key names, the text they
typed and the modifiers held. :func:`reduce_events` turns them into the actions a replay needs:

- printable keys (and Enter inside typed text) merge into one ``typing``; Backspace right after typed
  characters takes the last one back;
- a key with Ctrl, Alt or Win held is a ``hotkey`` (Shift joins it); other keys are a ``press``
  (``shift`` plus a key is a hotkey); a modifier pressed and released alone is a ``press`` of it;
- a press and a release at (almost) the same spot are a click; quick repeats at that spot make it a
  double or triple click; right and middle clicks keep their button; a modifier held during a click
  becomes ``key_down``/``key_up`` around it;
- a press, a move and a release farther than :data:`DRAG_THRESHOLD` are a ``drag_to`` with its start;
- wheel turns at one spot add up to one ``scroll`` (120 units of Qt's angle delta are one click).

Each action remembers the screen (``frame``) shown when its first event happened; consecutive actions on
the same screen form one step, which becomes one :class:`~osw_studio.core.task.SolutionStep`.

Examples:
    >>> events = [
    ...     InputEvent("down", 0.0, x=10, y=20, frame=1), InputEvent("up", 0.1, x=10, y=20, frame=1),
    ...     InputEvent("key_down", 0.5, key="h", text="h", frame=2),
    ...     InputEvent("key_down", 0.6, key="i", text="i", frame=2),
    ...     InputEvent("key_down", 0.9, key="s", text="s", modifiers=("ctrl",), frame=2),
    ... ]
    >>> [(step.frame, dump_actions(step.actions)) for step in reduce_events(events)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [(1, [{'kind': 'click', 'x': 10, 'y': 20}]),
     (2, [{'kind': 'typing', 'text': 'hi'}, {'kind': 'hotkey', 'keys': ['ctrl', 's']}])]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from osw_studio.core.actions import (
    Action,
    Click,
    DoubleClick,
    DragTo,
    Hotkey,
    KeyDown,
    KeyUp,
    MouseButton,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
    dump_actions,
)

__all__ = [
    "DOUBLE_CLICK_SECONDS",
    "DRAG_THRESHOLD",
    "MODIFIERS",
    "DemoStep",
    "InputEvent",
    "near",
    "reduce_events",
    "wheel_clicks",
]

DRAG_THRESHOLD = 4
"""Guest pixels the pointer must travel between press and release for a drag instead of a click
(the viewer's takeover uses the same distance)."""

DOUBLE_CLICK_SECONDS = 0.5
"""Most time between a release and the next press at the same spot for the clicks to count together."""

SCROLL_GAP_SECONDS = 0.6
"""Wheel turns further apart than this are separate scrolls."""

MODIFIERS: tuple[str, ...] = ("ctrl", "alt", "win", "shift")
"""Modifier key names, in the order a hotkey lists them (the viewer's order)."""

WHEEL_UNIT = 120
"""Qt's angle delta of one wheel notch (eighths of a degree)."""

EventKind = Literal["move", "down", "up", "wheel", "key_down", "key_up"]


@dataclass(frozen=True)
class InputEvent:
    """One raw input event in the viewer, in guest pixels.

    Attributes:
        kind: ``move``, ``down``, ``up`` (mouse), ``wheel``, ``key_down`` or ``key_up``.
        t: When it happened, in seconds (any monotonic origin).
        x: Pointer column in guest pixels (mouse and wheel events).
        y: Pointer row in guest pixels.
        button: The mouse button of ``down``/``up``.
        dx: Horizontal wheel angle delta (120 per notch, positive to the right).
        dy: Vertical wheel angle delta (120 per notch, positive away from the person: up).
        key: The pyautogui name of the key (``a``, ``enter``, ``ctrl``) for key events.
        text: What the key typed (``"A"`` with Shift), empty for keys that type nothing.
        modifiers: Modifier keys held during the event (names from :data:`MODIFIERS`).
        frame: Which screen was shown when it happened (any hashable id, e.g. a frame counter).
    """

    kind: EventKind
    t: float
    x: int | None = None
    y: int | None = None
    button: MouseButton = "left"
    dx: int = 0
    dy: int = 0
    key: str | None = None
    text: str = ""
    modifiers: tuple[str, ...] = ()
    frame: Hashable = None


@dataclass
class DemoStep:
    """Actions performed on one screen.

    Attributes:
        actions: The actions, in order.
        frame: The screen they acted on (the ``frame`` of the first event of the first action).
    """

    actions: list[Action] = field(default_factory=list)
    frame: Hashable = None

    def describe(self) -> str:
        """A one-line summary for lists.

        >>> DemoStep([Typing(text="hi"), Press(key="enter")]).describe()
        "typing 'hi'; press enter"
        """
        parts = []
        for data in dump_actions(self.actions):
            kind = data.pop("kind")
            values = ", ".join(
                repr(v) if isinstance(v, str) and k == "text" else str(v) for k, v in data.items()
            )
            parts.append(f"{kind} {values}".strip())
        return "; ".join(parts)


def _ordered(mods: Iterable[str]) -> list[str]:
    held = set(mods)
    return [m for m in MODIFIERS if m in held]


def near(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two guest pixels are the same spot for a click (closer than :data:`DRAG_THRESHOLD`).

    >>> near((10, 10), (13, 7)), near((10, 10), (14, 10))
    (True, False)
    """
    return max(abs(a[0] - b[0]), abs(a[1] - b[1])) < DRAG_THRESHOLD


def wheel_clicks(delta: int) -> int:
    """Wheel clicks for an angle delta; a fraction of a notch (touchpads) still scrolls one.

    >>> wheel_clicks(240), wheel_clicks(-30), wheel_clicks(0)
    (2, -1, 0)
    """
    if delta == 0:
        return 0
    n = round(delta / WHEEL_UNIT)
    return n if n else (1 if delta > 0 else -1)


@dataclass
class _Press:
    button: MouseButton
    start: tuple[int, int]
    t: float
    frame: Hashable
    modifiers: tuple[str, ...]
    end: tuple[int, int]


@dataclass
class _Clicks:
    """The last click, kept open while a quick repeat at the same spot can still join it."""

    point: tuple[int, int]
    count: int
    released: float
    frame: Hashable
    modifiers: tuple[str, ...]


class _Reducer:
    def __init__(self, double_click: float) -> None:
        self.double_click = double_click
        self.out: list[tuple[Action, Hashable]] = []
        self.typed: list[str] = []
        self.typed_frame: Hashable = None
        self.press: _Press | None = None
        self.clicks: _Clicks | None = None
        self.wheel: tuple[tuple[int, int], int, int, float, Hashable] | None = None
        self.lone_modifier: str | None = None

    # --- pending runs ---------------------------------------------------------------------------

    def flush_typing(self) -> None:
        if self.typed:
            self.out.append((Typing(text="".join(self.typed)), self.typed_frame))
            self.typed = []

    def flush_clicks(self) -> None:
        c, self.clicks = self.clicks, None
        if c is None:
            return
        x, y = c.point
        action: Action = (Click(x=x, y=y), DoubleClick(x=x, y=y), TripleClick(x=x, y=y))[c.count - 1]
        self.emit_with_modifiers(action, c.modifiers, c.frame)

    def flush_wheel(self) -> None:
        w, self.wheel = self.wheel, None
        if w is None:
            return
        (x, y), dx, dy, _, frame = w
        nx, ny = wheel_clicks(dx), wheel_clicks(dy)
        if nx or ny:
            self.out.append((Scroll(dx=nx, dy=ny, x=x, y=y), frame))

    def flush_all(self) -> None:
        self.flush_typing()
        self.flush_clicks()
        self.flush_wheel()

    def emit_with_modifiers(self, action: Action, modifiers: Sequence[str], frame: Hashable) -> None:
        mods = _ordered(modifiers)
        self.out.extend((KeyDown(key=m), frame) for m in mods)
        self.out.append((action, frame))
        self.out.extend((KeyUp(key=m), frame) for m in reversed(mods))

    # --- events ---------------------------------------------------------------------------------

    def feed(self, e: InputEvent) -> None:
        handler = getattr(self, f"on_{e.kind}")
        handler(e)

    def on_move(self, e: InputEvent) -> None:
        if self.press is not None and e.x is not None and e.y is not None:
            self.press.end = (e.x, e.y)

    def on_down(self, e: InputEvent) -> None:
        self.lone_modifier = None
        if e.x is None or e.y is None:
            return
        self.flush_typing()
        self.flush_wheel()
        point = (e.x, e.y)
        c = self.clicks
        joins = (
            c is not None
            and e.button == "left"
            and c.count < 3
            and near(c.point, point)
            and e.t - c.released <= self.double_click
        )
        if not joins:
            self.flush_clicks()
        self.press = _Press(e.button, point, e.t, e.frame, e.modifiers, point)

    def on_up(self, e: InputEvent) -> None:
        p, self.press = self.press, None
        if p is None or p.button != e.button:
            return
        end = (e.x, e.y) if e.x is not None and e.y is not None else p.end
        if not near(p.start, end):
            self.flush_clicks()
            drag = DragTo(x=end[0], y=end[1], start_x=p.start[0], start_y=p.start[1], button=p.button)
            self.emit_with_modifiers(drag, p.modifiers, p.frame)
        elif p.button == "left":
            if self.clicks is not None:  # on_down kept it open: this press repeats it
                self.clicks.count += 1
                self.clicks.released = e.t
            else:
                self.clicks = _Clicks(p.start, 1, e.t, p.frame, p.modifiers)
            if self.clicks.count == 3:
                self.flush_clicks()
        else:
            self.flush_clicks()
            x, y = p.start
            action: Action = RightClick(x=x, y=y) if p.button == "right" else Click(x=x, y=y, button=p.button)
            self.emit_with_modifiers(action, p.modifiers, p.frame)

    def on_wheel(self, e: InputEvent) -> None:
        self.lone_modifier = None
        if e.x is None or e.y is None:
            return
        self.flush_typing()
        self.flush_clicks()
        point = (e.x, e.y)
        w = self.wheel
        same_way = w is not None and (w[1] * e.dx >= 0 and w[2] * e.dy >= 0)
        if w is not None and same_way and near(w[0], point) and e.t - w[3] <= SCROLL_GAP_SECONDS:
            self.wheel = (w[0], w[1] + e.dx, w[2] + e.dy, e.t, w[4])
        else:
            self.flush_wheel()
            self.wheel = (point, e.dx, e.dy, e.t, e.frame)

    def on_key_down(self, e: InputEvent) -> None:
        key = e.key
        if not key:
            return
        if key in MODIFIERS:
            # a modifier alone (the Super key opening a menu) counts only if nothing joins it
            self.lone_modifier = key if self.lone_modifier is None else ""
            return
        self.lone_modifier = ""
        self.flush_clicks()
        self.flush_wheel()
        chord = [m for m in _ordered(e.modifiers) if m != "shift"]
        if chord:
            self.flush_typing()
            keys = _ordered(e.modifiers)
            self.out.append((Hotkey(keys=[*keys, key]), e.frame))
            return
        text = "\n" if key == "enter" and self.typed else e.text
        if text and (text.isprintable() or text == "\n"):
            if not self.typed:
                self.typed_frame = e.frame
            self.typed.append(text)
            return
        if key == "backspace" and self.typed:
            self.typed.pop()
            return
        self.flush_typing()
        action: Action = Hotkey(keys=["shift", key]) if "shift" in e.modifiers else Press(key=key)
        self.out.append((action, e.frame))

    def on_key_up(self, e: InputEvent) -> None:
        if e.key in MODIFIERS and self.lone_modifier == e.key:
            self.flush_all()
            self.out.append((Press(key=e.key), e.frame))
        if e.key in MODIFIERS:
            self.lone_modifier = None


def reduce_events(
    events: Iterable[InputEvent], *, double_click: float = DOUBLE_CLICK_SECONDS
) -> list[DemoStep]:
    """Turn raw input into actions, one step per screen acted on.

    Args:
        events: The events in the order they happened.
        double_click: Most seconds between a release and the next press for clicks to join
            (the desktop's double-click interval).

    Returns:
        The steps; consecutive actions whose first events saw the same ``frame`` share a step.

    Examples:
        >>> def click(t, x=5, y=5):
        ...     return [InputEvent("down", t, x=x, y=y), InputEvent("up", t + 0.05, x=x, y=y)]
        >>> [s.actions for s in reduce_events(click(0) + click(0.2))]
        [[DoubleClick(kind='double_click', x=5, y=5)]]
        >>> [len(s.actions) for s in reduce_events(click(0) + click(2))]  # too slow for a double-click
        [2]
        >>> drag = [InputEvent("down", 0, x=5, y=5), InputEvent("move", 0.1, x=50, y=9),
        ...         InputEvent("up", 0.2, x=60, y=9)]
        >>> reduce_events(drag)[0].actions
        [DragTo(kind='drag_to', x=60, y=9, start_x=5, start_y=5, button='left')]
        >>> wheel = [InputEvent("wheel", 0, x=3, y=4, dy=-120), InputEvent("wheel", 0.1, x=3, y=4, dy=-120)]
        >>> reduce_events(wheel)[0].actions
        [Scroll(kind='scroll', dx=0, dy=-2, x=3, y=4)]
    """
    reducer = _Reducer(double_click)
    for event in events:
        reducer.feed(event)
    reducer.flush_all()
    steps: list[DemoStep] = []
    for action, frame in reducer.out:
        if steps and steps[-1].frame == frame:
            steps[-1].actions.append(action)
        else:
            steps.append(DemoStep([action], frame))
    return steps
