"""Author a task in a loop: set it up in a sandbox, demonstrate it, check the evaluator, validate, save.

:class:`AuthoringPanel` sits beside a :class:`~osw_studio.ui.task_editor.TaskEditor`. It runs the
task's setup on a fresh local sandbox and shows it live in the viewer (:class:`VmViewer`, the same widget
the run view uses). *Record* turns on the viewer's takeover: the viewer's own input mapping sends what the
person does to the guest as it happens, while :class:`InputRecorder` keeps the raw events (positions,
times, keys, the frame on screen). *Stop* reduces them with
:func:`~osw_studio.tasks.demonstration.reduce_events` into the task's reference solution, each step with
the screenshot it acted on. *Check evaluator now* scores the sandbox as it is, showing each getter's
output and each metric's verdict; *Validate* runs :func:`~osw_studio.runner.check.check_task` (the
solution must score 1.0, doing nothing 0.0), as ``osw-studio tasks check`` does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Coroutine, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QObject, QPointF, QSize, Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    QToolBar,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.actions import Action, parse_actions
from osw_studio.core.errors import OswError
from osw_studio.envs.base import Env
from osw_studio.evaluation.result import EvaluationResult
from osw_studio.tasks.authoring import TEMPLATES, check_id, solution_data
from osw_studio.tasks.demonstration import DemoStep, InputEvent, reduce_events
from osw_studio.tasks.load import TaskEntry, load_task, parse_task
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.frames import FrameStream
from osw_studio.ui.geometry import widget_to_screen
from osw_studio.ui.input_map import input_event
from osw_studio.ui.task_editor import TaskEditor, named
from osw_studio.ui.viewer import ScreenCanvas, VmViewer

if TYPE_CHECKING:
    from osw_studio.runner.check import CheckResult

log = logging.getLogger(__name__)


def png_bytes(image: QImage) -> bytes:
    """Encode an image as PNG."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    buffer.close()
    return bytes(data.data())


