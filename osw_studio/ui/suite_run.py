"""The bridge from a running :class:`~osw_studio.runner.batch.Batch` to Qt, and its status-bar progress.

:class:`SuiteRun` runs the batch on the app's asyncio loop (qasync: the Qt main thread, so the window
stays live) and re-emits the batch's psygnal signals as Qt signals; a listener that raises is logged,
never fatal to the batch. A batch that cannot run (its output folder cannot be written) ends with
:attr:`SuiteRun.failed` carrying the error, for the window to show as a message.
:class:`SuiteProgress` is the status bar's part: done/total, successes, ETA and a Stop button.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from osw_studio.core.errors import OswError
from osw_studio.runner.batch import Batch, BatchProgress
from osw_studio.runner.summary import BatchSummary
from osw_studio.ui.bridge import SignalRelay

log = logging.getLogger(__name__)

RELAYED = ("task_started", "task_finished", "progress_changed", "batch_finished")


def clock(seconds: float | None) -> str:
    """``m:ss`` (or ``h:mm:ss``) for a duration; ``--:--`` when unknown.

    >>> clock(75), clock(3725), clock(None)
    ('1:15', '1:02:05', '--:--')
    """
    if seconds is None:
        return "--:--"
    s = int(seconds + 0.5)
    h, m, s = s // 3600, s // 60 % 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def progress_text(progress: BatchProgress) -> str:
    """What the status bar says about a running suite.

    >>> progress_text(BatchProgress(total=4, done=1, skipped=0, running=2, successes=1, elapsed=30, eta=90))
    'suite 1/4 · ok 1 · running 2 · ETA 1:30'
    """
    return (
        f"suite {progress.done}/{progress.total} · ok {progress.successes} · running {progress.running}"
        f" · ETA {clock(progress.eta)}"
    )


class SuiteRun(SignalRelay):
    """Runs one batch on the event loop and relays its signals to Qt.

    Args:
        batch: The batch to run (once).

    Signals:
        task_started(str, object): A worker's name and the task's ``TaskEntry``.
        task_finished(object): A task's ``TaskOutcome``.
        progress_changed(object): The ``BatchProgress``.
        batch_finished(object): The ``BatchSummary``, written to ``summary.json``.
        failed(object): The exception that ended the batch before its summary.
    """

    task_started = Signal(str, object)
    task_finished = Signal(object)
    progress_changed = Signal(object)
    batch_finished = Signal(object)
    failed = Signal(object)

    def __init__(self, batch: Batch, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.batch = batch
        self.stopped = False
        self._task: asyncio.Task[BatchSummary | None] | None = None
        self.relay(batch, RELAYED, what="the suite")

    def start(self) -> asyncio.Task[BatchSummary | None]:
        """Run the batch on the event loop (once)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return self._task

    async def _run(self) -> BatchSummary | None:
        try:
            return await self.batch.run()
        except OswError as exc:
            self.failed.emit(exc)
        except Exception as exc:  # a bug: logged with its traceback, shown as one line
            log.exception("the suite ended with an unexpected error")
            self.failed.emit(exc)
        finally:
            self.unrelay()
        return None

    @property
    def running(self) -> bool:
        """Whether the batch is in progress."""
        return self._task is not None and not self._task.done()

    def stop(self) -> None:
        """Take no more tasks; the ones in flight end as stopped (Resume runs them later)."""
        if self.running and not self.stopped:
            self.stopped = True
            self.batch.stop()

    async def wait(self) -> BatchSummary | None:
        """Wait until the batch ends; its summary (None if it failed or never started)."""
        if self._task is None:
            return None
        return await self._task


class SuiteProgress(QWidget):
    """The status bar's suite progress: a bar, done/total with ETA, and Stop (hidden when idle)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(False)
        self.label = QLabel()
        self.label.setObjectName("suiteProgress")
        self.stop_button = QPushButton("Stop suite")
        self.stop_button.setObjectName("stopSuite")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        layout.addWidget(self.stop_button)
        self.hide()

    def begin(self, total: int) -> None:
        """A suite of ``total`` tasks starts."""
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(0)
        self.label.setText(f"suite 0/{total}")
        self.stop_button.setEnabled(True)
        self.show()

    def show_progress(self, progress: BatchProgress) -> None:
        """Where the suite is."""
        self.bar.setRange(0, max(progress.total, 1))
        self.bar.setValue(progress.done)
        self.label.setText(progress_text(progress))

    def stopping(self) -> None:
        """Stop was pressed: the tasks in flight are ending."""
        self.stop_button.setEnabled(False)
        self.label.setText(self.label.text() + " · stopping…")
