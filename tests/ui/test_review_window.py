"""The review window, driven from the keyboard: labels, a correction, the verdict, a rating and a note."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click
from osw_studio.trajectory.review import REVIEW_JSONL, ReviewLog
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.review_window import ReviewWindow
from osw_studio.ui.run_history import RunHistory
from tests.fakes.runs import SyntheticRun, write_run


def test_a_fifteen_step_run_is_reviewed_from_the_keyboard(qtbot: QtBot, tmp_path: Path) -> None:
    run = RunStore(write_run(tmp_path, SyntheticRun("t1", steps=15, screen=(320, 200))))
    steps_before = (run.path / "steps.jsonl").read_bytes()
    window = ReviewWindow(run, reviewer="ann")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.step_list.count() == 15 and window.screen_view.pixmap() is not None
    assert not window.screen_view.pixmap().isNull()  # the step's screen, with its actions drawn

    keys = "CCRCCCCCCCCCCC"  # steps 1-14: correct, except 3 redundant; each label moves on
    for key in keys:
        qtbot.keyClick(window.step_list, key)
    assert window.current is not None and window.current.index == 15
    qtbot.keyClick(window.step_list, Qt.Key.Key_Left)
    qtbot.keyClick(window.step_list, Qt.Key.Key_Right)
    qtbot.keyClick(window.step_list, "W")  # step 15 is wrong: the editor opens on its actions
    assert window.current.index == 15 and window.save_correction.isEnabled()
    window.editor.setCurrentIndex(1)  # the JSON tab
    window.editor.json.setPlainText(json.dumps([{"kind": "click", "x": 7, "y": 9}]))
    qtbot.keyClick(window.editor.json, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.step_list, "A")
    qtbot.keyClick(window.step_list, "4")
    qtbot.keyClick(window.step_list, "N")
    assert window.focusWidget() is window.note
    qtbot.keyClicks(window.note, "Step 15 clicked the wrong button")
    qtbot.keyClick(window.note, Qt.Key.Key_Return)

    review = ReviewLog(run.path).reviews()["ann"]
    labels = {i: s.label for i, s in review.steps.items()}
    assert labels == {**{i: "correct" for i in range(1, 15)}, 3: "redundant", 15: "wrong"}
    assert review.steps[15].correction == [Click(x=7, y=9)]
    assert (review.verdict, review.rating, review.note) == ("accepted", 4, "Step 15 clicked the wrong button")
    events = [json.loads(line) for line in (run.path / REVIEW_JSONL).read_text().splitlines()]
    assert all(e["reviewer"] == "ann" and e["at"] > 0 for e in events)
    assert len(events) == 14 + 1 + 1 + 3  # every key press a durable event, nothing rewritten
    assert (run.path / "steps.jsonl").read_bytes() == steps_before
    assert "15/15 steps labelled · accepted · rating 4" in window.status.text()


def test_zero_takes_a_label_back_and_a_correction_needs_a_wrong_label(qtbot: QtBot, tmp_path: Path) -> None:
    run = RunStore(write_run(tmp_path, SyntheticRun("t1", steps=3)))
    window = ReviewWindow(run, reviewer="bob")
    qtbot.addWidget(window)
    window.show()
    qtbot.keyClick(window.step_list, "R")
    qtbot.keyClick(window.step_list, Qt.Key.Key_Left)
    qtbot.keyClick(window.step_list, "0")
    assert ReviewLog(run.path).reviews()["bob"].steps == {}
    window.store_correction()
    assert "label the step wrong" in window.error.text()
    window.editor.set_editable(True)
    qtbot.keyClick(window.step_list, "W")
    window.editor.setCurrentIndex(1)
    window.editor.json.setPlainText("not json")
    window.store_correction()
    assert window.error.text()  # said, not raised
    assert ReviewLog(run.path).reviews()["bob"].steps[1].correction is None


def test_run_history_opens_a_review(qtbot: QtBot, tmp_path: Path) -> None:
    write_run(tmp_path, SyntheticRun("t1", steps=2))
    history = RunHistory(tmp_path)
    qtbot.addWidget(history)
    history.tree.setCurrentItem(history.tree.topLevelItem(0))
    with qtbot.waitSignal(history.review_requested) as signal:
        qtbot.mouseClick(history.review_button, Qt.MouseButton.LeftButton)
    assert isinstance(signal.args[0], RunStore)
