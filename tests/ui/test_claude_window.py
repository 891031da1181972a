"""Through the app's window: Claude's tool uses (a click and typing) are one proposal, shown on the screen
and approved by the person as one; thinking streams into the inspector; the task is solved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click, Typing
from osw_studio.settings import Settings
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from tests.fakes.messages_server import FakeMessagesServer, Turn, text, thinking, tool_use
from tests.ui.conftest import OpenWindow
from tests.ui.waiting import until

MODEL = "claude-sonnet-4-5-20250929"
USES = [
    tool_use("computer", {"action": "left_click", "coordinate": [500, 340]}),
    tool_use("computer", {"action": "type", "text": "echo hello > ~/Desktop/hello.txt\n"}),
]


@pytest.fixture
def messages() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer(models=(MODEL,)) as server:
        yield server


@pytest.fixture
async def window(open_window: OpenWindow, messages: FakeMessagesServer) -> MainWindow:
    settings = Settings.model_validate({
        "evaluation": {"screen_resolution": "1280x720", "max_steps": 5},
        "profiles": {"c": {"preset": "claude-sonnet-4.5", "base_url": messages.base_url, "max_retries": 0}},
        "active_profile": "c",
    })  # fmt: skip
    return await open_window(settings)


async def test_the_person_approves_claudes_batch(
    qtbot: QtBot, window: MainWindow, messages: FakeMessagesServer
) -> None:
    messages.queue(Turn([thinking("The terminal is open."), *USES]), Turn([text("The file is written.")]))
    assert window.tasks.select_task("write-hello-file")
    window.mode.setCurrentText("approve")
    window.run_action.trigger()  # F5
    inspector = window.inspector

    await until(lambda: inspector.approve_button.isEnabled(), 60)
    assert window.viewer.canvas.overlay_actions == [
        Click(x=500, y=340),  # the tool's 1280x720 frame is this screen's
        Typing(text="echo hello > ~/Desktop/hello.txt\n"),
    ]
    assert len(messages.message_requests) == 1
    qtbot.mouseClick(inspector.approve_button, Qt.MouseButton.LeftButton)
    controller = window.run_view.controller
    assert controller is not None
    await until(lambda: inspector.approve_button.isEnabled(), 60)
    qtbot.mouseClick(inspector.approve_button, Qt.MouseButton.LeftButton)  # the final Done
    result = await controller.wait()

    assert result is not None and result.success
    steps = list(RunStore(controller.episode.run_dir).iter_steps())  # type: ignore[arg-type]
    assert steps[0].thought == "The terminal is open."
    answered = messages.message_requests[1].json["messages"]
    assert [m["content"][0]["tool_use_id"] for m in answered[2:]] == ["toolu_1_1", "toolu_1_2"]
