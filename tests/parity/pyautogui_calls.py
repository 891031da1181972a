"""What a guest would do with a piece of pyautogui code, worked out without running it.

OSWorld runs an agent's code on the guest with ``python -c "import pyautogui; import time; ...; CODE"``.
To compare the actions two parsers lead to, the tests read both sides' code here into the input events
pyautogui would send on X11: clicks with their point, button and count, moves, drags, scrolls, typed
text, key presses and chords, and pauses. This reading is written apart from OSW Studio's own parser
(:mod:`osw_studio.actions.pyautogui`) so that it can judge it, and model text is never executed.

Equivalences that pyautogui itself makes are applied, so that different spellings of one input compare
equal: ``write`` and ``typewrite``, ``doubleClick(x, y)`` and ``click(x, y, clicks=2)``, key names that
pyautogui maps to one X keysym (``return`` and ``enter``), keys lowered as pyautogui lowers them,
characters that pyautogui cannot type on X11 dropped (as it silently drops them), and the clipboard
paste (``pyperclip.copy(t)`` then ``ctrl+v``) read as typing ``t``. A statement this reading does not
know is kept as ``("other", source)``, so it always shows up as a difference.

Examples:
    >>> events("pyautogui.doubleClick(10, 20); pyautogui.write('hi')")
    [('click', 10, 20, 'left', 2), ('type', 'hi')]
    >>> events("pyautogui.click(x=10, y=20, clicks=2)\\npyautogui.typewrite('h'); pyautogui.typewrite('i')")
    [('click', 10, 20, 'left', 2), ('type', 'hi')]
    >>> events("import os; os.system('ls')")
    [('other', "os.system('ls')")]
"""

from __future__ import annotations

import ast
from typing import Any

Event = tuple[Any, ...]

_SAME_KEY = {
    "return": "enter",
    "\n": "enter",
    "\r": "enter",
    "escape": "esc",
    "delete": "del",
    "ctrlleft": "ctrl",
    "shiftleft": "shift",
    "altleft": "alt",
    "winleft": "win",
    "pgdn": "pagedown",
    "pgup": "pageup",
    "prtsc": "printscreen",
    "prtscr": "printscreen",
    "\t": "tab",
    " ": "space",
}
"""Key names pyautogui's X11 backend sends as the same keysym, to one spelling."""

_SIGNATURES: dict[str, tuple[str, ...]] = {
    "click": ("x", "y", "clicks", "interval", "button", "duration", "tween"),
    "leftClick": ("x", "y", "interval", "duration", "tween"),
    "rightClick": ("x", "y", "interval", "duration", "tween"),
    "middleClick": ("x", "y", "interval", "duration", "tween"),
    "doubleClick": ("x", "y", "interval", "button", "duration", "tween"),
    "tripleClick": ("x", "y", "interval", "button", "duration", "tween"),
    "moveTo": ("x", "y", "duration", "tween"),
    "moveRel": ("xOffset", "yOffset", "duration", "tween"),
    "dragRel": (
        "xOffset",
        "yOffset",
        "duration",
        "tween",
        "button",
        "logScreenshot",
        "_pause",
        "mouseDownUp",
    ),
    "dragTo": ("x", "y", "duration", "tween", "button", "logScreenshot", "_pause", "mouseDownUp"),
    "mouseDown": ("x", "y", "button", "duration", "tween"),
    "mouseUp": ("x", "y", "button", "duration", "tween"),
    "scroll": ("clicks", "x", "y"),
    "vscroll": ("clicks", "x", "y"),
    "hscroll": ("clicks", "x", "y"),
    "typewrite": ("message", "interval"),
    "write": ("message", "interval"),
    "press": ("keys", "presses", "interval"),
    "keyDown": ("key",),
    "keyUp": ("key",),
}
"""pyautogui's parameter order for the functions agents call."""


def key(name: str) -> str:
    """A key as pyautogui sends it: lowered when longer than one character, synonyms merged."""
    name = name.lower() if len(name) > 1 else name
    return _SAME_KEY.get(name, name)


def _typable(text: str) -> str:
    # pyautogui's X11 keyboard mapping has printable ASCII, newline and tab; other characters are skipped.
    return "".join(ch for ch in text if " " <= ch <= "~" or ch in "\n\t")


