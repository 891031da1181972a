r"""UI-TARS and DART-GUI replies: ``Thought: ...`` then ``Action: ...``, one or several calls.

Understood calls: ``click`` / ``left_single``, ``left_double``, ``right_single``, ``hover``,
``drag`` / ``select`` ``(start_box, end_box)``, ``hotkey(key='ctrl c')``, ``press``, ``keydown``,
``keyup``, ``type(content='...')`` (escapes ``\'``, ``\"``, ``\n``; a trailing ``\n`` is Enter),
``scroll(start_box, direction)``, ``wait()`` (5 s, as the UI-TARS prompt says), ``finished(content=...)``
and ``call_user()``. Points are written as boxes with or without ``<|box_start|>`` / ``<|box_end|>``,
as ``<point>x y</point>`` or ``<bbox>x1 y1 x2 y2</bbox>``; a box means its centre. Numbers are in the
:class:`~osw_studio.actions.coords.CoordinateSpace` given (``rel1000`` for UI-TARS 1.0, ``smart`` for
UI-TARS 1.5 and DART-GUI, ``norm``, ``resized``, ``abs``).

For actions UI-TARS has no word for, the generator writes these extensions, which the parser reads back:
``triple_click``, ``middle_single``, ``mouse_down`` / ``mouse_up`` (with ``button``), ``fail``;
``click(..., button=, clicks=)`` for other clicks; ``drag`` without ``start_box``; ``amount`` on
``scroll`` when it is not 5 wheel clicks; ``seconds`` on ``wait`` when it is not 5;
``content`` on ``call_user``. A scroll on both axes becomes two calls, and a left ``click`` with
2 or 3 clicks is written ``left_double`` / ``triple_click`` (equal under
:func:`osw_studio.actions.canonical.canonical_actions`).

Examples:
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="rel1000")
    >>> reply = parse_uitars("Thought: Open the menu.\nAction: click(start_box='<|box_start|>(500,500)<|box_end|>')", space)
    >>> reply.thought, reply.actions
    ('Open the menu.', [Click(kind='click', x=960, y=540, button='left', clicks=1)])
    >>> parse_uitars("Action: type(content='It\\'s done\\n')", space).actions
    [Typing(kind='typing', text="It's done\n")]
    >>> print(render_uitars([Hotkey(keys=["ctrl", "c"]), Done()], space, thought="Copy it."))
    Thought: Copy it.
    Action: hotkey(key='ctrl c')
    <BLANKLINE>
    finished()
"""  # noqa: E501

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from osw_studio.actions.coords import CoordinateSpace, model_point, screen_point
from osw_studio.actions.fences import check_length
from osw_studio.actions.keys import is_valid_key, normalize_key
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
from osw_studio.core.errors import ActionParseError

WAIT_SECONDS = 5.0
"""How long UI-TARS' ``wait()`` sleeps, per its prompt."""
SCROLL_CLICKS = 5
"""Wheel clicks of one UI-TARS ``scroll``, as OSWorld's UI-TARS agent sends them."""

_ACTION_MARK = re.compile(r"^[ \t]*Action[ \t]*:", re.MULTILINE)
_THOUGHT_MARK = re.compile(r"^\s*(?:Thought|Reflection|Action_Summary)\s*:\s*", re.IGNORECASE)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_NAME = re.compile(r"[A-Za-z_]\w*")
_STRING_END = re.compile(r"\s*(?:\)\s*(?:$|[\n;]|[A-Za-z_]\w*\s*\()|,\s*(?:[A-Za-z_]\w*\s*=|\)))")
_POINT_KEYS = ("start_box", "point", "start_point", "box", "coordinate")
_END_KEYS = ("end_box", "end_point")
_CALLS = {
    "click": ("start_box",),
    "left_single": ("start_box",),
    "left_double": ("start_box",),
    "double_click": ("start_box",),
    "right_single": ("start_box",),
    "right_click": ("start_box",),
    "middle_single": ("start_box",),
    "triple_click": ("start_box",),
    "hover": ("start_box",),
    "move_to": ("start_box",),
    "mouse_move": ("start_box",),
    "mouse_down": ("start_box", "button"),
    "mouse_up": ("start_box", "button"),
    "drag": ("start_box", "end_box"),
    "select": ("start_box", "end_box"),
    "hotkey": ("key",),
    "press": ("key",),
    "keydown": ("key",),
    "keyup": ("key",),
    "type": ("content",),
    "scroll": ("start_box", "direction"),
    "wait": ("seconds",),
    "finished": ("content",),
    "call_user": ("content",),
    "fail": ("content",),
}
"""Every call the parser understands, with the names of its positional arguments."""


