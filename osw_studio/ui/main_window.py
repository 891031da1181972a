"""The main window: docks for tasks, the viewer, the step inspector, the timeline, runs and results.

It composes the views, owns the toolbar and shortcuts (Run F5, Pause Space, Step F10, Stop Shift+F5,
Approve Enter, Take over Ctrl+T; mode auto / approve), and binds each new episode's
:class:`~osw_studio.ui.run_controller.RunController` to the views. Run › Evaluate suite… runs a whole
suite through :class:`~osw_studio.ui.suite_run.SuiteRun` (one at a time, never beside a single run). The
dock layout is saved with QSettings and restored on the next launch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QImage
from PySide6.QtWidgets import QComboBox, QDockWidget, QLabel, QMainWindow, QWidget

from osw_studio import __version__
from osw_studio.core.errors import OswError
from osw_studio.core.observation import Observation
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, Proposal
from osw_studio.runner.summary import RUNS_DIR
from osw_studio.tasks import TaskEntry, TaskLibrary
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.frames import FrameStream, decode_frame
from osw_studio.ui.results_view import ResultsView
from osw_studio.ui.review_window import ReviewWindow
from osw_studio.ui.run_controller import RunController
from osw_studio.ui.run_history import RunHistory, list_runs
from osw_studio.ui.services import Services
from osw_studio.ui.settings_dialog import SettingsDialog
from osw_studio.ui.status import RunStatusBar
from osw_studio.ui.step_inspector import StepInspector
from osw_studio.ui.suite_run import SuiteProgress, SuiteRun
from osw_studio.ui.task_browser import TaskBrowser
from osw_studio.ui.timeline import Timeline
from osw_studio.ui.viewer import ViewerWindow, VmViewer
from osw_studio.ui.window_actions import build_actions

if TYPE_CHECKING:
    from osw_studio.runner.batch import Batch, BatchProgress
    from osw_studio.runner.suite import SuitePlan
    from osw_studio.runner.summary import BatchSummary, TaskOutcome
    from osw_studio.ui.authoring import AuthoringWindow
    from osw_studio.ui.export_dialog import ExportDialog
    from osw_studio.ui.suite_dialog import SuiteDialog

log = logging.getLogger(__name__)

LAYOUT_VERSION = 3
"""Bumped when the docks change, so an older saved layout is not forced onto new docks."""

MIN_WINDOW = (1280, 720)
"""The smallest window everything fits in (a laptop screen)."""

DOCK_MIN_WIDTH = 220
"""The narrowest a side dock gets; the viewer keeps the rest."""


def result_word(result: EpisodeResult | None) -> str:
    """How the task list names a run's result: ``passed``, ``passed with help``, ``failed``, ``stopped``..."""
    if result is None:
        return "interrupted"
    if result.status in ("finished", "failed"):
        if result.success:
            return "passed with help" if result.assisted else "passed"
        return "failed"
    return result.status


SCORED = ("passed", "passed with help", "failed")


def last_results(runs_dir: Path) -> dict[str, str]:
    """The result of each task id in the runs folder: its newest scored run, else its newest run.

    A later stopped or interrupted run does not hide an earlier pass.
    """
    found: dict[str, str] = {}
    for run in reversed(list_runs(runs_dir)):  # oldest first, so newer runs overwrite
        try:
            result = run.result
            task_id = run.meta.task_id
        except OswError:
            continue
        word = result_word(result)
        if word in SCORED or found.get(task_id) not in SCORED:
            found[task_id] = word
    return found


