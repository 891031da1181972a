"""Run history: the runs in the runs folder, newest first; open one to browse its timeline."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import OswError
from osw_studio.trajectory.review import ReviewLog
from osw_studio.trajectory.store import RunStore, is_run_folder

log = logging.getLogger(__name__)

COLUMNS = ["Run", "Task", "Model", "Agent", "Status", "Score", "Steps", "Help", "Review", "Started"]
ANY = "any"
FILTERS = {"Model": 2, "Agent": 3, "Outcome": 4, "Help": 7, "Review": 8}
"""The filters above the list, each with the column it matches."""


def list_runs(root: Path) -> list[RunStore]:
    """The readable runs directly under ``root``, newest first (unreadable ones are skipped and logged)."""
    if not root.is_dir():
        return []
    runs = []
    for path in sorted(root.iterdir(), reverse=True):
        if path.is_dir() and is_run_folder(path):
            try:
                runs.append(RunStore(path))
            except OswError as exc:
                log.warning("skipping a run: %s", exc)
    return runs


def _row(run: RunStore) -> list[str]:
    try:
        meta = run.meta
        result = run.result
    except OswError as exc:
        return [run.run_id, "?", "?", "?", f"unreadable: {exc.message}", "", "", "", "", ""]
    score = "" if result is None or result.score is None else f"{result.score:.2f}"
    steps = str(result.steps) if result is not None else str(run.count_steps())
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(meta.started_at)) if meta.started_at else ""
    helped = "with help" if result is not None and result.assisted else "none"
    outcome = run.status
    if result is not None and result.status in ("finished", "failed"):
        outcome = "passed" if result.success else "failed"
    return [
        run.run_id,
        meta.task_id,
        meta.model or "",
        meta.agent or "",
        outcome,
        score,
        steps,
        helped,
        _verdict(run),
        started,
    ]


def _verdict(run: RunStore) -> str:
    """The run's review verdict (``accepted``, ``rejected``), ``unreviewed``, or ``?`` when unreadable."""
    try:
        review = ReviewLog(run.path).consensus()
    except OswError:
        return "?"
    return (review.verdict if review is not None else None) or "unreviewed"


class RunHistory(QWidget):
    """Lists the runs under a runs folder.

    Args:
        root: The runs folder.

    Signals:
        run_opened(object): The :class:`RunStore` a person opened (double-click or Open).
        review_requested(object): The :class:`RunStore` a person asked to review (Review).
        suites_changed(): A suite's runs folder was added to the list.
    """

    run_opened = Signal(object)
    review_requested = Signal(object)
    suites_changed = Signal()

    def __init__(self, root: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.root = root
        self.tree = QTreeWidget()
        self.tree.setObjectName("runHistory")
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setSortingEnabled(False)
        self.tree.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)  # several, to export
        self.tree.itemActivated.connect(lambda *_: self.open_selected())
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(self.open_selected)
        self.review_button = QPushButton("Review…")
        self.review_button.setObjectName("reviewRun")
        self.review_button.setToolTip("Label the run's steps and accept or reject it, from the keyboard")
        self.review_button.clicked.connect(self.review_selected)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.filters: dict[str, QComboBox] = {}
        filter_row = QGridLayout()
        for n, name in enumerate(FILTERS):
            combo = QComboBox()
            combo.setObjectName(f"history{name}Filter")
            combo.addItem(ANY)
            combo.currentIndexChanged.connect(lambda _index: self.apply_filters())
            label = QLabel(name)
            label.setBuddy(combo)
            filter_row.addWidget(label, n // 2, (n % 2) * 2)  # two a row: a narrow dock shows them whole
            filter_row.addWidget(combo, n // 2, (n % 2) * 2 + 1)
            filter_row.setColumnStretch((n % 2) * 2 + 1, 1)
            self.filters[name] = combo
        self.where = QLabel(str(root))
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.addWidget(self.where, 1)
        bar.addWidget(self.refresh_button)
        bar.addWidget(self.review_button)
        bar.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(filter_row)
        layout.addWidget(self.tree, 1)
        layout.addLayout(bar)
        self._runs: list[RunStore] = []
        self.suites: list[Path] = []
        """Runs folders of suites evaluated in this session, listed with the runs folder's runs."""
        self.refresh()

    def add_suite(self, runs_dir: Path) -> None:
        """List the runs of a suite too (Run › Evaluate suite… writes them under its own folder)."""
        self.add_suites([runs_dir])

    def add_suites(self, folders: list[Path]) -> None:
        """List the runs of several suites' runs folders too, reading the folders once."""
        new = [p for p in dict.fromkeys(folders) if p != self.root and p not in self.suites]
        if new:
            self.suites += new
            self.where.setText(f"{self.root} + {len(self.suites)} suite folder(s)")
            self.suites_changed.emit()
        self.refresh()

    def set_root(self, root: Path) -> None:
        """List another runs folder."""
        self.root = root
        self.where.setText(str(root))
        self.refresh()

    def refresh(self) -> None:
        """Re-read the runs folder (and the suites' runs folders), newest first."""
        runs = [run for root in (self.root, *self.suites) for run in list_runs(root)]
        self._runs = sorted(runs, key=lambda run: run.run_id, reverse=True)
        self.tree.clear()
        rows = [_row(run) for run in self._runs]
        for n, row in enumerate(rows):
            item = QTreeWidgetItem(self.tree, row)
            item.setData(0, Qt.ItemDataRole.UserRole, n)
        for name, column in FILTERS.items():  # each filter offers the values listed
            combo = self.filters[name]
            chosen = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([ANY, *sorted({row[column] for row in rows if row[column]})])
            combo.setCurrentIndex(max(0, combo.findText(chosen)))
            combo.blockSignals(False)
        self.apply_filters()
        for col in range(len(COLUMNS)):
            self.tree.resizeColumnToContents(col)

    def apply_filters(self) -> None:
        """Show only the runs every filter accepts."""
        wanted = {FILTERS[name]: combo.currentText() for name, combo in self.filters.items()}
        for item in self._items():
            item.setHidden(any(value != ANY and item.text(col) != value for col, value in wanted.items()))

    def _items(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item for item in items if item is not None]

    def visible_runs(self) -> list[RunStore]:
        """The runs the filters show, newest first."""
        return [
            self._runs[int(it.data(0, Qt.ItemDataRole.UserRole))] for it in self._items() if not it.isHidden()
        ]

    @property
    def runs(self) -> list[RunStore]:
        """The runs listed, newest first."""
        return list(self._runs)

    def selected_runs(self) -> list[RunStore]:
        """The runs selected (Ctrl/Shift-click picks several), in the order listed."""
        rows = sorted(
            int(item.data(0, Qt.ItemDataRole.UserRole))
            for item in self.tree.selectedItems()
            if not item.isHidden()
        )
        return [self._runs[n] for n in rows]

    def open_selected(self) -> None:
        """Open the selected run."""
        item = self.tree.currentItem()
        if item is None:
            return
        self.run_opened.emit(self._runs[int(item.data(0, Qt.ItemDataRole.UserRole))])

    def review_selected(self) -> None:
        """Ask to review the selected run."""
        item = self.tree.currentItem()
        if item is not None:
            self.review_requested.emit(self._runs[int(item.data(0, Qt.ItemDataRole.UserRole))])
