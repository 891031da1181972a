"""F5 on a task whose download names this machine: the run ends with the refusal, shown in the window,
and the host never fetched from itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.security.test_host_fetch import HostService
from tests.ui.test_run_path import replay_settings
from tests.ui.waiting import until

pytestmark = pytest.mark.xvfb


async def test_f5_on_a_task_that_downloads_from_this_machine_shows_the_refusal(
    qtbot: QtBot, tmp_path: Path, qsettings: QSettings
) -> None:
    service = HostService()
    suite = tmp_path / "suite"
    suite.mkdir()
    url = f"http://127.0.0.1:{service.port}/secret"
    task = {
        "id": "loot-the-host",
        "instruction": "Open the file.",
        "config": [{"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/loot"}]}}],
        "evaluator": {"func": "infeasible"},
        "solution": [{"actions": [{"kind": "done"}]}],
    }
    (suite / "loot-the-host.json").write_text(json.dumps(task))
    settings = Settings.model_validate(
        {
            **replay_settings().model_dump(mode="json", exclude_defaults=True),
            # The user lets runs fetch what the cache lacks: a task must still not fetch this machine.
            "assets": {"fetch_missing": True, "cache_dir": str(tmp_path / "assets")},
        }
    )
    window = MainWindow(
        TaskLibrary.from_paths([suite]), Services(settings, tmp_path / "runs"), qsettings=qsettings
    )
    window.show()
    qtbot.waitExposed(window)
    try:
        assert window.tasks.select_task("loot-the-host")
        await until(lambda: window.run_action.isEnabled(), 30)
        window.run_action.trigger()
        await until(lambda: window.run_view.controller is not None, 60)
        assert window.run_view.controller is not None
        await window.run_view.controller.wait()
        await until(lambda: window.run_action.isEnabled(), 30)
        run_dir = window.run_view.controller.episode.run_dir
        assert run_dir is not None
        result = RunStore(run_dir).result
        assert result is not None and "not a public address" in (result.error or ""), result
        shown = window.status.currentMessage() + window.inspector.output.toPlainText()
        assert "not a public address" in shown, shown
        assert "Traceback" not in shown
        assert service.paths == []
    finally:
        service.close()
        await window.shutdown()
        window.close()
        window.deleteLater()
