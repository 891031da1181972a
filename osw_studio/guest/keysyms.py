"""Key names and characters to X keysyms: pyautogui's key names, and any Unicode character.

Key names are pyautogui's (``enter``, ``ctrl``, ``pgdn``, ``f5``, ``a``), matched case-insensitively when
longer than one character, as pyautogui does. Characters map to X keysyms by X11's rule: Latin-1
printables are their own keysym, everything else is ``0x01000000 + code point``, which every current
toolkit (GTK, Qt, xterm) turns back into the character.

Examples:
    >>> hex(key_keysym("enter"))
    '0xff0d'
    >>> key_keysym("Ctrl") == key_keysym("ctrlleft")
    True
    >>> hex(char_keysym("€"))
    '0x10020ac'
    >>> hex(char_keysym("Ü"))
    '0xdc'
    >>> key_keysym("hyperspace")
    Traceback (most recent call last):
    ...
    KeyError: "unknown key name 'hyperspace'"
"""

from __future__ import annotations

# X keysym values (from X11/keysymdef.h and XF86keysym.h); literal so this module needs no X library.
_NAMED: dict[str, int] = {
    "BackSpace": 0xFF08,
    "Tab": 0xFF09,
    "Return": 0xFF0D,
    "Pause": 0xFF13,
    "Scroll_Lock": 0xFF14,
    "Escape": 0xFF1B,
    "Delete": 0xFFFF,
    "Home": 0xFF50,
    "Left": 0xFF51,
    "Up": 0xFF52,
    "Right": 0xFF53,
    "Down": 0xFF54,
    "Prior": 0xFF55,
    "Next": 0xFF56,
    "End": 0xFF57,
    "Select": 0xFF60,
    "Print": 0xFF61,
    "Execute": 0xFF62,
    "Insert": 0xFF63,
    "Menu": 0xFF67,
    "Help": 0xFF6A,
    "Num_Lock": 0xFF7F,
    "KP_Enter": 0xFF8D,
    "KP_Multiply": 0xFFAA,
    "KP_Add": 0xFFAB,
    "KP_Separator": 0xFFAC,
    "KP_Subtract": 0xFFAD,
    "KP_Decimal": 0xFFAE,
    "KP_Divide": 0xFFAF,
    "Shift_L": 0xFFE1,
    "Shift_R": 0xFFE2,
    "Control_L": 0xFFE3,
    "Control_R": 0xFFE4,
    "Caps_Lock": 0xFFE5,
    "Meta_L": 0xFFE7,
    "Alt_L": 0xFFE9,
    "Alt_R": 0xFFEA,
    "Super_L": 0xFFEB,
    "Super_R": 0xFFEC,
    "Mode_switch": 0xFF7E,
    "XF86AudioLowerVolume": 0x1008FF11,
    "XF86AudioMute": 0x1008FF12,
    "XF86AudioRaiseVolume": 0x1008FF13,
    "XF86AudioPlay": 0x1008FF14,
    "XF86AudioStop": 0x1008FF15,
    "XF86AudioPrev": 0x1008FF16,
    "XF86AudioNext": 0x1008FF17,
    "XF86Back": 0x1008FF26,
    "XF86Forward": 0x1008FF27,
    "XF86Refresh": 0x1008FF29,
    "XF86Search": 0x1008FF1B,
    "XF86HomePage": 0x1008FF18,
    "XF86Favorites": 0x1008FF30,
    "XF86Mail": 0x1008FF19,
    "XF86Sleep": 0x1008FF2F,
}

