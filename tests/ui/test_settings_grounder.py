"""The Settings dialog with a planner-plus-grounder profile: shown faithful, its grounder kept."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.ui.settings_dialog import SettingsDialog
from tests.fakes.memory_keyring import MemoryKeyring
from tests.ui.test_settings_faithful import UPSTREAM


@pytest.mark.skipif(not (UPSTREAM / "mm_agents").is_dir(), reason="needs OSWorld's code (../shared/osworld)")
def test_a_jedi_profile_is_faithful_and_keeps_its_grounder_when_applied(
    qtbot: QtBot, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)
    grounder = {"base_url": "http://127.0.0.1:8001/v1", "api_key_env": "JEDI_KEY"}
    settings = Settings.model_validate(
        {
            "evaluation": {"reference_osworld": str(UPSTREAM)},
            "profiles": {"jedi": {"preset": "jedi-7b", "grounder": grounder}},
            "active_profile": "jedi",
        }
    )
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.profile.setCurrentText("jedi")
    assert dialog.faithful.text().startswith("leaderboard-faithful: jedi-7b preset"), dialog.faithful.text()
    assert dialog.agent.currentText() == "jedi"
    dialog.apply()
    resolved = settings.resolve_profile("jedi")
    assert resolved.agent == "jedi" and resolved.grounder is not None
    assert (resolved.grounder.base_url, resolved.grounder.model, resolved.grounder.api_key_env) == (
        "http://127.0.0.1:8001/v1",
        "jedi-7b",
        "JEDI_KEY",
    )
