"""The bridge from a running :class:`~osw_studio.runner.batch.Batch` to Qt.

:class:`SuiteRun` runs the batch on the app's asyncio loop (qasync: the Qt main thread, so the window
stays live) and re-emits the batch's psygnal signals as Qt signals; a listener that raises is logged,
never fatal to the batch. A batch that cannot run (its output folder cannot be written) ends with
:attr:`SuiteRun.failed` carrying the error, for the window to show as a message.
:mod:`osw_studio.ui.suite_view` shows its progress.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, Signal

from osw_studio.core.errors import OswError
from osw_studio.runner.batch import Batch
from osw_studio.runner.summary import BatchSummary
from osw_studio.ui.bridge import SignalRelay

log = logging.getLogger(__name__)

RELAYED = ("task_started", "task_finished", "progress_changed", "batch_finished")
"""The batch's signals the suite run re-emits on the Qt side."""
SUITE_SIGNALS = (*RELAYED, "failed")
"""Every Qt signal of a suite run: the one list views listen to (``failed`` is the run's own)."""


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
