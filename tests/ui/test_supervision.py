"""A person supervising a run through the real window: an edit finished with Enter is what runs and what
the run store records, a word typed during a takeover is one ``typing`` step, and Ctrl+Q in the
authoring window quits the app without leaving a process behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Typing
from osw_studio.envs.local import LocalEnv
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from tests.envs.test_local import gone_within
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.ui.conftest import OpenWindow, model_settings
from tests.ui.waiting import until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.xvfb


def code(line: str) -> Reply:
    return Reply(text=f"I will act now.\n```python\n{line}\n```", chunk_chars=8)


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(
        model_settings(
            model_server,
            evaluation={"max_steps": 6},
            agent={"observation_type": "screenshot", "history_window": 2},
        )
    )


async def start_approve_run(window: MainWindow, task_id: str) -> None:
    assert window.tasks.select_task(task_id)
    window.mode.setCurrentText("approve")
    window.run_action.trigger()
    await until(lambda: window.inspector.approve_button.isEnabled(), 60)


async def edit_arguments_cell(qtbot: QtBot, window: MainWindow) -> QLineEdit:
    """Check Edit and open the first action's arguments cell; its editor."""
    inspector = window.inspector
    qtbot.mouseClick(inspector.edit_button, Qt.MouseButton.LeftButton)
    table = inspector.editor.table
    table.setFocus()
    table.editItem(table.item(0, 1))
    await until(lambda: isinstance(QApplication.focusWidget(), QLineEdit))
    cell = QApplication.focusWidget()
    assert isinstance(cell, QLineEdit)
    return cell


