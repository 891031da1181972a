"""The suite view: Run › Evaluate suite…, its progress in the status bar and its results.

:class:`SuiteView` opens the suite dialog, runs the batch it plans through a
:class:`~osw_studio.ui.suite_run.SuiteRun` (one at a time, never beside a single run), shows its progress
in the status bar (:class:`SuiteProgress`: done/total, successes, ETA and a Stop button), lists its runs in
Run history and asks the window to show its results as tasks finish.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from osw_studio.runner.batch import Batch, BatchProgress
from osw_studio.runner.summary import RUNS_DIR, BatchSummary, TaskOutcome
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.results_view import ResultsView
from osw_studio.ui.run_history import RunHistory
from osw_studio.ui.services import Services
from osw_studio.ui.status import RunStatusBar, money
from osw_studio.ui.suite_run import SUITE_SIGNALS, SuiteRun

if TYPE_CHECKING:
    from osw_studio.runner.suite import SuitePlan
    from osw_studio.ui.suite_dialog import SuiteDialog


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
    >>> progress_text(BatchProgress(4, 1, 0, 2, 1, 30, 90, tokens=1200, cost=0.5))
    'suite 1/4 · ok 1 · running 2 · ETA 1:30 · 1,200 tokens $0.5000'
    """
    text = (
        f"suite {progress.done}/{progress.total} · ok {progress.successes} · running {progress.running}"
        f" · ETA {clock(progress.eta)}"
    )
    if progress.tokens:
        text += f" · {progress.tokens:,} tokens {money(progress.cost)}"
    return text


class SuiteView(QObject):
    """A suite evaluation in the window: the dialog, the batch, its progress and its results.

    Each suite run signal (``SUITE_SIGNALS``, the one list) is handled by the method named
    ``_on_<signal>`` when this class has one.

    Signals:
        controls_changed(): A suite started or ended (the window enables its actions).
        results_changed(Path): The suite's results folder has new results to show.

    Args:
        services: The settings, env options and runs folder.
        reporter: Shows errors as messages.
        status: The status bar (the progress goes there).
        results: The Results dock's view.
        history: Run history (the suite's runs are listed there too).
        parent: The window (the dialog's parent).
    """

    controls_changed = Signal()
    results_changed = Signal(Path)

    def __init__(
        self,
        services: Services,
        reporter: ErrorReporter,
        *,
        status: RunStatusBar,
        results: ResultsView,
        history: RunHistory,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.services = services
        self.reporter = reporter
        self.status = status
        self.results = results
        self.history = history
        self.window = parent
        self.run: SuiteRun | None = None
        self.busy_elsewhere: Callable[[], bool] = lambda: False
        """Whether something else holds the env (a single run): set by the window."""
        self._active = False
        self.progress = SuiteProgress()
        self.progress.stop_button.clicked.connect(self.stop)
        status.addPermanentWidget(self.progress)

    @property
    def running(self) -> bool:
        """Whether a suite evaluation is in progress (single-task runs wait for it, and vice versa).

        True from the start until the view has finished ending it (progress hidden, actions enabled
        again), not only while the batch's task runs.
        """
        return self._active

    def open_dialog(self) -> SuiteDialog | None:
        """Run › Evaluate suite…: ask for a suite, agent, envs and output folder, then run it."""
        from osw_studio.ui.suite_dialog import SuiteDialog

        if self.running or self.busy_elsewhere():
            self.status.showMessage("Stop the current run before evaluating a suite.", 5000)
            return None
        dialog = SuiteDialog(
            self.services.settings,
            self.services.runs_dir.parent / "suites",
            env_options=self.services.env_options,
            parent=self.window,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.batch_ready.connect(self.start)
        dialog.open()
        return dialog

    def start(self, plan: SuitePlan, batch: Batch) -> SuiteRun:
        """Run ``batch`` on the loop; progress in the status bar, results in the Results dock."""
        run = SuiteRun(batch, self)
        self.run = run
        self._active = True
        run.listen_by_name(self, SUITE_SIGNALS)
        self.progress.begin(len(plan.entries))
        self.status.showMessage(
            f"Evaluating {plan.info.suite}: {len(plan.entries)} tasks on {len(batch.workers)} "
            f"{plan.provider} env(s), results in {plan.out}"
        )
        run.start().add_done_callback(lambda _task: self._on_ended())
        self.controls_changed.emit()
        return run

    def stop(self) -> None:
        """Stop the suite: no more tasks start; those in flight end as stopped (Resume runs them)."""
        if self.run is not None and self.run.running:
            self.run.stop()
            self.progress.stopping()
            self.status.showMessage("Stopping the suite: the tasks in flight end as stopped…")

    async def shutdown(self) -> None:
        """Stop the suite and wait until its tasks have ended."""
        if self.run is not None:
            self.run.stop()
            await self.run.wait()

    def _on_progress_changed(self, progress: BatchProgress) -> None:
        self.progress.show_progress(progress)

    def _on_task_finished(self, outcome: TaskOutcome) -> None:
        run = self.run
        if run is None:
            return
        if self.results.folder != run.batch.out:
            self.results_changed.emit(run.batch.out)
        else:
            self.results.refresh()
        self.history.add_suite(run.batch.out / RUNS_DIR)  # the suite's runs are in Run history too
        score = "–" if outcome.score is None else f"{outcome.score:.2f}"
        self.status.showMessage(f"{outcome.domain}/{outcome.task_id}: {outcome.status}, score {score}", 5000)

    def _on_batch_finished(self, summary: BatchSummary) -> None:
        run = self.run
        if run is None:
            return
        self.results_changed.emit(run.batch.out)
        solved = sum(t.success for t in summary.tasks)
        ended = "stopped" if run.stopped else "finished"
        self.status.showMessage(
            f"Suite {ended}: {solved} of {summary.tasks_total} tasks solved; results in {run.batch.out}"
        )

    def _on_failed(self, error: BaseException) -> None:
        self.reporter.report(error)
        self.status.showMessage("The suite did not run.", 8000)

    def _on_ended(self) -> None:
        self.progress.hide()
        self._active = False
        self.controls_changed.emit()


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
