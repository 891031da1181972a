"""The accessibility tree, read from AT-SPI by :mod:`osw_studio.guest.atspi_dump` under the system Python.

AT-SPI needs the desktop's D-Bus session (``DBUS_SESSION_BUS_ADDRESS``) and the distribution's pyatspi
(``/usr/bin/python3``). Where either is missing, :class:`AccessibilityUnavailable` says which, and the
server answers 501 with that message.
"""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

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


def accessibility_tree(python: str = SYSTEM_PYTHON) -> str:
    """The desktop's accessibility tree as OSWorld's XML (``desktop-frame`` root).

    Raises:
        AccessibilityUnavailable: If AT-SPI cannot be read (no D-Bus session, no pyatspi, no bus).
    """
    reason = unavailable_reason(python)
    if reason:
        raise AccessibilityUnavailable(reason)
    try:
        result = subprocess.run(
            [python, str(_HELPER)], capture_output=True, text=True, timeout=_TIMEOUT_S, env=dict(os.environ)
        )
    except subprocess.TimeoutExpired as exc:
        raise AccessibilityUnavailable(
            f"AT-SPI accessibility did not answer within {_TIMEOUT_S:.0f} s (is the AT-SPI bus running?)"
        ) from exc
    if result.returncode != 0 or not result.stdout.startswith("<desktop-frame"):
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise AccessibilityUnavailable(f"AT-SPI accessibility failed: {last}")
    return result.stdout


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