def _arguments(name: str, call: ast.Call, names: dict[str, Any]) -> dict[str, Any]:
    def value(node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return f"{node.value.id}.{node.attr}"  # a tween function such as pyautogui.easeInQuad
        return ast.literal_eval(node)

    args: dict[str, Any] = {}
    positional: list[Any] = []
    for node in call.args:
        if isinstance(node, ast.Starred):
            positional.extend(value(node.value))
        else:
            positional.append(value(node))
    if name == "hotkey":
        args["keys"] = positional
    else:
        signature = _SIGNATURES[name]
        # A point may be given as one tuple: click((10, 20)).
        if positional and isinstance(positional[0], (tuple, list)) and signature[:2] == ("x", "y"):
            positional = [*positional[0], *positional[1:]]
        args.update(zip(signature, positional, strict=False))
    allowed = ("keys", "interval", "logScreenshot", "_pause") if name == "hotkey" else _SIGNATURES[name]
    for keyword in call.keywords:
        if keyword.arg not in allowed:
            raise ValueError(f"pyautogui.{name} raises TypeError for {keyword.arg}=")
        args[keyword.arg] = value(keyword.value)
    return args


def _number(value: Any) -> Any:
    return round(value) if isinstance(value, float) else value


def _pyautogui(name: str, args: dict[str, Any], pointer: list[Any]) -> list[Event]:
    if name in ("moveRel", "dragRel"):
        if pointer[0] is None:
            raise ValueError("a relative move from an unknown pointer")
        args = {**args, "x": pointer[0] + args["xOffset"], "y": pointer[1] + args["yOffset"]}
        name = "moveTo" if name == "moveRel" else "dragTo"
    x, y = _number(args.get("x")), _number(args.get("y"))
    if x is not None and not isinstance(x, str):
        pointer[:] = [x, y]
    if isinstance(x, str) or (x is None) != (y is None):
        raise ValueError("pyautogui looks for an image or raises here")
    clicks = {"doubleClick": 2, "tripleClick": 3}
    buttons = {"rightClick": "right", "middleClick": "middle"}
    if name in ("click", "leftClick", "rightClick", "middleClick", "doubleClick", "tripleClick"):
        button = args.get("button", buttons.get(name, "left"))
        return [("click", x, y, str(button).lower(), int(args.get("clicks", clicks.get(name, 1))))]
    if name == "moveTo":
        return [("move", x, y)]
    if name == "dragTo":
        return [("drag", x, y, args.get("button", "left"))]
    if name in ("mouseDown", "mouseUp"):
        return [("mouse_down" if name == "mouseDown" else "mouse_up", x, y, args.get("button", "left"))]
    if name in ("scroll", "vscroll", "hscroll"):
        clicks_ = int(args["clicks"])
        return [("hscroll" if name == "hscroll" else "scroll", clicks_, x, y)] if clicks_ else []
    if name in ("typewrite", "write"):
        message = args["message"]
        if isinstance(message, str):
            return [("type", _typable(message))]
        return [("press", key(k)) for k in message]
    if name == "press":
        keys = args["keys"] if isinstance(args["keys"], (list, tuple)) else [args["keys"]]
        return [("press", key(k)) for _ in range(int(args.get("presses", 1))) for k in keys]
    if name in ("keyDown", "keyUp"):
        return [("key_down" if name == "keyDown" else "key_up", key(args["key"]))]
    if name == "hotkey":
        return [("hotkey", tuple(key(k) for k in args["keys"]))]
    raise KeyError(name)


def _bind(target: ast.expr, value: Any, names: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        names[target.id] = value
    elif isinstance(target, ast.Tuple) and len(target.elts) == len(value):
        for element, part in zip(target.elts, value, strict=True):
            _bind(element, part, names)
    elif isinstance(target, ast.Attribute) and ast.unparse(target) in (
        "pyautogui.FAILSAFE",
        "pyautogui.PAUSE",
    ):
        pass  # OSWorld's prefix sets these too; no input is sent
    else:
        raise ValueError("not a literal binding")


def _statement(
    stmt: ast.stmt, names: dict[str, Any], aliases: dict[str, str], pointer: list[Any]
) -> list[Event]:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            aliases[alias.asname or alias.name] = alias.name
        return []
    if isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        return []
    if isinstance(stmt, ast.Assign):
        value = ast.literal_eval(stmt.value)
        for target in stmt.targets:
            _bind(target, value, names)
        return []
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        raise ValueError("not a call")
    call = stmt.value
    func = call.func
    if isinstance(func, ast.Name) and "." in aliases.get(func.id, ""):
        module, name = aliases[func.id].rsplit(".", 1)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module, name = aliases.get(func.value.id, func.value.id), func.attr
    else:
        raise ValueError("not a module function")
    if module == "time" and name == "sleep":
        return [("sleep", float(ast.literal_eval(call.args[0])))]
    if module == "pyperclip" and name == "copy":
        return [("copy", ast.literal_eval(call.args[0]))]
    if module == "pyautogui" and (name in _SIGNATURES or name == "hotkey"):
        return _pyautogui(name, _arguments(name, call, names), pointer)
    raise ValueError(f"{module}.{name} is not read here")


def _merge(found: list[Event]) -> list[Event]:
    merged: list[Event] = []
    clipboard: str | None = None
    for event in found:
        if event[0] == "copy":
            clipboard = event[1]
            continue
        if event == ("hotkey", ("ctrl", "v")) and clipboard is not None:
            event = ("type", clipboard)
        elif event == ("hotkey", ("shift", ",")):
            event = ("type", "<")  # OSWorld's own way of typing '<' (pyautogui types '>' for it)
        if event[0] == "type" and merged and merged[-1][0] == "type":
            merged[-1] = ("type", merged[-1][1] + event[1])
        elif event != ("type", ""):
            merged.append(event)
    return merged


def events(code: str) -> list[Event]:
    """The input events ``code`` would send, in order (see the module docs)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [("syntax_error", exc.msg)]
    names: dict[str, Any] = {}
    aliases = {"pyautogui": "pyautogui", "time": "time"}  # OSWorld's prefix imports both
    found: list[Event] = []
    pointer: list[Any] = [None, None]
    for stmt in tree.body:
        try:
            found += _statement(stmt, names, aliases, pointer)
        except (ValueError, KeyError, TypeError, IndexError, SyntaxError):
            found.append(("other", ast.unparse(stmt)))
    return _merge(found)
