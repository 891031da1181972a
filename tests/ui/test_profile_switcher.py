"""The toolbar switches the profile and its agent without Settings, saved at once; the agents offered are
the registry's."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from osw_studio.agent.registry import AGENTS
from osw_studio.settings import Profile, load_settings
from osw_studio.tasks import TaskLibrary
from osw_studio.tasks.library import BUNDLED_TASKS
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.fakes.memory_keyring import MemoryKeyring


async def test_the_toolbar_switches_profile_and_agent_and_saves_them(
    qtbot: QtBot, tmp_path: Path, qsettings: QSettings, memory_keyring: MemoryKeyring
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "model_provider": {"model": "default-model"},
                "profiles": {"alpha": {"model": "model-a", "agent": "uitars"}},
            }
        ),
        encoding="utf-8",
    )
    settings = load_settings(path)
    window = MainWindow(
        TaskLibrary.from_paths([BUNDLED_TASKS]), Services(settings, tmp_path / "runs"), qsettings=qsettings
    )
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    profile = window.findChild(QComboBox, "toolbarProfile")
    agent = window.findChild(QComboBox, "toolbarAgent")
    assert profile is not None and agent is not None and profile.isVisible() and agent.isVisible()
    assert [profile.itemText(i) for i in range(profile.count())] == ["default", "alpha"]
    assert [agent.itemText(i) for i in range(agent.count())] == list(AGENTS)
    assert profile.currentText() == "default" and agent.currentText() == "osworld"

    profile.setCurrentText("alpha")
    assert agent.currentText() == "uitars"
    assert window.status.model_label.text() == "model: model-a"
    assert "Profile alpha" in window.status.currentMessage()
    assert json.loads(path.read_text(encoding="utf-8"))["active_profile"] == "alpha"

    agent.setCurrentText("replay")
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert (saved["profiles"]["alpha"]["model"], saved["profiles"]["alpha"]["agent"]) == ("model-a", "replay")
    assert settings.resolve_profile().agent == "replay"

    settings.set_profile("beta", Profile())  # a profile made in Settings shows up in the toolbar
    assert profile.findText("beta") >= 0 and profile.currentText() == "alpha"
