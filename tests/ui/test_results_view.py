"""The Results view: a batch's per-domain table and bar chart, and clicking through to a task's run."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.runner.summary import BatchSummary, TaskOutcome, write_summary
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.results_view import ResultsView

TASK = {
    "id": "calc-1",
    "instruction": "Sum column A.",
    "config": [],
    "evaluator": {"func": "infeasible"},
}


def batch_folder(root: Path) -> Path:
    """A batch's output: two domains, one task with a real run store, one with an error."""
    out = root / "out"
    writer = RunStoreWriter.create(out / "runs", Task.model_validate(TASK), domain="libreoffice_calc")
    writer.write_step(StepRecord(index=1))
    writer.finish(
        EpisodeResult(success=True, score=1.0, steps=1, task_id="calc-1", domain="libreoffice_calc")
    )
    tasks = [
        TaskOutcome(
            task_id="calc-1", domain="libreoffice_calc", score=1.0, success=True, run_id=writer.run_id
        ),
        TaskOutcome(task_id="calc-2", domain="libreoffice_calc", score=0.0, status="failed", steps=15),
        TaskOutcome(task_id="gimp-1", domain="gimp", status="error", error="the guest went away"),
    ]
    write_summary(out, BatchSummary(model="model-a", tasks=tasks))
    return out


def test_table_chart_and_click_through_to_a_run(qtbot: QtBot, tmp_path: Path) -> None:
    view = ResultsView(batch_folder(tmp_path))
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    qtbot.waitExposed(view)

    rows = [
        [view.table.item(r, c).text() for c in range(view.table.columnCount())]
        for r in range(view.table.rowCount())
    ]
    assert rows == [  # the last column: solved with a person's help (none in a batch)
        ["gimp", "1", "0", "0.0%", "1", "0"],
        ["libreoffice_calc", "2", "1", "50.0%", "0", "0"],
        ["Office", "2", "1", "50.0%", "0", "0"],
        ["Professional", "1", "0", "0.0%", "1", "0"],
        ["total", "3", "1", "33.3%", "1", "0"],
    ]
    assert "model-a: 1/3 solved" in view.where.text()
    assert view.visible_tasks() == ["calc-1", "calc-2", "gimp-1"]

    # The chart draws a bar per domain: the calc bar is half filled in green, the gimp one empty.
    bars = view.chart.bar_rects()
    assert list(bars) == ["gimp", "libreoffice_calc"]
    image = view.chart.grab().toImage()
    calc = bars["libreoffice_calc"]
    inside = QPoint(int(calc.center().x()), int(calc.bottom() - calc.height() * 0.25))
    above = QPoint(int(calc.center().x()), int(calc.top() + calc.height() * 0.25))
    assert QColor(image.pixel(inside)).green() > 100 and QColor(image.pixel(inside)).red() < 100
    assert QColor(image.pixel(above)) != QColor(image.pixel(inside))

    # Clicking a bar lists that domain's tasks; a table row does the same.
    qtbot.mouseClick(view.chart, Qt.MouseButton.LeftButton, pos=calc.center().toPoint())
    assert view.visible_tasks() == ["calc-1", "calc-2"]
    qtbot.mouseClick(
        view.table.viewport(),
        Qt.MouseButton.LeftButton,
        pos=view.table.visualItemRect(view.table.item(0, 0)).center(),
    )
    assert view.visible_tasks() == ["gimp-1"]

    # Opening a task with a run store hands that run to whoever listens (the main window).
    view.show_domain("libreoffice_calc")
    opened: list[RunStore] = []
    view.run_opened.connect(opened.append)
    view.tasks.setCurrentItem(view.tasks.topLevelItem(0))
    view.open_button.click()
    assert len(opened) == 1 and opened[0].meta.task_id == "calc-1" and opened[0].count_steps() == 1
    view.tasks.setCurrentItem(view.tasks.topLevelItem(1))  # calc-2 has no run store: nothing opens
    view.open_selected()
    assert len(opened) == 1


def test_a_folder_without_results_says_so(qtbot: QtBot, tmp_path: Path) -> None:
    view = ResultsView(tmp_path)
    qtbot.addWidget(view)
    assert "no results found" in view.where.text()
    assert view.table.rowCount() == 0 and view.visible_tasks() == []
    view.set_folder(batch_folder(tmp_path))
    assert view.table.rowCount() == 5
