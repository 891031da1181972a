"""Errors as messages a person can act on: what went wrong, where, what to do; never a traceback.

:func:`install_excepthook` routes uncaught exceptions (also those raised in Qt slots and asyncio
callbacks) to the log and to a dialog. An :class:`OswError` shows its own message and hint; anything else
is a bug, shown as one line with the log file to attach to a report.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from osw_studio.core.errors import OswError

log = logging.getLogger("osw_studio.ui")


def error_text(exc: BaseException, log_file: Path | None = None) -> tuple[str, str]:
    r"""The title and body a person sees for ``exc``.

    >>> from osw_studio.core.errors import GuestError
    >>> error_text(GuestError("guest did not answer", where="http://127.0.0.1:5000", hint="start it"))
    ('Guest error', 'guest did not answer\n\nWhere: http://127.0.0.1:5000\n\nWhat to do: start it')
    >>> error_text(KeyError("x"))[0], error_text(OswError("bad"))[0]
    ('Unexpected error', 'Error')
    """
    if isinstance(exc, OswError):
        title = type(exc).__name__.removesuffix("Error").replace("Osw", "") or "Error"
        parts = [exc.message]
        if exc.where:
            parts.append(f"Where: {exc.where}")
        if exc.hint:
            parts.append(f"What to do: {exc.hint}")
        return ("Error" if title == "Error" else f"{title} error"), "\n\n".join(parts)
    where = f" The details are in {log_file}." if log_file else " The details are in the log."
    body = f"{type(exc).__name__}: {exc}\n\nThis is a bug in OSW Studio.{where} Please report it."
    return "Unexpected error", body


Shower = Callable[[str, str], None]


def _dialog(parent: QWidget | None) -> Shower:
    def show(title: str, body: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, body, QMessageBox.StandardButton.Ok, parent)
        box.setObjectName("errorDialog")
        box.open()  # not exec(): a nested event loop would stall the asyncio loop

    return show


class ErrorReporter:
    """Shows errors as dialogs (at most one at a time; repeats are counted, not stacked).

    Args:
        parent: The window dialogs belong to.
        log_file: The log file named in bug messages.
        show: How to show a message (tests pass a recorder).
    """

    def __init__(
        self, parent: QWidget | None = None, log_file: Path | None = None, show: Shower | None = None
    ) -> None:
        self.log_file = log_file
        self._show = show or _dialog(parent)
        self.shown: list[tuple[str, str]] = []
        self._last: tuple[str, str] | None = None

    def report(self, exc: BaseException) -> None:
        """Log ``exc`` and show it."""
        if isinstance(exc, OswError):
            log.warning("%s", exc)
        else:
            log.error("unexpected error", exc_info=(type(exc), exc, exc.__traceback__))
        title, body = error_text(exc, self.log_file)
        if (title, body) == self._last:
            return
        self._last = (title, body)
        self.shown.append((title, body))
        # show from the event loop, never from inside the failing call
        QTimer.singleShot(0, lambda: self._show(title, body))
        QTimer.singleShot(3000, self._forget)

    def _forget(self) -> None:
        self._last = None

    def excepthook(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        """A ``sys.excepthook``: errors go to the log and a dialog, never to a traceback on screen."""
        if issubclass(exc_type, KeyboardInterrupt):
            QApplication.quit()
            return
        self.report(exc.with_traceback(tb))

    def loop_exception_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """An asyncio exception handler with the same behaviour."""
        exc = context.get("exception")
        if isinstance(exc, BaseException) and not isinstance(exc, asyncio.CancelledError):
            self.report(exc)
        else:
            log.warning("event loop: %s", context.get("message"))


def install_excepthook(reporter: ErrorReporter, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Route uncaught exceptions of Python, Qt slots and the asyncio loop to ``reporter``."""
    sys.excepthook = reporter.excepthook
    if loop is not None:
        loop.set_exception_handler(reporter.loop_exception_handler)
