r"""Showing untrusted text on a terminal or in a log: control characters made visible.

Task files, model replies and guest answers may hold terminal escape sequences (``ESC [ 1 A`` moves the
cursor up, ``ESC [ 2 K`` erases a line, OSC 52 writes the clipboard) or Unicode controls that reorder
what is shown (``U+202E``). Printed raw, a model's thought could erase the real ``proposed:`` line of
``osw-studio run --approve`` and show another action. Everything from outside is therefore shown through
:func:`visible`: each control character becomes its escape (``\x1b``, ``\u202e``), so it is seen, not
obeyed.

:class:`VisibleStream` does the same for a whole stream (``osw-studio`` wraps stdout and stderr in it,
keeping only newlines and tabs), and :class:`VisibleFormatter` for log records.

Examples:
    >>> visible("thought\x1b[1A\x1b[2Kproposed: click(1, 1)")
    'thought\\x1b[1A\\x1b[2Kproposed: click(1, 1)'
    >>> visible("two\nlines\r")
    'two\\nlines\\r'
    >>> visible("two\nlines\tok", keep="\n\t")
    'two\nlines\tok'
    >>> visible("abc\u202edef \u00e9\u4e2d")
    'abc\\u202edef é中'
"""

from __future__ import annotations

import logging
import re
from typing import Any, TextIO

_CONTROL = re.compile(
    "["
    "\x00-\x1f\x7f-\x9f"  # C0, DEL, C1 (0x9b is a one-byte CSI on some terminals)
    "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"  # bidi and invisible format
    "\ud800-\udfff"  # lone surrogates (from undecodable bytes)
    "]"
)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def visible(text: object, *, keep: str = "") -> str:
    """``text`` with every control character shown as its escape; characters in ``keep`` stay as they are.

    Printable text, non-ASCII letters included, is unchanged.
    """
    value = text if isinstance(text, str) else str(text)
    if keep:
        return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m), value)
    return _CONTROL.sub(_escape, value)


def is_visible(text: str, *, keep: str = "") -> bool:
    r"""Whether ``text`` holds no control character outside ``keep``.

    >>> is_visible("a\tb", keep="\t"), is_visible("a\x1bb")
    (True, False)
    """
    return all(m.group() in keep for m in _CONTROL.finditer(text))


class VisibleStream:
    """A text stream that writes everything through :func:`visible`, keeping newlines and tabs.

    Args:
        stream: The stream to write to (``sys.stdout``, ``sys.stderr``).
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    @property
    def wrapped(self) -> TextIO:
        """The stream written to."""
        return self._stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters made visible; returns ``len(text)``."""
        self._stream.write(visible(text, keep="\n\t"))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class VisibleFormatter(logging.Formatter):
    r"""A log formatter that shows control characters as escapes.

    The message stays on one line (a newline in it cannot fake the next record); a traceback keeps its
    lines.

    >>> record = logging.LogRecord("x", logging.INFO, "f", 1, "thought: %s", ("a\n\x1b[2Kb",), None)
    >>> VisibleFormatter("%(levelname)s %(message)s").format(record)
    'INFO thought: a\\n\\x1b[2Kb'
    """

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The record's line, made visible."""
        return visible(super().formatMessage(record), keep="\t")

    def formatException(self, ei: Any) -> str:
        """The traceback, made visible line by line."""
        return visible(super().formatException(ei), keep="\n\t")

    def formatStack(self, stack_info: str) -> str:
        """The stack, made visible line by line."""
        return visible(super().formatStack(stack_info), keep="\n\t")
