"""The instruction box: type what the agent should do and run it on the current desktop, no task file.

Enter (or Run) starts the instruction with the active profile, as F5 starts a task; the run is recorded
in the runs folder like any other (:mod:`osw_studio.runner.instruction` makes its task). Once an
instruction's run has ended, *Save as task…* writes a task file with the run's actions as its solution
draft.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLineEdit, QPushButton, QWidget

from osw_studio.core.errors import OswError
from osw_studio.runner.instruction import INSTRUCTION_DOMAIN, instruction_entry, task_from_run
from osw_studio.tasks.authoring import save_task
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.window_parts import RunWindow


class InstructionBox(QWidget):
    """A line to type an instruction in, *Run* and *Save as task…*.

    Args:
        window: The main window (its run view starts the run; its reporter shows errors).
    """

    def __init__(self, window: RunWindow) -> None:
        super().__init__(window if isinstance(window, QWidget) else None)
        self.window_ = window
        self.text = QLineEdit()
        self.text.setObjectName("instruction")
        self.text.setPlaceholderText("Type an instruction and press Enter: the agent does it on this desktop")
        self.text.setClearButtonEnabled(True)
        self.text.returnPressed.connect(self.run)
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("runInstruction")
        self.run_button.setToolTip("Run the instruction on the current desktop with the active profile")
        self.run_button.clicked.connect(self.run)
        self.save_button = QPushButton("Save as task…")
        self.save_button.setObjectName("saveInstructionTask")
        self.save_button.setToolTip(
            "Write a task file from the last instruction's run (its actions as solution)"
        )
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(lambda: self.save_as_task())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.run_button)
        layout.addWidget(self.save_button)
        self.last_run: Path | None = None
        """The run folder of the last instruction run, once it has ended."""
        self._running_id: str | None = None
        window.run_view.run_finished.connect(self._on_run_finished)

    def run(self) -> None:
        """Start the typed instruction (nothing when a run or a suite is busy: the status bar says so)."""
        view = self.window_.run_view
        if view.busy or view.busy_elsewhere():
            self.window_.status.showMessage("A run is active: stop it before running an instruction.", 5000)
            return
        try:
            entry = instruction_entry(self.text.text(), folder=self.window_.services.runs_dir)
        except OswError as exc:
            self.window_.status.showMessage(f"{exc}", 5000)
            return
        self._running_id = entry.task.id
        self.save_button.setEnabled(False)
        view.run_instruction(entry)

    def _on_run_finished(self, result: object) -> None:
        controller = self.window_.run_view.controller
        episode = controller.episode if controller is not None else None
        if episode is None or episode.task.id != self._running_id or episode.run_dir is None:
            return
        self.last_run = episode.run_dir
        self.save_button.setEnabled(True)

    def save_as_task(self, folder: Path | None = None) -> Path | None:
        """Save as task…: the last instruction's run as ``<folder>/instructions/<id>.json`` (or None)."""
        if self.last_run is None:
            return None
        if folder is None:
            name = QFileDialog.getExistingDirectory(self, "Save the task in the tasks folder")
            if not name:
                return None
            folder = Path(name)
        try:
            path = save_task(task_from_run(RunStore(self.last_run)), folder, INSTRUCTION_DOMAIN)
        except OswError as exc:
            self.window_.reporter.report(exc)
            return None
        self.window_.status.showMessage(
            f"Saved {path}: its solution is the run's actions; give it an evaluator (Tasks › Author a task…)",
            10000,
        )
        return path
