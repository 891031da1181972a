"""The Results dock's accounting: rates with their 95% intervals, why tasks ended, cost, and a comparison.

:class:`AccountingPanel` sits under the Results table and shows what ``eval stats`` prints for the same
folder: each domain's rate as a bar with its Wilson interval as an error bar, the outcome kinds as one
stacked bar per domain, tokens and cost per domain, and, once a person picks a second folder, the paired
comparison (exact McNemar test and paired bootstrap) per domain.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import OswError
from osw_studio.core.outcome import OutcomeKind
from osw_studio.runner.accounting import DomainComparison, compare
from osw_studio.runner.summary import DomainStats, Stats, TaskOutcome, load_outcomes
from osw_studio.ui.status import money

KIND_COLOURS: dict[str, str] = {
    OutcomeKind.SOLVED: "#2e7d32",
    OutcomeKind.INFEASIBLE: "#66bb6a",
    OutcomeKind.FAILED: "#c62828",
    OutcomeKind.STEP_LIMIT: "#ef6c00",
    OutcomeKind.STUCK: "#8e24aa",
    OutcomeKind.BUDGET: "#6d4c41",
    OutcomeKind.MODEL_ERROR: "#1565c0",
    OutcomeKind.ENV_ERROR: "#546e7a",
    OutcomeKind.ASSET_MISSING: "#00838f",
    OutcomeKind.EVALUATOR_ERROR: "#ad1457",
    OutcomeKind.TIMEOUT: "#f9a825",
    OutcomeKind.STOPPED: "#9e9e9e",
}
"""One colour per outcome kind, in the stacked bars and their legend."""

COST_COLUMNS = ["Domain", "Tasks", "Tokens", "Prompt", "Cached", "Completion", "Reasoning", "Cost"]
COMPARE_COLUMNS = [
    "Domain",
    "Shared",
    "A",
    "B",
    "A only",
    "B only",
    "McNemar p",
    "B − A (95%)",
    "Significant",
]


def _slots(widget: QWidget, names: list[str]) -> dict[str, QRectF]:
    """Each domain's full-height slot in a bar chart (axis on the left, names below)."""
    if not names:
        return {}
    left, top, bottom = 44.0, 12.0, 40.0
    width = max(1.0, widget.width() - left - 8.0)
    height = max(1.0, widget.height() - top - bottom)
    slot = width / len(names)
    bar = min(slot * 0.6, 70.0)
    return {
        name: QRectF(left + i * slot + (slot - bar) / 2, top, bar, height) for i, name in enumerate(names)
    }


def _axis(painter: QPainter, widget: QWidget, first: QRectF, labels: tuple[tuple[float, str], ...]) -> None:
    text = widget.palette().color(QPalette.ColorRole.WindowText)
    painter.setPen(QColor(text.red(), text.green(), text.blue(), 60))
    for share, label in labels:
        y = first.bottom() - first.height() * share
        painter.drawLine(38, int(y), widget.width() - 4, int(y))
        painter.drawText(QRectF(0, y - 8, 36, 16), Qt.AlignmentFlag.AlignRight, label)


def _names(painter: QPainter, widget: QWidget, slots: dict[str, QRectF]) -> None:
    painter.setPen(widget.palette().color(QPalette.ColorRole.WindowText))
    for name, slot in slots.items():
        label = QRectF(slot.left() - 14, slot.bottom() + 4, slot.width() + 28, 32)
        painter.drawText(label, Qt.AlignmentFlag.AlignHCenter | Qt.TextFlag.TextWordWrap, name)


