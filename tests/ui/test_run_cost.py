"""The status bar shows a run's tokens and what they cost at the model's price from the settings."""

from __future__ import annotations

import pytest

from osw_studio.ui.main_window import MainWindow
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.ui.conftest import OpenWindow, model_settings
from tests.ui.waiting import until

CLICK = "I will click.\n```python\npyautogui.click(500, 340)\n```"


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(
        model_settings(
            model_server,
            evaluation={"max_steps": 4},
            prices={"scripted": {"input": 2.5, "cached_input": 1.25, "output": 10.0}},
        )
    )


async def test_the_status_bar_counts_tokens_and_cost(
    window: MainWindow, model_server: FakeOpenAIServer
) -> None:
    model_server.queue(
        Reply(text=CLICK, usage=(1000, 100), cached_tokens=400),
        Reply(text="Done.\n```DONE```", usage=(2000, 50), cached_tokens=0),
    )
    assert window.tasks.select_task("write-hello-file")
    window.mode.setCurrentText("auto")
    window.run_action.trigger()
    label = window.status.tokens_label
    # by hand: 600 * 2.5 + 400 * 1.25 + 100 * 10 = 3000 per million tokens
    await until(lambda: "$0.0030" in label.text(), 90)
    assert label.text() == "tokens 1,100 · $0.0030"
    assert window.run_view.controller is not None
    result = await window.run_view.controller.wait()
    assert result is not None and result.cost == pytest.approx(0.0085)  # + 2000 * 2.5 + 50 * 10
    assert label.text() == "tokens 3,150 · $0.0085"
