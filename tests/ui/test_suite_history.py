"""A suite's results outlive the session: after a restart the task list's Last column and Run history
show the runs of suites evaluated before (in the default suites folder or one remembered elsewhere)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.tasks.library import BUNDLED_TASKS
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.ui.test_main_window import add_run


def last_column(window: MainWindow, task_id: str) -> str:
    for item in window.tasks._task_items():
        if item.data(0, Qt.ItemDataRole.UserRole) == task_id:
            return item.text(2)
    raise AssertionError(f"{task_id} not listed")


async def test_suite_runs_are_in_the_last_column_and_run_history_after_a_restart(
    qtbot: QtBot, tmp_path: Path, qsettings: QSettings
) -> None:
    runs = tmp_path / "data" / "runs"
    runs.mkdir(parents=True)
    # a suite run in the default suites folder, one in a folder the person picked elsewhere
    default_suite = tmp_path / "data" / "suites" / "suite-1" / "runs"
    elsewhere = tmp_path / "my-evals" / "runs"
    add_run(default_suite, "write-hello-file", "os", 1.0)
    add_run(elsewhere, "fix-greeting-typo", "mousepad", 0.0)
    qsettings.setValue("history/suites", [str(elsewhere), str(tmp_path / "gone" / "runs")])

    window = MainWindow(
        TaskLibrary.from_paths([BUNDLED_TASKS]), Services(Settings(), runs), qsettings=qsettings
    )
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)

    assert last_column(window, "write-hello-file") == "passed"
    assert last_column(window, "fix-greeting-typo") == "failed"
    listed = {run.meta.task_id for run in window.history.runs}
    assert listed == {"write-hello-file", "fix-greeting-typo"}
    assert "2 suite folder(s)" in window.history.where.text()