class _DomainChart(QWidget):
    """A chart of one bar per statistics row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[DomainStats] = []
        self.setMinimumHeight(150)

    def sizeHint(self) -> QSize:
        return QSize(480, 200)

    def set_rows(self, rows: list[DomainStats]) -> None:
        """Show these rows."""
        self.rows = list(rows)
        self.update()


class IntervalChart(_DomainChart):
    """Each domain's rate (and the total's) as a bar, its 95% Wilson interval as an error bar."""

    def error_bars(self) -> dict[str, tuple[float, float]]:
        """Per row: the interval drawn, in percent (as :attr:`DomainStats.interval`)."""
        return {row.name: row.interval for row in self.rows}

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: D102 (Qt override)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        slots = _slots(self, [row.name for row in self.rows])
        if not slots:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no results")
            return
        _axis(painter, self, next(iter(slots.values())), ((0, "0"), (0.5, "50"), (1, "100")))
        text = self.palette().color(QPalette.ColorRole.WindowText)
        for row in self.rows:
            slot = slots[row.name]
            filled = QRectF(slot)
            filled.setTop(slot.bottom() - slot.height() * min(row.rate, 100.0) / 100)
            painter.fillRect(filled, QColor("#5c6bc0" if row.name == "total" else "#7986cb"))
            low, high = row.interval
            x = slot.center().x()
            y_low = slot.bottom() - slot.height() * low / 100
            y_high = slot.bottom() - slot.height() * high / 100
            painter.setPen(text)
            painter.drawLine(int(x), int(y_low), int(x), int(y_high))
            for y in (y_low, y_high):
                painter.drawLine(int(x - 6), int(y), int(x + 6), int(y))
        _names(painter, self, slots)


class KindsChart(_DomainChart):
    """One stacked bar per domain: how many of its tasks ended each way (:class:`OutcomeKind`)."""

    def segments(self) -> dict[str, list[tuple[str, int]]]:
        """Per domain, bottom to top: each kind and its count (the order of :class:`OutcomeKind`)."""
        order = [kind.value for kind in OutcomeKind]
        return {
            row.name: sorted(row.kinds.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
            for row in self.rows
        }

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: D102 (Qt override)
        painter = QPainter(self)
        slots = _slots(self, [row.name for row in self.rows])
        if not slots:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no results")
            return
        _axis(painter, self, next(iter(slots.values())), ((0, "0%"), (0.5, "50%"), (1, "100%")))
        for name, parts in self.segments().items():
            slot = slots[name]
            total = sum(n for _, n in parts) or 1
            bottom = slot.bottom()
            for kind, n in parts:
                height = slot.height() * n / total
                painter.fillRect(
                    QRectF(slot.left(), bottom - height, slot.width(), height),
                    QColor(KIND_COLOURS.get(kind, "#777")),
                )
                bottom -= height
        _names(painter, self, slots)


def _table(columns: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    return table


def _fill(table: QTableWidget, rows: list[list[str]]) -> None:
    table.setRowCount(len(rows))
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if c:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


def _tokens(n: int | None) -> str:
    return "–" if n is None else f"{n:,}"


class AccountingPanel(QTabWidget):
    """Rates with intervals, outcome kinds, cost, and the comparison with a second folder, as tabs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsAccounting")
        self.stats: Stats | None = None
        self.outcomes: list[TaskOutcome] = []
        self.comparison: list[DomainComparison] = []
        self.other: Path | None = None

        self.intervals = IntervalChart()
        self.rates = QLabel("")
        self.rates.setTextFormat(Qt.TextFormat.PlainText)
        self.rates.setWordWrap(True)
        rates = QWidget()
        rates_layout = QVBoxLayout(rates)
        rates_layout.addWidget(self.rates)
        rates_layout.addWidget(self.intervals, 1)
        self.addTab(rates, "Rates ± 95%")

        self.kinds = KindsChart()
        self.legend = QLabel("")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        kinds = QWidget()
        kinds_layout = QVBoxLayout(kinds)
        kinds_layout.addWidget(self.kinds, 1)
        kinds_layout.addWidget(self.legend)
        self.addTab(kinds, "Why tasks ended")

        self.cost = _table(COST_COLUMNS)
        self.cost.setObjectName("resultsCost")
        self.addTab(self.cost, "Cost")

        self.compare_button = QPushButton("Compare with folder…")
        self.compare_button.clicked.connect(self.pick_other)
        self.compare_label = QLabel("Pick a second results folder to compare the tasks both ran.")
        self.compare_label.setTextFormat(Qt.TextFormat.PlainText)  # folder names and labels are data
        self.compare_label.setWordWrap(True)
        self.compare_table = _table(COMPARE_COLUMNS)
        self.compare_table.setObjectName("resultsComparison")
        compared = QWidget()
        compared_layout = QVBoxLayout(compared)
        row = QHBoxLayout()
        row.addWidget(self.compare_label, 1)
        row.addWidget(self.compare_button)
        compared_layout.addLayout(row)
        compared_layout.addWidget(self.compare_table, 1)
        self.addTab(compared, "Compare")

    def show_stats(self, stats: Stats | None, outcomes: list[TaskOutcome]) -> None:
        """Show a folder's statistics (None: no results), and compare again with the second folder."""
        self.stats, self.outcomes = stats, list(outcomes)
        rows = [] if stats is None else [*stats.domains, stats.total]
        self.intervals.set_rows(rows)
        self.kinds.set_rows(stats.domains if stats else [])
        if stats is None:
            self.rates.setText("")
        else:
            t = stats.total
            low, high = t.interval
            vlow, vhigh = t.valid_interval
            self.rates.setText(
                f"OSWorld rate (every started task, errors as 0): {t.rate:.1f}% ({low:.1f}–{high:.1f}%) "
                f"of {t.tasks} · over the {t.valid} valid runs: {t.valid_rate:.1f}% ({vlow:.1f}–{vhigh:.1f}%)"
            )
        # only the kinds we know reach the rich-text legend: a summary.json may hold anything
        seen = [k for k in KIND_COLOURS if any(k in row.kinds for row in rows)]
        self.legend.setText(
            " ".join(
                f'<span style="color:{KIND_COLOURS.get(k, "#777")}">■</span> {k} '
                f"{stats.total.kinds.get(k, 0) if stats else 0}"
                for k in seen
            )
        )
        _fill(
            self.cost,
            [
                [
                    row.name,
                    str(row.tasks),
                    _tokens(row.usage.total_tokens),
                    _tokens(row.usage.prompt_tokens),
                    _tokens(row.usage.cached_tokens),
                    _tokens(row.usage.completion_tokens),
                    _tokens(row.usage.reasoning_tokens),
                    self._money(row),
                ]
                for row in rows
            ],
        )
        if self.other is not None:
            self.compare_with(self.other)

    @staticmethod
    def _money(row: DomainStats) -> str:
        if not row.usage.total_tokens:
            return "–"
        if row.unpriced:
            known = f"{money(row.cost)} + " if row.cost else ""
            return f"{known}{row.unpriced} unpriced"
        return money(row.cost)

    def pick_other(self) -> None:
        """Ask for a second results folder and compare with it."""
        chosen = QFileDialog.getExistingDirectory(
            self, "Results folder to compare with", str(self.other or "")
        )
        if chosen:
            self.compare_with(Path(chosen))

    def compare_with(self, folder: Path) -> None:
        """Compare the shown folder (A) with ``folder`` (B), per domain; a folder without results says so."""
        self.other = Path(folder)
        try:
            label, other = load_outcomes(self.other)
        except OswError as exc:
            self.comparison = []
            self.compare_label.setText(f"{self.other}: {exc.message}")
            _fill(self.compare_table, [])
            return
        self.comparison = compare(self.outcomes, other)
        mine = self.stats.label if self.stats else "A"
        total = self.comparison[-1]
        self.compare_label.setText(
            f"A = {mine}, B = {label} ({self.other}): {total.shared} shared tasks; exact McNemar test on "
            "solved/unsolved pairs (a paired bootstrap where scores are fractional), significant at 5%"
        )
        _fill(
            self.compare_table,
            [
                [
                    r.name,
                    str(r.shared),
                    f"{r.rate_a:.1f}%",
                    f"{r.rate_b:.1f}%",
                    str(r.only_a),
                    str(r.only_b),
                    f"{r.mcnemar_p:.4f}",
                    f"{r.diff_mean:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}]",
                    f"{'yes' if r.significant else 'no'} ({r.decided_by})",
                ]
                for r in self.comparison
            ],
        )
        self.setCurrentIndex(self.count() - 1)
