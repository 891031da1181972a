"""Takeover input goes through the demonstrations' reducer in bursts: a typed word is one ``typing``, a
burst is one human step in the order a person gave it, clicks join into double and triple clicks, and
Ctrl+T still ends the takeover."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QColor, QImage, QWheelEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import (
    Click,
    DoubleClick,
    DragTo,
    Hotkey,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
)
from osw_studio.ui.viewer import TAKEOVER_KEY, ScreenCanvas

CENTRE = QPoint(480, 300)  # guest pixel (960, 540) of a 1920x1080 screen drawn at 960x540


def _canvas(qtbot: QtBot, window: QMainWindow | None = None) -> tuple[ScreenCanvas, list[list[object]]]:
    canvas = ScreenCanvas()
    if window is None:
        qtbot.addWidget(canvas)
        shown: QWidget = canvas
    else:
        window.setCentralWidget(canvas)
        shown = window
    canvas.resize(960, 600)
    image = QImage(960, 540, QImage.Format.Format_RGB32)
    image.fill(QColor(10, 120, 200))
    canvas.set_screen_size((1920, 1080))
    canvas.set_frame(image)
    shown.show()
    shown.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is shown)
    canvas.set_takeover(True)
    got: list[list[object]] = []
    canvas.human_input.connect(got.append)
    return canvas, got


def test_a_typed_word_is_one_typing_action_in_one_burst(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.keyClicks(canvas, "hello")
    assert got == []  # the burst is still going
    qtbot.waitUntil(lambda: got != [], timeout=3000)
    assert got == [[Typing(text="hello")]]


def test_keys_typed_right_after_a_click_follow_it_in_the_same_step(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    qtbot.keyClicks(canvas, "hi")
    qtbot.keyClick(canvas, Qt.Key.Key_Return)
    qtbot.keyClicks(canvas, "ls")
    canvas.flush_input()
    assert got == [[Click(x=960, y=540), Typing(text="hi\nls")]]


def test_modifier_combinations_are_hotkeys_and_split_the_typing(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.keyClicks(canvas, "ab")
    qtbot.keyClick(canvas, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(canvas, Qt.Key.Key_Tab)
    canvas.flush_input()
    assert got == [[Typing(text="ab"), Hotkey(keys=["ctrl", "s"]), Press(key="tab")]]


def test_a_double_click_then_a_key_arrive_in_order(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    qtbot.mouseDClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    qtbot.keyClick(canvas, Qt.Key.Key_X)
    canvas.flush_input()
    assert got == [[DoubleClick(x=960, y=540), Typing(text="x")]]


def test_three_quick_clicks_are_one_triple_click(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    qtbot.mouseDClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    canvas.flush_input()
    assert got == [[TripleClick(x=960, y=540)]]


def test_a_lone_click_is_sent_once_after_the_burst(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    assert canvas.burst_ms > QApplication.doubleClickInterval()
    qtbot.waitUntil(lambda: got == [[Click(x=960, y=540)]], timeout=3000)
    qtbot.wait(canvas.burst_ms + 50)
    assert got == [[Click(x=960, y=540)]]  # once


def test_a_click_a_wheel_a_click_elsewhere_and_a_right_click_keep_their_order(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    wheel = QWheelEvent(
        QPointF(CENTRE),
        QPointF(canvas.mapToGlobal(CENTRE)),
        QPoint(0, 0),
        QPoint(0, -120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(canvas, wheel)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(100, 100))
    qtbot.mouseClick(canvas, Qt.MouseButton.RightButton, pos=CENTRE)
    canvas.flush_input()
    assert got == [
        [Click(x=960, y=540), Scroll(dy=-1, x=960, y=540), Click(x=200, y=140), RightClick(x=960, y=540)]
    ]


def test_a_drag_is_kept_whole_however_long_it_is_held(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(100, 100))
    qtbot.wait(canvas.burst_ms + 100)  # held longer than a quiet spell: the burst waits for the release
    assert got == []
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(300, 200))
    canvas.flush_input()
    assert got == [[DragTo(x=600, y=340, start_x=200, start_y=140)]]


def test_input_given_just_before_the_takeover_ends_is_sent(qtbot: QtBot) -> None:
    canvas, got = _canvas(qtbot)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=CENTRE)
    qtbot.keyClicks(canvas, "ok")
    canvas.set_takeover(False)
    assert got == [[Click(x=960, y=540), Typing(text="ok")]]


def test_ctrl_t_in_the_viewer_ends_the_takeover_instead_of_reaching_the_guest(qtbot: QtBot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    toggled: list[bool] = []
    action = QAction("Take over", window)
    action.setShortcut(TAKEOVER_KEY)
    action.triggered.connect(lambda: toggled.append(True))
    window.addAction(action)
    canvas, got = _canvas(qtbot, window)
    qtbot.keyClick(canvas, Qt.Key.Key_Space)  # the app's Pause shortcut is the guest's space here
    qtbot.keyClick(canvas, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert toggled == [True]
    canvas.flush_input()
    assert got == [[Typing(text=" ")]]
