"""Run › Evaluate suite… offers the retries of environment and model errors and a cost budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from osw_studio.runner.suite import plan_suite
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.suite_dialog import SuiteDialog
from tests.fakes.openai_server import FakeOpenAIServer
from tests.ui.conftest import OpenWindow, model_settings


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(model_settings(model_server))


async def test_the_suite_dialog_asks_for_retries_and_a_cost_budget(
    window: MainWindow, tmp_path: Path
) -> None:
    window.suite_action.trigger()
    dialog = window.findChild(SuiteDialog)
    assert isinstance(dialog, SuiteDialog)
    assert dialog.request().retry_errors == 0 and dialog.request().cost_budget is None
    assert dialog.cost_budget.text() == "none"
    dialog.retry_errors.setValue(2)
    dialog.cost_budget.setValue(1.5)
    dialog.out.setText(str(tmp_path / "out"))
    request = dialog.request()
    assert (request.retry_errors, request.cost_budget) == (2, 1.5)
    batch = plan_suite(window.services.settings, request).batch()
    assert (batch.retry_errors, batch.cost_budget) == (2, 1.5)
    dialog.reject()
