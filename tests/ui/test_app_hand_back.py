"""The app is attended: when the model hands back (``call_user``), the run pauses for the person in the
window, even in auto mode, and goes on when they resume it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from osw_studio.core.actions import CallUser
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from tests.fakes.openai_server import FakeOpenAIServer
from tests.ui.conftest import OpenWindow, model_settings
from tests.ui.waiting import until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(
        model_settings(
            model_server,
            "ui-tars",
            evaluation={"max_steps": 5},
            profiles={"tars": {"preset": "uitars-1.5", "prompts": "own"}},
            active_profile="tars",
        )
    )


async def test_a_hand_back_pauses_the_run_for_the_person(
    window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(
        "Thought: I do not know which file to open.\nAction: call_user()",
        "Thought: The person helped; the task is done.\nAction: finished(content='done')",
    )
    assert window.tasks.select_task("write-hello-file")
    window.mode.setCurrentText("auto")
    window.run_action.trigger()
    status = window.status

    await until(lambda: len(window.timeline.records) == 1, 90)
    # the run header says the profile is not leaderboard-faithful, and the one thing to change
    assert status.faithful_label.text() == "not faithful"
    assert 'remove "prompts" from the profile' in status.faithful_label.toolTip()
    await until(lambda: "paused" in status.state_label.text())
    assert window.run_view.controller is not None and window.run_view.controller.episode.paused
    await asyncio.sleep(1.0)  # a run that went on would ask the model again by now
    assert len(model_server.chat_requests) == 1, "the run waits for the person, not for the model"

    window.pause_action.trigger()  # the person resumes
    result = await window.run_view.controller.wait()
    assert result is not None and result.status in ("finished", "failed")  # the evaluator judges the file
    store = RunStore(window.run_view.controller.episode.run_dir)  # type: ignore[arg-type]
    steps = list(store.iter_steps())
    assert steps[0].executed == [CallUser()] and steps[1].executed[0].kind == "done"
    assert store.meta.model_dump()["prompt"] == {"source": "own", "faithful": False}
