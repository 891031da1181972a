"""The parts of the main window that the widgets it holds reach for, typed without importing the window.

A widget the window builds (the instruction box) takes its window as a :class:`RunWindow`: the main
window fits it, and the widget's module need not import the window's, which imports the widget.
"""

from __future__ import annotations

from typing import Protocol

from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.run_view import RunView
from osw_studio.ui.services import Services
from osw_studio.ui.status import RunStatusBar


class RunWindow(Protocol):
    """A window with a run view, a status bar, the services and an error reporter."""

    services: Services
    status: RunStatusBar
    run_view: RunView

    @property
    def reporter(self) -> ErrorReporter:
        """Shows errors as messages."""
        ...
