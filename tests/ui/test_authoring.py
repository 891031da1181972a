"""Authoring a task end to end in the app: write it, set it up, demonstrate it, check it, save, validate."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.tasks.authoring import dumps_task
from osw_studio.tasks.load import load_task
from osw_studio.ui.authoring import AuthoringWindow
from osw_studio.ui.geometry import screen_to_widget
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.task_editor import TaskEditor
from tests.ui.waiting import until

TYPED = "echo done > ~/Desktop/result.txt"
TERMINAL = ["xterm", "-geometry", "100x30+200+150", "-title", "Terminal"]


def test_the_editor_names_the_json_path_of_a_problem_while_typing(qtbot: QtBot) -> None:
    editor = TaskEditor()
    qtbot.addWidget(editor)
    assert editor.status.text() == "Valid task"
    data = editor.data
    data["config"][0]["parameters"].pop("command")
    editor.json_edit.setPlainText(dumps_task(data))
    assert editor.status.text().startswith("$.config[0].parameters.command: required field is missing")
    editor.json_edit.setPlainText("{")
    assert "not valid JSON" in editor.status.text()
    data["config"][0]["parameters"]["command"] = "true"
    editor.json_edit.setPlainText(dumps_task(data))
    assert editor.status.text() == "Valid task"
    # the structured editors follow the JSON and write back into it
    assert editor.setup.table.rowCount() == 3
    editor.evaluator.metrics.cellWidget(0, 0).setCurrentText("check_include_exclude")  # type: ignore[union-attr]
    assert json.loads(editor.json_edit.toPlainText())["evaluator"]["func"] == "check_include_exclude"
    editor.setup.table.item(1, 1).setText("{oops")  # type: ignore[union-attr]
    assert editor.status.text().startswith("$.config[1].parameters: not valid JSON")


@pytest.mark.timeout(300)
async def test_author_a_task_end_to_end(qtbot: QtBot, tmp_path: Path) -> None:
    index = tmp_path / "test_all.json"
    window = AuthoringWindow(task_folder=tmp_path, index=index)
    qtbot.addWidget(window)
    window.resize(1600, 1000)
    window.show()
    editor, panel = window.editor, window.panel

    # create: a new task from the template, written in the form and the JSON tab
    editor.new_from_template("command")
    editor.id_edit.setText("write-done-file")
    editor.instruction_edit.setPlainText(
        "In the open terminal, write the word done into result.txt on the Desktop."
    )
    data = editor.data
    data["config"][1]["parameters"]["command"] = TERMINAL
    editor.json_edit.setPlainText(dumps_task(data))
    assert editor.error == "", editor.error
    assert editor.id_edit.text() == "write-done-file"

    try:
        # set up in a sandbox, watched live in the viewer
        panel.setup_button.click()
        await until(lambda: "Set up on" in panel.status.text() or "failed" in panel.status.text(), 90)
        assert "Set up on" in panel.status.text(), panel.status.text()
        assert panel.stream is not None
        stream = panel.stream
        await until(lambda: stream.decoded >= 1)

        # record a demonstration by input in the viewer: click into the terminal, type a command
        panel.record_button.click()
        canvas = panel.viewer.canvas
        assert canvas.takeover
        x, y = screen_to_widget((500, 340), canvas.screen_rect(), canvas.screen_size)
        QTest.mouseClick(
            canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(round(x), round(y))
        )
        await until(lambda: panel.inputs_done >= 1)  # the viewer sends a burst once input pauses
        QTest.keyClicks(canvas, TYPED)
        QTest.keyClick(canvas, Qt.Key.Key_Return)
        # the typed command goes to the guest as one typing action (the demonstrations' reducer)
        await until(lambda: panel.inputs_done >= 2 and panel.pending_inputs == 0, 60)
        panel.record_button.click()
        assert not canvas.takeover
        solution = editor.data["solution"]
        click, typing, done = [a for step in solution for a in step["actions"]]
        assert click["kind"] == "click" and abs(click["x"] - 500) <= 1 and abs(click["y"] - 340) <= 1
        assert typing == {"kind": "typing", "text": TYPED + "\n"}
        assert done == {"kind": "done"} and solution[-1] == {"actions": [done]}
        assert panel.steps_list.count() == len(solution)

        # check the evaluator now: the score, each getter's output and the metric's verdict
        panel.evaluate_button.click()
        await until(lambda: panel.evaluation is not None, 60)
        top = panel.result_tree.topLevelItem(0)
        assert top is not None and top.text(0) == "score 1"
        metric = top.child(0)
        assert metric.text(0) == "1. exact_match" and metric.text(1).startswith("1")
        outputs = {metric.child(i).text(0): metric.child(i).text(1) for i in range(metric.childCount())}
        assert outputs["result: vm_command_line"] == repr("done\n")

        # save: the task file, its screenshots and the index
        path = window.save()
        assert path == tmp_path / "os" / "write-done-file.json"
        saved = load_task(path).task
        assert saved.solution is not None and saved.solution[0].screenshot
        shot = path.parent / saved.solution[0].screenshot
        assert shot.read_bytes().startswith(b"\x89PNG")
        assert json.loads(index.read_text()) == {"os": ["write-done-file"]}

        # validate in the app: the solution scores 1.0, doing nothing 0.0
        panel.validate_button.click()
        await until(lambda: panel.check is not None, 180)
        assert panel.check is not None and panel.check.passed, panel.check.line()
        assert panel.status.text().startswith("PASS write-done-file")
    finally:
        await window.shutdown()

    # the saved file passes the command-line checks too, run as a user runs them (a process of its own)
    async def osw_studio(*args: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "osw_studio", *args, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 240)
        return proc.returncode or 0, out.decode()

    code, out = await osw_studio("tasks", "validate", str(index))
    assert code == 0 and "1 valid, 0 invalid" in out
    code, out = await osw_studio("tasks", "check", str(path))
    assert code == 0 and "PASS write-done-file solution=1.0 empty=0.0" in out, out


async def test_the_main_windows_tasks_menu_opens_the_authoring_window(
    qtbot: QtBot, tmp_path: Path, qsettings: QSettings
) -> None:
    services = Services(Settings(), tmp_path / "runs")
    window = MainWindow(TaskLibrary(), services, qsettings=qsettings)
    qtbot.addWidget(window)
    menus = {a.text(): a.menu() for a in window.menuBar().actions()}
    author = next(a for a in menus["&Tasks"].actions() if a.text() == "Author a task…")  # type: ignore[union-attr]
    try:
        author.trigger()
        assert window.authoring is not None and window.authoring.isVisible()
        assert window.authoring.editor.status.text() == "Valid task"
    finally:
        await window.shutdown()
