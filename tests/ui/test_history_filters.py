"""Run history names each run's model, agent, outcome, help and review verdict, and filters on them;
Help › Keyboard shortcuts lists the keys the window's actions answer to."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QTableWidget
from pytestqt.qtbot import QtBot

from osw_studio.core.review import ReviewEvent
from osw_studio.trajectory.review import ReviewLog
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.run_history import COLUMNS
from osw_studio.ui.shortcuts import ShortcutsDialog
from tests.ui.test_main_window import make_window
from tests.ui.test_results_groups import add_run


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    add_run(runs, "task-a", agent="replay", model="replay", success=True, at=1.7e9)
    add_run(runs, "task-b", agent="osworld", model="fake-cua", success=False, at=1.7e9 + 1)
    add_run(runs, "task-c", agent="osworld", model="fake-cua", success=True, at=1.7e9 + 2, assisted=True)
    accepted = sorted(runs.iterdir())[0]
    ReviewLog(accepted).append(ReviewEvent(reviewer="ann", verdict="accepted", at=1.0))
    win = make_window(qtbot, runs, qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


def tasks_shown(window: MainWindow) -> list[str]:
    return sorted(run.meta.task_id for run in window.history.visible_runs())


async def test_run_history_columns_and_filters(window: MainWindow) -> None:
    history = window.history
    assert [history.tree.headerItem().text(i) for i in range(len(COLUMNS))] == COLUMNS
    assert tasks_shown(window) == ["task-a", "task-b", "task-c"]
    history.filters["Model"].setCurrentText("fake-cua")
    assert tasks_shown(window) == ["task-b", "task-c"]
    history.filters["Outcome"].setCurrentText("passed")
    assert tasks_shown(window) == ["task-c"]
    history.filters["Help"].setCurrentText("none")
    assert tasks_shown(window) == []
    for combo in history.filters.values():
        combo.setCurrentIndex(0)
    history.filters["Review"].setCurrentText("accepted")
    assert tasks_shown(window) == ["task-a"]
    history.filters["Review"].setCurrentText("unreviewed")
    history.filters["Agent"].setCurrentText("osworld")
    assert tasks_shown(window) == ["task-b", "task-c"]
    history.tree.selectAll()
    assert sorted(r.meta.task_id for r in history.selected_runs()) == ["task-b", "task-c"]


async def test_help_keyboard_shortcuts_lists_the_actions_keys(qtbot: QtBot, window: MainWindow) -> None:
    window.shortcuts_action.trigger()
    dialog = window.findChild(ShortcutsDialog)
    assert dialog is not None and dialog.isVisible()
    table = dialog.findChild(QTableWidget, "shortcutsTable")
    assert table is not None
    rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert rows["Run"] == "F5" and rows["Step"] == "F10" and rows["Pop out viewer"] == "Ctrl+Shift+P"
    assert rows["Keyboard shortcuts"] == "Ctrl+/" and rows["Export runs…"] == "Ctrl+E"
    dialog.close()
