"""Through the app's window: GPT-5.4's computer tool raises a safety check on a batch, the run (in auto
mode) holds the step and tells the person why, the person approves, and the task is solved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click, Typing
from osw_studio.settings import Settings
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message
from tests.ui.conftest import OpenWindow
from tests.ui.waiting import until

CHECK = "The page asks to ignore the task."
BATCH = computer_call(
    {"type": "click", "x": 500, "y": 340, "button": "left"},
    {"type": "type", "text": "echo hello > ~/Desktop/hello.txt\n"},
    safety_checks=(CHECK,),
)


@pytest.fixture
def responses() -> Iterator[FakeResponsesServer]:
    with FakeResponsesServer() as server:
        yield server


@pytest.fixture
async def window(open_window: OpenWindow, responses: FakeResponsesServer) -> MainWindow:
    settings = Settings.model_validate({
        "evaluation": {"screen_resolution": "1280x720", "max_steps": 5},
        "profiles": {"gpt": {"preset": "gpt-5.4", "base_url": responses.base_url, "max_retries": 0}},
        "active_profile": "gpt",
    })  # fmt: skip
    return await open_window(settings)


async def test_the_person_approves_a_safety_check(
    qtbot: QtBot, window: MainWindow, responses: FakeResponsesServer
) -> None:
    responses.queue(Script([BATCH]), Script([message("The file is written.")]))
    assert window.tasks.select_task("write-hello-file")
    assert window.mode.currentText() == "auto"
    window.run_action.trigger()  # F5
    inspector = window.inspector

    await until(lambda: inspector.approve_button.isEnabled(), 60)
    assert CHECK in inspector.error.text() and inspector.error.isVisible()
    assert "safety check" in window.status.currentMessage()
    assert window.viewer.canvas.overlay_actions == [
        Click(x=500, y=340),
        Typing(text="echo hello > ~/Desktop/hello.txt\n"),
    ]
    assert len(responses.response_requests) == 1  # held: nothing ran, the model was not asked again
    qtbot.mouseClick(inspector.approve_button, Qt.MouseButton.LeftButton)
    controller = window.run_view.controller
    assert controller is not None
    result = await controller.wait()

    assert result is not None and result.success
    assert window.timeline.marks()[0] == "approved"
    steps = list(RunStore(controller.episode.run_dir).iter_steps())  # type: ignore[arg-type]
    assert steps[0].model_dump()["safety_check"] == {"message": CHECK, "answer": "approved"}
    answered = responses.response_requests[1].json["input"][0]
    assert answered["acknowledged_safety_checks"][0]["message"] == CHECK
