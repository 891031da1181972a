"""Run › Evaluate suite…: a suite on local envs from the dialog, its progress, the Results dock, Stop."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.runner.summary import TaskOutcome
from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.suite_dialog import SuiteDialog
from tests.batch.suite import write_suite
from tests.ui.waiting import until

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    settings = Settings.model_validate({"evaluation": {"screen_resolution": "1280x720", "max_steps": 6}})
    win = MainWindow(library, Services(settings, tmp_path / "runs"), qsettings=qsettings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        await win.shutdown()


def open_dialog(window: MainWindow, suite: Path, out: Path, envs: int) -> SuiteDialog:
    window.suite_action.trigger()  # Run › Evaluate suite…
    (dialog,) = [d for d in window.findChildren(SuiteDialog) if d.isVisible()]
    dialog.set_suite(str(suite))
    assert dialog.agent.currentText().startswith("replay")
    dialog.envs.setValue(envs)
    dialog.out.setText(str(out))
    return dialog


def table_rows(window: MainWindow) -> list[list[str]]:
    table = window.results.table
    return [[table.item(r, c).text() for c in range(5)] for r in range(table.rowCount())]


async def test_a_suite_runs_from_the_dialog_and_its_results_fill_in(
    window: MainWindow, tmp_path: Path
) -> None:
    window.suite_action.trigger()
    dialog = window.findChild(SuiteDialog)
    assert isinstance(dialog, SuiteDialog)
    assert dialog.suite.text() == str(ROOT / "tasks" / "test_small.json")  # the bundled suite by default
    dialog.set_suite(str(tmp_path / "nowhere.json"))
    dialog.run_button.click()
    assert "no such suite" in dialog.message.text() and "Traceback" not in dialog.message.text()
    assert dialog.isVisible() and not window.suite_view.running
    dialog.reject()

    suite, out = write_suite(tmp_path / "suite", 3), tmp_path / "out"
    dialog = open_dialog(window, suite, out, envs=2)
    dialog.run_button.click()
    assert not dialog.isVisible() and window.suite_view.running
    # while the suite runs, no single task can start, and Stop stops the suite
    assert not window.run_action.isEnabled() and not window.suite_action.isEnabled()
    assert window.stop_action.isEnabled() and window.suite_view.progress.isVisible()
    run = window.suite_view.run
    assert run is not None
    totals: list[int] = []

    def seen(_outcome: TaskOutcome) -> None:
        assert window.results.stats is not None
        totals.append(window.results.stats.total.tasks)

    run.task_finished.connect(seen)
    await until(lambda: not window.suite_view.running, 180)

    # the Results dock refreshed as each task finished (two envs may finish together)
    assert len(totals) == 3 and totals == sorted(totals) and totals[0] >= 1 and totals[-1] == 3
    assert window.results.folder == out and window.results.isVisible()
    assert table_rows(window)[0] == ["os", "2", "2", "100.0%", "0"]
    assert ["terminal", "1", "1", "100.0%", "0"] in table_rows(window)
    assert table_rows(window)[-1] == ["total", "3", "3", "100.0%", "0"]
    summary = json.loads((out / "summary.json").read_text())
    assert [t["score"] for t in summary["tasks"]] == [1.0, 1.0, 1.0] and summary["sessions"][0]["envs"] == 2
    assert window.suite_view.progress.label.text().startswith("suite 3/3 · ok 3")
    assert not window.suite_view.progress.isVisible()
    assert window.status.currentMessage() == f"Suite finished: 3 of 3 tasks solved; results in {out}"
    assert window.run_action.isEnabled() and window.suite_action.isEnabled()

    # the same folder again: refused without Resume, and with it there is nothing left to run
    dialog = open_dialog(window, suite, out, envs=1)
    dialog.run_button.click()
    assert "already holds runs" in dialog.message.text() and "--resume" in dialog.message.text()
    dialog.resume.setChecked(True)
    dialog.run_button.click()
    assert dialog.message.text() == f"Every task of the suite already has a score in {out}."
    dialog.reject()


async def test_stop_ends_the_suite_and_leaves_the_rest_unscored(window: MainWindow, tmp_path: Path) -> None:
    suite, out = write_suite(tmp_path / "suite", 4), tmp_path / "out"
    open_dialog(window, suite, out, envs=1).run_button.click()
    assert window.suite_view.running
    await until(lambda: window.results.stats is not None and window.results.stats.total.tasks >= 1, 120)
    window.suite_view.progress.stop_button.click()
    assert "stopping" in window.suite_view.progress.label.text()
    await until(lambda: not window.suite_view.running, 60)

    summary = json.loads((out / "summary.json").read_text())
    scored = [t["task_id"] for t in summary["tasks"] if t["score"] is not None]
    assert 1 <= len(scored) < 4
    assert all(t["status"] == "stopped" for t in summary["tasks"] if t["score"] is None)
    assert window.status.currentMessage().startswith(f"Suite stopped: {len(scored)} of 4 tasks solved")
    assert table_rows(window)[-1][:3] == ["total", str(len(summary["tasks"])), str(len(scored))]
    assert window.run_action.isEnabled()


async def test_a_suite_that_cannot_write_its_output_says_why(window: MainWindow, tmp_path: Path) -> None:
    shown: list[tuple[str, str]] = []
    window.reporter = ErrorReporter(show=lambda title, body: shown.append((title, body)))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    open_dialog(window, write_suite(tmp_path / "suite", 2), blocker / "out", envs=1).run_button.click()
    await until(lambda: not window.suite_view.running, 30)
    (title, body), *_ = shown
    assert title == "Store error"
    assert "cannot create the output folder" in body and str(blocker / "out") in body
    assert "Traceback" not in body and window.status.currentMessage() == "The suite did not run."
    assert not window.suite_view.progress.isVisible() and window.run_action.isEnabled()
