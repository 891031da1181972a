"""Widget tests: what a person sees and what their input turns into, without an env or a model."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QKeyEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click, DoubleClick, DragTo, Hotkey, Press, Scroll, Typing
from osw_studio.core.errors import GuestError
from osw_studio.core.step import StepRecord
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.action_editor import ActionEditor
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.task_browser import TaskBrowser
from osw_studio.ui.timeline import Timeline
from osw_studio.ui.viewer import ScreenCanvas
from tests.conftest import OSWORLD

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def osworld_library() -> TaskLibrary:
    return TaskLibrary.from_paths([OSWORLD / "test_all.json"])


def test_task_browser_groups_by_domain_and_filters(qtbot: QtBot, osworld_library: TaskLibrary) -> None:
    browser = TaskBrowser(osworld_library, {"bb5e4c0d-f964-439c-97b6-bdb9747de3f4": "passed"}.get)
    qtbot.addWidget(browser)
    domains = [browser.tree.topLevelItem(i).text(0) for i in range(browser.tree.topLevelItemCount())]
    assert "chrome (46)" in domains and len(domains) == 10
    assert sum(int(d.split("(")[1][:-1]) for d in domains) == 369

    browser.search.setText("bold")
    shown = browser.visible_entries()
    assert shown and all("bold" in (e.task.instruction + e.task.id).lower() for e in shown)

    browser.search.clear()
    browser.domain_filter.setCurrentText("gimp")
    assert {e.domain for e in browser.visible_entries()} == {"gimp"}
    assert browser.tree.topLevelItemCount() == 1

    browser.domain_filter.setCurrentText("any")
    browser.result_filter.setCurrentText("passed")
    assert [e.task.id for e in browser.visible_entries()] == ["bb5e4c0d-f964-439c-97b6-bdb9747de3f4"]


def test_task_browser_details_show_instruction_setup_and_evaluator(
    qtbot: QtBot, osworld_library: TaskLibrary
) -> None:
    browser = TaskBrowser(osworld_library)
    qtbot.addWidget(browser)
    seen = []
    browser.task_selected.connect(seen.append)
    task_id = "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
    browser.domain_filter.setCurrentText("gimp")  # hides it: select_task must clear the filter
    assert browser.select_task(task_id)
    text = browser.details.toPlainText()
    entry = osworld_library.get(task_id)
    assert entry.task.instruction in text
    assert f"Setup ({len(entry.task.config)} steps)" in text
    assert (
        "Evaluator" in text
        and str(
            entry.task.evaluator.func
            if isinstance(entry.task.evaluator.func, str)
            else entry.task.evaluator.func[0]
        )
        in text
    )
    assert seen[-1].task.id == task_id


def _canvas(qtbot: QtBot) -> ScreenCanvas:
    canvas = ScreenCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(960, 600)  # a 1920x1080 screen shows at 960x540, 30 px bars top and bottom
    image = QImage(960, 540, QImage.Format.Format_RGB32)
    image.fill(QColor(10, 120, 200))
    canvas.set_screen_size((1920, 1080))
    canvas.set_frame(image)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas


def test_viewer_is_aspect_correct_and_draws_the_overlay(qtbot: QtBot) -> None:
    canvas = _canvas(qtbot)
    rect = canvas.screen_rect()
    assert (rect.x, rect.y, rect.width, rect.height) == (0, 30, 960, 540)
    plain = canvas.grab().toImage()
    assert plain.pixelColor(480, 10) == QColor(24, 24, 30)  # letterbox bar
    canvas.set_actions([Click(x=960, y=540)])
    marked = canvas.grab().toImage()
    # the crosshair ring (radius 12 around the centre) is drawn in the accent colour
    ring = [marked.pixelColor(480 + 12, 300 + dy) for dy in (-1, 0, 1)]
    assert any(c.red() > 200 and c.blue() < 180 for c in ring)
    assert marked.pixelColor(480 + 12, 300) != plain.pixelColor(480 + 12, 300)


def test_takeover_turns_input_into_actions_in_guest_pixels(qtbot: QtBot) -> None:
    canvas = _canvas(qtbot)
    got: list[list[object]] = []
    canvas.human_input.connect(got.append)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(480, 300))
    assert got == []  # watching only

    canvas.set_takeover(True)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(480, 300))
    qtbot.waitUntil(lambda: len(got) == 1)  # a burst ends after a quiet spell
    assert got[-1] == [Click(x=960, y=540)]
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(100, 100))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(300, 200))
    canvas.flush_input()
    assert got[-1] == [DragTo(x=600, y=340, start_x=200, start_y=140)]
    n = len(got)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(480, 300))
    qtbot.mouseDClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(480, 300))
    qtbot.wait(canvas.burst_ms + 100)
    assert got[n:] == [[DoubleClick(x=960, y=540)]]  # one double-click, not a click and a double-click
    qtbot.keyClick(canvas, "h")
    QApplication.sendEvent(
        canvas, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Eacute, Qt.KeyboardModifier.NoModifier, "é")
    )
    qtbot.keyClick(canvas, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(canvas, Qt.Key.Key_Return)
    qtbot.keyClick(canvas, Qt.Key.Key_Tab)
    canvas.flush_input()
    assert got[-1] == [Typing(text="hé"), Hotkey(keys=["ctrl", "s"]), Press(key="enter"), Press(key="tab")]
    # a click in the letterbox bar is not on the guest screen
    before = len(got)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(480, 10))
    assert len(got) == before


def test_wheel_scrolls_where_the_pointer_is(qtbot: QtBot) -> None:
    from PySide6.QtCore import QPoint as P
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    canvas = _canvas(qtbot)
    canvas.set_takeover(True)
    got: list[list[object]] = []
    canvas.human_input.connect(got.append)
    event = QWheelEvent(
        QPointF(480, 300),
        QPointF(canvas.mapToGlobal(P(480, 300))),
        P(0, 0),
        P(0, -240),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(canvas, event)
    canvas.flush_input()
    assert got == [[Scroll(dy=-2, x=960, y=540)]]


def test_action_editor_edits_in_table_and_json_and_reports_mistakes(qtbot: QtBot) -> None:
    editor = ActionEditor()
    qtbot.addWidget(editor)
    editor.set_actions([Click(x=1, y=2), Typing(text="hi")])
    assert editor.table.rowCount() == 2
    assert editor.table.item(1, 0).text() == "typing"
    assert not editor.is_modified()
    editor.set_editable(True)
    editor.table.item(0, 1).setText('{"x": 50, "y": 60}')
    assert editor.current_actions() == [Click(x=50, y=60), Typing(text="hi")]
    editor.setCurrentIndex(1)  # the JSON tab shows the table's edit
    assert '"x": 50' in editor.json.toPlainText()
    editor.json.setPlainText('[{"kind": "click", "x": "left"}]')
    with pytest.raises(Exception, match="action 1: x: Input should be a valid integer"):
        editor.current_actions()
    assert editor.is_modified()


def test_timeline_marks_each_step(qtbot: QtBot) -> None:
    timeline = Timeline()
    qtbot.addWidget(timeline)
    for record in (
        StepRecord(index=1),
        StepRecord(index=2, verdict="approved"),
        StepRecord(index=3, verdict="edited"),
        StepRecord(index=4, source="human", verdict="human"),
        StepRecord(index=5, error="guest did not answer"),
    ):
        timeline.add_step(record)
    assert timeline.marks() == ["agent", "approved", "edited", "human", "error"]
    assert [timeline.item(i).text() for i in range(5)][2] == "3 · edited"
    picked: list[StepRecord] = []
    timeline.step_selected.connect(picked.append)
    timeline.setCurrentRow(0)
    timeline.setFocus()
    qtbot.keyClick(timeline, Qt.Key.Key_Right)
    assert [r.index for r in picked] == [1, 2]


def test_error_reporter_shows_what_to_do_never_a_traceback(qtbot: QtBot) -> None:
    shown: list[tuple[str, str]] = []
    reporter = ErrorReporter(show=lambda title, body: shown.append((title, body)))
    reporter.excepthook(
        GuestError, GuestError("no answer", where="http://127.0.0.1:9", hint="start the guest"), None
    )
    qtbot.waitUntil(lambda: len(shown) == 1)
    title, body = shown[0]
    assert title == "Guest error"
    assert "What to do: start the guest" in body and "Traceback" not in body
    reporter.excepthook(ZeroDivisionError, ZeroDivisionError("division by zero"), None)
    qtbot.waitUntil(lambda: len(shown) == 2)
    assert shown[1][0] == "Unexpected error" and "Please report it" in shown[1][1]


async def test_a_thumbnail_decoded_after_the_timeline_was_cleared_is_dropped(qtbot: QtBot) -> None:
    timeline = Timeline()
    qtbot.addWidget(timeline)
    screen = QImage(640, 360, QImage.Format.Format_RGB32)
    screen.fill(QColor("#e04040"))
    png = QByteArray()
    buffer = QBuffer(png)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    assert screen.save(buffer, "PNG")

    def icon_of(row: int) -> QImage:
        return timeline.item(row).icon().pixmap(timeline.iconSize()).toImage()

    timeline.add_step(StepRecord(index=1), screenshot=bytes(png.data()))
    placeholder = icon_of(0)
    timeline.clear_steps()  # a new run starts while the last run's thumbnail is still being decoded
    timeline.add_step(StepRecord(index=1))
    await timeline.thumbnails_ready()
    assert icon_of(0) == placeholder  # the new run's step keeps its own (empty) thumbnail

    timeline.add_step(StepRecord(index=2), screenshot=bytes(png.data()))
    await timeline.thumbnails_ready()
    assert icon_of(1) != placeholder  # a thumbnail of a step still shown does arrive
