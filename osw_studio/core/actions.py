"""Structured input actions: the one vocabulary for what an agent or a person does to a desktop.

Actions follow OSWorld's ``computer_13`` set (move_to, click, mouse_down/up, right_click, double_click,
drag_to, scroll, typing, press, key_down/up, hotkey, wait, fail, done) plus ``triple_click`` and
``call_user``. Coordinates are always screen pixels of the guest; text is full Unicode. Parsers in
:mod:`osw_studio.actions` turn model replies into these models; nothing ever executes model text.

Examples:
    >>> a = parse_action({"kind": "click", "x": 10, "y": 20})
    >>> a
    Click(kind='click', x=10, y=20, button='left', clicks=1)
    >>> dump_actions([a])
    [{'kind': 'click', 'x': 10, 'y': 20}]
    >>> parse_action({"kind": "hotkey", "keys": ["ctrl", "c"]}).keys
    ['ctrl', 'c']
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

MouseButton = Literal["left", "right", "middle"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @property
    def is_terminal(self) -> bool:
        """Whether this action ends the episode (``done`` or ``fail``)."""
        return False

    @property
    def point(self) -> tuple[int, int] | None:
        """The screen point this action targets, if it has one."""
        x, y = getattr(self, "x", None), getattr(self, "y", None)
        return (x, y) if x is not None and y is not None else None


class MoveTo(_Action):
    """Move the pointer to ``(x, y)``."""

    kind: Literal["move_to"] = "move_to"
    x: int
    y: int


class Click(_Action):
    """Press and release ``button`` ``clicks`` times, at ``(x, y)`` or where the pointer is."""

    kind: Literal["click"] = "click"
    x: int | None = None
    y: int | None = None
    button: MouseButton = "left"
    clicks: int = Field(default=1, ge=1, le=3)


class RightClick(_Action):
    """Right-click at ``(x, y)`` or where the pointer is."""

    kind: Literal["right_click"] = "right_click"
    x: int | None = None
    y: int | None = None


class DoubleClick(_Action):
    """Double-click with the left button at ``(x, y)`` or where the pointer is."""

    kind: Literal["double_click"] = "double_click"
    x: int | None = None
    y: int | None = None


class TripleClick(_Action):
    """Triple-click with the left button (selects a line or paragraph)."""

    kind: Literal["triple_click"] = "triple_click"
    x: int | None = None
    y: int | None = None


class MouseDown(_Action):
    """Press ``button`` (at ``(x, y)`` when given) without releasing it."""

    kind: Literal["mouse_down"] = "mouse_down"
    button: MouseButton = "left"
    x: int | None = None
    y: int | None = None


class MouseUp(_Action):
    """Release ``button`` (at ``(x, y)`` when given)."""

    kind: Literal["mouse_up"] = "mouse_up"
    button: MouseButton = "left"
    x: int | None = None
    y: int | None = None


class DragTo(_Action):
    """Drag with the left button held to ``(x, y)``.

    The drag starts at ``(start_x, start_y)`` when given (UI-TARS ``drag(start_box, end_box)``), else
    where the pointer is (computer_13 ``DRAG_TO``).
    """

    kind: Literal["drag_to"] = "drag_to"
    x: int
    y: int
    start_x: int | None = None
    start_y: int | None = None
    button: MouseButton = "left"


class Scroll(_Action):
    """Scroll by wheel clicks: ``dy`` > 0 up, ``dy`` < 0 down, ``dx`` > 0 right, ``dx`` < 0 left.

    The sign convention is pyautogui's and computer_13's. The pointer moves to ``(x, y)`` first when given.
    """

    kind: Literal["scroll"] = "scroll"
    dx: int = 0
    dy: int = 0
    x: int | None = None
    y: int | None = None


class Typing(_Action):
    """Type ``text`` exactly, any Unicode; a newline is Enter."""

    kind: Literal["typing"] = "typing"
    text: str


class Press(_Action):
    """Press and release one key (pyautogui key names, e.g. ``enter``, ``a``, ``f5``)."""

    kind: Literal["press"] = "press"
    key: str


class KeyDown(_Action):
    """Press one key without releasing it."""

    kind: Literal["key_down"] = "key_down"
    key: str


class KeyUp(_Action):
    """Release one key."""

    kind: Literal["key_up"] = "key_up"
    key: str


class Hotkey(_Action):
    """Press keys in order, then release them in reverse (``ctrl+shift+t``)."""

    kind: Literal["hotkey"] = "hotkey"
    keys: list[str] = Field(min_length=1)


class Wait(_Action):
    """Do nothing for ``seconds``."""

    kind: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, ge=0)


class Done(_Action):
    """The agent says the task is complete."""

    kind: Literal["done"] = "done"
    message: str | None = None

    @property
    def is_terminal(self) -> bool:
        """``done`` ends the episode."""
        return True


class Fail(_Action):
    """The agent says the task cannot be done (OSWorld's ``FAIL``, scored as infeasible)."""

    kind: Literal["fail"] = "fail"
    message: str | None = None

    @property
    def is_terminal(self) -> bool:
        """``fail`` ends the episode."""
        return True


class CallUser(_Action):
    """The agent asks the person for help; the runner pauses for them."""

    kind: Literal["call_user"] = "call_user"
    message: str | None = None


Action = Annotated[
    MoveTo
    | Click
    | RightClick
    | DoubleClick
    | TripleClick
    | MouseDown
    | MouseUp
    | DragTo
    | Scroll
    | Typing
    | Press
    | KeyDown
    | KeyUp
    | Hotkey
    | Wait
    | Done
    | Fail
    | CallUser,
    Field(discriminator="kind"),
]
"""Any one action; the ``kind`` field tells which."""

ACTION_KINDS: tuple[str, ...] = (
    "move_to",
    "click",
    "right_click",
    "double_click",
    "triple_click",
    "mouse_down",
    "mouse_up",
    "drag_to",
    "scroll",
    "typing",
    "press",
    "key_down",
    "key_up",
    "hotkey",
    "wait",
    "done",
    "fail",
    "call_user",
)

ACTION_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)
ACTION_LIST_ADAPTER: TypeAdapter[list[Action]] = TypeAdapter(list[Action])


def parse_action(data: Any) -> Action:
    """Validate one action from plain data (a dict as stored in ``steps.jsonl``).

    Raises:
        pydantic.ValidationError: If ``data`` is not a valid action.
    """
    return ACTION_ADAPTER.validate_python(data)


def parse_actions(data: Any) -> list[Action]:
    """Validate a list of actions from plain data."""
    return ACTION_LIST_ADAPTER.validate_python(data)


def dump_actions(actions: list[Action]) -> list[dict[str, Any]]:
    """Turn actions into plain JSON-ready dicts, leaving out fields at their defaults (``kind`` stays)."""
    out = []
    for action in actions:
        data = action.model_dump(mode="json", exclude_defaults=True)
        data = {"kind": action.kind, **data}
        out.append(data)
    return out
