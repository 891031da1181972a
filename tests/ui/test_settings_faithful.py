"""The Settings dialog says whether the picked profile is leaderboard-faithful, and what to change."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.ui.settings_dialog import SettingsDialog
from tests.conftest import ROOT
from tests.fakes.memory_keyring import MemoryKeyring

UPSTREAM = ROOT.parent / "shared" / "osworld" / "upstream"


@pytest.mark.skipif(not (UPSTREAM / "mm_agents").is_dir(), reason="needs OSWorld's code (../shared/osworld)")
def test_the_dialog_shows_faithfulness_per_profile(
    qtbot: QtBot, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)
    settings = Settings.model_validate(
        {
            "evaluation": {"reference_osworld": str(UPSTREAM)},
            "profiles": {
                "dart": {"model": "dart-gui-7b"},
                "warm": {"model": "dart-gui-7b", "preset": "dart-gui-7b", "temperature": 0.7},
            },
            "active_profile": "dart",
        }
    )
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.profile.setCurrentText("dart")
    assert dialog.faithful.text().startswith(
        "leaderboard-faithful: dart-gui-7b preset (chosen from the model"
    )
    dialog.profile.setCurrentText("warm")
    shown = dialog.faithful.text()
    assert shown.startswith("not leaderboard-faithful: temperature is 0.7")
    assert shown.endswith('To be faithful: remove "temperature" from the profile')