class MainWindow(QMainWindow):
    """OSW Studio's window.

    Signals:
        closed(): The window closed (the app then shuts down its runs, sandboxes and env).

    Args:
        library: The tasks to offer.
        services: The env and episode factory.
        qsettings: Where the window layout is kept (default: the platform's QSettings for the app).
        reporter: Shows errors as messages (default: dialogs on this window).
    """

    closed = Signal()

    # made by :func:`osw_studio.ui.window_actions.build_actions`
    run_action: QAction
    pause_action: QAction
    step_action: QAction
    stop_action: QAction
    approve_action: QAction
    takeover_action: QAction
    settings_action: QAction
    mode: QComboBox
    open_tasks_action: QAction
    open_results_action: QAction
    export_action: QAction
    quit_action: QAction
    retry_action: QAction
    suite_action: QAction
    stop_suite_action: QAction
    pop_out_action: QAction
    about_action: QAction

    def __init__(
        self,
        library: TaskLibrary,
        services: Services,
        *,
        qsettings: QSettings | None = None,
        reporter: ErrorReporter | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle(f"OSW Studio {__version__}")
        self.setObjectName("mainWindow")
        self.resize(1600, 960)
        self.setDockNestingEnabled(True)
        self.library = library
        self.services = services
        self.qsettings = qsettings or QSettings("osw-studio", "osw-studio")
        self.reporter = reporter or ErrorReporter(self)
        self.controller: RunController | None = None
        self.suite_run: SuiteRun | None = None
        self._suite_active = False
        self._results = last_results(services.runs_dir)
        self._starting = False
        self._history_run: RunStore | None = None
        self._review_windows: list[QWidget] = []
        self._pending: set[asyncio.Task[object]] = set()
        self.authoring: AuthoringWindow | None = None
        self._viewer_window: ViewerWindow | None = None

        self.tasks = TaskBrowser(library, self._results.get)
        self.viewer = VmViewer()
        self.inspector = StepInspector()
        self.timeline = Timeline()
        self.history = RunHistory(services.runs_dir)
        self.results = ResultsView()
        self.status = RunStatusBar()
        self.setStatusBar(self.status)
        self.suite_progress = SuiteProgress()
        self.suite_progress.stop_button.clicked.connect(self.stop_suite)
        self.status.addPermanentWidget(self.suite_progress)
        self.status.set_env(services.env_description())
        self.status.set_model(services.settings.resolve_profile().model)

        # The viewer is the central widget: it takes whatever space the docks leave, so a maximised
        # window shows the guest large; the task list, the inspector and the rest are narrow docks.
        self.setCentralWidget(self.viewer)
        self.docks: dict[str, QDockWidget] = {}
        area = Qt.DockWidgetArea
        self._dock("tasks", "Tasks", self.tasks, area.LeftDockWidgetArea)
        self._dock("history", "Run history", self.history, area.LeftDockWidgetArea)
        self._dock("inspector", "Step inspector", self.inspector, area.RightDockWidgetArea)
        self._dock("results", "Results", self.results, area.RightDockWidgetArea)
        self._dock("timeline", "Timeline", self.timeline, area.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["tasks"], self.docks["history"])
        self.docks["tasks"].raise_()
        self.tabifyDockWidget(self.docks["inspector"], self.docks["results"])
        self.docks["inspector"].raise_()
        for name in ("tasks", "history", "inspector", "results"):
            self.docks[name].widget().setMinimumWidth(DOCK_MIN_WIDTH)
        self.resizeDocks(
            [self.docks["tasks"], self.docks["inspector"]], [300, 340], Qt.Orientation.Horizontal
        )

        build_actions(self)
        self.tasks.task_activated.connect(lambda _e: self.run_or_resume())
        self.tasks.task_selected.connect(self._on_task_selected)
        self.timeline.step_selected.connect(self._on_step_selected)
        self.history.run_opened.connect(self.open_run)
        self.history.review_requested.connect(self.review_run)
        self.results.run_opened.connect(self._on_result_opened)
        self.results.folder_changed.connect(lambda folder: self.qsettings.setValue("results/folder", folder))
        self.inspector.actions_edited.connect(self.viewer.canvas.set_actions)
        self.viewer.canvas.human_input.connect(self._on_human_input)
        services.settings.changed.connect(self._on_settings_changed)
        self._update_actions()
        self.restore_layout()
        self._restore_results_folder()
        count = len(library)
        self.status.showMessage(f"{count} tasks in {len(library.domains)} domains. Pick one and press F5.")

    # --- layout -------------------------------------------------------------------------------------

    def _dock(self, name: str, title: str, widget: QWidget, where: Qt.DockWidgetArea) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        self.addDockWidget(where, dock)
        self.docks[name] = dock

    def restore_layout(self) -> None:
        """Restore the window geometry and dock layout saved at the last close."""
        geometry = self.qsettings.value("window/geometry")
        state = self.qsettings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state, LAYOUT_VERSION)

    def save_layout(self) -> None:
        """Save the window geometry and dock layout."""
        self.qsettings.setValue("window/geometry", self.saveGeometry())
        self.qsettings.setValue("window/state", self.saveState(LAYOUT_VERSION))
        self.qsettings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: D102 (Qt override)
        self.save_layout()
        if self.controller is not None and self.controller.running:
            self.controller.stop()
        self.stop_suite()
        if self.authoring is not None:
            self.authoring.close()  # the app ends with its main window; shutdown stops the sandbox
        if self._viewer_window is not None:
            self._viewer_window.close()
        super().closeEvent(event)
        self.closed.emit()

    def quit(self) -> None:
        """File › Quit (Ctrl+Q, from any of the app's windows): close every window; the app then ends."""
        self.close()

    @property
    def viewer_popped_out(self) -> bool:
        """Whether the viewer is in a window of its own."""
        return self._viewer_window is not None

    def toggle_pop_out(self) -> None:
        """View › Pop out viewer: move the viewer into a window of its own, or back into this one."""
        if self._viewer_window is None:
            self.takeCentralWidget()  # keeps the viewer alive (setCentralWidget would delete it)
            placeholder = QLabel("The viewer is in its own window; close it to bring the viewer back.")
            placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.setCentralWidget(placeholder)
            window = ViewerWindow(self.viewer)
            window.addAction(self.quit_action)
            window.closed.connect(self._on_viewer_window_closed)
            self._viewer_window = window
            window.show()
        else:
            self._viewer_window.close()
        self.pop_out_action.setChecked(self._viewer_window is not None)

    def _on_viewer_window_closed(self) -> None:
        window, self._viewer_window = self._viewer_window, None
        if window is None:
            return
        self.viewer.setParent(None)
        self.setCentralWidget(self.viewer)
        self.viewer.show()
        window.deleteLater()
        self.pop_out_action.setChecked(False)

    def open_authoring(self) -> QMainWindow:
        """Open the task-authoring window (editor, sandbox setup, demonstration, checks)."""
        from osw_studio.ui.authoring import AuthoringWindow

        if self.authoring is None:
            self.authoring = AuthoringWindow(self.reporter)
            self.authoring.addAction(self.quit_action)  # Ctrl+Q there quits the app, sandbox and all
        self.authoring.show()
        self.authoring.raise_()
        return self.authoring

    def _update_actions(self) -> None:
        c = self.controller
        running = c is not None and c.running
        paused = running and c is not None and c.episode.paused
        suite = self.suite_running
        self.run_action.setEnabled(not suite and not self._starting and (not running or paused))
        self.pause_action.setEnabled(running)
        self.pause_action.setChecked(bool(paused))
        self.step_action.setEnabled(running)
        self.stop_action.setEnabled(running or suite)
        self.suite_action.setEnabled(not suite and not running and not self._starting)
        self.stop_suite_action.setEnabled(suite)
        self.retry_action.setEnabled(running and c is not None and c.episode.model_error is not None)
        self.takeover_action.setEnabled(running)
        gating = running and c is not None and c.episode.proposal is not None
        self.approve_action.setEnabled(gating)

    # --- run controls -------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        future = asyncio.ensure_future(coro)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def run_or_resume(self) -> None:
        """F5: resume a paused run, else start the selected task."""
        c = self.controller
        if c is not None and c.running:
            if c.episode.paused:
                c.episode.resume()
            return
        if self.suite_running:
            self.status.showMessage("A suite is running: stop it (Shift+F5) before running a task.", 5000)
            return
        entry = self.tasks.current_entry()
        if entry is None:
            self.status.showMessage("Pick a task in the task browser first.", 5000)
            return
        self._spawn(self.start_run(entry))

    async def start_run(self, entry: TaskEntry, mode: str | None = None) -> RunController | None:
        """Start ``entry`` in ``mode`` (default: the toolbar's); the controller, or None on error."""
        if self._starting or self.suite_running or (self.controller is not None and self.controller.running):
            return None
        self._starting = True
        self._update_actions()
        chosen: Literal["auto", "approve"] = (
            "approve" if (mode or self.mode.currentText()) == "approve" else "auto"
        )
        self.status.showMessage(f"Starting {entry.task.id}: preparing the env…")
        try:
            if self.services.replaces_env():
                await self.viewer.detach_stream()  # the desktop it shows is about to go
            episode = await self.services.create_episode(entry, chosen)
        except OswError as exc:
            self.reporter.report(exc)
            self.status.showMessage("The run did not start.", 8000)
            return None
        finally:
            self._starting = False
            self._update_actions()
        return await self.bind_episode(episode)

    async def bind_episode(self, episode: Episode) -> RunController:
        """Show ``episode`` in every view and start it."""
        old = self.controller
        if old is not None:
            old.disconnect_episode()
        controller = RunController(episode, self)
        self.controller = controller
        self._history_run = None
        self.viewer.set_replaying(False)
        self.timeline.clear_steps()
        self.inspector.bind(controller)
        self.viewer.canvas.set_actions([])
        self.status.reset_run(episode.max_steps)
        self.status.set_env(self.services.env_description())
        self.status.set_model(
            getattr(episode, "model_name", None) or self.services.settings.resolve_profile().model
        )
        self.mode.blockSignals(True)
        self.mode.setCurrentText(episode.mode)
        self.mode.blockSignals(False)
        for name, slot in (
            ("state_changed", self._on_state_changed),
            ("paused_changed", self._on_paused_changed),
            ("mode_changed", self._on_episode_mode),
            ("step_proposed", self._on_step_proposed),
            ("step_finished", self._on_step_finished),
            ("observation_taken", self._on_observation),
            ("takeover_changed", self._on_takeover_changed),
            ("episode_finished", self._on_episode_finished),
            ("error_raised", self._on_error_raised),
            ("help_requested", self._on_help_requested),
        ):
            controller.listen(name, slot)
        await self.watch_env(episode.env)
        controller.start().add_done_callback(lambda _task: self._on_run_ended(episode))
        self._update_actions()
        return controller

    def _on_help_requested(self, message: str) -> None:
        """The agent handed the task back (``call_user``): the run is paused for the person."""
        shown = "".join(c if c.isprintable() else "?" for c in message)[:300] or "(no message)"
        self.status.showMessage(
            f"The agent asks for your help: {shown} — act in the viewer (Take over), then Resume or Stop."
        )

    async def show_idle_env(self, env: Env) -> None:
        """The env is ready: show its desktop live, unless a run or a past run is on screen."""
        if self.controller is None and self._history_run is None:
            await self.watch_env(env)

    async def watch_env(self, env: Env) -> None:
        """Show ``env``'s screen live in the viewer (a guest without a stream shows each observation)."""
        stream = self.viewer.stream
        guest = getattr(env, "guest", None)
        url = getattr(guest, "base_url", None)
        vnc = self.services.vnc_target(url)
        if stream is not None and stream.base_url == (url or "").rstrip("/") and stream.vnc == vnc:
            self.viewer.canvas.set_screen_size(env.screen_size)
            return
        await self.viewer.detach_stream()
        if url:
            fresh = FrameStream(
                url, getattr(guest, "token", None), fit=self.viewer.canvas.fit_size, vnc=vnc, parent=self
            )
            self.viewer.attach_stream(fresh, env.screen_size)

    def retry_model_call(self) -> None:
        """Run › Retry model call: after a failed model call (the run holds there), call it again."""
        c = self.controller
        if c is not None and c.running and c.episode.model_error is not None:
            self.status.showMessage("Calling the model again…", 5000)
            c.episode.retry_model_call()
        self._update_actions()

    def toggle_pause(self) -> None:
        """Space: pause or resume."""
        if self.controller is not None and self.controller.running:
            self.controller.toggle_pause()
        self._update_actions()

    def step_once(self) -> None:
        """F10: one step, then pause."""
        if self.controller is not None and self.controller.running:
            self.controller.step_once()

    def stop(self) -> None:
        """Shift+F5: stop the run, or the suite."""
        if self.controller is not None and self.controller.running:
            self.controller.stop()
        self.stop_suite()

    def toggle_takeover(self) -> None:
        """Ctrl+T: begin or end a takeover."""
        if self.controller is not None and self.controller.running:
            self.viewer.canvas.flush_click()  # a click held for a double-click goes before the end
            self.controller.toggle_takeover()
        self._update_actions()

    def _on_mode_changed(self, mode: str) -> None:
        if self.controller is not None and self.controller.running:
            # An edit in progress runs first: auto mode must not pass the original over it. An edit that
            # is not valid keeps the run in approve mode until it is fixed or dropped.
            if mode == "auto" and self.inspector.editing and not self.inspector.approve():
                self._on_episode_mode("approve")
                return
            self.controller.set_mode(mode)

    def _on_human_input(self, actions: list[object]) -> None:
        if self.controller is not None:
            self.controller.human_input(actions)  # type: ignore[arg-type]

    # --- run -> views -------------------------------------------------------------------------------

    def _on_state_changed(self, new: str, _old: str) -> None:
        c = self.controller
        paused = bool(c and c.episode.paused)
        self.status.set_state(new, paused)
        if new in ("observing", "resetting"):
            self.viewer.canvas.set_actions([])
        if c is not None:
            self.status.set_step(c.episode.step_index, c.episode.max_steps)
        if new == "resetting":
            note = self.services.note
            self.status.showMessage("Setting up the task in the guest…" + (f" {note}" if note else ""))
        elif _old == "resetting":
            self.status.clearMessage()
        self._update_actions()

    def _on_paused_changed(self, paused: bool) -> None:
        if self.controller is not None:
            self.status.set_state(str(self.controller.episode.state), paused)
        self._update_actions()

    def _on_episode_mode(self, mode: str) -> None:
        self.mode.blockSignals(True)
        self.mode.setCurrentText(mode)
        self.mode.blockSignals(False)

    def _on_step_proposed(self, proposal: Proposal) -> None:
        self.viewer.set_replaying(False)  # a new proposal is about the live screen
        self.viewer.canvas.set_actions(proposal.actions)
        if self.controller is not None:
            self.status.set_step(proposal.index, self.controller.episode.max_steps)
        if self.controller is not None and self.controller.episode.mode == "approve":
            self.status.showMessage(f"Step {proposal.index} waits for you: Enter approves, Edit changes it.")

    def _on_step_finished(self, record: StepRecord) -> None:
        c = self.controller
        path = None
        if c is not None and c.episode.run_dir is not None and record.screenshot:
            path = c.episode.run_dir / "screens" / record.screenshot
        self.timeline.add_step(record, path=path)
        self.status.add_step(record)
        if c is not None:
            self.status.set_step(record.index, c.episode.max_steps)
        if record.source == "human":
            self.status.showMessage(f"Your step {record.index} ran.", 3000)
        self._update_actions()  # the proposal is gone: Approve no longer applies

    def _on_observation(self, observation: Observation) -> None:
        stream = self.viewer.stream
        if stream is None or not stream.running:
            self._show_screenshot(observation.screenshot)
        self.viewer.canvas.set_screen_size(observation.size)

    def _show_screenshot(self, data: bytes, *, recorded: bool = False) -> None:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, decode_frame, data, self.viewer.canvas.fit_size())

        def done(f: asyncio.Future[QImage]) -> None:
            if f.cancelled() or f.exception() is not None:
                return
            if recorded:  # a past run's screen, whatever the live stream shows
                self.viewer.canvas.set_frame(f.result())
            else:
                self.viewer.show_encoded(f.result())

        future.add_done_callback(done)

    def _on_takeover_changed(self, on: bool) -> None:
        self.viewer.set_takeover(on)
        self.takeover_action.setChecked(on)
        self.status.showMessage(
            "Takeover: click, scroll and type in the viewer; Ctrl+T gives control back."
            if on
            else "The agent resumes.",
            6000,
        )
        self._update_actions()

    def _on_episode_finished(self, result: EpisodeResult) -> None:
        score = "–" if result.score is None else f"{result.score:.2f}"
        extra = f": {result.error}" if result.error else ""
        self.status.showMessage(f"Run {result.status}, score {score}, {result.steps} steps{extra}")
        self.viewer.set_takeover(False)
        self.viewer.canvas.set_actions([])
        self.inspector.show_evaluation(result)  # the evaluator's reasons, metric by metric
        if result.status == "error":
            log.warning("the run of %s ended in error: %s", result.task_id, result.error)
        word = result_word(result)
        if word in SCORED or self._results.get(result.task_id) not in SCORED:
            self._results[result.task_id] = word
        self.history.refresh()
        self.tasks.refresh()
        self._refresh_results()
        self._update_actions()

    def _on_run_ended(self, episode: Episode) -> None:
        self._update_actions()
        self.inspector.refresh_buttons()
        self._spawn(episode.agent.aclose())  # the model client's connections

    async def shutdown(self) -> None:
        """Stop the run, close the agent, the live stream and the env (the app is closing)."""
        if self.controller is not None and self.controller.running:
            self.controller.stop()
            await self.controller.wait()
        if self.suite_run is not None:
            self.suite_run.stop()
            await self.suite_run.wait()
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
        if self.authoring is not None:
            await self.authoring.shutdown()
        await self.viewer.detach_stream()
        await self.services.aclose()

    def _on_error_raised(self, error: object) -> None:
        log.warning("run error: %s", error)  # the log keeps what the status bar shows for a while
        c = self.controller
        if c is not None and c.episode.model_error is error:
            self.status.showMessage(
                f"{error} — Run › Retry model call (Ctrl+R) tries again, Stop ends the run."
            )
        elif isinstance(error, OswError):
            self.status.showMessage(str(error), 10000)
        self._update_actions()

    # --- browsing -----------------------------------------------------------------------------------

    def _on_task_selected(self, entry: TaskEntry | None) -> None:
        if entry is not None and not (self.controller and self.controller.running):
            self.status.showMessage(f"{entry.task.id}: F5 runs it.", 4000)

    def _on_step_selected(self, record: StepRecord) -> None:
        """A step picked in the timeline, of a past run or of the current one: its screen and actions."""
        self.inspector.show_record(record)
        path = self.timeline.path_of(record)
        if path is None and self._history_run is not None:
            path = self._history_run.screenshot_path(record)
        if path is not None and path.is_file():
            self._show_screenshot(path.read_bytes(), recorded=True)
            self.viewer.set_replaying(self._history_run is None)  # live frames wait while it is shown
        self.viewer.canvas.set_actions(record.executed or record.proposed)

    def review_run(self, run: RunStore) -> ReviewWindow | None:
        """Open a review window on a past run (labels go to its review.jsonl); ``None`` if it cannot."""
        try:
            window = ReviewWindow(run, parent=self)
        except OswError as exc:
            self.reporter.report(exc)
            return None
        self._review_windows = [w for w in self._review_windows if w.isVisible()]
        self._review_windows.append(window)
        window.show()
        return window

    def open_run(self, run: RunStore) -> None:
        """Browse a past run: its steps on the timeline, its screens in the viewer."""
        if self.controller is not None and self.controller.running:
            self.status.showMessage("Stop the current run before opening another.", 5000)
            return
        try:
            steps = list(run.iter_steps())
            meta = run.meta
        except OswError as exc:
            self.reporter.report(exc)
            return
        self._history_run = run
        self._spawn(self.viewer.detach_stream())  # the viewer shows the run's screens now
        self.viewer.source_label.setText(f"run {run.run_id}")
        self.inspector.bind(None)
        self.timeline.clear_steps()
        if meta.screen_width and meta.screen_height:
            self.viewer.canvas.set_screen_size((meta.screen_width, meta.screen_height))
        for record in steps:
            self.timeline.add_step(record, path=run.screenshot_path(record))
        self.status.showMessage(f"Run {run.run_id}: {meta.task_id}, {run.status}, {len(steps)} steps")
        if steps:
            self.timeline.setCurrentRow(0)
            self.timeline.setFocus()

    def open_tasks_folder(self, folder: Path | None = None) -> bool:
        """File › Open tasks folder…: list the tasks of another folder (or index file) instead.

        A folder without a loadable task says so and the list keeps the tasks it had.
        """
        from PySide6.QtWidgets import QFileDialog

        from osw_studio.core.errors import TaskError
        from osw_studio.tasks.load import load_tasks

        if folder is None:
            name = QFileDialog.getExistingDirectory(self, "Tasks folder to open")
            if not name:
                return False
            folder = Path(name)
        found = load_tasks([folder])
        if not found.entries:
            first = f" ({found.errors[0]})" if found.errors else ""
            self.reporter.report(
                TaskError(
                    "no task could be loaded" + first,
                    where=str(folder),
                    hint="pick a folder of task JSON files",
                )
            )
            return False
        self.library.load([folder])
        self.tasks.refresh()
        skipped = f"; {len(found.errors)} file(s) skipped (see the log)" if found.errors else ""
        for error in found.errors[:20]:
            log.warning("task not loaded: %s", error)
        self.status.showMessage(f"{len(self.library)} tasks from {folder}{skipped}")
        return True

    # --- results ------------------------------------------------------------------------------------

    def _restore_results_folder(self) -> None:
        saved = self.qsettings.value("results/folder")
        folder = Path(saved) if isinstance(saved, str) and saved else self.services.runs_dir
        if folder.is_dir():
            self.results.set_folder(folder)

    def pick_results_folder(self) -> None:
        """File > Open results folder…: show a batch's results (``eval run --out``, runs or OSWorld's)."""
        self.docks["results"].show()
        self.docks["results"].raise_()
        self.results.pick_folder()

    def show_results(self, folder: Path) -> None:
        """Show the results in ``folder`` in the Results dock."""
        self.docks["results"].show()
        self.docks["results"].raise_()
        self.results.set_folder(folder)

    def _on_result_opened(self, run: RunStore) -> None:
        self.open_run(run)
        if self._history_run is run:  # shown: the viewer and the timeline take over
            self.docks["inspector"].raise_()

    def open_export(self) -> ExportDialog:
        """File > Export runs…: the runs selected in Run history, or the runs folder, to a format."""
        from osw_studio.ui.export_dialog import ExportDialog

        dialog = ExportDialog(self.history.selected_runs(), self.services.runs_dir, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _refresh_results(self) -> None:
        folder = self.results.folder
        if folder is None and self.services.runs_dir.is_dir():  # the first run made the runs folder
            self.results.set_folder(self.services.runs_dir)
        elif folder is not None and self.services.runs_dir.resolve().is_relative_to(folder.resolve()):
            self.results.refresh()

    # --- suites -------------------------------------------------------------------------------------

    @property
    def suite_running(self) -> bool:
        """Whether a suite evaluation is in progress (single-task runs wait for it, and vice versa).

        True from the start until the window has finished ending it (progress hidden, actions enabled
        again), not only while the batch's task runs.
        """
        return self._suite_active

    def open_suite_dialog(self) -> SuiteDialog | None:
        """Run › Evaluate suite…: ask for a suite, agent, envs and output folder, then run it."""
        from osw_studio.ui.suite_dialog import SuiteDialog

        if self.suite_running or self._starting or (self.controller is not None and self.controller.running):
            self.status.showMessage("Stop the current run before evaluating a suite.", 5000)
            return None
        dialog = SuiteDialog(
            self.services.settings,
            self.services.runs_dir.parent / "suites",
            env_options=self.services.env_options,
            parent=self,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.batch_ready.connect(self.start_suite)
        dialog.open()
        return dialog

    def start_suite(self, plan: SuitePlan, batch: Batch) -> SuiteRun:
        """Run ``batch`` on the loop; progress in the status bar, results in the Results dock."""
        run = SuiteRun(batch, self)
        self.suite_run = run
        self._suite_active = True
        run.listen("progress_changed", self._on_suite_progress)
        run.listen("task_finished", self._on_suite_task_finished)
        run.listen("batch_finished", self._on_suite_finished)
        run.listen("failed", self._on_suite_failed)
        self.suite_progress.begin(len(plan.entries))
        self.status.showMessage(
            f"Evaluating {plan.info.suite}: {len(plan.entries)} tasks on {len(batch.workers)} "
            f"{plan.provider} env(s), results in {plan.out}"
        )
        run.start().add_done_callback(lambda _task: self._on_suite_ended())
        self._update_actions()
        return run

    def stop_suite(self) -> None:
        """Stop the suite: no more tasks start; those in flight end as stopped (Resume runs them)."""
        if self.suite_run is not None and self.suite_run.running:
            self.suite_run.stop()
            self.suite_progress.stopping()
            self.status.showMessage("Stopping the suite: the tasks in flight end as stopped…")

    def _on_suite_progress(self, progress: BatchProgress) -> None:
        self.suite_progress.show_progress(progress)

    def _on_suite_task_finished(self, outcome: TaskOutcome) -> None:
        run = self.suite_run
        if run is None:
            return
        if self.results.folder != run.batch.out:
            self.show_results(run.batch.out)
        else:
            self.results.refresh()
        self.history.add_suite(run.batch.out / RUNS_DIR)  # the suite's runs are in Run history too
        score = "–" if outcome.score is None else f"{outcome.score:.2f}"
        self.status.showMessage(f"{outcome.domain}/{outcome.task_id}: {outcome.status}, score {score}", 5000)

    def _on_suite_finished(self, summary: BatchSummary) -> None:
        run = self.suite_run
        if run is None:
            return
        self.show_results(run.batch.out)
        solved = sum(t.success for t in summary.tasks)
        ended = "stopped" if run.stopped else "finished"
        self.status.showMessage(
            f"Suite {ended}: {solved} of {summary.tasks_total} tasks solved; results in {run.batch.out}"
        )

    def _on_suite_failed(self, error: BaseException) -> None:
        self.reporter.report(error)
        self.status.showMessage("The suite did not run.", 8000)

    def _on_suite_ended(self) -> None:
        self.suite_progress.hide()
        self._suite_active = False
        self._update_actions()

    # --- settings -----------------------------------------------------------------------------------

    def open_settings(self) -> SettingsDialog:
        """Open the settings dialog (non-modal, so the loop keeps running)."""
        dialog = SettingsDialog(self.services.settings, self)
        dialog.setModal(True)
        dialog.accepted.connect(lambda: self._take_session_key(dialog))
        dialog.open()
        return dialog

    def _take_session_key(self, dialog: SettingsDialog) -> None:
        if dialog.session_key:
            self.services.session_key = dialog.session_key
            self.status.showMessage(
                "No keyring: the model key is used for this session only (not stored).", 15000
            )

    def _on_settings_changed(self, _field: str) -> None:
        try:
            self.status.set_model(self.services.settings.resolve_profile().model)
        except OswError as exc:
            self.status.showMessage(str(exc), 8000)
        self.status.set_env(self.services.env_description())
