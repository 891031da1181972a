"""The authoring window opens large and centred, lists a demonstration's steps while it is recorded, and
reports an invalid task before asking for a folder, in a message box of its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import dump_actions
from osw_studio.ui.main_window import MainWindow
from tests.ui.test_main_window import make_window
from tests.ui.waiting import until


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    win = make_window(qtbot, tmp_path / "runs", qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_the_authoring_window_is_large_centred_and_names_a_bad_task_first(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    authoring = window.open_authoring()
    qtbot.waitExposed(authoring)
    screen = authoring.screen().availableGeometry()
    assert authoring.width() >= 0.8 * screen.width() and authoring.height() >= 0.8 * screen.height()
    frame = authoring.frameGeometry()
    for size, start, middle, room in (
        (frame.width(), frame.left(), frame.center().x(), screen.width()),
        (frame.height(), frame.top(), frame.center().y(), screen.height()),
    ):  # centred where it fits, else from the screen's edge (never off it)
        assert start >= 0 and (size > room or abs(middle - room // 2) <= 2)

    editor = authoring.editor  # type: ignore[attr-defined]
    gap = editor.instruction_edit.geometry().top() - editor.id_edit.geometry().bottom()
    assert gap < 30  # the task's fields stay together, not spread over the page

    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args: asked.append("folder") or "")
    editor.new_from_template("command")
    editor.id_edit.setText("../not-a-file-name")
    assert authoring.save_as_dialog() is None  # type: ignore[attr-defined]
    assert asked == []  # reported before any folder is asked for
    await until(lambda: bool(authoring.findChildren(QMessageBox)))
    boxes = [b for b in authoring.findChildren(QMessageBox) if b.objectName() == "errorDialog"]
    assert len(boxes) == 1 and boxes[0].parent() is authoring and boxes[0].isVisible()
    assert boxes[0].windowTitle() == "Task error" and "is not a plain name" in boxes[0].text()
    boxes[0].close()
    assert not window.findChildren(QMessageBox)


async def test_recorded_steps_are_listed_while_recording(qtbot: QtBot, window: MainWindow) -> None:
    authoring = window.open_authoring()
    panel = authoring.panel  # type: ignore[attr-defined]
    canvas = panel.viewer.canvas
    canvas.set_screen_size((1280, 720))
    panel.recorder.start()
    panel.viewer.set_takeover(True)
    await until(lambda: canvas.takeover)
    rect = canvas.screen_rect()
    QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(int(rect.x + 20), int(rect.y + 20)))
    await until(lambda: panel.steps_list.count() == 2)
    assert (
        panel.steps_list.item(0).text().startswith("1. ") and panel.steps_list.item(1).text() == "… recording"
    )
    await asyncio.sleep(0.8)
    panel.recorder.on_frame(QImage(16, 9, QImage.Format.Format_RGB32))  # the screen changed: a new step
    QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(int(rect.x + 300), int(rect.y + 200)))
    await until(lambda: panel.steps_list.count() == 3)

    # stopped: the steps are the solution, and can be reordered and deleted
    original = list(panel.stop_recording())
    assert len(original) == 2

    def solution() -> list[object]:
        return [step["actions"] for step in authoring.editor.data["solution"]]  # type: ignore[attr-defined]

    assert len(solution()) == 3 and solution()[2] == [{"kind": "done"}]
    panel.steps_list.setCurrentRow(1)
    panel.findChild(QPushButton, "moveStepUp").click()
    assert panel.steps == [original[1], original[0]] and panel.steps_list.currentRow() == 0
    assert solution()[0] == dump_actions(original[1].actions)
    panel.findChild(QPushButton, "deleteStep").click()
    assert panel.steps == [original[0]] and len(solution()) == 2 and panel.steps_list.count() == 2