class UITarsReply(BaseModel):
    """A parsed UI-TARS reply.

    Attributes:
        thought: The text after ``Thought:`` (or inside ``<think>``), if any.
        actions: The actions in screen pixels, in order.
    """

    model_config = ConfigDict(frozen=True)

    thought: str | None
    actions: list[Action]


def parse_uitars(text: str, space: CoordinateSpace) -> UITarsReply:
    """Turn a UI-TARS / DART-GUI reply into its thought and actions.

    Raises:
        ActionParseError: If there is no ``Action:`` part, a call is unknown or malformed, or a point is
            missing; ``where`` names the action and the reply line.

    Examples:
        >>> space = CoordinateSpace(screen=(1920, 1080), mode="smart")
        >>> parse_uitars("Action: drag(start_box='(100,200)', end_box='(300,200)')", space).actions
        [DragTo(kind='drag_to', x=298, y=198, start_x=99, start_y=198, button='left')]
        >>> parse_uitars("Action: scroll(start_box='[10, 10, 30, 30]', direction='down')", space).actions
        [Scroll(kind='scroll', dx=0, dy=-5, x=20, y=20)]
        >>> parse_uitars("Thought: hmm", space)
        Traceback (most recent call last):
        ...
        osw_studio.core.errors.ActionParseError: the reply has no 'Action:' part (end the reply with Action: followed by calls such as click(start_box='(x,y)'))
    """  # noqa: E501
    check_length(text)
    marks = list(_ACTION_MARK.finditer(text))
    if not marks:
        raise ActionParseError(
            "the reply has no 'Action:' part",
            hint="end the reply with Action: followed by calls such as click(start_box='(x,y)')",
        )
    head = text[: marks[0].start()]
    think = _THINK.search(head)
    thought_text = think.group(1) if think else _THOUGHT_MARK.sub("", _THINK.sub("", head), count=1)
    thought = thought_text.strip() or None
    actions: list[Action] = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        for call in _Scanner(text, mark.end(), end).calls():
            actions.append(_build(call, space))
    if not actions:
        raise ActionParseError(
            "the 'Action:' part holds no calls", where=f"line {_line(text, marks[0].start())}"
        )
    return UITarsReply(thought=thought, actions=actions)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


class _Call:
    def __init__(self, name: str, args: dict[str, str], where: str) -> None:
        self.name = name
        self.args = args
        self.where = where


