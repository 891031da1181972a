"""The caps on untrusted bytes: what a guest, a model endpoint or a task file may send, in one place.

Every answer from outside is read against a cap while it arrives (never read whole and measured after):
an answer over its cap ends the request with a clear error naming the cap, and what was already
recorded stays recorded. The numbers are far above what real guests, models and tasks produce and far
below what would exhaust the host.

Examples:
    >>> loads_bounded('{"a": [1, 2]}', where="x")
    {'a': [1, 2]}
    >>> json_depth([[[]]])
    3
    >>> bounded_prefix("abcdef", 3)
    ('abc', True)
"""

from __future__ import annotations

import io
import json
import warnings
from typing import Any

MIB = 1024 * 1024

GUEST_ANSWER_BYTES = 256 * MIB
"""A guest answer's size, on the wire and decoded (gzip, deflate and br included): files, recordings."""

GUEST_SCREENSHOT_BYTES = 32 * MIB
"""An encoded screenshot (an 8K PNG of noise is about 100 MB raw, 30 MB encoded; real screens far less)."""

GUEST_JSON_BYTES = 32 * MIB
"""A guest's JSON answer (command output, accessibility XML, directory trees)."""

SCREENSHOT_PIXELS = 8192 * 8192
"""Pixels of a screenshot or an image sent to a model, read from its header before it is decoded."""

MODEL_BODY_BYTES = 64 * MIB
"""A model endpoint's answer, streamed or not, decoded (a stream's events carry several times the text)."""

MODEL_REPLY_CHARS = 4 * MIB
"""Characters of one model reply (the longest real replies, reasoning included, are some 100,000)."""

STORED_REPLY_CHARS = 256 * 1024
"""Characters of a refused reply kept in the run store (its start, and the fact that it was cut)."""

JSON_DEPTH = 200
"""Nesting of JSON from a guest, a model or a task file (real documents nest under 20 levels)."""

STEP_WAITS_S = 60.0
"""Seconds all the waits of one step may take together (``time.sleep`` calls, ``wait`` actions); the
waits past it are skipped. A stop (Ctrl+C, the Stop button) ends a wait at once."""

STOP_GRACE_S = 5.0
"""Seconds an action or an observation in flight may still take after a stop (Ctrl+C, the Stop button,
``--task-timeout``) before it is abandoned: a guest that never answers cannot hold a stop for the phase's
whole timeout. The model call, the setup and the evaluation are abandoned at once."""

REGEX_SECONDS = 5.0
"""Seconds one search with a task's or a reply's regular expression may take (over all the texts of the
call, e.g. a file's lines) before its worker is killed (see :mod:`osw_studio.core.untrusted_regex`)."""

DECODE_CHUNK = 64 * 1024
"""Bytes a decompressor may produce at a time, so a decoded size is checked as it grows."""


class LimitExceeded(ValueError):
    """Untrusted input went over one of the caps above; the message says which and by how much."""


def human_size(n: float) -> str:
    """Bytes for people.

    >>> human_size(512), human_size(3 * MIB), human_size(2 * 1024 * MIB)
    ('512 B', '3.0 MiB', '2.0 GiB')
    """
    if n < 1024:
        return f"{int(n)} B"
    if n < MIB:
        return f"{n / 1024:.1f} KiB"
    if n < 1024 * MIB:
        return f"{n / MIB:.1f} MiB"
    return f"{n / 1024 / MIB:.1f} GiB"


def json_depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0), walked without recursion."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        todo.extend((child, depth) for child in children)
    return deepest


def check_json_depth(value: Any, *, where: str, limit: int = JSON_DEPTH) -> Any:
    """``value`` itself, if it nests at most ``limit`` levels.

    Raises:
        LimitExceeded: If it nests deeper.
    """
    if json_depth(value) > limit:
        raise LimitExceeded(f"{where}: JSON nested more than {limit} levels deep")
    return value


def loads_bounded(text: str | bytes, *, where: str, limit: int = JSON_DEPTH) -> Any:
    """``json.loads`` that ends in :class:`LimitExceeded` (a ``ValueError``) on nesting deeper than ``limit``.

    Nesting that would exhaust Python's stack (a ``RecursionError`` inside the parser) is the same error.

    Raises:
        json.JSONDecodeError: If ``text`` is not JSON.
        LimitExceeded: If it nests too deeply.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise LimitExceeded(f"{where}: JSON nested more than {limit} levels deep") from None
    return check_json_depth(value, where=where, limit=limit)


def bounded_prefix(text: str, limit: int = STORED_REPLY_CHARS) -> tuple[str, bool]:
    """The first ``limit`` characters of ``text`` and whether anything was cut."""
    return (text, False) if len(text) <= limit else (text[:limit], True)


def check_image(data: bytes, *, where: str, max_pixels: int = SCREENSHOT_PIXELS) -> tuple[int, int]:
    """The ``(width, height)`` an encoded image declares, read from its header without decoding it.

    Raises:
        LimitExceeded: If it declares more than ``max_pixels`` pixels (a decompression bomb: a few MB
            of PNG can declare gigabytes of pixels, and Pillow's own guard allows 178 million).
        ValueError: If the header is not an image's.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # the warning is for what we refuse below, or pass on purpose
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
    except Image.DecompressionBombError as exc:
        raise LimitExceeded(f"{where}: the image is too large to decode ({exc})") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"{where}: not an image ({exc})") from None
    if width * height > max_pixels:
        raise LimitExceeded(
            f"{where}: the image is {width}×{height} pixels, over the cap of {max_pixels:,} pixels"
        )
    return width, height
