"""The step inspector: the model's output as it streams, the thought, the actions, and the verdict buttons.

Live, it follows the bound run: tokens stream into the output pane, a proposal fills the thought and the
action editor, and while the gate waits the buttons Approve / Edit / Skip / Take over are enabled.
Picking a past step in the timeline shows that step read-only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import ActionParseError
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.runner.episode import Proposal
from osw_studio.ui.action_editor import ActionEditor
from osw_studio.ui.run_controller import RunController

ERROR_STYLE = "color: #ff6b6b; font-weight: bold;"


def evaluation_text(result: EpisodeResult) -> str:
    """The evaluator's per-metric reasons for a run, as the inspector shows them.

    >>> r = EpisodeResult(success=False, task_id="t", steps=2, score=0.0, evaluation={
    ...     "score": 0.0, "conj": "and", "metrics": [
    ...     {"index": 0, "func": "exact_match", "score": 0.0, "reason": "'a' != 'b'"}]})
    >>> print(evaluation_text(r))
    Evaluation: score 0.00 (metrics joined with and)
    1. exact_match: 0.00 - 'a' != 'b'
    """
    evaluation = (result.model_extra or {}).get("evaluation")
    if not isinstance(evaluation, dict):
        return "No evaluation: the run ended before it was scored."
    score = evaluation.get("score")
    conj = evaluation.get("conj")
    lines = [f"Evaluation: score {score:.2f}" if isinstance(score, int | float) else "Evaluation"]
    if conj:
        lines[0] += f" (metrics joined with {conj})"
    elif evaluation.get("reason"):
        lines.append(str(evaluation["reason"]))
    for n, metric in enumerate(evaluation.get("metrics") or [], start=1):
        if not isinstance(metric, dict):
            continue
        value = metric.get("score")
        shown = f"{value:.2f}" if isinstance(value, int | float) else "?"
        reason = f" - {metric['reason']}" if metric.get("reason") else ""
        lines.append(f"{n}. {metric.get('func', '?')}: {shown}{reason}")
    return "\n".join(lines)


class StepInspector(QWidget):
    """Shows one step, live or recorded.

    Signals:
        actions_edited(list): The person's edit of the held proposal, as valid actions (for the overlay).
    """

    actions_edited = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller: RunController | None = None
        self.title = QLabel("No step yet")
        self.title.setObjectName("inspectorTitle")
        self.output = QPlainTextEdit(readOnly=True)
        self.output.setObjectName("modelOutput")
        self.output.setPlaceholderText("The model's output streams in here.")
        self.thought = QPlainTextEdit(readOnly=True)
        self.thought.setObjectName("thought")
        self.thought.setPlaceholderText("Thought")
        self.thought.setMaximumHeight(90)
        self.editor = ActionEditor()
        self.error = QLabel("")
        self.error.setObjectName("inspectorError")
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)  # it may quote the model
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.hide()
        self.approve_button = QPushButton("Approve")
        self.approve_button.setToolTip("Run the proposed actions (Enter); after Edit, run your version")
        self.edit_button = QPushButton("Edit")
        self.edit_button.setCheckable(True)
        self.edit_button.setToolTip("Change the actions before they run")
        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Drop this proposal; the agent looks again")
        self.takeover_button = QPushButton("Take over")
        self.takeover_button.setCheckable(True)
        self.takeover_button.setToolTip("Act yourself in the viewer (Ctrl+T)")
        buttons = QHBoxLayout()
        for b in (self.approve_button, self.edit_button, self.skip_button, self.takeover_button):
            buttons.addWidget(b)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.output)
        split.addWidget(self.thought)
        split.addWidget(self.editor)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(2, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(split, 1)
        layout.addWidget(self.error)
        layout.addLayout(buttons)
        self.approve_button.clicked.connect(self.approve)
        self.edit_button.toggled.connect(self._on_edit_toggled)
        self.skip_button.clicked.connect(self.skip)
        self.takeover_button.clicked.connect(self._on_takeover_clicked)
        self.editor.edited.connect(self._on_edited)
        self.editor.submitted.connect(self._on_submitted)
        self._gating = False
        self._live = True
        self._update_buttons()

    # --- binding ------------------------------------------------------------------------------------

    def bind(self, controller: RunController | None) -> None:
        """Follow a run (None: no run)."""
        self.controller = controller
        self._gating = False
        self._live = True
        self.clear()
        if controller is not None:
            controller.listen("model_token", self._on_model_token)
            controller.listen("step_proposed", self._on_step_proposed)
            controller.listen("state_changed", self._on_state_changed)
            controller.listen("takeover_changed", self._on_takeover_changed)
            controller.listen("error_raised", self._on_error_raised)
            controller.listen("step_finished", self._on_step_finished)
        self._update_buttons()

    def clear(self) -> None:
        """Empty every pane."""
        self.title.setText("No step yet")
        self.output.clear()
        self.thought.clear()
        self.editor.set_actions([])
        self.show_error(None)

    def show_error(self, text: str | None) -> None:
        """Show an error in place (None hides it)."""
        self.error.setText(text or "")
        self.error.setVisible(bool(text))

    # --- run -> view --------------------------------------------------------------------------------

    def _on_state_changed(self, new: str, _old: str) -> None:
        episode = self.controller.episode if self.controller else None
        if new == "predicting" and episode is not None:
            self._live = True
            self.output.clear()
            self.thought.clear()
            self.editor.set_actions([])
            self.show_error(None)
            self.title.setText(f"Step {episode.step_index + 1} · thinking…")
        self._gating = new == "gating"
        if not self._gating:
            self.edit_button.setChecked(False)
        self._update_buttons()

    def _on_model_token(self, delta: str) -> None:
        if not self._live:
            return
        cursor = self.output.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(delta)
        self.output.setTextCursor(cursor)
        self.output.ensureCursorVisible()

    def _on_step_proposed(self, proposal: Proposal) -> None:
        self._live = True
        self.title.setText(f"Step {proposal.index} · proposed")
        if proposal.response is not None and self.output.toPlainText() != proposal.response:
            self.output.setPlainText(proposal.response)
        self.thought.setPlainText(proposal.thought or "")
        self.editor.set_actions(proposal.actions)
        self.edit_button.setChecked(False)
        if proposal.error:
            self.show_error(
                f"The reply could not be parsed: {proposal.error}. Edit the actions and Approve, "
                "Skip to let the model try again, or Take over."
            )
        elif proposal.confirm:
            self.show_error(
                f"The model asks you to confirm before these actions run: {proposal.confirm}. Approve to go "
                "on, Edit to change them, Skip to refuse, or Take over."
            )
        else:
            self.show_error(None)

    def _on_step_finished(self, record: StepRecord) -> None:
        # the proposal is gone (run, edited, skipped or dropped by a takeover): nothing left to approve
        self._gating = False
        self.edit_button.setChecked(False)
        if self._live and record.source == "agent":
            self.title.setText(f"Step {record.index} · {record.verdict}")
        self._update_buttons()

    def _on_takeover_changed(self, on: bool) -> None:
        self.takeover_button.setChecked(on)
        self._update_buttons()

    def _on_error_raised(self, error: object) -> None:
        hint = getattr(error, "hint", None)
        text = str(error) if hint else f"{error} (see the log for details)"
        self.show_error(text)
        if self.title.text().endswith("thinking…"):  # the model call failed: no longer thinking
            self.title.setText(self.title.text().removesuffix("thinking…") + "model call failed")

    def show_evaluation(self, result: EpisodeResult) -> None:
        """The evaluator's verdict on the run that ended: its score and each metric's reason."""
        self._live = False
        self._gating = False
        score = "–" if result.score is None else f"{result.score:.2f}"
        self.title.setText(f"Run {result.status} · score {score}")
        self.output.setPlainText(evaluation_text(result))
        self.thought.clear()
        self.show_error(result.error or None)
        self._update_buttons()

    # --- a recorded step ----------------------------------------------------------------------------

    def show_record(self, record: StepRecord) -> None:
        """Show a recorded step read-only (picked in the timeline)."""
        self._live = False
        self.edit_button.setChecked(False)
        who = "you" if record.source == "human" else "agent"
        self.title.setText(f"Step {record.index} · {record.verdict} · by {who}")
        self.output.setPlainText(record.response or "")
        self.thought.setPlainText(record.thought or "")
        shown = record.proposed if record.verdict == "skipped" or not record.executed else record.executed
        self.editor.set_actions(shown)
        extra = ""
        if record.verdict == "edited" and record.proposed != record.executed:
            extra = f"Edited: the model proposed {len(record.proposed)} action(s); yours ran."
        self.show_error(record.error or None)
        if extra and not record.error:
            self.title.setText(self.title.text() + " · " + extra)
        self._update_buttons()

    # --- view -> run --------------------------------------------------------------------------------

    @property
    def editing(self) -> bool:
        """Whether a person is editing the held proposal."""
        return self._gating and self.edit_button.isChecked()

    def approve(self) -> bool:
        """Approve the held proposal, or run the edited actions when edited; whether a verdict was given.

        Every way of finishing an edit ends here (Enter in a cell, the Approve shortcut, Run edited):
        a cell still open is committed first, so the person's change is what runs, recorded as
        ``edited`` beside the model's proposal. An edit that is not valid is not approved: the error
        says what to fix.
        """
        if self.controller is None or not self._gating:
            return False
        if self.editing:
            try:
                actions = self.editor.current_actions()
            except ActionParseError as exc:
                self.show_error(f"{exc}. Fix it, or uncheck Edit to run the proposal as it was.")
                return False
            self.controller.approve(actions if actions != self.editor.original else None)
        else:
            self.controller.approve(None)
        self._gating = False
        self.edit_button.setChecked(False)
        self._update_buttons()
        return True

    def skip(self) -> None:
        """Drop the held proposal."""
        if self.controller is not None and self._gating:
            self.controller.skip()

    def _on_takeover_clicked(self) -> None:
        if self.controller is not None:
            self.controller.toggle_takeover()
        else:
            self.takeover_button.setChecked(False)

    def _on_edit_toggled(self, on: bool) -> None:
        if not on and self._gating and self.editor.is_modified() and not self._confirm_discard():
            self.edit_button.blockSignals(True)
            self.edit_button.setChecked(True)
            self.edit_button.blockSignals(False)
            return
        self.editor.set_editable(on)
        self.approve_button.setText("Run edited" if on else "Approve")
        if not on and self._gating:
            self.editor.set_actions(self.editor.original)
            self.actions_edited.emit(self.editor.original)

    def _confirm_discard(self) -> bool:
        """Ask before an edit is thrown away (unchecking Edit); True to discard it."""
        answer = QMessageBox.question(
            self,
            "Discard the edit?",
            "You changed the proposed actions. Discard your edit and go back to the model's proposal?",
            QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Discard

    def _on_edited(self) -> None:
        try:
            actions = self.editor.current_actions()
        except ActionParseError as exc:
            self.show_error(str(exc))
            return
        self.show_error(None)
        self.actions_edited.emit(actions)

    def _on_submitted(self) -> None:
        if self.editing:  # Enter or Tab finished a cell of the edit: it runs, as the README says
            self.approve()

    def refresh_buttons(self) -> None:
        """Enable the buttons that apply now (after the run ended, for instance)."""
        self._update_buttons()

    def _update_buttons(self) -> None:
        live = self.controller is not None and self._live
        gating = live and self._gating
        self.approve_button.setEnabled(gating)
        self.edit_button.setEnabled(gating)
        self.skip_button.setEnabled(gating)
        self.takeover_button.setEnabled(self.controller is not None and self.controller.running)
