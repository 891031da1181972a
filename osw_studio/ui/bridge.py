"""Relaying a core object's psygnal signals to Qt signals, with listeners that cannot break the core.

A core object (an episode, a batch) emits psygnal signals; psygnal would raise a listener's error back
into the emitter, so a broken view could stop a run. :class:`SignalRelay` re-emits each signal as the Qt
signal of the same name that the subclass declares, logging (never raising) what a listener throws.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QObject

log = logging.getLogger(__name__)


class SignalRelay(QObject):
    """A QObject whose Qt signals mirror some psygnal signals of one core object.

    Subclasses declare the Qt signals (same names and arguments) and call :meth:`relay` once; a view
    binds its ``_on_<signal>`` methods with :meth:`listen_by_name`.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridges: list[tuple[Any, Callable[..., None]]] = []

    def relay(self, source: object, names: Iterable[str], *, what: str) -> None:
        """Re-emit ``source``'s psygnal signals ``names`` as this object's Qt signals.

        Args:
            source: The core object.
            names: Signal names, the same on both sides.
            what: What goes on when a listener fails, for the log (``the run``, ``the suite``).
        """
        for name in names:
            signal = getattr(source, name)
            bridge = self._bridge(name, what)
            signal.connect(bridge)
            self._bridges.append((signal, bridge))

    def _bridge(self, name: str, what: str) -> Callable[..., None]:
        qt_signal = getattr(self, name)

        def bridge(*args: Any) -> None:
            try:
                qt_signal.emit(*args)
            except Exception:
                log.exception("a view failed while handling %s; %s goes on", name, what)

        return bridge

    def unrelay(self) -> None:
        """Stop relaying (the core object is done)."""
        for signal, bridge in self._bridges:
            with contextlib.suppress(Exception):
                signal.disconnect(bridge)
        self._bridges.clear()

    def listen(self, name: str, slot: Callable[..., Any]) -> None:
        """Connect ``slot`` to the Qt signal ``name``; if it raises, the error is logged, not fatal."""

        def guarded(*args: Any) -> None:
            try:
                slot(*args)
            except Exception:
                log.exception("%s failed handling %s", getattr(slot, "__qualname__", slot), name)

        getattr(self, name).connect(guarded)

    def listen_by_name(self, view: object, names: Iterable[str]) -> None:
        """Connect each signal of ``names`` to ``view``'s ``_on_<name>`` method, where it has one.

        Through :meth:`listen` (a handler that raises is logged). A view keeps no list of its own: it
        handles the signals of the one list (``names``) it has a method for.
        """
        for name in names:
            handler: Callable[..., Any] | None = getattr(view, f"_on_{name}", None)
            if handler is not None:
                self.listen(name, handler)
