"""The run view: the viewer, the step inspector and the timeline showing one run, live or past.

:class:`RunView` starts the task picked in the task browser (F5), binds each new episode's
:class:`~osw_studio.ui.run_controller.RunController` to the views, carries the run controls (pause, step,
stop, takeover, retry, the auto / approve mode) to the episode, and turns the episode's signals into what
the views and the status bar show. It also shows past runs opened from Run history or Results, step by
step. The window enables its actions when :attr:`RunView.controls_changed` fires and refreshes the task
list and results when :attr:`RunView.run_finished` does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QComboBox

from osw_studio.agent.faithful import faithfulness
from osw_studio.core.errors import OswError
from osw_studio.core.observation import Observation
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.envs.base import Env
from osw_studio.runner.episode import EPISODE_SIGNALS, Episode, Proposal
from osw_studio.settings.model import ResolvedProfile
from osw_studio.tasks import TaskEntry
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.focus import FocusController
from osw_studio.ui.frames import FrameStream, decode_frame
from osw_studio.ui.run_controller import RunController
from osw_studio.ui.services import Services
from osw_studio.ui.status import RunStatusBar
from osw_studio.ui.step_inspector import StepInspector
from osw_studio.ui.task_browser import TaskBrowser
from osw_studio.ui.timeline import Timeline
from osw_studio.ui.viewer import VmViewer

log = logging.getLogger(__name__)

MODES = ("auto", "approve")
"""The run modes: ``auto`` runs actions as proposed, ``approve`` holds each for the person."""


WAITING_TAIL = " waits for you: Enter approves, Edit changes it."
"""The end of the status message of a step held for approval (cleared once it no longer waits)."""


class RunView(QObject):
    """The current run (or a past one) in the viewer, the inspector, the timeline and the status bar.

    Each episode signal (``EPISODE_SIGNALS``, the one list) is handled by the method named
    ``_on_<signal>`` when this class has one; the inspector listens to the rest itself.

    Signals:
        controls_changed(): What the run controls can do changed (the window enables its actions).
        run_finished(object): A run ended with this ``EpisodeResult``.

    Args:
        services: The env and episode factory.
        reporter: Shows errors as messages.
        tasks: The task browser (F5 runs its selected task).
        viewer, inspector, timeline, status: The views a run is shown in.
        parent: The window.
    """

    controls_changed = Signal()
    run_finished = Signal(object)

    def __init__(
        self,
        services: Services,
        reporter: ErrorReporter,
        *,
        tasks: TaskBrowser,
        viewer: VmViewer,
        inspector: StepInspector,
        timeline: Timeline,
        status: RunStatusBar,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = services
        self.reporter = reporter
        self.tasks = tasks
        self.viewer = viewer
        self.inspector = inspector
        self.timeline = timeline
        self.status = status
        self.controller: RunController | None = None
        self.starting = False
        """Between F5 and the episode's start (the env and agent are being prepared)."""
        self.past_run: RunStore | None = None
        """The past run on screen, if one was opened since the last run started."""
        self.busy_elsewhere: Callable[[], bool] = lambda: False
        """Whether something else holds the env (a suite run): set by the window."""
        self._pending: set[asyncio.Future[object]] = set()

        self.mode = QComboBox()
        self.mode.setObjectName("mode")
        self.mode.addItems(list(MODES))
        self.mode.setToolTip("auto: actions run as proposed; approve: each waits for you")
        self.mode.currentTextChanged.connect(self._on_mode_picked)

        tasks.task_activated.connect(lambda _entry: self.run_or_resume())
        tasks.task_selected.connect(self._on_task_selected)
        timeline.step_selected.connect(self._on_step_selected)
        inspector.actions_edited.connect(viewer.canvas.set_actions)
        viewer.canvas.human_input.connect(self._on_human_input)

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self.controller is not None and self.controller.running

    @property
    def busy(self) -> bool:
        """Whether a run is starting or in progress."""
        return self.starting or self.running

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        future = asyncio.ensure_future(coro)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    # --- starting -----------------------------------------------------------------------------------

    def run_or_resume(self) -> None:
        """F5: resume a paused run, else start the task selected in the task browser."""
        c = self.controller
        if c is not None and c.running:
            if c.episode.paused:
                c.episode.resume()
            return
        if self.busy_elsewhere():
            self.status.showMessage("A suite is running: stop it (Shift+F5) before running a task.", 5000)
            return
        entry = self.tasks.current_entry()
        if entry is None:
            self.status.showMessage("Pick a task in the task browser first.", 5000)
            return
        self._spawn(self.start_run(entry))

    def run_instruction(self, entry: TaskEntry) -> None:
        """Start an instruction's run (the instruction box) on the current desktop."""
        self._spawn(self.start_run(entry, instruction=True))

    async def start_run(
        self, entry: TaskEntry, mode: str | None = None, *, instruction: bool = False
    ) -> RunController | None:
        """Start ``entry`` in ``mode`` (default: the toolbar's); the controller, or None on error.

        An ``instruction`` (the instruction box's) runs on the current desktop, with no evaluator.
        """
        if self.busy or self.busy_elsewhere():
            return None
        self.starting = True
        self.controls_changed.emit()
        chosen: Literal["auto", "approve"] = (
            "approve" if (mode or self.mode.currentText()) == "approve" else "auto"
        )
        self.status.showMessage(f"Starting {entry.task.id}: preparing the env…")
        try:
            if self.services.replaces_env():
                await self.viewer.detach_stream()  # the desktop it shows is about to go
            episode = await self.services.create_episode(entry, chosen, instruction=instruction)
        except OswError as exc:
            self.reporter.report(exc)
            self.status.showMessage("The run did not start.", 8000)
            return None
        finally:
            self.starting = False
            self.controls_changed.emit()
        return await self.bind_episode(episode)

    async def bind_episode(self, episode: Episode, controller: RunController | None = None) -> RunController:
        """Show ``episode`` in every view and start it (a suite task's ``controller`` only follows it)."""
        old = self.controller
        if old is not None:
            old.disconnect_episode()
        own = controller is None
        controller = controller or RunController(episode, self)
        self.controller = controller
        self.past_run = None
        self.viewer.set_replaying(False)
        self.timeline.clear_steps()
        self.inspector.bind(controller)
        self.viewer.canvas.set_actions([])
        self.status.reset_run(episode.max_steps)
        self.status.set_env(self.services.env_description())
        self.status.set_model(
            getattr(episode, "model_name", None) or self.services.settings.resolve_profile().model
        )
        profile = getattr(episode.agent, "profile", None)
        if isinstance(profile, ResolvedProfile):
            self.status.set_faithful(faithfulness(profile))
        self._on_mode_changed(episode.mode)
        controller.listen_by_name(self, EPISODE_SIGNALS)
        await self.watch_env(episode.env)
        controller.start().add_done_callback(lambda _task: self._on_run_ended(episode, own=own))
        self.controls_changed.emit()
        return controller

    async def show_idle_env(self, env: Env) -> None:
        """The env is ready: show its desktop live, unless a run or a past run is on screen."""
        if self.controller is None and self.past_run is None:
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

    # --- controls -----------------------------------------------------------------------------------

    def retry_model_call(self) -> None:
        """Run › Retry model call: after a failed model call (the run holds there), call it again."""
        c = self.controller
        if c is not None and c.running and c.episode.model_error is not None:
            self.status.showMessage("Calling the model again…", 5000)
            c.episode.retry_model_call()
        self.controls_changed.emit()

    def toggle_pause(self) -> None:
        """Space: pause or resume."""
        if self.controller is not None and self.controller.running:
            self.controller.toggle_pause()
        self.controls_changed.emit()

    def step_once(self) -> None:
        """F10: one step, then pause."""
        if self.controller is not None and self.controller.running:
            self.controller.step_once()

    def stop(self) -> None:
        """Stop the run (the model call in flight is cancelled)."""
        if self.controller is not None and self.controller.running:
            self.controller.stop()

    def toggle_takeover(self) -> None:
        """Ctrl+T: begin or end a takeover."""
        if self.controller is not None and self.controller.running:
            self.viewer.canvas.flush_click()  # a click held for a double-click goes before the end
            self.controller.toggle_takeover()
        self.controls_changed.emit()

    def _on_mode_picked(self, mode: str) -> None:
        if self.controller is not None and self.controller.running:
            # An edit in progress runs first: auto mode must not pass the original over it. An edit that
            # is not valid keeps the run in approve mode until it is fixed or dropped.
            if mode == "auto" and self.inspector.editing and not self.inspector.approve():
                self._on_mode_changed("approve")
                return
            self.controller.set_mode(mode)

    def _on_human_input(self, actions: list[object]) -> None:
        if self.controller is not None:
            self.controller.human_input(actions)  # type: ignore[arg-type]

    async def shutdown(self) -> None:
        """Stop the run and wait for it, and for the view's own tasks; detach the live stream."""
        if self.controller is not None and self.controller.running:
            self.controller.stop()
            await self.controller.wait()
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
        await self.viewer.detach_stream()

    # --- the episode's signals ----------------------------------------------------------------------

    def _on_state_changed(self, new: str, old: str) -> None:
        c = self.controller
        paused = bool(c and c.episode.paused)
        self.status.set_state(new, paused)
        if new in ("observing", "resetting"):
            self.viewer.canvas.set_actions([])
        if old == "gating" and self.status.currentMessage().endswith(WAITING_TAIL):
            self.status.clearMessage()  # the step no longer waits: its message goes with it
        if c is not None:
            self.status.set_step(c.episode.step_index, c.episode.max_steps)
        if new == "resetting":
            note = self.services.note
            self.status.showMessage("Setting up the task in the guest…" + (f" {note}" if note else ""))
        elif old == "resetting":
            self.status.clearMessage()
            self.services.prepare_spare()  # the next run's fresh desktop starts while this one runs
        self.controls_changed.emit()

    def _on_paused_changed(self, paused: bool) -> None:
        if self.controller is not None:
            self.status.set_state(str(self.controller.episode.state), paused)
        self.controls_changed.emit()

    def _on_mode_changed(self, mode: str) -> None:
        self.mode.blockSignals(True)
        self.mode.setCurrentText(mode)
        self.mode.blockSignals(False)

    def _on_step_proposed(self, proposal: Proposal) -> None:
        self.viewer.set_replaying(False)  # a new proposal is about the live screen
        self.viewer.canvas.set_actions(proposal.actions)
        if self.controller is not None:
            self.status.set_step(proposal.index, self.controller.episode.max_steps)
        if self.controller is not None and self.controller.episode.mode == "approve":
            self.status.showMessage(f"Step {proposal.index}{WAITING_TAIL}")
        elif proposal.confirm:
            self.status.showMessage(
                f"Step {proposal.index} has a safety check for you: Enter approves, Skip refuses."
            )

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
        self.controls_changed.emit()  # the proposal is gone: Approve no longer applies

    def _on_observation_taken(self, observation: Observation) -> None:
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
        if on:  # the takeover dropped the proposal: it is not drawn over the screen the person acts on
            self.viewer.canvas.set_actions([])
        self.status.showMessage(
            "Takeover: click, scroll and type in the viewer; Ctrl+T gives control back."
            if on
            else "The agent resumes.",
            6000,
        )
        self.controls_changed.emit()

    def _on_help_requested(self, message: str) -> None:
        """The agent handed the task back (``call_user``): the run is paused for the person."""
        shown = "".join(c if c.isprintable() else "?" for c in message)[:300] or "(no message)"
        self.status.showMessage(
            f"The agent asks for your help: {shown} — act in the viewer (Take over), then Resume or Stop."
        )

    def _on_error_raised(self, error: object) -> None:
        log.warning("run error: %s", error)  # the log keeps what the status bar shows for a while
        c = self.controller
        if c is not None and c.episode.model_error is error:
            self.status.showMessage(
                f"{error} — Run › Retry model call (Ctrl+R) tries again, Stop ends the run."
            )
        elif isinstance(error, OswError):
            self.status.showMessage(str(error), 10000)
        self.controls_changed.emit()

    def _on_episode_finished(self, result: EpisodeResult) -> None:
        score = "–" if result.score is None else f"{result.score:.2f}"
        extra = f": {result.error}" if result.error else ""
        self.status.showMessage(f"Run {result.status}, score {score}, {result.steps} steps{extra}")
        self.viewer.set_takeover(False)
        self.viewer.canvas.set_actions([])
        self.inspector.show_evaluation(result)  # the evaluator's reasons, metric by metric
        if result.status == "error":
            log.warning("the run of %s ended in error: %s", result.task_id, result.error)
        self.run_finished.emit(result)
        self.controls_changed.emit()

    def _on_run_ended(self, episode: Episode, *, own: bool = True) -> None:
        self.controls_changed.emit()
        self.inspector.refresh_buttons()
        if own:  # a suite task's agent is its slot's to close
            self._spawn(episode.agent.aclose())  # the model client's connections

    # --- a suite task in focus ----------------------------------------------------------------------

    @property
    def focused(self) -> FocusController | None:
        """The suite task in focus (shown and steered here while the suite goes on), if any."""
        return self.controller if isinstance(self.controller, FocusController) else None

    async def focus(self, episode: Episode) -> FocusController:
        """Show a suite task's ``episode`` live here, its controls acting on that task alone."""
        controller = FocusController(episode, self)
        await self.bind_episode(episode, controller)
        for record in episode.steps:  # the steps it took before the focus
            self.timeline.add_step(record)
        controller.state_changed.emit(episode.state.value, "idle")  # where it is, as if it just got there
        if episode.proposal is not None:  # a proposal held before the focus: shown as if just made
            controller.step_proposed.emit(episode.proposal)
        self.status.showMessage(f"Focus on {episode.task.id}: the suite's other tasks go on.", 5000)
        return controller

    def focus_later(self, episode: Episode | None) -> None:
        """:meth:`focus` on ``episode`` from a click (None: :meth:`close_focus`), on the loop."""
        self._spawn(self.focus(episode) if episode is not None else self.close_focus())

    async def close_focus(self) -> None:
        """Drop the focus: the task goes on in its suite, the viewer is left idle."""
        focused = self.focused
        if focused is None:
            return
        focused.release()
        self.controller = None
        self.inspector.bind(None)
        self.timeline.clear_steps()
        self.viewer.canvas.set_actions([])
        await self.viewer.detach_stream()
        self.controls_changed.emit()

    # --- past runs ----------------------------------------------------------------------------------

    def _on_task_selected(self, entry: TaskEntry | None) -> None:
        if entry is not None and not self.running:
            self.status.showMessage(f"{entry.task.id}: F5 runs it.", 4000)

    def _on_step_selected(self, record: StepRecord) -> None:
        """A step picked in the timeline, of a past run or of the current one: its screen and actions."""
        self.inspector.show_record(record)
        path = self.timeline.path_of(record)
        if path is None and self.past_run is not None:
            path = self.past_run.screenshot_path(record)
        if path is not None and path.is_file():
            self._show_screenshot(path.read_bytes(), recorded=True)
            self.viewer.set_replaying(self.past_run is None)  # live frames wait while it is shown
        self.viewer.canvas.set_actions(record.executed or record.proposed)

    def open_run(self, run: RunStore) -> bool:
        """Browse a past run: its steps on the timeline, its screens in the viewer; whether it is shown."""
        if self.running:
            self.status.showMessage("Stop the current run before opening another.", 5000)
            return False
        try:
            steps = list(run.iter_steps())
            meta = run.meta
        except OswError as exc:
            self.reporter.report(exc)
            return False
        self.past_run = run
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
        return True
