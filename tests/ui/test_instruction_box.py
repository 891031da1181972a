"""The instruction box: an instruction typed in the window runs on the current desktop with the active
profile, is recorded like any run, and Save as task… makes a task with the run as its solution draft."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from osw_studio.tasks import load_tasks
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.ui.conftest import OpenWindow, model_settings
from tests.ui.waiting import until

pytestmark = pytest.mark.xvfb


async def test_an_instruction_typed_in_the_window_runs_is_recorded_and_saved_as_a_task(
    qtbot: QtBot, open_window: OpenWindow, model_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    window = await open_window(model_settings(model_server, agent={"observation_type": "screenshot"}))
    model_server.queue(
        Reply(text="```python\npyautogui.click(500, 340)\n```"), Reply(text="DONE", chunk_chars=8)
    )
    box = window.instruction_box
    assert box.isVisible() and not box.save_button.isEnabled()
    window.mode.setCurrentText("auto")
    box.text.setFocus()
    QTest.keyClicks(box.text, "Click the middle of the screen.")
    QTest.keyClick(box.text, Qt.Key.Key_Return)
    await until(lambda: box.save_button.isEnabled(), 60)
    assert "Click the middle of the screen." in json.dumps(model_server.requests[0].json)

    run = next(r for r in window.history.runs if r.meta.domain == "instructions")
    assert run.meta.instruction == "Click the middle of the screen." and run.meta.model == "scripted"
    assert run.result is not None and run.result.steps == 2 and run.result.score == 1.0

    saved = box.save_as_task(tmp_path / "my-tasks")
    assert saved is not None and saved.parent.name == "instructions"
    (entry,) = load_tasks([tmp_path / "my-tasks"]).entries
    assert entry.task.instruction == "Click the middle of the screen."
    assert entry.task.solution is not None
    assert [step.actions[0].kind for step in entry.task.solution] == ["click", "done"]
    assert "Saved" in window.status.currentMessage()
