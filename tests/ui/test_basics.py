"""Small things a new user meets: the task list's filters are named, F10 and Space without a run say
why nothing happens, and the HTML report marks a run a person helped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from osw_studio.ui.main_window import MainWindow
from tests.ui.test_main_window import add_run, make_window
from tests.ui.test_window_supervision import add_helped_run

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    add_run(runs, "write-hello-file", "os", 1.0)
    add_helped_run(runs, "fix-greeting-typo", "mousepad", 1.8e9)
    win = make_window(qtbot, runs, qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_the_task_filters_are_named(window: MainWindow) -> None:
    tasks = window.tasks
    named = {label.buddy(): label.text() for label in tasks.findChildren(QLabel) if label.buddy() is not None}
    assert named == {
        tasks.domain_filter: "Domain",
        tasks.app_filter: "App",
        tasks.solution_filter: "Solution",
        tasks.result_filter: "Last",
    }
    assert all(label.isVisible() for label in tasks.findChildren(QLabel) if label.buddy() is not None)


async def test_f10_and_space_without_a_run_say_so(qtbot: QtBot, window: MainWindow) -> None:
    window.tasks.tree.setFocus()
    assert not window.step_action.isEnabled()
    QTest.keyClick(window.tasks.tree, Qt.Key.Key_F10)
    assert "F10 runs one step of a run, but no run is active" in window.status.currentMessage()
    window.status.clearMessage()
    QTest.keyClick(window.tasks.tree, Qt.Key.Key_Space)
    assert "Space pauses a run, but no run is active" in window.status.currentMessage()


async def test_the_html_report_marks_a_run_a_person_helped(window: MainWindow, tmp_path: Path) -> None:
    dialog = window.open_export()
    dialog.format.setCurrentText("html")
    out = tmp_path / "report"
    dialog.out.setText(str(out))
    dialog.start()
    summary = await dialog.wait()
    assert summary is not None and summary.runs_exported == 2, dialog.message.text()
    index = (out / "index.html").read_text(encoding="utf-8")
    rows = {line for line in index.splitlines() if line.startswith("<tr><td>")}
    assert [("fix-greeting-typo" in row) for row in rows if "a person helped" in row] == [True]
    pages = {
        "fix-greeting-typo" in text: text
        for page in out.glob("*.html")
        if page.name != "index.html" and (text := page.read_text(encoding="utf-8"))
    }
    assert '<span class="badge warn">a person helped</span>' in pages[True]
    assert "a person helped" not in pages[False]
