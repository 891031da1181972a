"""Run › Evaluate suite… offers the retries of environment and model errors and a cost budget."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.runner.suite import plan_suite
from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.suite_dialog import SuiteDialog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    win = MainWindow(library, Services(Settings(), tmp_path / "runs"), qsettings=qsettings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_the_suite_dialog_asks_for_retries_and_a_cost_budget(
    window: MainWindow, tmp_path: Path
) -> None:
    window.suite_action.trigger()
    dialog = window.findChild(SuiteDialog)
    assert isinstance(dialog, SuiteDialog)
    assert dialog.request().retry_errors == 0 and dialog.request().cost_budget is None
    assert dialog.cost_budget.text() == "none"
    dialog.retry_errors.setValue(2)
    dialog.cost_budget.setValue(1.5)
    dialog.out.setText(str(tmp_path / "out"))
    request = dialog.request()
    assert (request.retry_errors, request.cost_budget) == (2, 1.5)
    batch = plan_suite(window.services.settings, request).batch()
    assert (batch.retry_errors, batch.cost_budget) == (2, 1.5)
    dialog.reject()
