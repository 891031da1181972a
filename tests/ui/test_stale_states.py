"""What the window shows goes stale with the run: a step's "waits for you" leaves once it no longer waits,
"thinking…" leaves when the model call fails, a proposal a takeover dropped is not drawn, and a status
message too long for the bar is elided with the whole of it in the tooltip."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QStatusBar
from pytestqt.qtbot import QtBot

from osw_studio.ui.main_window import MainWindow
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.ui.conftest import OpenWindow, model_settings
from tests.ui.test_supervision import code, start_approve_run
from tests.ui.waiting import until

pytestmark = pytest.mark.xvfb


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(
        model_settings(
            model_server,
            evaluation={"max_steps": 4},
            agent={"observation_type": "screenshot", "history_window": 2},
        )
    )


async def stop(window: MainWindow) -> None:
    window.stop_action.trigger()
    assert window.run_view.controller is not None
    await window.run_view.controller.wait()


async def test_a_step_that_no_longer_waits_and_a_failed_call_leave_no_stale_words(
    window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(code("pyautogui.click(500, 340)"), Reply(status=500, delay=1.0))
    await start_approve_run(window, "write-hello-file")
    assert "Step 1 waits for you" in window.status.currentMessage()
    window.approve_action.trigger()
    await until(lambda: window.status.state_label.text().startswith("predicting"))
    assert "waits for you" not in window.status.currentMessage()  # step 2 is being predicted
    assert window.inspector.title.text() == "Step 2 · thinking…"
    await until(lambda: window.retry_action.isEnabled(), 30)  # the call failed: the run holds
    assert window.inspector.title.text() == "Step 2 · model call failed"
    assert window.inspector.error.isVisible()
    await stop(window)


async def test_a_proposal_dropped_by_a_takeover_is_not_drawn(
    window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(code("pyautogui.click(500, 340)"), code("pyautogui.click(100, 100)"))
    await start_approve_run(window, "write-hello-file")
    assert window.viewer.canvas.overlay_actions  # the proposal is drawn while it waits
    window.takeover_action.trigger()
    await until(lambda: window.takeover_action.isChecked())
    assert window.viewer.canvas.overlay_actions == []
    await stop(window)


async def test_a_long_status_message_is_elided_with_the_whole_in_the_tooltip(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.resize(1280, 720)
    await until(lambda: window.width() == 1280)
    long = "The task could not be set up: " + "a very long reason, " * 30 + "the end."
    window.status.showMessage(long)
    shown = QStatusBar.currentMessage(window.status)
    assert shown.endswith("…") and len(shown) < len(long)
    assert window.status.toolTip() == long and window.status.currentMessage() == long
    window.status.showMessage("Short.")
    assert QStatusBar.currentMessage(window.status) == "Short." and window.status.toolTip() == ""