async def test_enter_in_an_edited_cell_runs_and_records_the_edit(
    qtbot: QtBot, window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(
        code("pyautogui.click(500, 340)"),
        code("pyautogui.typewrite('echo wrong > ~/Desktop/hello.txt\\n')"),
        code("pyautogui.click(100, 100)"),
    )
    await start_approve_run(window, "write-hello-file")
    inspector = window.inspector
    window.approve_action.trigger()  # step 1 as proposed
    await until(
        lambda: inspector.approve_button.isEnabled() and "echo wrong" in inspector.output.toPlainText()
    )

    # Edit, open the argument cell, change it and finish the cell with Enter
    cell = await edit_arguments_cell(qtbot, window)
    table = inspector.editor.table
    cell.setText('{"text": "echo hello > ~/Desktop/hello.txt\\n"}')
    QTest.keyClick(cell, Qt.Key.Key_Return)
    if inspector.approve_button.isEnabled():  # Enter only ended the cell: Enter again approves
        QTest.keyClick(table, Qt.Key.Key_Return)
    await until(lambda: len(window.timeline.records) == 2)
    assert window.timeline.marks()[:2] == ["approved", "edited"]
    await until(lambda: inspector.approve_button.isEnabled() and "100, 100" in inspector.output.toPlainText())
    window.stop_action.trigger()
    assert window.run_view.controller is not None
    await window.run_view.controller.wait()

    # what steps.jsonl records: the person's version ran, the model's proposal kept beside it
    store = RunStore(window.run_view.controller.episode.run_dir)  # type: ignore[arg-type]
    step = list(store.iter_steps())[1]
    assert step.verdict == "edited" and step.source == "agent"
    assert step.proposed == [Typing(text="echo wrong > ~/Desktop/hello.txt\n")]
    assert step.executed == [Typing(text="echo hello > ~/Desktop/hello.txt\n")]
    # and the guest received the edit
    env = window.services.env
    assert env is not None
    out = await env.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
    assert out.output == "hello\n"


async def test_tab_in_an_edited_cell_runs_the_edit(
    qtbot: QtBot, window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(code("pyautogui.click(500, 340)"), code("pyautogui.click(100, 100)"))
    await start_approve_run(window, "write-hello-file")
    cell = await edit_arguments_cell(qtbot, window)
    cell.setText('{"x": 510, "y": 350}')
    QTest.keyClick(cell, Qt.Key.Key_Tab)  # Tab finishes the edit, which runs: no second key needed
    await until(lambda: len(window.timeline.records) == 1)
    assert window.timeline.marks() == ["edited"]
    assert window.timeline.records[0].executed[0].model_dump(include={"x", "y"}) == {"x": 510, "y": 350}
    window.stop_action.trigger()
    assert window.run_view.controller is not None
    await window.run_view.controller.wait()


async def test_an_invalid_edit_is_never_approved_and_auto_mode_runs_a_valid_one(
    qtbot: QtBot, window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(code("pyautogui.click(500, 340)"), code("pyautogui.click(100, 100)"))
    await start_approve_run(window, "write-hello-file")
    inspector = window.inspector
    qtbot.mouseClick(inspector.edit_button, Qt.MouseButton.LeftButton)
    inspector.editor.table.item(0, 1).setText('{"x": "left", "y": 10}')
    window.approve_action.trigger()
    assert inspector.error.isVisible() and "action 1" in inspector.error.text()
    assert (
        window.run_view.controller is not None and window.run_view.controller.episode.proposal is not None
    )  # not run
    window.mode.setCurrentText("auto")  # auto must not run the original over a broken edit
    assert window.mode.currentText() == "approve" and window.run_view.controller.episode.proposal is not None

    inspector.editor.table.item(0, 1).setText('{"x": 640, "y": 360}')
    window.mode.setCurrentText("auto")  # a valid edit runs first, then the run goes on by itself
    await until(lambda: len(window.timeline.records) >= 1)
    first = window.timeline.records[0]
    assert first.verdict == "edited" and first.executed[0].point == (640, 360)
    assert inspector.title.text().startswith("Step 1 · edited") or len(window.timeline.records) > 1
    window.stop_action.trigger()
    await window.run_view.controller.wait()


async def test_a_word_typed_during_a_takeover_is_one_typing_step(
    qtbot: QtBot, window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(code("pyautogui.click(500, 340)"), code("pyautogui.click(100, 100)"))
    await start_approve_run(window, "write-hello-file")
    window.approve_action.trigger()  # the click focuses the terminal
    await until(
        lambda: (
            window.inspector.approve_button.isEnabled()
            and "100, 100" in window.inspector.output.toPlainText()
        )
    )
    window.takeover_action.trigger()
    canvas = window.viewer.canvas
    await until(lambda: canvas.takeover)
    await until(lambda: not window.inspector.approve_button.isEnabled(), 5)  # the proposal was dropped
    assert not window.approve_action.isEnabled()
    QTest.keyClicks(canvas, "echo typed > ~/Desktop/hello.txt")
    QTest.keyClick(canvas, Qt.Key.Key_Return)
    await until(lambda: "human" in window.timeline.marks(), 10)
    window.takeover_action.trigger()
    await until(lambda: not canvas.takeover)
    window.stop_action.trigger()
    assert window.run_view.controller is not None
    await window.run_view.controller.wait()

    store = RunStore(window.run_view.controller.episode.run_dir)  # type: ignore[arg-type]
    human = [s for s in store.iter_steps() if s.source == "human"]
    assert len(human) == 1
    assert human[0].executed == [Typing(text="echo typed > ~/Desktop/hello.txt\n")]
    env = window.services.env
    assert env is not None
    out = await env.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
    assert out.output == "typed\n"  # what the guest received is what the step records


async def test_ctrl_q_in_the_authoring_window_quits_without_leaving_a_process(
    qtbot: QtBot, window: MainWindow
) -> None:
    authoring = window.open_authoring()
    qtbot.addWidget(authoring)
    panel = authoring.panel  # type: ignore[attr-defined]
    authoring.editor.new_from_template("command")  # type: ignore[attr-defined]
    panel.setup_button.click()
    await until(lambda: isinstance(panel.env, LocalEnv), 90)
    env = panel.env
    await until(lambda: "Set up on" in panel.status.text() or "failed" in panel.status.text(), 90)
    pids = env.pids()
    assert pids
    closed: list[bool] = []
    window.closed.connect(lambda: closed.append(True))

    authoring.activateWindow()
    await until(lambda: QApplication.activeWindow() is authoring, 5)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as the app sets it: its loop outlives the windows
    try:
        QTest.keyClick(authoring, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    finally:
        app.setQuitOnLastWindowClosed(True)
    assert closed == [True]
    assert not window.isVisible() and not authoring.isVisible()
    await window.shutdown()  # what the app runs once its window has closed
    assert await gone_within(pids, 5) == set()
    assert not env.pids()


async def test_a_failed_model_call_holds_the_run_until_run_retry_model_call(
    qtbot: QtBot, window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(Reply(status=500), code("pyautogui.click(500, 340)"))
    assert window.tasks.select_task("write-hello-file")
    window.mode.setCurrentText("approve")
    window.run_action.trigger()
    await until(lambda: window.retry_action.isEnabled(), 60)
    assert (
        window.run_view.controller is not None and window.run_view.controller.running
    )  # held, not ended in error
    assert "Retry model call" in window.status.currentMessage()
    window.retry_action.trigger()
    await until(lambda: window.inspector.approve_button.isEnabled(), 30)
    assert "500, 340" in window.inspector.output.toPlainText()
    assert not window.retry_action.isEnabled()
    window.stop_action.trigger()
    result = await window.run_view.controller.wait()
    assert result is not None and result.status == "stopped"
