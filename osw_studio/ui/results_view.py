"""Results: a batch's per-domain table and bar chart; pick a domain, then open a task's run.

The view takes a results folder (the ``--out`` of ``osw-studio eval run``, a runs folder or OSWorld's
results layout) and reads it with :mod:`osw_studio.runner.summary`. Clicking a domain's row or bar lists
its tasks; opening a task (double-click or Open) emits :attr:`ResultsView.run_opened` with its
:class:`~osw_studio.trajectory.store.RunStore`, which the main window shows like any run.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import OswError
from osw_studio.runner.result_groups import ResultGroup, load_groups
from osw_studio.runner.summary import (
    DomainStats,
    Stats,
    TaskOutcome,
    compute_stats,
    run_folder,
)
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.results_accounting import AccountingPanel

TABLE_COLUMNS = ["Domain", "Tasks", "Successes", "Rate", "Errors", "With help"]
"""Successes and the rate are the agent's own; runs a person helped (edits, takeovers) count apart."""
TASK_COLUMNS = ["Task", "Domain", "Score", "Status", "Steps", "Time", "Error"]


class BarChart(QWidget):
    """Success rate per domain as vertical bars (0-100%), drawn with QPainter.

    Signals:
        domain_clicked(str): The domain whose bar was clicked.
    """

    domain_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[DomainStats] = []
        self.selected: str | None = None
        self.setMinimumHeight(120)  # room for the instruction bar at 1280x720

    def sizeHint(self) -> QSize:  # noqa: D102 (Qt override)
        return QSize(480, 220)

    def set_rows(self, rows: list[DomainStats]) -> None:
        """Show these rows, one bar each."""
        self.rows = list(rows)
        self.update()

    def bar_rects(self) -> dict[str, QRectF]:
        """Where each domain's bar is drawn (its full-height slot; the bar fills its rate of it)."""
        if not self.rows:
            return {}
        left, top, bottom = 36.0, 24.0, 40.0  # room for the axis, the rate above a full bar, the names
        width = max(1.0, self.width() - left - 8.0)
        height = max(1.0, self.height() - top - bottom)
        slot = width / len(self.rows)
        bar = min(slot * 0.7, 90.0)  # a lone domain is a bar, not a wall
        return {
            row.name: QRectF(left + i * slot + (slot - bar) / 2, top, bar, height)
            for i, row in enumerate(self.rows)
        }

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: D102 (Qt override)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.WindowText)
        rects = self.bar_rects()
        if not rects:
            painter.setPen(text)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no results")
            return
        first = next(iter(rects.values()))
        painter.setPen(QColor(text.red(), text.green(), text.blue(), 60))
        for pct in (0, 50, 100):
            y = first.bottom() - first.height() * pct / 100
            painter.drawLine(30, int(y), self.width() - 4, int(y))
            painter.drawText(QRectF(0, y - 8, 28, 16), Qt.AlignmentFlag.AlignRight, f"{pct}")
        for row in self.rows:
            slot = rects[row.name]
            filled = QRectF(slot)
            filled.setTop(slot.bottom() - slot.height() * min(row.rate, 100.0) / 100)
            colour = QColor("#2e7d32") if row.rate >= 50 else QColor("#c62828")
            if self.selected not in (None, row.name):
                colour.setAlpha(110)
            painter.fillRect(filled, colour)
            painter.setPen(text)
            painter.drawText(
                QRectF(slot.left() - 10, filled.top() - 16, slot.width() + 20, 14),
                Qt.AlignmentFlag.AlignCenter,
                f"{row.rate:.0f}%",
            )
            label = QRectF(slot.left() - 12, slot.bottom() + 4, slot.width() + 24, 32)
            painter.drawText(label, Qt.AlignmentFlag.AlignHCenter | Qt.TextFlag.TextWordWrap, row.name)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: D102 (Qt override)
        for name, rect in self.bar_rects().items():
            if rect.adjusted(0, 0, 0, 36).contains(event.position()):
                self.domain_clicked.emit(name)
                return
        super().mousePressEvent(event)


