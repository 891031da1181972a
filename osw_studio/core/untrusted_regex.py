r"""Regular expressions from tasks and replies, run in a worker process that is killed when one runs long.

A task's pattern meets text a guest or a model wrote: ``(a+)+$`` on a line of forty ``a`` and a ``b``
backtracks for hours, and Python's ``re`` holds the interpreter's lock all that time (no Ctrl+C, no
timeout, no other thread). Every such search therefore runs here: in one worker process per host
process (plain Python ``re``, so a pattern means exactly what it means to OSWorld), each call answered
within :data:`~osw_studio.core.limits.REGEX_SECONDS` or the worker is killed and the call fails with a
clear error. A batch of texts (the lines of a file) is one call. A frozen application has no interpreter
to run the worker with: there the searches run in-process, without the time limit.

Examples:
    >>> search(r"total:\s*\d+", "Total: 12", re.IGNORECASE, where="doc")
    True
    >>> search_each("^a", ["abc", "bca"], where="doc")
    [True, False]
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from osw_studio.core import limits
from osw_studio.core.errors import EvaluationError

_WORKER = r"""
import json, re, sys
for line in sys.stdin:
    call = json.loads(line)
    try:
        pattern = re.compile(call["pattern"], call["flags"])
        answer = {"found": [pattern.search(t) is not None for t in call["texts"]]}
    except re.error as exc:
        answer = {"error": str(exc)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""


class _Worker:
    """The worker process and the one call at a time it answers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
            self._buffer = b""
        return self._process

    def kill(self) -> None:
        """End the worker (the next call starts another)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()  # our own child, by its handle
        if process is not None:
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()

    def call(self, pattern: str, flags: int, texts: Sequence[str], seconds: float) -> dict[str, object]:
        with self._lock:
            process = self._start()
            assert process.stdin is not None and process.stdout is not None
            request = json.dumps({"pattern": pattern, "flags": int(flags), "texts": list(texts)}) + "\n"
            try:
                process.stdin.write(request.encode("utf-8", "surrogatepass"))
                process.stdin.flush()
            except OSError:
                self.kill()
                raise
            deadline = time.monotonic() + seconds
            fd = process.stdout.fileno()
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    self.kill()
                    raise TimeoutError
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self.kill()
                    raise OSError("the regex worker ended")
                self._buffer += chunk
            line, _, self._buffer = self._buffer.partition(b"\n")
            answer: dict[str, object] = json.loads(line)
            return answer


_worker = _Worker()
_IN_PROCESS = bool(getattr(sys, "frozen", False))
"""Whether searches run here (a frozen application: ``sys.executable`` is the app, not Python)."""
atexit.register(_worker.kill)


def search_each(
    pattern: str, texts: Sequence[str], flags: int | re.RegexFlag = 0, *, where: str
) -> list[bool]:
    """Whether ``pattern`` is found in each of ``texts`` (``re.search`` semantics), within the time cap.

    Raises:
        re.error: If the pattern is not a regular expression.
        TypeError: If a text is not a string (as ``re.search``).
        EvaluationError: If the search took longer than :data:`~osw_studio.core.limits.REGEX_SECONDS`.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"{where}: the pattern is not text: {pattern!r}")
    for text in texts:
        if not isinstance(text, str):  # as re.search: None or a number is an error, not "no match"
            raise TypeError(f"expected string, got {type(text).__name__!r} (in {where})")
    if not texts:
        return []
    if _IN_PROCESS:
        compiled = re.compile(pattern, flags)
        return [compiled.search(t) is not None for t in texts]
    try:
        answer = _worker.call(pattern, int(flags), texts, limits.REGEX_SECONDS)
    except TimeoutError:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        raise EvaluationError(
            f"the regular expression {shown!r} ran longer than {limits.REGEX_SECONDS:g} s and was stopped",
            where=where,
            hint="the pattern backtracks catastrophically on this text (nested repetition such as "
            "(a+)+); rewrite it",
        ) from None
    if "error" in answer:
        raise re.error(f"{answer['error']} (in {where})")
    found = answer["found"]
    assert isinstance(found, list)
    return [bool(f) for f in found]


def search(pattern: str, text: str, flags: int | re.RegexFlag = 0, *, where: str) -> bool:
    """Whether ``pattern`` is found in ``text``, within the time cap (see :func:`search_each`)."""
    return search_each(pattern, [text], flags, where=where)[0]
