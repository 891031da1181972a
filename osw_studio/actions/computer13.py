r"""OSWorld's ``computer_13`` action language: JSON objects ``{"action_type": ..., "parameters": {...}}``.

The flat form ``{"action_type": "CLICK", "x": 300, "y": 400}`` (parameters beside the type, as OSWorld's
controller also accepts and its prompt's examples show) reads the same; an object mixing both forms, or an
unknown ``action_type``, is refused with the JSON path of the mistake.

The parser reads fenced blocks (``json`` or any tag), several of them, or raw JSON anywhere in the reply;
each holds one action object, a list of them, or the strings ``WAIT`` / ``DONE`` / ``FAIL``. Action types
and parameters are validated against :data:`ACTION_PARAMETERS` and key names against pyautogui's list.

Beyond OSWorld's set the parser accepts, and the generator writes only when needed, ``x``/``y`` on
``MOUSE_DOWN``, ``MOUSE_UP`` and ``SCROLL``, ``button`` on ``DRAG_TO``, ``seconds`` on ``WAIT``,
``message`` on ``DONE`` / ``FAIL`` and the type ``CALL_USER``. The generator writes a point-less action
after a ``MOVE_TO`` for a mouse-down/up, scroll or drag start, since OSWorld's controller ignores such points;
``triple_click`` is ``CLICK`` with ``num_clicks`` 3. Those differences vanish under
:func:`osw_studio.actions.canonical.canonical_actions`.

Examples:
    >>> parse_computer13('```json\n{"action_type": "CLICK", "parameters": {"x": 5, "y": 6}}\n```')
    [Click(kind='click', x=5, y=6, button='left', clicks=1)]
    >>> parse_computer13('{"action_type": "CLICK", "x": 300, "y": 400}')
    [Click(kind='click', x=300, y=400, button='left', clicks=1)]
    >>> parse_computer13('[{"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "c"]}}, "DONE"]')
    [Hotkey(kind='hotkey', keys=['ctrl', 'c']), Done(kind='done', message=None)]
    >>> parse_computer13('{"action_type": "PRESS", "parameters": {"key": "hyper"}}')
    Traceback (most recent call last):
    ...
    osw_studio.core.errors.ActionParseError: $.parameters.key: 'hyper' is not a pyautogui key name
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from osw_studio.actions.coords import CoordinateSpace, model_point, screen_point
from osw_studio.actions.fences import check_length, find_blocks, terminal_word
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

ACTION_PARAMETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "MOVE_TO": (frozenset({"x", "y"}), frozenset()),
    "CLICK": (frozenset(), frozenset({"button", "x", "y", "num_clicks"})),
    "MOUSE_DOWN": (frozenset(), frozenset({"button", "x", "y"})),
    "MOUSE_UP": (frozenset(), frozenset({"button", "x", "y"})),
    "RIGHT_CLICK": (frozenset(), frozenset({"x", "y"})),
    "DOUBLE_CLICK": (frozenset(), frozenset({"x", "y"})),
    "DRAG_TO": (frozenset({"x", "y"}), frozenset({"button"})),
    "SCROLL": (frozenset(), frozenset({"dx", "dy", "x", "y"})),
    "TYPING": (frozenset({"text"}), frozenset()),
    "PRESS": (frozenset({"key"}), frozenset()),
    "KEY_DOWN": (frozenset({"key"}), frozenset()),
    "KEY_UP": (frozenset({"key"}), frozenset()),
    "HOTKEY": (frozenset({"keys"}), frozenset()),
    "WAIT": (frozenset(), frozenset({"seconds"})),
    "DONE": (frozenset(), frozenset({"message"})),
    "FAIL": (frozenset(), frozenset({"message"})),
    "CALL_USER": (frozenset(), frozenset({"message"})),
}
"""Each action type with its required and optional parameter names."""

_BUTTONS = ("left", "right", "middle")


def parse_computer13(text: str, space: CoordinateSpace | None = None) -> list[Action]:
    """Turn a ``computer_13`` reply into actions.

    Args:
        text: The reply: fenced JSON blocks amid prose, raw JSON, or ``WAIT`` / ``DONE`` / ``FAIL``.
        space: The frame of ``x`` / ``y``; ``None`` means screen pixels.

    Raises:
        ActionParseError: If no JSON is found, it does not parse, or an action is invalid; ``where`` is
            the block and the JSON path.

    Examples:
        >>> parse_computer13('I will scroll: {"action_type": "SCROLL", "parameters": {"dx": 0, "dy": -3}}')
        [Scroll(kind='scroll', dx=0, dy=-3, x=None, y=None)]
        >>> parse_computer13("FAIL")
        [Fail(kind='fail', message=None)]
    """
    check_length(text)
    word = terminal_word(text)
    if word is not None:
        return [_from_dict({"action_type": word}, "$", space)]
    blocks = find_blocks(text)
    actions: list[Action] = []
    if blocks:
        for number, block in enumerate(blocks, 1):
            where = f"block {number} (line {block.line}): " if len(blocks) > 1 else ""
            actions += _from_json_text(block.text, where, space)
    else:
        actions = _from_json_text(text, "", space)
    if not actions:
        raise ActionParseError("the reply holds no actions", hint="reply with a computer_13 JSON action")
    return actions


def _from_json_text(text: str, where: str, space: CoordinateSpace | None) -> list[Action]:
    word = terminal_word(text)
    if word is not None:
        return [_from_dict({"action_type": word}, f"{where}$", space)]
    stripped = text.strip()
    start = min((i for i in (stripped.find("{"), stripped.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ActionParseError("no JSON action found", where=where.rstrip(": ") or None, hint=_HINT)
    try:
        data, _ = json.JSONDecoder().raw_decode(stripped, start)
    except json.JSONDecodeError as exc:
        raise ActionParseError(
            f"JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}",
            where=where.rstrip(": ") or None,
            hint=_HINT,
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ActionParseError(f"JSON does not parse: {exc}", where=where.rstrip(": ") or None) from None
    items = data if isinstance(data, list) else [data]
    prefix = "$" if not isinstance(data, list) else None
    return [_from_dict(item, f"{where}{prefix or f'$[{index}]'}", space) for index, item in enumerate(items)]


_HINT = 'reply with {"action_type": "CLICK", "parameters": {"x": ..., "y": ...}} in a ```json block'


def _from_dict(item: Any, path: str, space: CoordinateSpace | None) -> Action:
    if isinstance(item, str) and item.upper() in ("WAIT", "DONE", "FAIL"):
        item = {"action_type": item.upper()}
    if not isinstance(item, dict):
        raise ActionParseError(f"expected an action object, got {_kind(item)}", where=path)
    flat = set(item) - {"action_type", "parameters"}
    if flat and "parameters" in item:
        raise ActionParseError(
            f'parameter {sorted(flat)[0]!r} stands beside "parameters"',
            where=path,
            hint='put every parameter inside "parameters", or write them all beside action_type',
        )
    action_type = item.get("action_type")
    if not isinstance(action_type, str) or action_type.upper() not in ACTION_PARAMETERS:
        raise ActionParseError(
            f"unknown action_type {action_type!r}",
            where=f"{path}.action_type",
            hint=f"one of {', '.join(ACTION_PARAMETERS)}",
        )
    action_type = action_type.upper()
    # The flat form {"action_type": "CLICK", "x": 1, "y": 2}, as OSWorld's controller reads it (and
    # as its prompt's examples write it): the keys beside action_type are the parameters.
    params = {k: item[k] for k in flat} if flat else item.get("parameters", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ActionParseError(
            f"parameters must be an object, got {_kind(params)}", where=f"{path}.parameters"
        )
    required, optional = ACTION_PARAMETERS[action_type]
    for name in sorted(required - params.keys()):
        raise ActionParseError(f"{action_type} needs parameter {name!r}", where=f"{path}.parameters")
    for name in sorted(params.keys() - required - optional):
        raise ActionParseError(f"{action_type} has no parameter {name!r}", where=f"{path}.parameters.{name}")
    reader = _Params(params, f"{path}.parameters", space)
    try:
        return reader.build(action_type)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ActionParseError(error["msg"], where=f"{path}.parameters.{field}") from None


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else repr(value)


class _Params:
    def __init__(self, params: dict[str, Any], path: str, space: CoordinateSpace | None) -> None:
        self.params = params
        self.path = path
        self.space = space

    def fail(self, name: str, message: str) -> ActionParseError:
        return ActionParseError(message, where=f"{self.path}.{name}")

    def number(self, name: str) -> float:
        value = self.params[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(name, f"{name} must be a number, got {value!r}")
        return value

    def integer(self, name: str, default: int = 0) -> int:
        if name not in self.params:
            return default
        value = self.number(name)
        if value != int(value) or abs(value) > 1_000_000:
            raise self.fail(name, f"{name} must be a whole number, got {value!r}")
        return int(value)

    def point(self, required: bool = False) -> tuple[int, int] | tuple[None, None]:
        has_x, has_y = "x" in self.params, "y" in self.params
        if not has_x and not has_y and not required:
            return (None, None)
        if not (has_x and has_y):
            raise self.fail("y" if has_x else "x", "x and y go together")
        try:
            return screen_point(self.space, self.number("x"), self.number("y"))
        except ValueError as exc:
            raise self.fail("x", str(exc)) from None

    def text(self, name: str, optional: bool = False) -> str | None:
        value = self.params.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(name, f"{name} must be a string, got {value!r}")
        return value

    def key(self, name: str, value: Any = None) -> str:
        value = self.params[name] if value is None else value
        if not isinstance(value, str) or not is_valid_key(value):
            raise self.fail(name, f"{value!r} is not a pyautogui key name")
        return normalize_key(value)

    def button(self) -> Any:
        value = self.params.get("button", "left")
        if value not in _BUTTONS:
            raise self.fail("button", f"button must be left, right or middle, got {value!r}")
        return value

    def build(self, action_type: str) -> Action:
        if action_type == "MOVE_TO":
            x, y = self.point(required=True)
            return MoveTo(x=x, y=y)
        if action_type == "CLICK":
            x, y = self.point()
            return Click(x=x, y=y, button=self.button(), clicks=self.integer("num_clicks", 1))
        if action_type in ("MOUSE_DOWN", "MOUSE_UP"):
            model = MouseDown if action_type == "MOUSE_DOWN" else MouseUp
            x, y = self.point()
            return model(x=x, y=y, button=self.button())
        if action_type in ("RIGHT_CLICK", "DOUBLE_CLICK"):
            x, y = self.point()
            return RightClick(x=x, y=y) if action_type == "RIGHT_CLICK" else DoubleClick(x=x, y=y)
        if action_type == "DRAG_TO":
            x, y = self.point(required=True)
            return DragTo(x=x, y=y, button=self.button())
        if action_type == "SCROLL":
            if "dx" not in self.params and "dy" not in self.params:
                raise self.fail("dy", "SCROLL needs dx or dy")
            x, y = self.point()
            return Scroll(dx=self.integer("dx"), dy=self.integer("dy"), x=x, y=y)
        if action_type == "TYPING":
            return Typing(text=self.text("text") or "")
        if action_type in ("PRESS", "KEY_DOWN", "KEY_UP"):
            key = self.key("key")
            if action_type == "PRESS":
                return Press(key=key)
            return KeyDown(key=key) if action_type == "KEY_DOWN" else KeyUp(key=key)
        if action_type == "HOTKEY":
            keys = self.params["keys"]
            if isinstance(keys, str):
                keys = keys.replace("+", " ").split() if len(keys) > 1 else [keys]
            if not isinstance(keys, list) or not keys:
                raise self.fail("keys", "keys must be a non-empty list of key names")
            return Hotkey(keys=[self.key(f"keys[{i}]", k) for i, k in enumerate(keys)])
        if action_type == "WAIT":
            return Wait(seconds=self.number("seconds")) if "seconds" in self.params else Wait()
        message = self.text("message", optional=True)
        if action_type == "DONE":
            return Done(message=message)
        return Fail(message=message) if action_type == "FAIL" else CallUser(message=message)


def render_computer13(
    actions: Sequence[Action], space: CoordinateSpace | None = None, *, fenced: bool = False
) -> str:
    """Write actions as ``computer_13`` JSON: one object, or a list when there are several.

    Args:
        actions: The actions, in screen pixels.
        space: The frame to write ``x`` / ``y`` in; ``None`` writes screen pixels.
        fenced: Wrap the JSON in a ```json block, as OSWorld's prompt asks models to.

    Examples:
        >>> print(render_computer13([TripleClick(x=1, y=2)]))
        {"action_type": "CLICK", "parameters": {"x": 1, "y": 2, "num_clicks": 3}}
        >>> print(render_computer13([Typing(text="é"), Done()]))
        [{"action_type": "TYPING", "parameters": {"text": "é"}}, {"action_type": "DONE"}]
    """
    items: list[dict[str, Any]] = []
    for action in actions:
        items.extend(to_dicts(action, space))
    data: Any = items[0] if len(items) == 1 else items
    body = json.dumps(data, ensure_ascii=False)
    return f"```json\n{body}\n```" if fenced else body


def _item(action_type: str, **params: Any) -> dict[str, Any]:
    kept = {k: v for k, v in params.items() if v is not None}
    return {"action_type": action_type, "parameters": kept} if kept else {"action_type": action_type}


def to_dicts(action: Action, space: CoordinateSpace | None = None) -> list[dict[str, Any]]:
    """One action as ``computer_13`` objects (two when a point must come first as a ``MOVE_TO``).

    Examples:
        >>> to_dicts(MouseDown(x=3, y=4, button="right"))
        [{'action_type': 'MOVE_TO', 'parameters': {'x': 3, 'y': 4}}, {'action_type': 'MOUSE_DOWN', 'parameters': {'button': 'right'}}]
    """  # noqa: E501

    def xy(x: int | None, y: int | None) -> dict[str, Any]:
        if x is None or y is None:
            return {}
        mx, my = model_point(space, x, y)
        return {"x": mx, "y": my}

    def moved(x: int | None, y: int | None, item: dict[str, Any]) -> list[dict[str, Any]]:
        point = xy(x, y)
        return [_item("MOVE_TO", **point), item] if point else [item]

    match action:
        case MoveTo(x=x, y=y):
            return [_item("MOVE_TO", **xy(x, y))]
        case Click(x=x, y=y, button=button, clicks=clicks):
            return [_item("CLICK", button=button, **xy(x, y), num_clicks=clicks)]
        case TripleClick(x=x, y=y):
            return [_item("CLICK", **xy(x, y), num_clicks=3)]
        case RightClick(x=x, y=y):
            return [_item("RIGHT_CLICK", **xy(x, y))]
        case DoubleClick(x=x, y=y):
            return [_item("DOUBLE_CLICK", **xy(x, y))]
        case MouseDown(x=x, y=y, button=button):
            return moved(x, y, _item("MOUSE_DOWN", button=None if button == "left" else button))
        case MouseUp(x=x, y=y, button=button):
            return moved(x, y, _item("MOUSE_UP", button=None if button == "left" else button))
        case DragTo(x=x, y=y, start_x=sx, start_y=sy, button=button):
            drag = _item("DRAG_TO", **xy(x, y), button=None if button == "left" else button)
            return moved(sx, sy, drag)
        case Scroll(dx=dx, dy=dy, x=x, y=y):
            return moved(x, y, _item("SCROLL", dx=dx, dy=dy))
        case Typing(text=text):
            return [_item("TYPING", text=text)]
        case Press(key=key):
            return [_item("PRESS", key=key)]
        case KeyDown(key=key):
            return [_item("KEY_DOWN", key=key)]
        case KeyUp(key=key):
            return [_item("KEY_UP", key=key)]
        case Hotkey(keys=keys):
            return [_item("HOTKEY", keys=list(keys))]
        case Wait(seconds=seconds):
            return [_item("WAIT", seconds=None if seconds == Wait().seconds else seconds)]
        case Done(message=message):
            return [_item("DONE", message=message)]
        case Fail(message=message):
            return [_item("FAIL", message=message)]
        case CallUser(message=message):
            return [_item("CALL_USER", message=message)]
    raise ActionParseError(f"cannot write {action.kind} as computer_13")  # pragma: no cover
