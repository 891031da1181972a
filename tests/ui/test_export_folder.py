"""File › Export runs… into a folder that already holds something asks first and says what is there; an
export in OSWorld's layout says how many task folders the runs became; the bar says nothing before it
starts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from osw_studio.ui.main_window import MainWindow
from tests.ui.test_main_window import add_run, make_window

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    for n in range(3):  # three runs of one task, one of another
        add_run(runs, "write-hello-file", "os", 1.0, started=1.7e9 + n)
    add_run(runs, "fix-greeting-typo", "mousepad", 0.0)
    win = make_window(qtbot, runs, qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_an_export_into_a_folder_holding_another_asks_and_osworlds_layout_counts_task_folders(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "export"
    dialog = window.open_export()
    assert dialog.progress.text() == "not started"
    dialog.format.setCurrentText("osworld")
    dialog.out.setText(str(out))
    dialog.start()
    summary = await dialog.wait()
    assert summary is not None and summary.runs_exported == 4, dialog.message.text()
    assert "The folder holds 2 task folders: a later run of a task replaces the earlier one." in (
        dialog.message.text()
    )
    card = (out / "README.md").read_text(encoding="utf-8")

    asked: list[str] = []
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Yes]

    def question(_parent: object, title: str, text: str, *_args: object) -> QMessageBox.StandardButton:
        asked.append(text)
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", question)
    dialog.format.setCurrentText("sft-messages")
    assert dialog.start() is None  # asked, and cancelled: nothing written
    assert "already holds an export (osworld)" in asked[0]
    assert "Not exported" in dialog.message.text() and "an export (osworld)" in dialog.message.text()
    assert (out / "README.md").read_text(encoding="utf-8") == card and not (out / "data.jsonl").exists()
    assert dialog.start() is not None  # asked again, and confirmed: written into it
    assert await dialog.wait() is not None
    assert (out / "data.jsonl").exists()