class _Scanner:
    """Reads ``name(key='value', ...)`` calls; tolerant of unescaped quotes inside strings."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.pos = start
        self.end = end

    def fail(self, message: str) -> ActionParseError:
        return ActionParseError(message, where=f"line {_line(self.text, self.pos)}")

    def skip(self, chars: str = " \t\r\n;,") -> None:
        while self.pos < self.end and self.text[self.pos] in chars:
            self.pos += 1

    def calls(self) -> list[_Call]:
        found: list[_Call] = []
        while True:
            self.skip()
            if self.pos >= self.end:
                return found
            found.append(self.call(len(found) + 1))

    def call(self, number: int) -> _Call:
        match = _NAME.match(self.text, self.pos, self.end)
        if not match:
            raise self.fail(f"expected an action call, found {self.text[self.pos : self.pos + 20]!r}")
        name = match.group(0)
        where = f"action {number} (line {_line(self.text, self.pos)})"
        self.pos = match.end()
        self.skip(" \t")
        if self.pos >= self.end or self.text[self.pos] != "(":
            raise self.fail(f"expected '(' after {name}")
        self.pos += 1
        args: dict[str, str] = {}
        positional = 0
        while True:
            self.skip(" \t\r\n")
            if self.pos >= self.end:
                raise self.fail(f"{name}( is never closed; the reply looks truncated")
            if self.text[self.pos] == ")":
                self.pos += 1
                return _Call(name, args, where)
            key_match = re.compile(r"([A-Za-z_]\w*)\s*=").match(self.text, self.pos, self.end)
            if key_match:
                key = key_match.group(1)
                self.pos = key_match.end()
                self.skip(" \t")
            else:
                names = _CALLS.get(name, ())
                key = names[positional] if positional < len(names) else f"#{positional}"
                positional += 1
            if key in args:
                raise self.fail(f"{name} got {key!r} twice")
            args[key] = self.value()
            self.skip(" \t\r\n")
            if self.pos < self.end and self.text[self.pos] == ",":
                self.pos += 1
            elif self.pos >= self.end:
                raise self.fail(f"{name}( is never closed; the reply looks truncated")
            elif self.text[self.pos] != ")":
                raise self.fail(f"expected ',' or ')' in {name}(...)")

    def value(self) -> str:
        if self.pos >= self.end:
            raise self.fail("a value is missing; the reply looks truncated")
        quote = self.text[self.pos]
        if quote in "'\"":
            return self.string(quote)
        depth = 0
        start = self.pos
        while self.pos < self.end:
            char = self.text[self.pos]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char == "," and depth == 0:
                break
            self.pos += 1
        return self.text[start : self.pos].strip()

    def string(self, quote: str) -> str:
        self.pos += 1
        out: list[str] = []
        while self.pos < self.end:
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < self.end:
                nxt = self.text[self.pos + 1]
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                self.pos += 2
                continue
            if char == quote and (
                _STRING_END.match(self.text, self.pos + 1, self.end) or self.pos + 1 >= self.end
            ):
                self.pos += 1
                return "".join(out)
            out.append(char)
            self.pos += 1
        raise self.fail("a string is never closed; the reply looks truncated")


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\"}


def _build(call: _Call, space: CoordinateSpace) -> Action:
    if call.name not in _CALLS:
        raise ActionParseError(
            f"unknown action {call.name}",
            where=call.where,
            hint="use click, left_double, right_single, drag, hotkey, type, scroll, wait, finished",
        )
    allowed = set(_CALLS[call.name]) | set(_POINT_KEYS) | set(_END_KEYS) | {"amount", "button", "clicks"}
    for key in call.args:
        if key not in allowed and key != "hotkey" and key != "keys":
            raise ActionParseError(f"{call.name} has no argument {key!r}", where=call.where)
    try:
        return _make(call, space)
    except ValidationError as exc:
        raise ActionParseError(f"{call.name}: {exc.errors()[0]['msg']}", where=call.where) from None
    except ValueError as exc:
        raise ActionParseError(f"{call.name}: {exc}", where=call.where) from None


def _point(call: _Call, keys: tuple[str, ...], space: CoordinateSpace) -> tuple[int, int] | None:
    raw = next((call.args[k] for k in keys if k in call.args), None)
    if raw is None or not raw.strip():
        return None
    numbers = [float(n) for n in _NUMBER.findall(raw)]
    if len(numbers) == 4:
        numbers = [(numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2]
    if len(numbers) != 2:
        raise ValueError(f"a point needs 2 numbers (or a box 4), got {raw!r}")
    return screen_point(space, numbers[0], numbers[1])


def _needs_point(call: _Call, space: CoordinateSpace) -> tuple[int, int]:
    point = _point(call, _POINT_KEYS, space)
    if point is None:
        raise ValueError("needs start_box")
    return point


def _keys(call: _Call) -> list[str]:
    raw = call.args.get("key", call.args.get("hotkey", call.args.get("keys", "")))
    names = raw.split()
    if len(names) == 1 and len(names[0]) > 1 and "+" in names[0]:
        names = names[0].split("+")
    if not names:
        raise ValueError("needs key")
    for name in names:
        if not is_valid_key(name):
            raise ValueError(f"{name!r} is not a pyautogui key name")
    return [normalize_key(name) for name in names]


def _int(raw: str, name: str) -> int:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value != int(value) or abs(value) > 1_000_000:
        raise ValueError(f"{name} must be a whole number, got {raw!r}")
    return int(value)


def _button(call: _Call) -> Any:
    button = call.args.get("button", "left").lower()
    if button not in ("left", "right", "middle"):
        raise ValueError(f"button must be left, right or middle, got {button!r}")
    return button


def _make(call: _Call, space: CoordinateSpace) -> Action:
    name = call.name
    if name in ("click", "left_single"):
        x, y = _point(call, _POINT_KEYS, space) or (None, None)
        return Click(x=x, y=y, button=_button(call), clicks=_int(call.args.get("clicks", "1"), "clicks"))
    if name in (
        "left_double",
        "double_click",
        "right_single",
        "right_click",
        "middle_single",
        "triple_click",
    ):
        x, y = _point(call, _POINT_KEYS, space) or (None, None)
        if name in ("left_double", "double_click"):
            return DoubleClick(x=x, y=y)
        if name == "triple_click":
            return TripleClick(x=x, y=y)
        return Click(x=x, y=y, button="middle") if name == "middle_single" else RightClick(x=x, y=y)
    if name in ("hover", "move_to", "mouse_move"):
        x, y = _needs_point(call, space)
        return MoveTo(x=x, y=y)
    if name in ("mouse_down", "mouse_up"):
        x, y = _point(call, _POINT_KEYS, space) or (None, None)
        model = MouseDown if name == "mouse_down" else MouseUp
        return model(x=x, y=y, button=_button(call))
    if name in ("drag", "select"):
        end = _point(call, _END_KEYS, space)
        if end is None:
            raise ValueError("needs end_box")
        sx, sy = _point(call, _POINT_KEYS, space) or (None, None)
        return DragTo(x=end[0], y=end[1], start_x=sx, start_y=sy, button=_button(call))
    if name == "hotkey":
        return Hotkey(keys=_keys(call))
    if name in ("press", "keydown", "keyup"):
        keys = _keys(call)
        if len(keys) != 1:
            raise ValueError("takes one key; use hotkey for combinations")
        if name == "press":
            return Press(key=keys[0])
        return KeyDown(key=keys[0]) if name == "keydown" else KeyUp(key=keys[0])
    if name == "type":
        if "content" not in call.args:
            raise ValueError("needs content")
        return Typing(text=call.args["content"])
    if name == "scroll":
        direction = call.args.get("direction", "").strip().lower()
        if direction not in ("up", "down", "left", "right"):
            raise ValueError(f"direction must be up, down, left or right, got {direction!r}")
        amount = _int(call.args.get("amount", str(SCROLL_CLICKS)), "amount")
        x, y = _point(call, _POINT_KEYS, space) or (None, None)
        sign = 1 if direction in ("up", "right") else -1
        if direction in ("up", "down"):
            return Scroll(dy=sign * amount, x=x, y=y)
        return Scroll(dx=sign * amount, x=x, y=y)
    if name == "wait":
        seconds = call.args.get("seconds")
        return Wait(seconds=float(seconds) if seconds else WAIT_SECONDS)
    message = call.args.get("content") or None
    if name == "finished":
        return Done(message=message)
    return CallUser(message=message) if name == "call_user" else Fail(message=message)


def render_uitars(actions: Sequence[Action], space: CoordinateSpace, thought: str | None = None) -> str:
    r"""Write actions as a UI-TARS reply in ``space``'s coordinates, calls separated by blank lines.

    Examples:
        >>> space = CoordinateSpace(screen=(1920, 1080), mode="norm")
        >>> print(render_uitars([Click(x=960, y=270), Typing(text="a'b\n")], space))
        Action: click(start_box='<|box_start|>(0.5,0.25)<|box_end|>')
        <BLANKLINE>
        type(content='a\'b\n')
    """
    calls: list[str] = []
    for action in actions:
        calls.extend(_render(action, space))
    head = f"Thought: {thought}\n" if thought else ""
    return head + "Action: " + "\n\n".join(calls)


def escape(text: str) -> str:
    r"""Escape text for a single-quoted UI-TARS argument (backslash, quote, newline, tab, return).

    Examples:
        >>> print(escape("it's\na \\ b"))
        it\'s\na \\ b
    """
    return (
        text.replace("\\", "\\\\")
        .replace("'", "\\'")
        .replace("\n", "\\n")
        .replace("\t", "\\t")
        .replace("\r", "\\r")
    )


def _box(space: CoordinateSpace, x: int, y: int) -> str:
    mx, my = model_point(space, x, y)
    return f"<|box_start|>({_num(mx)},{_num(my)})<|box_end|>"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and not isinstance(value, float) else repr(value)


def _fmt(name: str, space: CoordinateSpace, x: int | None = None, y: int | None = None, **kw: Any) -> str:
    parts = [] if x is None or y is None else [f"start_box='{_box(space, x, y)}'"]
    for key, value in kw.items():
        if value is None:
            continue
        parts.append(f"{key}='{escape(value)}'" if isinstance(value, str) else f"{key}={value!r}")
    return f"{name}({', '.join(parts)})"


def _render(action: Action, space: CoordinateSpace) -> list[str]:
    match action:
        case Click(x=x, y=y, button="left", clicks=1):
            return [_fmt("click", space, x, y)]
        case Click(x=x, y=y, button="left", clicks=2) | DoubleClick(x=x, y=y):
            return [_fmt("left_double", space, x, y)]
        case Click(x=x, y=y, button="left", clicks=3) | TripleClick(x=x, y=y):
            return [_fmt("triple_click", space, x, y)]
        case Click(x=x, y=y, button="right", clicks=1) | RightClick(x=x, y=y):
            return [_fmt("right_single", space, x, y)]
        case Click(x=x, y=y, button="middle", clicks=1):
            return [_fmt("middle_single", space, x, y)]
        case Click(x=x, y=y, button=button, clicks=clicks):
            return [_fmt("click", space, x, y, button=button, clicks=clicks)]
        case MoveTo(x=x, y=y):
            return [_fmt("hover", space, x, y)]
        case MouseDown(x=x, y=y, button=button) | MouseUp(x=x, y=y, button=button):
            name = "mouse_down" if action.kind == "mouse_down" else "mouse_up"
            return [_fmt(name, space, x, y, button=None if button == "left" else button)]
        case DragTo(x=x, y=y, start_x=sx, start_y=sy, button=button):
            end = f"end_box='{_box(space, x, y)}'"
            start = [] if sx is None or sy is None else [f"start_box='{_box(space, sx, sy)}'"]
            extra = [] if button == "left" else [f"button='{button}'"]
            return [f"drag({', '.join([*start, end, *extra])})"]
        case Scroll(dx=dx, dy=dy, x=x, y=y):
            out = []
            for vertical, delta, directions in ((True, dy, ("up", "down")), (False, dx, ("right", "left"))):
                if delta or (vertical and not dx):
                    amount = None if abs(delta) == SCROLL_CLICKS else abs(delta)
                    direction = directions[0] if delta > 0 else directions[1]
                    out.append(_fmt("scroll", space, x, y, direction=direction, amount=amount))
            return out
        case Typing(text=text):
            return [_fmt("type", space, content=text)]
        case Press(key=key) | KeyDown(key=key) | KeyUp(key=key):
            name = {"press": "press", "key_down": "keydown", "key_up": "keyup"}[action.kind]
            return [_fmt(name, space, key=key)]
        case Hotkey(keys=keys):
            return [_fmt("hotkey", space, key=" ".join(keys))]
        case Wait(seconds=seconds):
            return [_fmt("wait", space, seconds=None if seconds == WAIT_SECONDS else seconds)]
        case Done(message=message):
            return [_fmt("finished", space, content=message)]
        case Fail(message=message):
            return [_fmt("fail", space, content=message)]
        case CallUser(message=message):
            return [_fmt("call_user", space, content=message)]
    raise ActionParseError(f"cannot write {action.kind} as UI-TARS")  # pragma: no cover
