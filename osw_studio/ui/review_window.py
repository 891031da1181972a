"""The review window: step through a recorded run and label it, from the keyboard.

Keys (while the step list or the screen has the focus): Left/Right (or Up/Down) move between
steps; C, W and R label the step correct, wrong or redundant, and 0 takes its label back; with a
step labelled wrong, its actions become editable and Ctrl+Return stores them as the correction;
A accepts the run, X rejects it; 1–5 rate it; N goes to the note (Return stores it, Escape goes
back). Every judgement is appended to the run's ``review.jsonl`` at once, with the reviewer and
the time; the recorded steps never change.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QEvent, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QPainter, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError, OswError
from osw_studio.core.review import ReviewEvent, RunReview, RunVerdict, StepLabel
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.review import ReviewLog, default_reviewer
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.action_editor import ActionEditor
from osw_studio.ui.overlay import describe, paint_actions

MARKS = {"correct": "✓", "wrong": "✗", "redundant": "∅"}


class ReviewWindow(QWidget):
    """Review one run.

    Args:
        run: The run to review.
        reviewer: Who is reviewing (default: ``$OSW_REVIEWER``, else the login name).

    Signals:
        reviewed(object): The :class:`RunStore`, after each judgement was stored.
    """

    reviewed = Signal(object)

    def __init__(self, run: RunStore, reviewer: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window)
        self.run = run
        self.log = ReviewLog(run.path)
        self.reviewer = reviewer or default_reviewer()
        self.steps: list[StepRecord] = list(run.iter_steps())
        self.setWindowTitle(f"Review — {run.meta.task_id} ({run.run_id})")

        self.step_list = QListWidget()
        self.step_list.setObjectName("reviewSteps")
        self.step_list.currentRowChanged.connect(self._show_step)
        self.screen_view = QLabel("no screen saved")
        self.screen_view.setObjectName("reviewScreen")
        self.screen_view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.screen_view.setMinimumSize(320, 200)
        self.screen_view.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.response = QPlainTextEdit()
        self.response.setReadOnly(True)
        self.response.setObjectName("reviewResponse")
        self.editor = ActionEditor()
        self.save_correction = QPushButton("Store correction (Ctrl+Return)")
        self.save_correction.clicked.connect(self.store_correction)
        self.status = QLabel()
        self.status.setObjectName("reviewStatus")
        self.status.setWordWrap(True)
        self.note = QLineEdit()
        self.note.setObjectName("reviewNote")
        self.note.setPlaceholderText("note on the run (N, then Return)")
        self.note.returnPressed.connect(self.store_note)
        self.error = QLabel()
        self.error.setObjectName("reviewError")
        self.error.setStyleSheet("color: #c62828")

        side = QVBoxLayout()
        side.addWidget(QLabel("Model output"))
        side.addWidget(self.response, 1)
        side.addWidget(QLabel("Actions (editable when the step is labelled wrong)"))
        side.addWidget(self.editor, 1)
        side.addWidget(self.save_correction)
        side.addWidget(self.note)
        side.addWidget(self.status)
        side.addWidget(self.error)
        side_widget = QWidget()
        side_widget.setLayout(side)
        split = QSplitter()
        split.addWidget(self.step_list)
        split.addWidget(self.screen_view)
        split.addWidget(side_widget)
        split.setStretchFactor(1, 3)
        layout = QHBoxLayout(self)
        layout.addWidget(split)

        self._shortcuts()
        self._refresh_list()
        if self.steps:
            self.step_list.setCurrentRow(0)
        self._show_status()
        self.step_list.setFocus()
        self.resize(1280, 760)

    # --- keys ---------------------------------------------------------------------------------------

    def _shortcuts(self) -> None:
        """Keys act while the step list or the screen has the focus (so typing a note types)."""
        self._key_widgets = (self.step_list, self.screen_view)
        for widget in (*self._key_widgets, self.editor.json, self.editor.table, self.note):
            widget.installEventFilter(self)
        digits = {getattr(Qt.Key, f"Key_{n}"): n for n in range(1, 6)}
        self._keys: dict[int, Callable[[], object]] = {
            Qt.Key.Key_C: lambda: self.label_step("correct"),
            Qt.Key.Key_W: lambda: self.label_step("wrong"),
            Qt.Key.Key_R: lambda: self.label_step("redundant"),
            Qt.Key.Key_0: self.clear_step,
            Qt.Key.Key_A: lambda: self.set_verdict("accepted"),
            Qt.Key.Key_X: lambda: self.set_verdict("rejected"),
            Qt.Key.Key_N: self.note.setFocus,
            Qt.Key.Key_Right: lambda: self.step_by(1),
            Qt.Key.Key_Left: lambda: self.step_by(-1),
        }
        for key, n in digits.items():
            self._keys[key] = partial(self.rate, n)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Route the review keys; everything else goes on as usual."""
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        key, mods = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and mods & Qt.KeyboardModifier.ControlModifier:
            self.store_correction()
            return True
        if key == Qt.Key.Key_Escape and watched is self.note:
            self.step_list.setFocus()
            return True
        plain = not mods & ~Qt.KeyboardModifier.KeypadModifier
        if watched in self._key_widgets and plain and key in self._keys:
            self._keys[key]()
            return True
        return False

    # --- what is shown --------------------------------------------------------------------------------

    @property
    def current(self) -> StepRecord | None:
        """The step shown."""
        row = self.step_list.currentRow()
        return self.steps[row] if 0 <= row < len(self.steps) else None

    def review(self) -> RunReview | None:
        """This reviewer's current review of the run."""
        return self.log.reviews().get(self.reviewer)

    def step_by(self, delta: int) -> None:
        """Show the next (``1``) or previous (``-1``) step."""
        row = min(max(self.step_list.currentRow() + delta, 0), len(self.steps) - 1)
        self.step_list.setCurrentRow(row)

    def _refresh_list(self) -> None:
        review = self.review()
        row = self.step_list.currentRow()
        self.step_list.blockSignals(True)
        self.step_list.clear()
        for step in self.steps:
            label = review.steps[step.index].label if review and step.index in review.steps else None
            actions = ", ".join(describe(a) for a in step.executed) or "no action"
            mark = MARKS.get(label or "", "·")
            item = QListWidgetItem(f"{mark} {step.index}. {step.source}/{step.verdict}: {actions}")
            item.setData(Qt.ItemDataRole.UserRole, label)
            self.step_list.addItem(item)
        self.step_list.blockSignals(False)
        if row >= 0:
            self.step_list.setCurrentRow(row)

    def _show_step(self, row: int) -> None:
        if not 0 <= row < len(self.steps):
            return
        step = self.steps[row]
        self.response.setPlainText(step.response or "(a person's own actions)")
        review = self.review()
        mine = review.steps.get(step.index) if review else None
        actions = mine.correction if mine and mine.correction else step.executed
        self.editor.set_actions(list(actions))
        self.editor.set_editable(bool(mine and mine.label == "wrong"))
        self.save_correction.setEnabled(bool(mine and mine.label == "wrong"))
        self._show_screen(step, actions)

    def _show_screen(self, step: StepRecord, actions: list[Action]) -> None:
        path = self.run.screenshot_path(step)
        image = QImage(str(path)) if path else QImage()
        if image.isNull():
            self.screen_view.setText("no screen saved for this step")
            self.screen_view.setPixmap(QPixmap())
            return
        image = image.convertToFormat(QImage.Format.Format_RGB32)
        painter = QPainter(image)
        width, height = (
            self.run.meta.screen_width or image.width(),
            self.run.meta.screen_height or image.height(),
        )
        sx, sy = image.width() / width, image.height() / height
        paint_actions(painter, actions, lambda x, y: (x * sx, y * sy), QRectF(image.rect()))
        painter.end()
        size = self.screen_view.size()
        pixmap = QPixmap.fromImage(image)
        if size.width() > 10 and size.height() > 10:
            pixmap = pixmap.scaled(
                size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
        self.screen_view.setPixmap(pixmap)

    def _show_status(self) -> None:
        review = self.review()
        labelled = len(review.steps) if review else 0
        verdict = review.verdict if review and review.verdict else "no verdict"
        rating = review.rating if review and review.rating else "-"
        self.status.setText(
            f"{self.reviewer}: {labelled}/{len(self.steps)} steps labelled · {verdict} · rating {rating}"
        )

    # --- judgements -----------------------------------------------------------------------------------

    def _append(self, event: ReviewEvent) -> bool:
        try:
            self.log.append(event)
        except OswError as exc:
            self.error.setText(str(exc))
            return False
        self.error.clear()
        self._refresh_list()
        self._show_status()
        self.reviewed.emit(self.run)
        return True

    def label_step(self, label: StepLabel) -> None:
        """Label the step shown, then move on (but stay on a wrong step, to enter its correction)."""
        step = self.current
        if step is None:
            return
        if self._append(ReviewEvent(reviewer=self.reviewer, step=step.index, label=label)):
            if label == "wrong":
                self._show_step(self.step_list.currentRow())
                self.editor.setFocus()
            else:
                self.step_by(1)

    def clear_step(self) -> None:
        """Take back the label of the step shown."""
        step = self.current
        if step is not None and self._append(
            ReviewEvent(reviewer=self.reviewer, step=step.index, clear=True)
        ):
            self._show_step(self.step_list.currentRow())

    def store_correction(self) -> None:
        """Store the edited actions as the correction of the wrong step shown."""
        step = self.current
        review = self.review()
        mine = review.steps.get(step.index) if review and step else None
        if step is None or mine is None or mine.label != "wrong":
            self.error.setText("label the step wrong (W) before storing a correction")
            return
        try:
            actions = self.editor.current_actions()
        except ActionParseError as exc:
            self.error.setText(str(exc))
            return
        event = ReviewEvent(reviewer=self.reviewer, step=step.index, label="wrong", correction=actions)
        if self._append(event):
            self._show_step(self.step_list.currentRow())
            self.step_list.setFocus()

    def set_verdict(self, verdict: RunVerdict) -> None:
        """Accept or reject the run."""
        self._append(ReviewEvent(reviewer=self.reviewer, verdict=verdict))

    def rate(self, rating: int) -> None:
        """Rate the run 1–5."""
        self._append(ReviewEvent(reviewer=self.reviewer, rating=rating))

    def store_note(self) -> None:
        """Store the note typed for the run."""
        text = self.note.text().strip()
        if text and self._append(ReviewEvent(reviewer=self.reviewer, note=text)):
            self.note.clear()
            self.step_list.setFocus()
