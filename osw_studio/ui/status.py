"""The status bar: env, model, step n / max, tokens, last model latency, and the run's state."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from osw_studio.agent.faithful import Faithfulness
from osw_studio.core.step import StepRecord


def money(cost: float | None) -> str:
    """A cost as the status bar and Results show it; ``cost ?`` when a price is unknown.

    >>> money(0.0123456), money(None), money(12.5)
    ('$0.0123', 'cost ?', '$12.50')
    """
    if cost is None:
        return "cost ?"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


class RunStatusBar(QStatusBar):
    """Permanent fields on the right; transient messages on the left.

    A message too long for the space left of the fields is shown elided (``…``), the whole of it in the
    bar's tooltip; :meth:`currentMessage` is the whole message.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.env_label = QLabel("env: –")
        self.model_label = QLabel("model: –")
        self.step_label = QLabel("step –")
        self.tokens_label = QLabel("tokens 0")
        self.latency_label = QLabel("latency –")
        self.state_label = QLabel("idle")
        for label in (
            self.env_label,
            self.model_label,
            self.step_label,
            self.tokens_label,
            self.latency_label,
            self.state_label,
        ):
            label.setContentsMargins(8, 0, 8, 0)
            self.addPermanentWidget(label)
        self.tokens = 0
        self.cost: float | None = 0.0
        """The run's cost so far; None once a step used tokens at an unknown price."""
        self.faithful_label = QLabel("")
        self.faithful_label.setObjectName("faithful")
        self.faithful_label.setContentsMargins(8, 0, 8, 0)
        self.addPermanentWidget(self.faithful_label)
        self._message = ""
        self._shown = ""
        self._until: float | None = None
        self.messageChanged.connect(self._on_message_changed)

    def set_faithful(self, verdict: Faithfulness) -> None:
        """Whether the run's profile is leaderboard-faithful (the change to make in the tooltip)."""
        short = {True: "faithful", False: "not faithful", None: ""}[verdict.faithful]
        self.faithful_label.setText(short)
        tip = verdict.text + (f"; to be faithful: {verdict.change}" if verdict.change else "")
        self.faithful_label.setToolTip(tip)

    def showMessage(self, message: str, /, timeout: int | None = 0) -> None:  # noqa: D102 (Qt override)
        self._message = message
        self._shown = self._elided(message)
        self._until = time.monotonic() + timeout / 1000 if timeout else None
        self.setToolTip(message if self._shown != message else "")
        super().showMessage(self._shown, timeout or 0)

    def currentMessage(self) -> str:  # noqa: D102 (Qt override: the whole message, not its elided text)
        shown = super().currentMessage()
        return self._message if shown and shown == self._shown else shown

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: D102 (Qt override)
        super().resizeEvent(event)
        if self._message and super().currentMessage() == self._shown:
            shown = self._elided(self._message)
            if shown != self._shown:
                self._shown = shown
                self.setToolTip(self._message if shown != self._message else "")
                left = 0 if self._until is None else max(1, int((self._until - time.monotonic()) * 1000))
                super().showMessage(shown, left)  # for the time the message had left

    def _elided(self, message: str) -> str:
        fields = [w.x() for w in self.findChildren(QWidget) if w.parent() is self and w.isVisible()]
        right = min((x for x in fields if x > 0), default=self.width())
        room = max(right - 24, 40)
        return self.fontMetrics().elidedText(message, Qt.TextElideMode.ElideRight, room)

    def _on_message_changed(self, shown: str) -> None:
        if not shown:
            self._message = self._shown = ""
            self.setToolTip("")

    def set_env(self, text: str) -> None:
        """The env in use (``local:99 · 1920×1080``)."""
        self.env_label.setText(f"env: {text}")

    def set_model(self, text: str) -> None:
        """The model that acts."""
        self.model_label.setText(f"model: {text}")

    def set_step(self, index: int, max_steps: int) -> None:
        """Step ``index`` of ``max_steps``."""
        self.step_label.setText(f"step {index} / {max_steps}")

    def set_state(self, state: str, paused: bool = False) -> None:
        """The run's state (``predicting``, ``gating`` ...), marked when paused."""
        self.state_label.setText(f"{state} · paused" if paused else state)

    def reset_run(self, max_steps: int) -> None:
        """A new run starts."""
        self.tokens = 0
        self.cost = 0.0
        self.tokens_label.setText("tokens 0")
        self.latency_label.setText("latency –")
        self.set_step(0, max_steps)

    def add_step(self, record: StepRecord) -> None:
        """Count a finished step's tokens and show its model latency."""
        if record.usage is not None:
            self.tokens += record.usage.total_tokens
            if record.cost is None or self.cost is None:
                self.cost = None
            else:
                self.cost += record.cost
            self.tokens_label.setText(f"tokens {self.tokens:,} · {money(self.cost)}")
        predict = record.timings.get("predict")
        if predict is not None:
            self.latency_label.setText(f"latency {predict * 1000:.0f} ms")
