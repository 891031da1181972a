"""Key names: pyautogui's ``KEYBOARD_KEYS`` list and the normalisation every parser applies.

Models spell keys in many ways (``Control``, ``ArrowUp``, ``page_down``, ``Return``, ``cmd``). Every parser
turns them into one canonical pyautogui name with :func:`normalize_key` and refuses names pyautogui does
not know, so that a typo in a reply shows up as a parse error instead of a silently ignored key press.

Examples:
    >>> normalize_key("Control")
    'ctrl'
    >>> normalize_key("ArrowUp")
    'up'
    >>> normalize_key("A")
    'A'
    >>> is_valid_key("f13"), is_valid_key("hyper")
    (True, False)
"""

from __future__ import annotations

KEYBOARD_KEYS: tuple[str, ...] = (
    "\t",
    "\n",
    "\r",
    " ",
    "!",
    '"',
    "#",
    "$",
    "%",
    "&",
    "'",
    "(",
    ")",
    "*",
    "+",
    ",",
    "-",
    ".",
    "/",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    ":",
    ";",
    "<",
    "=",
    ">",
    "?",
    "@",
    "[",
    "\\",
    "]",
    "^",
    "_",
    "`",
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "{",
    "|",
    "}",
    "~",
    "accept",
    "add",
    "alt",
    "altleft",
    "altright",
    "apps",
    "backspace",
    "browserback",
    "browserfavorites",
    "browserforward",
    "browserhome",
    "browserrefresh",
    "browsersearch",
    "browserstop",
    "capslock",
    "clear",
    "convert",
    "ctrl",
    "ctrlleft",
    "ctrlright",
    "decimal",
    "del",
    "delete",
    "divide",
    "down",
    "end",
    "enter",
    "esc",
    "escape",
    "execute",
    "f1",
    "f10",
    "f11",
    "f12",
    "f13",
    "f14",
    "f15",
    "f16",
    "f17",
    "f18",
    "f19",
    "f2",
    "f20",
    "f21",
    "f22",
    "f23",
    "f24",
    "f3",
    "f4",
    "f5",
    "f6",
    "f7",
    "f8",
    "f9",
    "final",
    "fn",
    "hanguel",
    "hangul",
    "hanja",
    "help",
    "home",
    "insert",
    "junja",
    "kana",
    "kanji",
    "launchapp1",
    "launchapp2",
    "launchmail",
    "launchmediaselect",
    "left",
    "modechange",
    "multiply",
    "nexttrack",
    "nonconvert",
    "num0",
    "num1",
    "num2",
    "num3",
    "num4",
    "num5",
    "num6",
    "num7",
    "num8",
    "num9",
    "numlock",
    "pagedown",
    "pageup",
    "pause",
    "pgdn",
    "pgup",
    "playpause",
    "prevtrack",
    "print",
    "printscreen",
    "prntscrn",
    "prtsc",
    "prtscr",
    "return",
    "right",
    "scrolllock",
    "select",
    "separator",
    "shift",
    "shiftleft",
    "shiftright",
    "sleep",
    "space",
    "stop",
    "subtract",
    "tab",
    "up",
    "volumedown",
    "volumemute",
    "volumeup",
    "win",
    "winleft",
    "winright",
    "yen",
    "command",
    "option",
    "optionleft",
    "optionright",
)
"""pyautogui's key names, as OSWorld's ``desktop_env/actions.py`` lists them for ``computer_13``."""

_ALIASES: dict[str, str] = {
    "\n": "enter",
    "\r": "enter",
    "\t": "tab",
    " ": "space",
    "return": "enter",
    "control": "ctrl",
    "ctl": "ctrl",
    "lctrl": "ctrlleft",
    "rctrl": "ctrlright",
    "control_l": "ctrlleft",
    "control_r": "ctrlright",
    "shift_l": "shiftleft",
    "shift_r": "shiftright",
    "alt_l": "altleft",
    "alt_r": "altright",
    "escape": "esc",
    "del": "delete",
    "pgdn": "pagedown",
    "pgup": "pageup",
    "page_down": "pagedown",
    "page_up": "pageup",
    "next": "pagedown",
    "prior": "pageup",
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "arrow_up": "up",
    "arrow_down": "down",
    "arrow_left": "left",
    "arrow_right": "right",
    "uparrow": "up",
    "downarrow": "down",
    "leftarrow": "left",
    "rightarrow": "right",
    "cmd": "command",
    "super": "win",
    "super_l": "winleft",
    "super_r": "winright",
    "meta": "win",
    "windows": "win",
    "opt": "option",
    "prtsc": "printscreen",
    "prtscr": "printscreen",
    "prntscrn": "printscreen",
    "print_screen": "printscreen",
    "caps_lock": "capslock",
    "num_lock": "numlock",
    "scroll_lock": "scrolllock",
    "back_space": "backspace",
    "bksp": "backspace",
    "ins": "insert",
    "spacebar": "space",
    "plus": "+",
    "minus": "-",
}
"""Spellings seen in model replies, mapped to one pyautogui name."""

_KNOWN: frozenset[str] = frozenset(KEYBOARD_KEYS)


def normalize_key(name: str) -> str:
    r"""Return the canonical pyautogui name of a key as a model spelled it.

    Single characters keep their case (``A`` types a capital), longer names are lower-cased and their
    aliases resolved. Unknown names are returned lower-cased; :func:`is_valid_key` tells whether they exist.

    Examples:
        >>> [normalize_key(k) for k in ["Enter", "return", "\n", " ", "Page_Down", "ESC", "Win"]]
        ['enter', 'enter', 'enter', 'space', 'pagedown', 'esc', 'win']
    """
    if len(name) == 1:
        return _ALIASES.get(name, name)
    stripped = name.strip()
    if len(stripped) == 1:
        return stripped
    lowered = stripped.lower().replace(" ", "_") if stripped else name
    lowered = _ALIASES.get(lowered, lowered)
    return _ALIASES.get(lowered.replace("_", ""), lowered) if lowered not in _KNOWN else lowered


def is_valid_key(name: str) -> bool:
    """Whether pyautogui knows ``name`` (after normalisation); any printable ASCII character counts.

    Examples:
        >>> is_valid_key("Enter"), is_valid_key("Q"), is_valid_key("é"), is_valid_key("")
        (True, True, False, False)
    """
    key = normalize_key(name)
    if len(key) == 1:
        return " " <= key <= "~"
    return key in _KNOWN


CANONICAL_KEYS: tuple[str, ...] = tuple(sorted({normalize_key(k) for k in KEYBOARD_KEYS}))
"""Every key name :func:`normalize_key` can return for a pyautogui key, each once."""
