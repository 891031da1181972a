"""The window's layout: the viewer takes its space back from the pop-out, a saved layout is restored only
when it fits, and View › Reset layout puts the docks back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction
from pytestqt.qtbot import QtBot

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


def view_action(window: MainWindow, text: str) -> QAction:
    for action in window.menuBar().actions():
        if action.text() == "&View" and (menu := action.menu()) is not None:
            for item in menu.actions():  # type: ignore[attr-defined]
                if item.text() == text:
                    return item  # type: ignore[no-any-return]
    raise AssertionError(f"no View › {text}")


async def test_the_viewer_back_from_its_pop_out_takes_its_space_again(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.resize(1920, 1080)
    await until(lambda: window.width() == 1920)
    before = window.viewer.width()
    assert before > 0.6 * window.width()
    window.pop_out_action.trigger()
    await until(lambda: window.viewer_popped_out)
    await until(lambda: window.docks["tasks"].width() > 400)  # the docks grow into the space left
    window.pop_out_action.trigger()  # the pop-out closed: the viewer comes back
    await until(lambda: not window.viewer_popped_out)
    await until(lambda: window.viewer.width() >= before - 4)
    assert window.docks["tasks"].width() < 400 and window.docks["inspector"].width() < 400

    # while popped out, quitting saves the layout the viewer had, not the squeezed one
    window.pop_out_action.trigger()
    await until(lambda: window.docks["tasks"].width() > 400)
    window.save_layout()
    window.pop_out_action.trigger()
    again = make_window(qtbot, tmp_path / "runs", window.qsettings)
    try:
        again.resize(1920, 1080)
        await until(lambda: again.width() == 1920)
        await until(lambda: again.viewer.width() > 0.6 * again.width())
    finally:
        await again.shutdown()


async def test_a_layout_saved_on_a_larger_screen_or_by_an_older_version_is_not_restored(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.docks["timeline"].hide()
    window.save_layout()
    window.qsettings.setValue("window/screen", "7680x4320")  # saved on a screen larger than this one
    bigger = make_window(qtbot, tmp_path / "runs", window.qsettings)
    try:
        assert bigger.docks["timeline"].isVisible()
    finally:
        await bigger.shutdown()
    window.qsettings.remove("window/screen")  # saved by a version that did not record the screen
    older = make_window(qtbot, tmp_path / "runs", window.qsettings)
    try:
        assert older.docks["timeline"].isVisible()
    finally:
        await older.shutdown()
    window.save_layout()  # the same screen: restored
    same = make_window(qtbot, tmp_path / "runs", window.qsettings)
    try:
        assert not same.docks["timeline"].isVisible()
    finally:
        await same.shutdown()


async def test_view_reset_layout_puts_the_docks_back_and_the_viewer_in_the_window(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.resize(1920, 1080)
    await until(lambda: window.width() == 1920)
    window.docks["timeline"].hide()
    window.docks["results"].setFloating(True)
    window.resizeDocks([window.docks["tasks"]], [900], Qt.Orientation.Horizontal)
    window.pop_out_action.trigger()
    await until(lambda: window.viewer_popped_out)

    view_action(window, "Reset layout").trigger()

    assert not window.viewer_popped_out and window.centralWidget() is window.viewer
    assert window.docks["timeline"].isVisible() and not window.docks["results"].isFloating()
    await until(lambda: window.viewer.width() > 0.6 * window.width())
    assert "Layout reset" in window.status.currentMessage()