# pyautogui's key names (its KEYBOARD_KEYS) that are not single characters, to keysym names.
_KEY_NAMES: dict[str, str] = {
    "backspace": "BackSpace",
    "tab": "Tab",
    "enter": "Return",
    "return": "Return",
    "pause": "Pause",
    "scrolllock": "Scroll_Lock",
    "esc": "Escape",
    "escape": "Escape",
    "delete": "Delete",
    "del": "Delete",
    "home": "Home",
    "left": "Left",
    "up": "Up",
    "right": "Right",
    "down": "Down",
    "pageup": "Prior",
    "pgup": "Prior",
    "pagedown": "Next",
    "pgdn": "Next",
    "end": "End",
    "select": "Select",
    "print": "Print",
    "printscreen": "Print",
    "prntscrn": "Print",
    "prtsc": "Print",
    "prtscr": "Print",
    "execute": "Execute",
    "insert": "Insert",
    "apps": "Menu",
    "menu": "Menu",
    "help": "Help",
    "numlock": "Num_Lock",
    "multiply": "KP_Multiply",
    "add": "KP_Add",
    "separator": "KP_Separator",
    "subtract": "KP_Subtract",
    "decimal": "KP_Decimal",
    "divide": "KP_Divide",
    "shift": "Shift_L",
    "shiftleft": "Shift_L",
    "shiftright": "Shift_R",
    "ctrl": "Control_L",
    "ctrlleft": "Control_L",
    "ctrlright": "Control_R",
    "control": "Control_L",
    "capslock": "Caps_Lock",
    "alt": "Alt_L",
    "altleft": "Alt_L",
    "altright": "Alt_R",
    "option": "Alt_L",
    "optionleft": "Alt_L",
    "optionright": "Alt_R",
    "super": "Super_L",
    "win": "Super_L",
    "winleft": "Super_L",
    "winright": "Super_R",
    "command": "Super_L",
    "cmd": "Super_L",
    "meta": "Meta_L",
    "modechange": "Mode_switch",
    "volumedown": "XF86AudioLowerVolume",
    "volumemute": "XF86AudioMute",
    "volumeup": "XF86AudioRaiseVolume",
    "playpause": "XF86AudioPlay",
    "stop": "XF86AudioStop",
    "prevtrack": "XF86AudioPrev",
    "nexttrack": "XF86AudioNext",
    "browserback": "XF86Back",
    "browserforward": "XF86Forward",
    "browserrefresh": "XF86Refresh",
    "browsersearch": "XF86Search",
    "browserhome": "XF86HomePage",
    "browserfavorites": "XF86Favorites",
    "launchmail": "XF86Mail",
    "sleep": "XF86Sleep",
    "space": "space",
}

_F1 = 0xFFBE
_KP_0 = 0xFFB0


def char_keysym(char: str) -> int:
    r"""The keysym that types ``char`` (one character); newline is Return, tab is Tab.

    Examples:
        >>> [hex(char_keysym(c)) for c in "a\n日"]
        ['0x61', '0xff0d', '0x10065e5']
    """
    if len(char) != 1:
        raise ValueError(f"expected one character, got {char!r}")
    if char in "\n\r":
        return _NAMED["Return"]
    if char == "\t":
        return _NAMED["Tab"]
    if char == "\b":
        return _NAMED["BackSpace"]
    code = ord(char)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    return 0x01000000 + code


def key_keysym(name: str) -> int:
    """The keysym for a pyautogui key name or a single character.

    Raises:
        KeyError: If ``name`` is not a key pyautogui knows.

    Examples:
        >>> hex(key_keysym("f12")), hex(key_keysym("num7")), hex(key_keysym("A"))
        ('0xffc9', '0xffb7', '0x41')
    """
    if len(name) == 1:
        return char_keysym(name)
    lowered = name.lower()
    if lowered in _KEY_NAMES:
        target = _KEY_NAMES[lowered]
        return 0x20 if target == "space" else _NAMED[target]
    if lowered.startswith("f") and lowered[1:].isdigit() and 1 <= int(lowered[1:]) <= 24:
        return _F1 + int(lowered[1:]) - 1
    if lowered.startswith("num") and lowered[3:].isdigit() and len(lowered) == 4:
        return _KP_0 + int(lowered[3:])
    raise KeyError(f"unknown key name {name!r}")


def is_key_name(name: str) -> bool:
    """Whether ``name`` is a key pyautogui knows (a key name or one character).

    Examples:
        >>> is_key_name("pgdn"), is_key_name("ctrl+c")
        (True, False)
    """
    try:
        key_keysym(name)
    except (KeyError, ValueError):
        return False
    return True