class ResultsView(QWidget):
    """A results folder: per-domain table and bar chart, and the tasks of the chosen domain.

    Args:
        folder: The results folder to show, or None to start empty (pick one with Open folder).

    Signals:
        run_opened(object): The :class:`RunStore` of the task a person opened.
        folder_changed(str): The folder now shown.
    """

    run_opened = Signal(object)
    folder_changed = Signal(str)

    def __init__(self, folder: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder: Path | None = None
        self.stats: Stats | None = None
        self.outcomes: list[TaskOutcome] = []
        self.domain: str | None = None
        self.groups: list[ResultGroup] = []

        self.group = QComboBox()
        self.group.setObjectName("resultsGroup")
        self.group.setToolTip("Whose results: each agent and model is counted apart, never pooled")
        self.group.currentIndexChanged.connect(lambda _index: self._show_group())
        self.where = QLabel("no results folder")
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pick_button = QPushButton("Open folder…")
        self.pick_button.clicked.connect(self.pick_folder)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setObjectName("resultsTable")
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellClicked.connect(self._on_cell_clicked)
        self.chart = BarChart()
        self.chart.domain_clicked.connect(self.show_domain)
        self.tasks = QTreeWidget()
        self.tasks.setObjectName("resultsTasks")
        self.tasks.setHeaderLabels(TASK_COLUMNS)
        self.tasks.setRootIsDecorated(False)
        self.tasks.itemActivated.connect(lambda *_: self.open_selected())
        self.open_button = QPushButton("Open run")
        self.open_button.clicked.connect(self.open_selected)

        top = QHBoxLayout()
        top.addWidget(self.group)
        top.addWidget(self.where, 1)
        top.addWidget(self.refresh_button)
        top.addWidget(self.pick_button)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(self.table)
        upper.addWidget(self.chart)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.tasks, 1)
        lower_layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignRight)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        self.accounting = AccountingPanel()
        # scrolled, so its charts never set the dock's (and the window's) smallest height
        self.accounting_area = QScrollArea()
        self.accounting_area.setWidgetResizable(True)
        self.accounting_area.setWidget(self.accounting)
        split.addWidget(self.accounting_area)
        split.addWidget(lower)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        if folder is not None:
            self.set_folder(folder)

    # --- loading ------------------------------------------------------------------------------------

    def pick_folder(self) -> None:
        """Ask for a results folder and show it."""
        start = str(self.folder) if self.folder else ""
        chosen = QFileDialog.getExistingDirectory(self, "Results folder", start)
        if chosen:
            self.set_folder(Path(chosen))

    def set_folder(self, folder: Path) -> None:
        """Show the results in ``folder`` (a message replaces them when it holds none)."""
        self.folder = Path(folder)
        self.folder_changed.emit(str(self.folder))
        self.refresh()

    def refresh(self) -> None:
        """Re-read the folder."""
        if self.folder is None:
            return
        try:
            groups = load_groups(self.folder)
        except OswError as exc:
            self.groups = []
            self.where.setText(f"{self.folder}: {exc.message}")
        else:
            self.groups = groups
        shown = self.group.currentText()
        self.group.blockSignals(True)
        self.group.clear()
        self.group.addItems([g.label for g in self.groups])
        self.group.setCurrentIndex(max(0, self.group.findText(shown)))
        self.group.setVisible(len(self.groups) > 1)
        self.group.blockSignals(False)
        self._show_group()

    def _show_group(self) -> None:
        """Show the statistics and tasks of the agent and model chosen."""
        index = self.group.currentIndex()
        if not self.groups or index < 0:
            self.outcomes, self.stats = [], None
        else:
            chosen = self.groups[index]
            self.outcomes = chosen.outcomes
            self.stats = compute_stats(chosen.outcomes, chosen.label)
            total = self.stats.total
            helped = f", {total.assisted} more with help" if total.assisted else ""
            self.where.setText(
                f"{self.folder} — {chosen.label}: {total.successes}/{total.tasks} solved{helped}, "
                f"{total.rate:.1f}%"
            )
        self._fill_table()
        self.chart.set_rows(self.stats.domains if self.stats else [])
        self.accounting.show_stats(self.stats, self.outcomes)
        self.show_domain(self.domain if self.stats and self._has_domain(self.domain) else None)

    def _has_domain(self, name: str | None) -> bool:
        return self.stats is not None and any(row.name == name for row in self.stats.domains)

    def _fill_table(self) -> None:
        rows = [] if self.stats is None else [*self.stats.domains, *self.stats.groups, self.stats.total]
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = [
                row.name,
                str(row.tasks),
                str(row.successes),
                f"{row.rate:.1f}%",
                str(row.errors),
                str(row.assisted),
            ]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()

    # --- choosing -----------------------------------------------------------------------------------

    def _on_cell_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        name = item.text() if item is not None else None
        self.show_domain(name if self._has_domain(name) else None)

    def show_domain(self, domain: str | None) -> None:
        """List the tasks of ``domain`` (None: every task)."""
        self.domain = domain
        self.chart.selected = domain
        self.chart.update()
        self.tasks.clear()
        for n, outcome in enumerate(self.outcomes):
            if domain is not None and outcome.domain != domain:
                continue
            score = "" if outcome.score is None else f"{outcome.score:.2f}"
            item = QTreeWidgetItem(
                self.tasks,
                [
                    outcome.task_id,
                    outcome.domain,
                    score,
                    f"{outcome.status} (with help)" if outcome.assisted else outcome.status,
                    str(outcome.steps),
                    f"{outcome.time:.1f}s",
                    outcome.error or "",
                ],
            )
            item.setData(0, Qt.ItemDataRole.UserRole, n)
            if outcome.run_id is None or self.run_path(outcome) is None:
                item.setToolTip(0, "no run store for this task")
        for col in range(len(TASK_COLUMNS) - 1):
            self.tasks.resizeColumnToContents(col)

    def visible_tasks(self) -> list[str]:
        """The task ids listed now."""
        items = (self.tasks.topLevelItem(i) for i in range(self.tasks.topLevelItemCount()))
        return [item.text(0) for item in items if item is not None]

    def run_path(self, outcome: TaskOutcome) -> Path | None:
        """The run store folder of a task's outcome, when it exists."""
        if self.folder is None:
            return None
        return run_folder(self.folder, outcome.run_id)

    def open_selected(self) -> None:
        """Open the selected task's run (nothing happens for a task without a run store)."""
        item = self.tasks.currentItem()
        if item is None:
            return
        path = self.run_path(self.outcomes[int(item.data(0, Qt.ItemDataRole.UserRole))])
        if path is not None:
            self.run_opened.emit(RunStore(path))
