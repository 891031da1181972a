r"""OSWorld's pyautogui action language: parse model code without running it, and generate guest code.

The parser reads Python with :mod:`ast` and accepts only what maps to actions: calls of the pyautogui
functions in :data:`PYAUTOGUI_FUNCTIONS`, ``time.sleep`` and ``pyperclip.copy`` (when a paste follows),
with literal arguments; ``import`` lines (ignored); names bound to literals and used later as arguments
(set-of-marks style ``tag_3 = (120, 44)``); and the bare words ``WAIT``, ``DONE`` and ``FAIL``. Anything
else (other modules, attribute chains, loops, ``exec``, ``open``, ``os.system``, comprehensions, starred
arguments, arithmetic) is refused with an :class:`ActionParseError` naming the construct and its line.

The generator writes one statement per line with literal arguments. ASCII text is typed with
``pyautogui.write``; any other text is put on the clipboard with ``pyperclip.copy`` and pasted with
``ctrl+v``, as OSWorld's UI-TARS agent does (pyautogui cannot type non-ASCII characters; the guest needs
``pyperclip`` and ``xclip``). The generated code expects ``pyautogui`` and ``time`` imported, as OSWorld's
``/execute`` prefix does; it imports ``pyperclip`` itself when it pastes.

What does not survive ``parse_pyautogui(render_pyautogui(actions))`` unchanged (all equivalent under
:func:`osw_studio.actions.canonical.canonical_actions`): a drag with a start point becomes ``moveTo`` then
``dragTo``; a scroll on both axes becomes ``scroll`` then ``hscroll``; non-ASCII text with newlines becomes
pastes separated by ``press('enter')``. The messages of ``done`` and ``fail`` are lost (the words carry
none), and ``call_user`` has no pyautogui form.

Examples:
    >>> parse_pyautogui("```python\npyautogui.click(100, 200)\npyautogui.write('hi')\n```")
    [Click(kind='click', x=100, y=200, button='left', clicks=1), Typing(kind='typing', text='hi')]
    >>> parse_pyautogui("tag_1 = (5, 6)\npyautogui.doubleClick(tag_1); DONE")
    [DoubleClick(kind='double_click', x=5, y=6), Done(kind='done', message=None)]
    >>> parse_pyautogui("import os; os.system('rm -rf ~')")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    osw_studio.core.errors.ActionParseError: line 1: call of os.system is not allowed (...)
    >>> print(render_pyautogui([Hotkey(keys=["ctrl", "s"]), Typing(text="héllo"), Done()]))
    pyautogui.hotkey('ctrl', 's')
    import pyperclip
    pyperclip.copy('héllo')
    pyautogui.hotkey('ctrl', 'v')
    DONE
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from osw_studio.actions.coords import CoordinateSpace, model_point, screen_point
from osw_studio.actions.fences import check_length, find_blocks, last_line_word, terminal_word
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

_COMMON = ("logScreenshot", "_pause")
PYAUTOGUI_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "click": ("x", "y", "clicks", "interval", "button", "duration", "tween", *_COMMON),
    "doubleClick": ("x", "y", "interval", "button", "duration", "tween", *_COMMON),
    "tripleClick": ("x", "y", "interval", "button", "duration", "tween", *_COMMON),
    "rightClick": ("x", "y", "duration", "tween", *_COMMON),
    "middleClick": ("x", "y", "duration", "tween", *_COMMON),
    "moveTo": ("x", "y", "duration", "tween", *_COMMON),
    "moveRel": ("xOffset", "yOffset", "duration", "tween", *_COMMON),
    "move": ("xOffset", "yOffset", "duration", "tween", *_COMMON),
    "dragTo": ("x", "y", "duration", "tween", "button", *_COMMON, "mouseDownUp"),
    "dragRel": ("xOffset", "yOffset", "duration", "tween", "button", *_COMMON, "mouseDownUp"),
    "drag": ("xOffset", "yOffset", "duration", "tween", "button", *_COMMON, "mouseDownUp"),
    "mouseDown": ("x", "y", "button", "duration", "tween", *_COMMON),
    "mouseUp": ("x", "y", "button", "duration", "tween", *_COMMON),
    "scroll": ("clicks", "x", "y", *_COMMON),
    "vscroll": ("clicks", "x", "y", *_COMMON),
    "hscroll": ("clicks", "x", "y", *_COMMON),
    "write": ("message", "interval", *_COMMON),
    "typewrite": ("message", "interval", *_COMMON),
    "press": ("keys", "presses", "interval", *_COMMON),
    "hotkey": (),
    "keyDown": ("key", *_COMMON),
    "keyUp": ("key", *_COMMON),
}
"""The pyautogui functions that map to actions, with their positional parameters in order."""

_OTHER_FUNCTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("time", "sleep"): ("secs",),
    ("pyperclip", "copy"): ("text",),
}
_MODULES = ("pyautogui", "time", "pyperclip")
_IGNORED_KEYWORDS = frozenset({"duration", "interval", "logScreenshot", "_pause"})
_BUTTONS = {"left": "left", "right": "right", "middle": "middle", "primary": "left", "secondary": "right"}
_PASTE_KEYS = (["ctrl", "v"], ["ctrl", "shift", "v"], ["shift", "insert"])
_IGNORED_SETTINGS = frozenset({"FAILSAFE", "PAUSE"})
_CONSTRUCTS: dict[type[ast.AST], str] = {
    ast.For: "for loop",
    ast.AsyncFor: "for loop",
    ast.While: "while loop",
    ast.If: "if statement",
    ast.With: "with statement",
    ast.AsyncWith: "with statement",
    ast.Try: "try statement",
    ast.FunctionDef: "function definition",
    ast.AsyncFunctionDef: "function definition",
    ast.ClassDef: "class definition",
    ast.Lambda: "lambda",
    ast.ListComp: "comprehension",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "comprehension",
    ast.BinOp: "arithmetic expression",
    ast.BoolOp: "boolean expression",
    ast.Compare: "comparison",
    ast.Subscript: "subscript",
    ast.Attribute: "attribute access",
    ast.Call: "nested call",
    ast.Dict: "dict",
    ast.Set: "set",
    ast.JoinedStr: "f-string",
    ast.Starred: "starred argument",
    ast.Await: "await",
    ast.IfExp: "conditional expression",
    ast.NamedExpr: "assignment expression",
    ast.Delete: "del statement",
    ast.Global: "global statement",
    ast.Nonlocal: "nonlocal statement",
    ast.Raise: "raise statement",
    ast.Return: "return statement",
    ast.AugAssign: "augmented assignment",
    ast.AnnAssign: "annotated assignment",
    ast.Assert: "assert statement",
    ast.Match: "match statement",
}


def parse_pyautogui(
    text: str,
    space: CoordinateSpace | None = None,
    *,
    pointer: tuple[int, int] | None = None,
    names: Mapping[str, Any] | None = None,
) -> list[Action]:
    r"""Turn a reply in OSWorld's pyautogui language into actions, never executing it.

    Args:
        text: The model's reply: fenced code blocks (with or without a language tag) amid prose, bare code,
            or just ``WAIT`` / ``DONE`` / ``FAIL``.
        space: The frame of the numbers in the code; ``None`` means screen pixels.
        pointer: Where the pointer is before the reply, for ``moveRel`` / ``dragRel`` before any absolute
            move.
        names: Names the code may use as if assigned before it, in the frame of ``space`` (set-of-marks'
            ``tag_N`` points, as OSWorld defines them above the model's code).

    Returns:
        The actions in order, in screen pixels.

    Raises:
        ActionParseError: If the reply holds no actions, or anything outside the whitelist, naming it and
            its line.

    Examples:
        >>> parse_pyautogui("WAIT")
        [Wait(kind='wait', seconds=1.0)]
        >>> parse_pyautogui("pyautogui.moveRel(5, 0)", pointer=(10, 10))
        [MoveTo(kind='move_to', x=15, y=10)]
        >>> parse_pyautogui("```\npyautogui.press('Return', presses=2)\nFAIL\n```")
        [Press(kind='press', key='enter'), Press(kind='press', key='enter'), Fail(kind='fail', message=None)]
    """
    check_length(text)
    word = terminal_word(text)
    if word is not None:
        return [_word_action(word)]
    blocks = find_blocks(text)
    reader = _Reader(space, pointer)
    reader.names.update(names or {})
    if blocks:
        for block in blocks:
            reader.read_block(block.text, block.line)
    else:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
            word = last_line_word(text)
            if word is None:
                line = getattr(exc, "lineno", None)
                raise ActionParseError(
                    "no code block found and the reply is not code",
                    where=f"line {line}" if line else None,
                    hint="reply with a ```python block of pyautogui calls, or WAIT, DONE or FAIL",
                ) from None
            return [_word_action(word)]
        reader.read_block(text, 1)
    if not reader.actions:
        raise ActionParseError("the reply holds no actions", hint="reply with pyautogui calls or DONE")
    return reader.actions


def _word_action(word: str) -> Action:
    if word == "WAIT":
        return Wait()
    return Done() if word == "DONE" else Fail()


class _Reader:
    """Walks the statements of code blocks, keeping names, the pointer and a pending clipboard."""

    def __init__(self, space: CoordinateSpace | None, pointer: tuple[int, int] | None) -> None:
        self.space = space
        self.pointer = pointer
        self.actions: list[Action] = []
        self.names: dict[str, Any] = {}
        self.aliases: dict[str, str] = {m: m for m in _MODULES}
        self.imported: dict[str, tuple[str, str]] = {}
        self.clipboard: tuple[str, int] | None = None
        self.offset = 0

    def fail(self, message: str, node: ast.AST | None = None, hint: str | None = None) -> ActionParseError:
        line = getattr(node, "lineno", None)
        where = f"line {line + self.offset}" if line is not None else None
        return ActionParseError(message, where=where, hint=hint)

    def read_block(self, code: str, first_line: int) -> None:
        self.offset = first_line - 1
        word = terminal_word(code)
        if word is not None:
            self.actions.append(_word_action(word))
            return
        try:
            tree = ast.parse(code, mode="exec")
        except SyntaxError as exc:
            line = (exc.lineno or 1) + self.offset
            raise ActionParseError(f"code does not parse: {exc.msg}", where=f"line {line}") from None
        except (ValueError, MemoryError, RecursionError, OverflowError) as exc:
            raise ActionParseError(f"code does not parse: {exc}", where=f"line {first_line}") from None
        for stmt in tree.body:
            self.statement(stmt)
        if self.clipboard is not None:
            raise ActionParseError(
                "pyperclip.copy is not followed by a paste",
                where=f"line {self.clipboard[1]}",
                hint="follow it with pyautogui.hotkey('ctrl', 'v')",
            )

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            self.imports(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self.call(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name):
            word = stmt.value.id
            if word not in ("WAIT", "DONE", "FAIL"):
                raise self.fail(f"bare name {word!r} is not an action", stmt)
            self.flush_clipboard(stmt)
            self.actions.append(_word_action(word))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            if not isinstance(stmt.value.value, str):
                raise self.fail("a bare value is not an action", stmt)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt)
        else:
            node = stmt.value if isinstance(stmt, ast.Expr) else stmt
            raise self.fail(f"{_describe(node)} is not allowed", stmt, "use only pyautogui calls")

    def imports(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name in _MODULES:
                    self.aliases[alias.asname or alias.name] = alias.name
            return
        if stmt.module in _MODULES:
            for alias in stmt.names:
                if alias.name != "*":
                    self.imported[alias.asname or alias.name] = (stmt.module, alias.name)

    def assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1:
            raise self.fail("chained assignment is not allowed", stmt)
        target = stmt.targets[0]
        if isinstance(target, ast.Attribute):
            if (
                isinstance(target.value, ast.Name)
                and self.aliases.get(target.value.id) == "pyautogui"
                and target.attr in _IGNORED_SETTINGS
            ):
                self.literal(stmt.value)
                return
            raise self.fail("assignment to an attribute is not allowed", stmt)
        value = self.literal(stmt.value)
        if isinstance(target, ast.Name):
            self.names[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in target.elts):
            if not isinstance(value, tuple | list) or len(value) != len(target.elts):
                raise self.fail("cannot unpack the assigned value", stmt)
            for elt, item in zip(target.elts, value, strict=True):
                assert isinstance(elt, ast.Name)
                self.names[elt.id] = item
        else:
            raise self.fail(f"assignment to {_describe(target)} is not allowed", stmt)

    def literal(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, int | float | str | bool) or node.value is None:
                return node.value
            raise self.fail(f"{type(node.value).__name__} literal is not allowed", node)
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.literal(elt) for elt in node.elts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.literal(node.operand)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise self.fail("sign on a non-number", node)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            raise self.fail(f"name {node.id!r} is not defined by an earlier literal assignment", node)
        raise self.fail(f"{_describe(node)} is not allowed as an argument", node, "use literal values")

    def resolve(self, func: ast.expr) -> tuple[str, str]:
        if isinstance(func, ast.Name):
            if func.id in self.imported:
                return self.imported[func.id]
            raise self.fail(f"call of {func.id} is not allowed", func, _ONLY)
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name):
                module = self.aliases.get(func.value.id)
                if module is None:
                    raise self.fail(f"call of {func.value.id}.{func.attr} is not allowed", func, _ONLY)
                return module, func.attr
            raise self.fail(f"call through an attribute chain ({ast.unparse(func)})", func, _ONLY)
        raise self.fail(f"call of {_describe(func)} is not allowed", func, _ONLY)

    def call(self, node: ast.Call) -> None:
        module, name = self.resolve(node.func)
        if module == "pyautogui":
            params = PYAUTOGUI_FUNCTIONS.get(name)
            if params is None:
                raise self.fail(f"pyautogui.{name} is not an action", node, _ONLY)
        else:
            found = _OTHER_FUNCTIONS.get((module, name))
            if found is None:
                raise self.fail(f"call of {module}.{name} is not allowed", node, _ONLY)
            params = found
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.fail("starred argument (*args) is not allowed", arg, "pass literal values")
            args.append(self.literal(arg))
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.fail("keyword unpacking (**kwargs) is not allowed", keyword, "pass literal values")
            kwargs[keyword.arg] = self.literal(keyword.value)
        if name == "hotkey" and module == "pyautogui":
            bound = {"keys": args, **kwargs}
        else:
            if len(args) > len(params):
                raise self.fail(f"{module}.{name} takes at most {len(params)} positional arguments", node)
            bound = dict(zip(params, args, strict=False))
            for key, value in kwargs.items():
                if key not in params:
                    raise self.fail(f"{module}.{name} has no argument {key!r}", node)
                if key in bound:
                    raise self.fail(f"{module}.{name} got {key!r} twice", node)
                bound[key] = value
        try:
            self.apply(module, name, bound, node)
        except (ValidationError, ValueError, TypeError) as exc:
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise self.fail(f"{module}.{name}: {detail}", node) from None

    def flush_clipboard(self, node: ast.AST) -> None:
        if self.clipboard is not None:
            raise self.fail(
                "pyperclip.copy is not followed by a paste", node, "paste with hotkey('ctrl', 'v')"
            )

    def apply(self, module: str, name: str, args: dict[str, Any], node: ast.Call) -> None:
        if module == "pyperclip":
            self.flush_clipboard(node)
            self.clipboard = (_text(args.get("text")), node.lineno + self.offset)
            return
        if module == "time":
            self.actions.append(Wait(seconds=_number(args.get("secs"), "secs")))
            return
        for key in _IGNORED_KEYWORDS & args.keys():
            if key in ("duration", "interval"):
                _number(args[key], key)
        if args.get("tween") is not None:
            raise ValueError("tween functions are not supported")
        if args.get("mouseDownUp", True) is not True:
            raise ValueError("mouseDownUp=False is not supported; use mouseDown and mouseUp")
        if self.clipboard is not None:
            keys = args["keys"] if name == "hotkey" else ()
            if [normalize_key(k) if isinstance(k, str) else k for k in keys] not in _PASTE_KEYS:
                self.flush_clipboard(node)
            self.actions.append(Typing(text=self.clipboard[0]))
            self.clipboard = None
            return
        self.actions.extend(self.make(name, args))

    def point(self, args: dict[str, Any], required: bool = False) -> tuple[int, int] | None:
        x, y = args.get("x"), args.get("y")
        if isinstance(x, tuple) and y is None:
            if len(x) != 2:
                raise ValueError("a point needs exactly two numbers")
            x, y = x
        if isinstance(x, str):
            raise ValueError("locating images on the screen is not supported; give coordinates")
        if x is None and y is None:
            if required:
                raise ValueError("needs x and y")
            return None
        if x is None or y is None:
            raise ValueError("needs both x and y")
        point = screen_point(self.space, _number(x, "x"), _number(y, "y"))
        self.pointer = point
        return point

    def relative(self, args: dict[str, Any]) -> tuple[int, int]:
        dx, dy = args.get("xOffset"), args.get("yOffset")
        if isinstance(dx, tuple) and dy is None and len(dx) == 2:
            dx, dy = dx
        if self.pointer is None:
            raise ValueError("a relative move needs to know where the pointer is; use moveTo")
        ox, oy = (
            self.space.delta_to_screen(_number(dx or 0, "xOffset"), _number(dy or 0, "yOffset"))
            if self.space is not None
            else (round(_number(dx or 0, "xOffset")), round(_number(dy or 0, "yOffset")))
        )
        self.pointer = (self.pointer[0] + ox, self.pointer[1] + oy)
        return self.pointer

    def make(self, name: str, args: dict[str, Any]) -> list[Action]:
        button = _button(args.get("button", "left"))
        if name in ("click", "doubleClick", "tripleClick", "rightClick", "middleClick"):
            x, y = self.point(args) or (None, None)
            clicks = {"click": args.get("clicks", 1), "doubleClick": 2, "tripleClick": 3}.get(name, 1)
            clicks = _integer(clicks, "clicks")
            if name == "rightClick":
                return [RightClick(x=x, y=y)]
            if name == "middleClick":
                return [Click(x=x, y=y, button="middle")]
            if name == "doubleClick" and button == "left":
                return [DoubleClick(x=x, y=y)]
            if name == "tripleClick" and button == "left":
                return [TripleClick(x=x, y=y)]
            return [Click(x=x, y=y, button=button, clicks=clicks)]
        if name == "moveTo":
            x, y = self.point(args, required=True) or (0, 0)
            return [MoveTo(x=x, y=y)]
        if name in ("moveRel", "move"):
            x, y = self.relative(args)
            return [MoveTo(x=x, y=y)]
        if name == "dragTo":
            x, y = self.point(args, required=True) or (0, 0)
            return [DragTo(x=x, y=y, button=button)]
        if name in ("dragRel", "drag"):
            x, y = self.relative(args)
            return [DragTo(x=x, y=y, button=button)]
        if name in ("mouseDown", "mouseUp"):
            x, y = self.point(args) or (None, None)
            model = MouseDown if name == "mouseDown" else MouseUp
            return [model(x=x, y=y, button=button)]
        if name in ("scroll", "vscroll", "hscroll"):
            amount = _integer(args.get("clicks"), "clicks")
            x, y = self.point(args) or (None, None)
            if name == "hscroll":
                return [Scroll(dx=amount, x=x, y=y)]
            return [Scroll(dy=amount, x=x, y=y)]
        if name in ("write", "typewrite"):
            message = args.get("message")
            if isinstance(message, tuple):
                return [Press(key=_key(k)) for k in _strings(message, "message")]
            return [Typing(text=_text(message))]
        if name == "press":
            keys = args.get("keys")
            names = _strings(keys, "keys") if isinstance(keys, tuple) else [_text(keys)]
            presses = _integer(args.get("presses", 1), "presses")
            if not 0 <= presses <= 100:
                raise ValueError("presses must be between 0 and 100")
            return [Press(key=_key(k)) for _ in range(presses) for k in names]
        if name == "hotkey":
            keys = args["keys"]
            if len(keys) == 1 and isinstance(keys[0], tuple):
                keys = keys[0]
            return [Hotkey(keys=[_key(k) for k in _strings(tuple(keys), "keys")])]
        if name in ("keyDown", "keyUp"):
            model_ = KeyDown if name == "keyDown" else KeyUp
            return [model_(key=_key(_text(args.get("key"))))]
        raise ValueError(f"pyautogui.{name} is not an action")  # pragma: no cover - table and code agree


_ONLY = "only pyautogui actions, time.sleep and pyperclip.copy are allowed"


def _describe(node: ast.AST) -> str:
    for kind, words in _CONSTRUCTS.items():
        if isinstance(node, kind):
            return words
    return type(node).__name__


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return value


def _integer(value: Any, name: str) -> int:
    number = _number(value, name)
    if number != int(number):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return int(number)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _strings(value: Any, name: str) -> list[str]:
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} must be strings")
    return list(value)


def _key(name: str) -> str:
    if not isinstance(name, str) or not is_valid_key(name):
        raise ValueError(f"{name!r} is not a pyautogui key name")
    return normalize_key(name)


def _button(value: Any) -> Any:
    if value not in _BUTTONS:
        raise ValueError(f"button must be left, right or middle, got {value!r}")
    return _BUTTONS[value]


def render_pyautogui(actions: Sequence[Action], space: CoordinateSpace | None = None) -> str:
    """Write actions as pyautogui code for an OSWorld guest: one statement a line, literal arguments only.

    Args:
        actions: The actions, in screen pixels.
        space: The frame to write numbers in; ``None`` writes screen pixels (what a guest needs).

    Raises:
        ActionParseError: For ``call_user``, which has no pyautogui form (the runner handles it).

    Examples:
        >>> print(render_pyautogui([DragTo(x=30, y=40, start_x=10, start_y=20), Scroll(dy=-5, x=1, y=2)]))
        pyautogui.moveTo(10, 20)
        pyautogui.dragTo(30, 40, duration=0.5)
        pyautogui.scroll(-5, x=1, y=2)
    """
    lines: list[str] = []
    for action in actions:
        lines.extend(_render(action, space))
    return "\n".join(lines)


def _call(name: str, *args: object, **kwargs: object) -> str:
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _xy(space: CoordinateSpace | None, x: int | None, y: int | None) -> tuple[Any, ...]:
    return () if x is None or y is None else model_point(space, x, y)


def _render(action: Action, space: CoordinateSpace | None) -> list[str]:
    match action:
        case MoveTo(x=x, y=y):
            return [_call("pyautogui.moveTo", *_xy(space, x, y))]
        case Click(x=x, y=y, button=button, clicks=clicks):
            extra: dict[str, object] = {}
            if clicks != 1:
                extra["clicks"] = clicks
            if button != "left":
                extra["button"] = button
            return [_call("pyautogui.click", *_xy(space, x, y), **extra)]
        case RightClick(x=x, y=y):
            return [_call("pyautogui.rightClick", *_xy(space, x, y))]
        case DoubleClick(x=x, y=y):
            return [_call("pyautogui.doubleClick", *_xy(space, x, y))]
        case TripleClick(x=x, y=y):
            return [_call("pyautogui.tripleClick", *_xy(space, x, y))]
        case MouseDown(x=x, y=y, button=button) | MouseUp(x=x, y=y, button=button):
            name = "pyautogui.mouseDown" if action.kind == "mouse_down" else "pyautogui.mouseUp"
            return [_call(name, *_xy(space, x, y), **({} if button == "left" else {"button": button}))]
        case DragTo(x=x, y=y, start_x=sx, start_y=sy, button=button):
            lines = [] if sx is None or sy is None else [_call("pyautogui.moveTo", *_xy(space, sx, sy))]
            kwargs: dict[str, object] = {"duration": 0.5}
            if button != "left":
                kwargs["button"] = button
            return [*lines, _call("pyautogui.dragTo", *_xy(space, x, y), **kwargs)]
        case Scroll(dx=dx, dy=dy, x=x, y=y):
            at = dict(zip(("x", "y"), _xy(space, x, y), strict=False))
            lines = [_call("pyautogui.scroll", dy, **at)] if dy or not dx else []
            if dx:
                lines.append(_call("pyautogui.hscroll", dx, **at))
            return lines
        case Typing(text=text):
            return _render_text(text)
        case Press(key=key):
            return [_call("pyautogui.press", key)]
        case KeyDown(key=key):
            return [_call("pyautogui.keyDown", key)]
        case KeyUp(key=key):
            return [_call("pyautogui.keyUp", key)]
        case Hotkey(keys=keys):
            return [_call("pyautogui.hotkey", *keys)]
        case Wait(seconds=seconds):
            return [_call("time.sleep", seconds)]
        case Done():
            return ["DONE"]
        case Fail():
            return ["FAIL"]
        case CallUser():
            raise ActionParseError(
                "call_user has no pyautogui form", hint="the runner pauses for the person instead"
            )
    raise ActionParseError(f"cannot write {action.kind} as pyautogui")  # pragma: no cover


def _typable(text: str) -> bool:
    """Whether ``pyautogui.write`` types ``text`` exactly: printable ASCII, newlines and tabs."""
    return all(" " <= ch <= "~" or ch in "\n\t" for ch in text)


def _render_text(text: str) -> list[str]:
    if _typable(text):
        return [_call("pyautogui.write", text)]
    # A pasted newline is not an Enter key press in every app, so each line is pasted on its own.
    lines = ["import pyperclip"]
    for index, chunk in enumerate(text.split("\n")):
        if index:
            lines.append(_call("pyautogui.press", "enter"))
        if chunk:
            lines += [_call("pyperclip.copy", chunk), _call("pyautogui.hotkey", "ctrl", "v")]
    return lines
