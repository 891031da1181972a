"""The accessibility tree, read from AT-SPI by :mod:`osw_studio.guest.atspi_dump` under the system Python.

AT-SPI needs the desktop's D-Bus session (``DBUS_SESSION_BUS_ADDRESS``) and the distribution's pyatspi
(``/usr/bin/python3``). Where either is missing, :class:`AccessibilityUnavailable` says which, and the
server answers 501 with that message.

One long-lived helper process (:class:`AtspiWorker`) answers every request, as OSWorld's server walks
the tree in its own process: starting Python and pyatspi per request cost more than the walk. A helper
that dies or does not answer in time is replaced at the next request.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import IO

from osw_studio.guest.atspi_dump import NAMESPACES

SYSTEM_PYTHON = "/usr/bin/python3"
_HELPER = Path(__file__).with_name("atspi_dump.py")
_TIMEOUT_S = 60.0


class AccessibilityUnavailable(Exception):
    """AT-SPI cannot be read here; the message says why and what to install or set."""


@cache
def _has_pyatspi(python: str) -> bool:
    try:
        result = subprocess.run([python, "-c", "import pyatspi"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def unavailable_reason(python: str = SYSTEM_PYTHON) -> str | None:
    """Why the accessibility tree cannot be read, or None when it can."""
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return (
            "AT-SPI accessibility is unavailable: the guest server has no D-Bus session "
            "(start it inside the desktop session, with DBUS_SESSION_BUS_ADDRESS set)"
        )
    if not Path(python).exists() or not _has_pyatspi(python):
        return (
            f"AT-SPI accessibility is unavailable: {python} cannot import pyatspi "
            "(install python3-pyatspi and at-spi2-core)"
        )
    return None


class AtspiWorker:
    """The long-lived helper process that walks the AT-SPI tree (``atspi_dump.py --serve``).

    Args:
        python: The Python that has pyatspi.
    """

    def __init__(self, python: str = SYSTEM_PYTHON) -> None:
        self.python = python
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def ask(self, op: str, timeout: float = _TIMEOUT_S) -> str:
        """The helper's answer to ``op`` (``tree`` or ``active``): OSWorld's XML.

        Raises:
            AccessibilityUnavailable: If AT-SPI cannot be read, or the helper fails or is too slow.
        """
        reason = unavailable_reason(self.python)
        if reason:
            raise AccessibilityUnavailable(reason)
        with self._lock:
            process = self._running()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(op.encode() + b"\n")
                process.stdin.flush()
                head = _read_line(process.stdout, timeout)
                status, _, size = head.decode().partition(" ")
                body = _read_exactly(process.stdout, int(size), timeout).decode("utf-8", "replace")
            except (OSError, ValueError, TimeoutError) as exc:
                self._stop()
                if isinstance(exc, TimeoutError):
                    raise AccessibilityUnavailable(
                        f"AT-SPI accessibility did not answer within {timeout:.0f} s "
                        "(is the AT-SPI bus running?)"
                    ) from exc
                raise AccessibilityUnavailable(f"AT-SPI accessibility failed: {exc}") from exc
        if status != "ok" or not body.startswith("<desktop-frame"):
            raise AccessibilityUnavailable(f"AT-SPI accessibility failed: {body.strip()[:300] or status}")
        return body

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [self.python, str(_HELPER), "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=dict(os.environ),
            )
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the helper."""
        with self._lock:
            self._stop()


def _read_line(pipe: IO[bytes], timeout: float) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        line += _read_some(pipe, 1, timeout)
    return line.strip()


def _read_exactly(pipe: IO[bytes], size: int, timeout: float) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        chunk = _read_some(pipe, min(size, 1 << 20), timeout)
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_some(pipe: IO[bytes], most: int, timeout: float) -> bytes:
    ready, _, _ = select.select([pipe], [], [], timeout)
    if not ready:
        raise TimeoutError(f"no answer within {timeout:g} s")
    data = os.read(pipe.fileno(), most)
    if not data:
        raise OSError("the AT-SPI helper exited")
    return data


_WORKER = AtspiWorker()


def accessibility_tree(python: str = SYSTEM_PYTHON) -> str:
    """The desktop's accessibility tree as OSWorld's XML (``desktop-frame`` root).

    Raises:
        AccessibilityUnavailable: If AT-SPI cannot be read (no D-Bus session, no pyatspi, no bus).
    """
    worker = _WORKER if python == _WORKER.python else AtspiWorker(python)
    return worker.ask("tree")


def terminal_text(python: str = SYSTEM_PYTHON) -> str | None:
    """The text of the focused terminal of the active window (:func:`focused_terminal_text`).

    Walks only the applications' active frames, as OSWorld's server first checks for an active
    terminal window before it walks anything.

    Raises:
        AccessibilityUnavailable: If AT-SPI cannot be read.
    """
    worker = _WORKER if python == _WORKER.python else AtspiWorker(python)
    return focused_terminal_text(worker.ask("active"))


def close_worker() -> None:
    """Stop the shared helper process (at server shutdown)."""
    _WORKER.close()


def focused_terminal_text(xml: str) -> str | None:
    r"""The text of the focused terminal in the active window, as OSWorld's ``/terminal`` reports it.

    Examples:
        >>> st = NAMESPACES["st"]
        >>> doc = (f'<desktop-frame xmlns:st="{st}"><application name="t"><frame st:active="true">'
        ...        '<terminal st:focused="true">$ ls\n</terminal></frame></application></desktop-frame>')
        >>> focused_terminal_text(doc)
        '$ ls'
        >>> focused_terminal_text('<desktop-frame/>') is None
        True
    """
    root = ET.fromstring(xml)
    active, focused = f"{{{NAMESPACES['st']}}}active", f"{{{NAMESPACES['st']}}}focused"
    found = [
        terminal
        for frame in root.iter("frame")
        if frame.get(active) == "true"
        for terminal in frame.iter("terminal")
        if terminal.get(focused) == "true"
    ]
    if len(found) != 1:
        return None
    return (found[0].text or "").rstrip()
