"""File › Export runs…: runs into a training or evaluation format, as ``osw-studio export`` does.

The person picks the runs (those selected in the run history, or every run under a folder), a format from
the exporter registry, filters, a few chat-format options and an output folder. The options are built by
:func:`osw_studio.trajectory.export.export_options` and the export is
:func:`osw_studio.trajectory.export.export_runs`, the same code the command line runs; it runs in a
worker thread (``run_in_executor``) so the window stays responsive, and reports progress back to the
loop. Errors show in the dialog with what to do.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, cast

from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import ExportError, OswError
from osw_studio.trajectory.curation import Curation, ReviewState
from osw_studio.trajectory.export import ExportSummary, Progress, export_options, export_runs, run_filter
from osw_studio.trajectory.export_folder import count_task_folders, held_export
from osw_studio.trajectory.exporters import DESCRIPTIONS
from osw_studio.trajectory.exporters.base import STEP_KINDS, ExportOptions
from osw_studio.trajectory.exporters.profiles import PROFILES
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.errors import error_text

log = logging.getLogger(__name__)


def describe_summary(summary: ExportSummary, task_folders: int | None = None) -> str:
    """What an export did, as the dialog says it (with the task folders OSWorld's layout holds).

    >>> describe_summary(ExportSummary("html", Path("out"), runs_found=3, runs_exported=2, samples=2,
    ...                                skipped={"filtered out": 1}))
    'Exported 2 of 3 runs as html to out (2 samples; skipped: 1 filtered out).'
    >>> describe_summary(ExportSummary("osworld", Path("out"), runs_found=6, runs_exported=6), 4)[-96:]
    'skipped: none). The folder holds 4 task folders: a later run of a task replaces the earlier one.'
    """
    skipped = ", ".join(f"{n} {why}" for why, n in summary.skipped.items()) or "none"
    text = (
        f"Exported {summary.runs_exported} of {summary.runs_found} runs as {summary.format} to "
        f"{summary.out} ({summary.samples} samples; skipped: {skipped})."
    )
    if task_folders is not None:
        text += f" The folder holds {task_folders} task folders"
        text += (
            ": a later run of a task replaces the earlier one."
            if task_folders < summary.runs_exported
            else "."
        )
    return text


def _export(
    paths: list[Path], fmt: str, out: Path, options: ExportOptions, progress: Progress
) -> tuple[ExportSummary, int | None]:
    """Export (in the worker thread), and count the task folders when the format is OSWorld's layout."""
    summary = export_runs(paths, fmt, out, options, progress)
    return summary, count_task_folders(out) if fmt == "osworld" else None


def _date_row(label: str) -> tuple[QCheckBox, QDateEdit, QHBoxLayout]:
    check = QCheckBox(label)
    date = QDateEdit(QDate.currentDate())
    date.setCalendarPopup(True)
    date.setDisplayFormat("yyyy-MM-dd")
    date.setEnabled(False)
    check.toggled.connect(date.setEnabled)
    row = QHBoxLayout()
    row.addWidget(check)
    row.addWidget(date, 1)
    return check, date, row


class ExportDialog(QDialog):
    """Exports runs; non-modal work, so the app keeps running while it writes.

    Args:
        selected: The runs selected in the run history (offered first when there are any).
        folder: The folder offered for "every run under a folder" (the runs folder).
        parent: The window.
    """

    def __init__(
        self, selected: Sequence[RunStore], folder: Path | None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export runs")
        self.setMinimumWidth(620)
        self.selected = list(selected)
        self.summary: ExportSummary | None = None
        self._task: asyncio.Future[tuple[ExportSummary, int | None]] | None = None
        self._cancel = threading.Event()

        # --- which runs
        self.use_selected = QRadioButton(f"The runs selected in Run history ({len(self.selected)})")
        self.use_folder = QRadioButton("Every run under a folder:")
        self.runs_folder = QLineEdit(str(folder) if folder else "")
        self.runs_folder.setObjectName("exportRunsFolder")
        browse_runs = QPushButton("Browse…")
        browse_runs.clicked.connect(lambda: self._browse(self.runs_folder, "Runs folder"))
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.use_folder)
        folder_row.addWidget(self.runs_folder, 1)
        folder_row.addWidget(browse_runs)
        (self.use_selected if self.selected else self.use_folder).setChecked(True)
        self.use_selected.setEnabled(bool(self.selected))
        runs_box = QGroupBox("Runs")
        runs_layout = QVBoxLayout(runs_box)
        runs_layout.addWidget(self.use_selected)
        runs_layout.addLayout(folder_row)

        # --- format and its options
        self.format = QComboBox()
        self.format.setObjectName("exportFormat")
        for name, text in DESCRIPTIONS.items():
            self.format.addItem(name)
            self.format.setItemData(self.format.count() - 1, text, Qt.ItemDataRole.ToolTipRole)
        self.format_help = QLabel(DESCRIPTIONS[self.format.currentText()])
        self.format_help.setWordWrap(True)
        self.format.currentTextChanged.connect(lambda name: self.format_help.setText(DESCRIPTIONS[name]))
        self.profile = QComboBox()
        self.profile.addItems(list(PROFILES))
        self.profile.setToolTip(
            "Chat formats use the request each step recorded; runs that recorded none (older runs, "
            "replays) are rebuilt with this profile's prompt and coordinate convention"
        )
        self.reprompt = QComboBox()
        self.reprompt.setObjectName("exportReprompt")
        self.reprompt.addItem("no: what the model saw")
        self.reprompt.addItems(list(PROFILES))
        self.reprompt.setToolTip(
            "Re-target every sample to another model's prompt and action format (--reprompt); the "
            "dataset card says the data is not what the model saw"
        )
        self.train_size = QLineEdit(placeholderText="as recorded (or WIDTHxHEIGHT, e.g. 1288x728)")
        self.train_size.setObjectName("exportTrainSize")
        self.train_size.setToolTip("Scale images to this size and pixel coordinates with them (--train-size)")
        self.per = QComboBox()
        self.per.addItems(["step", "episode"])
        self.per.setToolTip("One sample per step, or one conversation per run")
        self.images = QComboBox()
        self.images.addItems(["format default", "copy", "embed"])
        self.images.setToolTip(
            "Image files beside the export, or data URLs inside it (default: embed for sft-messages, "
            "which hosted fine-tuning needs, copy otherwise)"
        )
        format_box = QGroupBox("Format")
        form = QFormLayout(format_box)
        form.addRow("Format", self.format)
        form.addRow("", self.format_help)
        form.addRow("Model profile", self.profile)
        form.addRow("Re-target to", self.reprompt)
        form.addRow("Training size", self.train_size)
        form.addRow("Samples", self.per)
        form.addRow("Images", self.images)

        # --- filters
        self.success_only = QCheckBox("Successful runs only")
        self.use_min_score = QCheckBox("Minimum score")
        self.min_score = QDoubleSpinBox(minimum=0.0, maximum=1.0, singleStep=0.1, decimals=2)
        self.min_score.setEnabled(False)
        self.use_min_score.toggled.connect(self.min_score.setEnabled)
        score_row = QHBoxLayout()
        score_row.addWidget(self.use_min_score)
        score_row.addWidget(self.min_score, 1)
        self.sources = {kind: QCheckBox(kind) for kind in STEP_KINDS}
        sources_row = QHBoxLayout()
        for box in self.sources.values():
            box.setChecked(True)
            sources_row.addWidget(box)
        sources_row.addStretch(1)
        self.domains = QLineEdit(placeholderText="all (or a comma-separated list: os, gimp, …)")
        self.domains.setObjectName("exportDomains")
        self.use_since, self.since, since_row = _date_row("From")
        self.use_until, self.until, until_row = _date_row("To")
        filter_box = QGroupBox("Filters")
        form2 = QFormLayout(filter_box)
        form2.addRow(self.success_only)
        form2.addRow(score_row)
        form2.addRow("Steps by", sources_row)
        form2.addRow("Domains", self.domains)
        form2.addRow("Started", since_row)
        form2.addRow("", until_row)

        # --- review and DART-style selection (osw_studio.trajectory.curation)
        self.review = QComboBox()
        self.review.setObjectName("exportReview")
        self.review.addItems(["any", "accepted", "rejected", "unreviewed", "not-rejected"])
        self.drop_wrong = QCheckBox("Drop steps labelled wrong")
        self.drop_redundant = QCheckBox("Drop steps labelled redundant")
        self.apply_corrections = QCheckBox("Export reviewers' corrections as edits")
        self.use_replay = QCheckBox("Replay successes of tasks solved less often than")
        self.replay_below = QDoubleSpinBox(minimum=0.0, maximum=1.0, singleStep=0.05, decimals=2, value=0.2)
        self.replay_below.setEnabled(False)
        self.use_replay.toggled.connect(self.replay_below.setEnabled)
        replay_row = QHBoxLayout()
        replay_row.addWidget(self.use_replay)
        replay_row.addWidget(self.replay_below, 1)
        self.use_entropy = QCheckBox("Keep the agent steps with the highest token entropy:")
        self.entropy_top = QDoubleSpinBox(minimum=0.01, maximum=1.0, singleStep=0.05, decimals=2, value=0.8)
        self.entropy_top.setEnabled(False)
        self.use_entropy.toggled.connect(self.entropy_top.setEnabled)
        entropy_row = QHBoxLayout()
        entropy_row.addWidget(self.use_entropy)
        entropy_row.addWidget(self.entropy_top, 1)
        form2.addRow("Review", self.review)
        form2.addRow(self.drop_wrong)
        form2.addRow(self.drop_redundant)
        form2.addRow(self.apply_corrections)
        form2.addRow(replay_row)
        form2.addRow(entropy_row)

        # --- where, and progress
        self.out = QLineEdit()
        self.out.setObjectName("exportOut")
        self.out.setPlaceholderText("the folder the export is written to")
        browse_out = QPushButton("Browse…")
        browse_out.clicked.connect(lambda: self._browse(self.out, "Export to"))
        out_row = QHBoxLayout()
        out_row.addWidget(QLabel("Output folder"))
        out_row.addWidget(self.out, 1)
        out_row.addWidget(browse_out)
        self.progress = QProgressBar()
        self.progress.setObjectName("exportProgress")
        self.progress.setFormat("not started")  # not "0 / 100 runs": the runs are counted at the start
        self.progress.setValue(0)
        self.message = QLabel("")
        self.message.setObjectName("exportMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.ActionRole)
        self.export_button.setObjectName("exportButton")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start)
        self.cancel_button = self.buttons.addButton("Cancel export", QDialogButtonBox.ButtonRole.ActionRole)
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._cancel.set)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(runs_box)
        layout.addWidget(format_box)
        layout.addWidget(filter_box)
        layout.addLayout(out_row)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)

    def _browse(self, field: QLineEdit, title: str) -> None:
        chosen = QFileDialog.getExistingDirectory(self, title, field.text())
        if chosen:
            field.setText(chosen)

    # --- the export ---------------------------------------------------------------------------------

    def run_paths(self) -> list[Path]:
        """The runs (or folders of runs) the export reads.

        Raises:
            ExportError: If no runs were chosen.
        """
        if self.use_selected.isChecked():
            return [run.path for run in self.selected]
        text = self.runs_folder.text().strip()
        if not text:
            raise ExportError("no runs chosen", hint="select runs in Run history, or give a folder of runs")
        return [Path(text).expanduser()]

    def chosen_format(self) -> str:
        """The format's name."""
        return self.format.currentText()

    def build_options(self) -> tuple[list[Path], Path, ExportOptions]:
        """The runs, the output folder and the export options the form describes.

        Raises:
            ExportError: For a missing output folder, no step source or a bad option.
        """
        paths = self.run_paths()
        out = self.out.text().strip()
        if not out:
            raise ExportError("no output folder", hint="choose where the export is written")
        sources = [kind for kind, box in self.sources.items() if box.isChecked()]
        if not sources:
            raise ExportError("no step source chosen", hint="tick agent, human or edited (all: no filter)")
        domains = [d.strip() for d in self.domains.text().split(",") if d.strip()]
        options = export_options(
            run_filter(
                success_only=self.success_only.isChecked(),
                min_score=self.min_score.value() if self.use_min_score.isChecked() else None,
                sources=sources if len(sources) < len(STEP_KINDS) else (),
                domains=domains,
                since=self.since.date().toString("yyyy-MM-dd") if self.use_since.isChecked() else None,
                until=self.until.date().toString("yyyy-MM-dd") if self.use_until.isChecked() else None,
            ),
            profile=self.profile.currentText(),
            per=cast(Literal["step", "episode"], self.per.currentText()),
            images=None
            if self.images.currentIndex() == 0
            else cast(Literal["copy", "embed"], self.images.currentText()),
            reprompt=self.reprompt.currentText() if self.reprompt.currentIndex() > 0 else None,
            train_size=self.train_size.text().strip() or None,
            curation=self._curation(),
            apply_corrections=self.apply_corrections.isChecked(),
        )
        return paths, Path(out).expanduser(), options

    def _curation(self) -> Curation | None:
        """The review and selection options, or None when none is set."""
        drop = frozenset(
            label
            for label, box in (("wrong", self.drop_wrong), ("redundant", self.drop_redundant))
            if box.isChecked()
        )
        curation = Curation(
            review=cast(ReviewState, self.review.currentText()),
            drop_labels=drop,
            replay_below=self.replay_below.value() if self.use_replay.isChecked() else None,
            entropy_top=self.entropy_top.value() if self.use_entropy.isChecked() else None,
        )
        return None if curation == Curation() else curation

    def start(self) -> asyncio.Future[tuple[ExportSummary, int | None]] | None:
        """Check the form and start the export in a worker thread (None when the form is incomplete)."""
        if self._task is not None and not self._task.done():
            return None
        try:
            paths, out, options = self.build_options()
        except OswError as exc:
            self._show_error(exc)
            return None
        held = held_export(out)
        if held is not None and not self._confirm_into(out, held):
            self.message.setStyleSheet("color: #ff6b6b;")
            self.message.setText(
                f"Not exported: {out} already holds {held}. Choose an empty folder, or export again and "
                "confirm to write into it."
            )
            return None
        loop = asyncio.get_running_loop()
        self._cancel.clear()
        self.summary = None
        self.progress.setFormat("%v / %m runs")
        self.progress.setRange(0, 0)  # busy until the runs are counted
        self.message.setStyleSheet("")
        self.message.setText(f"Exporting to {out}…")
        self.export_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        fmt = self.chosen_format()

        def progress(done: int, total: int, _summary: ExportSummary) -> None:  # in the worker thread
            loop.call_soon_threadsafe(self._on_progress, done, total)
            if self._cancel.is_set():
                raise ExportError(
                    f"export cancelled after {done} of {total} runs",
                    where=str(out),
                    hint="what was written so far is incomplete; export again to finish",
                )

        self._task = loop.run_in_executor(None, _export, paths, fmt, out, options, progress)
        self._task.add_done_callback(self._on_done)
        return self._task

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _on_done(self, task: asyncio.Future[tuple[ExportSummary, int | None]]) -> None:
        self.export_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            if not isinstance(exc, OswError):
                log.error("export failed", exc_info=exc)
            self._show_error(exc)
            return
        self.summary, task_folders = task.result()
        self.progress.setValue(self.progress.maximum())
        self.message.setStyleSheet("color: #4caf50;")
        self.message.setText(describe_summary(self.summary, task_folders))

    def _confirm_into(self, out: Path, held: str) -> bool:
        """Ask before writing into a folder that holds something; True to write into it."""
        answer = QMessageBox.question(
            self,
            "The folder is not empty",
            f"{out} already holds {held}. An export into it replaces files of the same names (its "
            "README.md, data files) and mixes with what is there. Export into it anyway?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _show_error(self, exc: BaseException) -> None:
        title, body = error_text(exc)
        self.message.setStyleSheet("color: #ff6b6b;")
        self.message.setText(f"{title}: {body}".replace("\n\n", "\n"))

    async def wait(self) -> ExportSummary | None:
        """Wait for the export in progress, if any (tests, and closing the window)."""
        if self._task is None:
            return None
        try:
            return (await self._task)[0]
        except Exception:  # shown in the dialog already
            return None

    def reject(self) -> None:  # noqa: D102 (Qt override: closing asks a running export to stop)
        self._cancel.set()
        super().reject()