class InputRecorder(QObject):
    """Watches the viewer's canvas and keeps a person's raw input as :class:`InputEvent` objects.

    It only observes (the viewer's takeover still sends the input to the guest). Each event is tagged
    with the frame on screen when it happened; the frames that events saw are kept for screenshots.

    Signals:
        event_recorded(): An input event was kept (the step list follows the recording).
    """

    event_recorded = Signal()

    def __init__(self, canvas: ScreenCanvas, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.events: list[InputEvent] = []
        self.frames: dict[int, QImage] = {}
        self.recording = False
        self._frame_id = 0
        self._frame: QImage | None = None
        canvas.installEventFilter(self)

    def on_frame(self, image: QImage) -> None:
        """A new frame is on screen."""
        self._frame_id += 1
        self._frame = image

    def start(self) -> None:
        """Forget earlier events and start keeping new ones."""
        self.events = []
        self.frames = {}
        self.recording = True

    def stop(self) -> list[InputEvent]:
        """Stop keeping events; return them."""
        self.recording = False
        return list(self.events)

    def _point(self, pos: QPointF, clamp: bool) -> tuple[int, int] | None:
        c = self.canvas
        return widget_to_screen((pos.x(), pos.y()), c.screen_rect(), c.screen_size, clamp=clamp)

    def _frame_tag(self) -> Hashable:
        if self._frame is None:
            return None
        self.frames.setdefault(self._frame_id, self._frame)
        return self._frame_id

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: D102 (Qt override)
        if self.recording and watched is self.canvas and self.canvas.takeover:
            recorded = self._convert(event)
            if recorded is not None:
                self.events.append(recorded)
                self.event_recorded.emit()
        return False

    def _convert(self, event: QEvent) -> InputEvent | None:
        recorded = input_event(event, self._point)
        return None if recorded is None else dataclasses.replace(recorded, frame=self._frame_tag())


class AuthoringPanel(QWidget):
    """Set up, demonstrate, check and validate the task in a :class:`TaskEditor`.

    Args:
        editor: The editor whose task this panel runs; a recorded solution is written into it.
        reporter: Shows errors (a dialog by default).
        provider_options: Options for the local provider (``screen``; tests may pass more).

    Signals:
        status_changed(str): What the panel is doing, for a status line.
    """

    status_changed = Signal(str)

    def __init__(
        self,
        editor: TaskEditor,
        reporter: ErrorReporter | None = None,
        parent: QWidget | None = None,
        **provider_options: Any,
    ) -> None:
        super().__init__(parent)
        self.editor = editor
        self.reporter = reporter or ErrorReporter(self)
        self.provider_options = provider_options
        self.env: Env | None = None
        self.stream: FrameStream | None = None
        self.steps: list[DemoStep] = []
        self.files: dict[str, bytes] = {}
        """Screenshots of the recorded solution, by name relative to the task file, until saved."""
        self.evaluation: EvaluationResult | None = None
        self.check: CheckResult | None = None
        self._inputs: asyncio.Queue[list[Action]] = asyncio.Queue()
        self._executor: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.pending_inputs = 0
        """Input actions sent by the viewer that the guest has not finished yet."""
        self.inputs_done = 0
        """Input actions the guest has performed (or refused) since the panel was made."""

        self.viewer = VmViewer(self)
        self.viewer.canvas.human_input.connect(self._on_human_input)
        self.recorder = InputRecorder(self.viewer.canvas, self)
        self.recorder.event_recorded.connect(self._on_event_recorded)
        self.setup_button = named(QPushButton("Set up in sandbox"), "setupButton")
        self.record_button = named(QPushButton("Record demonstration"), "recordButton")
        self.record_button.setCheckable(True)
        self.evaluate_button = named(QPushButton("Check evaluator now"), "evaluateButton")
        self.validate_button = named(QPushButton("Validate"), "validateButton")
        self.setup_button.clicked.connect(lambda: self._spawn(self.set_up()))
        self.record_button.toggled.connect(self._on_record_toggled)
        self.evaluate_button.clicked.connect(lambda: self._spawn(self.check_evaluator()))
        self.validate_button.clicked.connect(lambda: self._spawn(self.validate()))
        self.steps_list = named(QListWidget(), "demoSteps")
        self.result_tree = named(QTreeWidget(), "evaluationResult")
        self.result_tree.setHeaderLabels(["part", "outcome"])
        self.result_tree.setColumnWidth(0, 260)
        self.status = named(QLabel("No sandbox yet"), "authoringStatus")
        self.status.setWordWrap(True)
        buttons = QHBoxLayout()
        for button in (self.setup_button, self.record_button, self.evaluate_button, self.validate_button):
            buttons.addWidget(button)
        step_buttons = QHBoxLayout()
        for text, name, slot in (
            ("Delete step", "deleteStep", self.delete_step),
            ("Move up", "moveStepUp", lambda: self.move_step(-1)),
            ("Move down", "moveStepDown", lambda: self.move_step(1)),
        ):
            button = named(QPushButton(text), name)
            button.clicked.connect(slot)
            step_buttons.addWidget(button)
        steps_box = QWidget()
        steps_layout = QVBoxLayout(steps_box)
        steps_layout.setContentsMargins(0, 0, 0, 0)
        steps_layout.addWidget(self.steps_list, 1)
        steps_layout.addLayout(step_buttons)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(steps_box)
        lower.addWidget(self.result_tree)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.viewer)
        split.addWidget(lower)
        split.setStretchFactor(0, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        self._update_buttons()

    # --- plumbing ---------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        future = asyncio.ensure_future(coro)
        self._tasks.add(future)
        future.add_done_callback(self._tasks.discard)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status_changed.emit(text)

    def _update_buttons(self) -> None:
        ready = self.env is not None
        self.record_button.setEnabled(ready)
        self.evaluate_button.setEnabled(ready and not self.record_button.isChecked())

    def _task_dir(self) -> Path | None:
        return self.editor.path.parent if self.editor.path is not None else None

    # --- sandbox ----------------------------------------------------------------------------------

    async def set_up(self) -> None:
        """Start a fresh local sandbox, run the task's setup on it and show it live."""
        from osw_studio.envs.registry import make_env

        try:
            task = self.editor.task()
            await self.close_sandbox()
            self._say("Starting a sandbox…")
            self.env = await make_env("local", **self.provider_options)
            self._say(f"Running the setup of {task.id} on {self.env.name}…")
            self._attach_stream(self.env)
            await self.env.reset(task, task_dir=self._task_dir())
            self._executor = asyncio.ensure_future(self._execute_inputs())
            self._say(f"Set up on {self.env.name}: record a demonstration, or check the evaluator")
        except OswError as exc:
            self._say(f"Setup failed: {exc}")
            self.reporter.report(exc)
        finally:
            self._update_buttons()

    def _attach_stream(self, env: Env) -> None:
        width, height = env.screen_size
        guest = env.guest
        # full-size frames: the viewer scales them, and each step's screenshot keeps the guest's pixels
        self.stream = FrameStream(
            guest.base_url, guest.token, fit=lambda: QSize(width, height), max_width=width
        )
        self.stream.frame_ready.connect(self.recorder.on_frame)
        self.viewer.attach_stream(self.stream, env.screen_size)

    async def close_sandbox(self) -> None:
        """Stop recording, the stream and the sandbox."""
        if self.record_button.isChecked():
            self.record_button.setChecked(False)
        if self._executor is not None:
            self._executor.cancel()
            self._executor = None
        if self.stream is not None:
            self.stream.frame_ready.disconnect(self.recorder.on_frame)
            await self.viewer.detach_stream()
            self.stream = None
        env, self.env = self.env, None
        if env is not None:
            await env.close()
        self._update_buttons()

    # --- demonstration ----------------------------------------------------------------------------

    def _on_human_input(self, actions: list[Action]) -> None:
        self.pending_inputs += len(actions)
        self._inputs.put_nowait(list(actions))

    async def _execute_inputs(self) -> None:
        while True:
            actions = await self._inputs.get()
            try:
                if self.env is not None:
                    await self.env.execute(actions)
            except OswError as exc:
                self.reporter.report(exc)
            finally:
                self.pending_inputs -= len(actions)
                self.inputs_done += len(actions)

    def _on_record_toggled(self, on: bool) -> None:
        if on:
            self.start_recording()
        else:
            self.stop_recording()

    def start_recording(self) -> None:
        """Hand the viewer's input to the guest and keep it as a demonstration."""
        if self.env is None:
            self._say("Set the task up in a sandbox first")
            return
        self.record_button.blockSignals(True)
        self.record_button.setChecked(True)
        self.record_button.blockSignals(False)
        self.recorder.start()
        self.viewer.set_takeover(True)
        self.record_button.setText("Stop recording")
        self._say("Recording: act in the viewer; press Stop recording when done")
        self._update_buttons()

    def stop_recording(self) -> list[DemoStep]:
        """End the demonstration and make it the task's reference solution."""
        self.record_button.blockSignals(True)
        self.record_button.setChecked(False)
        self.record_button.blockSignals(False)
        self.record_button.setText("Record demonstration")
        self.viewer.set_takeover(False)
        events = self.recorder.stop()
        interval = QApplication.doubleClickInterval() / 1000.0
        self.steps = reduce_events(events, double_click=interval)
        self._apply_steps()
        self._say(f"Recorded {len(self.steps)} steps from {len(events)} input events; save to keep them")
        self._update_buttons()
        return self.steps

    def _apply_steps(self) -> None:
        """Make the recorded steps the task's solution (with their screenshots) and list them."""
        task_id = self.editor.data.get("id") or "task"
        end = "fail" if self._infeasible() else "done"
        solution, frames = solution_data(self.steps, str(task_id), end=end)
        self.files = {
            name: png_bytes(self.recorder.frames[f]) for name, f in frames.items() if isinstance(f, int)
        }
        self.editor.set_solution(solution)
        row = self.steps_list.currentRow()
        self.steps_list.clear()
        for i, step in enumerate(self.steps, 1):
            self.steps_list.addItem(f"{i}. {step.describe()}")
        self.steps_list.addItem(f"{len(self.steps) + 1}. {end}")
        self.steps_list.setCurrentRow(min(row, len(self.steps) - 1))

    def delete_step(self) -> None:
        """Delete the recorded step selected in the list (the solution follows)."""
        row = self.steps_list.currentRow()
        if 0 <= row < len(self.steps):
            del self.steps[row]
            self._apply_steps()

    def move_step(self, by: int) -> None:
        """Move the selected recorded step up (-1) or down (+1)."""
        row = self.steps_list.currentRow()
        to = row + by
        if 0 <= row < len(self.steps) and 0 <= to < len(self.steps):
            self.steps[row], self.steps[to] = self.steps[to], self.steps[row]
            self._apply_steps()
            self.steps_list.setCurrentRow(to)

    def _on_event_recorded(self) -> None:
        """List the steps recorded so far while the recording goes on."""
        steps = reduce_events(self.recorder.events, double_click=QApplication.doubleClickInterval() / 1000.0)
        self.steps_list.clear()
        for i, step in enumerate(steps, 1):
            self.steps_list.addItem(f"{i}. {step.describe()}")
        self.steps_list.addItem("… recording")

    def _infeasible(self) -> bool:
        evaluator = self.editor.data.get("evaluator")
        func = evaluator.get("func") if isinstance(evaluator, dict) else None
        return func == "infeasible" or (isinstance(func, list) and "infeasible" in func)

    def solution_actions(self) -> list[Action]:
        """Every action of the task's current solution, in order."""
        out: list[Action] = []
        for step in self.editor.data.get("solution") or []:
            out.extend(parse_actions(step.get("actions", [])))
        return out

    # --- checking ---------------------------------------------------------------------------------

    async def check_evaluator(self) -> EvaluationResult | None:
        """Score the sandbox as it is now, after the recorded solution's actions."""
        from osw_studio.evaluation.evaluate import evaluate

        if self.env is None:
            self._say("Set the task up in a sandbox first")
            return None
        try:
            task = self.editor.task()
            self._say("Evaluating…")
            result = await evaluate(self.env, task, self.solution_actions(), task_dir=self._task_dir())
        except OswError as exc:
            self._say(f"The evaluator failed: {exc}")
            self.reporter.report(exc)
            return None
        self.evaluation = result
        self._show_evaluation(result)
        self._say(f"Score {result.score:g}: {result.reason}")
        return result

    def _show_evaluation(self, result: EvaluationResult) -> None:
        tree = self.result_tree
        tree.clear()
        top = QTreeWidgetItem([f"score {result.score:g}", result.reason])
        tree.addTopLevelItem(top)
        for metric in result.metrics:
            score = "not reached" if metric.score is None else f"{metric.score:g}"
            item = QTreeWidgetItem([f"{metric.index + 1}. {metric.func}", f"{score} {metric.reason}".strip()])
            top.addChild(item)
            for getter in metric.getters:
                missing = " (file missing)" if getter.missing else ""
                item.addChild(QTreeWidgetItem([f"{getter.role}: {getter.type}", getter.summary + missing]))
            if metric.options:
                item.addChild(QTreeWidgetItem(["options", repr(metric.options)]))
        tree.expandAll()

    async def validate(self) -> CheckResult | None:
        """Check the saved task: set up, replay its solution (must score 1.0); set up, do nothing (0.0)."""
        from osw_studio.runner.check import check_task

        if self.editor.path is None:
            self._say("Save the task first: validation runs the saved task's files")
            return None
        try:
            entry = TaskEntry(self.editor.task(), self.editor.path, self.editor.domain)
        except OswError as exc:
            self.reporter.report(exc)
            return None
        self._say(f"Validating {entry.task.id} on fresh sandboxes…")
        self.validate_button.setEnabled(False)
        try:
            result = await check_task(entry)
        finally:
            self.validate_button.setEnabled(True)
        self.check = result
        self._say(result.line())
        return result


def check_task(data: dict[str, Any]) -> None:
    """Check a task's data as saving will (its fields and its id), so a bad task is named first.

    Raises:
        TaskError: Naming the JSON path of what is wrong.
    """
    check_id(str(parse_task(dict(data), "the task").id))


class AuthoringWindow(QMainWindow):
    """The task-authoring window: the editor beside the sandbox panel, with New, Open, Duplicate, Save.

    Args:
        reporter: Shows errors.
        task_folder: Where new tasks are saved unless the person picks another folder.
        index: The index file new tasks are listed in, if any.
        provider_options: Options for the local provider.
    """

    def __init__(
        self,
        reporter: ErrorReporter | None = None,
        *,
        task_folder: Path | None = None,
        index: Path | None = None,
        parent: QWidget | None = None,
        log_file: Path | None = None,
        **provider_options: Any,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("OSW Studio: task authoring")
        self.setObjectName("authoringWindow")
        # errors are shown over this window, not behind it over the main one
        self.reporter = reporter or ErrorReporter(self, log_file=log_file)
        self.task_folder = task_folder
        self.index = index
        self.editor = TaskEditor()
        self.panel = AuthoringPanel(self.editor, self.reporter, **provider_options)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.editor)
        split.addWidget(self.panel)
        split.setStretchFactor(1, 2)
        self.setCentralWidget(split)
        self.panel.status_changed.connect(lambda text: self.statusBar().showMessage(text))
        bar = QToolBar("Task")
        bar.setObjectName("authoringToolbar")
        self.addToolBar(bar)
        new_menu = QMenu("New", self)
        for name in TEMPLATES:
            action = new_menu.addAction(f"New {name} task")
            action.triggered.connect(lambda _c=False, n=name: self.editor.new_from_template(n))
        new_action = bar.addAction("New")
        new_action.setMenu(new_menu)
        new_action.triggered.connect(lambda: self.editor.new_from_template("command"))
        bar.addAction("Open…", self.open_dialog)
        bar.addAction("Duplicate", self.editor.duplicate)
        bar.addAction("Save", self.save)
        bar.addAction("Save as…", self.save_as_dialog)

    def open_task(self, path: Path) -> None:
        """Edit the task in ``path``."""
        entry = load_task(path)
        self.editor.set_data(entry.task.dump(), domain=entry.domain, path=entry.path)
        self.panel.files = {}

    def open_dialog(self) -> None:
        """Pick a task file to edit."""
        name, _ = QFileDialog.getOpenFileName(self, "Open task", "", "Task files (*.json)")
        if name:
            try:
                self.open_task(Path(name))
            except OswError as exc:
                self.reporter.report(exc)

    def save(self) -> Path | None:
        """Save into the task's folder (asking for one the first time), with the recorded screenshots."""
        folder = None if self.editor.path is not None else self.task_folder
        if self.editor.path is None and folder is None:
            return self.save_as_dialog()
        try:
            path = self.editor.save(folder, index=self.index, files=self.panel.files)
        except OswError as exc:
            self.reporter.report(exc)
            return None
        self.panel.files = {}
        return path

    def place(self) -> None:
        """Size the window to most of its screen and center it there (not a small window in a corner)."""
        screen = self.screen()
        if screen is None:
            return
        area = screen.availableGeometry()
        width = max(min(area.width(), 1200), int(area.width() * 0.85))
        height = max(min(area.height(), 760), int(area.height() * 0.85))
        self.resize(min(width, area.width()), min(height, area.height()))
        frame = self.frameGeometry()
        frame.moveCenter(area.center())
        self.move(frame.topLeft())

    def save_as_dialog(self) -> Path | None:
        """Check the task, then pick the task folder (keeping the index, if one was chosen) and save there.

        An invalid task is reported before any folder is asked for.
        """
        try:
            check_task(self.editor.data)
        except OswError as exc:
            self.reporter.report(exc)
            return None
        name = QFileDialog.getExistingDirectory(self, "Task folder to save into")
        if not name:
            return None
        self.task_folder = Path(name)
        self.editor.path = None
        return self.save()

    async def shutdown(self) -> None:
        """Stop the sandbox."""
        await self.panel.close_sandbox()
