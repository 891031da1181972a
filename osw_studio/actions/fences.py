r"""Fenced code blocks in model replies: where they are, what they hold, and the prose around them.

Examples:
    >>> reply = "I will click.\n```python\npyautogui.click(1, 2)\n```\nThen wait."
    >>> [(b.lang, b.text, b.line) for b in find_blocks(reply)]
    [('python', 'pyautogui.click(1, 2)\n', 3)]
    >>> prose_outside(reply)
    'I will click.\n\nThen wait.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from osw_studio.core.errors import ActionParseError

MAX_REPLY_CHARS = 1_000_000
"""Longest reply any parser reads; longer text is refused rather than parsed slowly."""

_FENCE = re.compile(r"```(?:(?!(?:WAIT|DONE|FAIL)\b)([A-Za-z][\w+.-]*)(?=\s))?(.*?)```", re.DOTALL)
_TERMINAL_WORDS = ("WAIT", "DONE", "FAIL")


@dataclass(frozen=True)
class Block:
    """One fenced block of a reply.

    Attributes:
        lang: The language tag after the opening fence (``python``, ``json``), or ``""``.
        text: What the block holds, without the fences.
        line: Reply line (1-based) where ``text`` starts.
    """

    lang: str
    text: str
    line: int


def check_length(text: str) -> None:
    """Refuse replies too long to be a real model reply.

    Raises:
        ActionParseError: If ``text`` is longer than :data:`MAX_REPLY_CHARS`.
    """
    if len(text) > MAX_REPLY_CHARS:
        raise ActionParseError(
            f"reply is {len(text)} characters long, more than the {MAX_REPLY_CHARS} a parser reads",
            hint="check max_tokens and the model's stop sequences",
        )


def find_blocks(text: str) -> list[Block]:
    """All fenced blocks of ``text`` in order.

    Raises:
        ActionParseError: If a fence is opened and never closed (a truncated reply).
    """
    blocks = []
    end = 0
    for match in _FENCE.finditer(text):
        body = match.group(2)
        if body.startswith("\n"):
            body = body[1:]
            start = match.start(2) + 1
        else:
            body = body.lstrip(" \t")
            start = match.start(2)
        blocks.append(Block(match.group(1) or "", body, text.count("\n", 0, start) + 1))
        end = match.end()
    rest = text.find("```", end)
    if rest >= 0:
        raise ActionParseError(
            "code block is opened but never closed; the reply looks truncated",
            where=f"line {text.count(chr(10), 0, rest) + 1}",
            hint="raise max_tokens or ask for shorter replies",
        )
    return blocks


def prose_outside(text: str) -> str:
    """The reply without its fenced blocks, stripped (a model's reasoning around its code)."""
    return _FENCE.sub("", text).strip()


def terminal_word(text: str) -> str | None:
    r"""``WAIT``, ``DONE`` or ``FAIL`` when ``text`` is just that word.

    Examples:
        >>> terminal_word("  DONE\n"), terminal_word("done"), terminal_word("DONE now")
        ('DONE', None, None)
    """
    word = text.strip()
    return word if word in _TERMINAL_WORDS else None


def last_line_word(text: str) -> str | None:
    """``WAIT``, ``DONE`` or ``FAIL`` when the last non-empty line of ``text`` is that word."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return terminal_word(lines[-1]) if lines else None
