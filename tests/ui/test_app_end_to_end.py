"""End to end: the app runs a bundled task on the local sandbox with a scripted model server, and a person
pauses, edits an action, approves, takes over and clicks, then stops. Both the widgets and the run store
show what happened."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click, Typing
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.ui.conftest import OpenWindow, model_settings
from tests.ui.waiting import until

ROOT = Path(__file__).resolve().parents[2]


def code(line: str) -> Reply:
    return Reply(text=f"I will act now.\n```python\n{line}\n```", chunk_chars=6)


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(
        model_settings(
            model_server,
            evaluation={"max_steps": 8},
            agent={"observation_type": "screenshot", "history_window": 2},
        )
    )


async def test_supervise_a_run_pause_edit_approve_takeover_stop(
    qtbot: QtBot, window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(
        code("pyautogui.click(500, 340)"),
        code("pyautogui.typewrite('echo wrong > ~/Desktop/hello.txt\\n')"),
        code("pyautogui.click(900, 600)"),
        code("pyautogui.click(100, 100)"),
    )
    assert window.tasks.select_task("write-hello-file")
    window.mode.setCurrentText("approve")
    window.run_action.trigger()  # F5
    inspector, status = window.inspector, window.status

    # step 1: the proposal streams in, is drawn on the viewer and waits at the gate
    await until(lambda: inspector.approve_button.isEnabled(), 60)
    assert "pyautogui.click(500, 340)" in inspector.output.toPlainText()
    assert window.viewer.canvas.overlay_actions == [Click(x=500, y=340)]
    assert window.viewer.stream is not None and window.viewer.stream.running

    # pause (Space), approve (Enter) while paused: that one step runs and the run stays paused
    window.pause_action.trigger()
    await until(lambda: "paused" in status.state_label.text())
    window.approve_action.trigger()
    await until(lambda: len(window.timeline.records) == 1)
    assert window.run_view.controller is not None and window.run_view.controller.episode.paused
    window.pause_action.trigger()  # resume

    # step 2: the model wants to type the wrong thing; edit the action in the table, then approve
    await until(
        lambda: inspector.approve_button.isEnabled() and "echo wrong" in inspector.output.toPlainText()
    )
    assert inspector.editor.original == [Typing(text="echo wrong > ~/Desktop/hello.txt\n")]
    qtbot.mouseClick(inspector.edit_button, Qt.MouseButton.LeftButton)
    inspector.editor.table.item(0, 1).setText('{"text": "echo hello > ~/Desktop/hello.txt\\n"}')
    assert window.viewer.canvas.overlay_actions == [Typing(text="echo hello > ~/Desktop/hello.txt\n")]
    qtbot.mouseClick(inspector.approve_button, Qt.MouseButton.LeftButton)
    await until(lambda: len(window.timeline.records) == 2)

    # step 3: take over instead (Ctrl+T) and click in the viewer's centre: the guest's (640, 360)
    await until(lambda: inspector.approve_button.isEnabled() and "900, 600" in inspector.output.toPlainText())
    window.takeover_action.trigger()
    await until(lambda: window.viewer.canvas.takeover)
    canvas = window.viewer.canvas
    rect = canvas.screen_rect()
    qtbot.mouseClick(
        canvas, Qt.MouseButton.LeftButton, pos=QPoint(rect.x + rect.width // 2, rect.y + rect.height // 2)
    )
    await until(lambda: "human" in window.timeline.marks())
    window.takeover_action.trigger()  # give control back
    await until(lambda: not window.viewer.canvas.takeover)

    # the agent proposes again; stop (Shift+F5)
    await until(lambda: inspector.approve_button.isEnabled() and "100, 100" in inspector.output.toPlainText())
    window.stop_action.trigger()
    result = await window.run_view.controller.wait()

    # what a person sees
    assert result is not None and result.status == "stopped"
    assert "stopped" in status.state_label.text()
    marks = window.timeline.marks()
    assert marks[:2] == ["approved", "edited"] and "human" in marks
    assert not window.stop_action.isEnabled() and window.run_action.isEnabled()
    assert window.results.visible_tasks() == ["write-hello-file"]  # the Results dock counts the run
    window.history.refresh()
    assert window.history.runs[0].run_id == window.run_view.controller.episode.run_dir.name  # type: ignore[union-attr]

    # what the run store holds
    store = RunStore(window.run_view.controller.episode.run_dir)  # type: ignore[arg-type]
    steps = list(store.iter_steps())
    assert [s.verdict for s in steps][:2] == ["approved", "edited"]
    assert steps[0].executed == [Click(x=500, y=340)]
    assert steps[1].proposed == [Typing(text="echo wrong > ~/Desktop/hello.txt\n")]
    assert steps[1].executed == [Typing(text="echo hello > ~/Desktop/hello.txt\n")]
    human = [s for s in steps if s.source == "human"]
    assert len(human) == 1 and len(human[0].executed) == 1
    click = human[0].executed[0]
    # the viewer's centre is the guest's (640, 360), within one widget pixel at this scale (~2 guest px)
    assert isinstance(click, Click) and abs(click.x - 640) <= 2 and abs(click.y - 360) <= 2
    assert all(store.screenshot_path(s) is not None for s in steps if s.verdict != "skipped")
    assert store.status == "stopped"
    # and the guest really got the edited command
    env = window.services.env
    assert env is not None
    out = await env.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
    assert out.output == "hello\n"
