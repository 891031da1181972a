r"""Text from outside made valid Unicode: lone surrogates (``"\ud800"`` is valid JSON) become U+FFFD.

JSON may escape UTF-16 surrogates one by one; a parser gives them to Python as they are, and such a
string cannot be encoded as UTF-8: writing it to a file, a terminal or Qt fails. A pair split over two
pieces of a stream is joined back into its character.

Examples:
    >>> well_formed("a\ud800b")
    'a\ufffdb'
    >>> well_formed("\ud83d" + "\ude00") == "\U0001f600"
    True
    >>> well_formed("plain é")
    'plain é'
    >>> well_formed_data({"k": ["x\udfff", 1]})
    {'k': ['x\ufffd', 1]}
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """``text`` with surrogate pairs joined and every lone surrogate replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with :func:`well_formed` applied to every string."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed_data(k): well_formed_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [well_formed_data(v) for v in value]
    return value
