"""The settings dialog's evaluator choice: who scores runs started from the app (`--evaluator` in the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from osw_studio.runner.suite import SuiteRequest, plan_suite
from osw_studio.settings import load_settings
from osw_studio.ui.settings_dialog import SettingsDialog
from tests.fakes.memory_keyring import MemoryKeyring

ROOT = Path(__file__).resolve().parents[2]


def _open_dialog(qtbot: QtBot, tmp_path: Path) -> tuple[Path, SettingsDialog]:
    """A settings file with nothing set, and the dialog on it, shown."""
    path = tmp_path / "settings.json"
    path.write_text("{}", encoding="utf-8")
    dialog = SettingsDialog(load_settings(path))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return path, dialog


def test_the_evaluator_is_chosen_saved_and_used_by_suites(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path, dialog = _open_dialog(qtbot, tmp_path)
    assert dialog.evaluator.currentText() == "osw-studio"
    assert [dialog.evaluator.itemText(i) for i in range(dialog.evaluator.count())] == [
        "osw-studio",
        "osworld",
    ]

    dialog.evaluator.setCurrentText("osworld")
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()
    assert json.loads(path.read_text(encoding="utf-8"))["evaluation"]["evaluator"] == "osworld"

    settings = load_settings(path)
    again = SettingsDialog(settings)
    qtbot.addWidget(again)
    assert again.evaluator.currentText() == "osworld"
    # Run > Evaluate suite plans through plan_suite, as `eval run` does: the setting reaches each episode.
    suite = ROOT / "tasks" / "test_small.json"
    plan = plan_suite(settings, SuiteRequest(suite=suite, agent="replay", out=tmp_path / "out"))
    assert plan.config.episode.evaluator == "osworld"
    flag = plan_suite(
        settings, SuiteRequest(suite=suite, agent="replay", out=tmp_path / "o2", evaluator="osw-studio")
    )
    assert flag.config.episode.evaluator == "osw-studio"


def test_the_osworld_checkout_is_checked_saved_and_reaches_the_episodes(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path, dialog = _open_dialog(qtbot, tmp_path)
    assert dialog.reference_osworld.text() == ""

    dialog.reference_osworld.setText(str(tmp_path))  # no desktop_env/ there
    dialog.save()
    assert "no OSWorld checkout at" in dialog.error.text() and dialog.isVisible()

    checkout = tmp_path / "OSWorld"
    (checkout / "desktop_env" / "evaluators").mkdir(parents=True)
    dialog.evaluator.setCurrentText("osworld")
    dialog.reference_osworld.setText(str(checkout))
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()
    assert json.loads(path.read_text(encoding="utf-8"))["evaluation"]["reference_osworld"] == str(checkout)

    settings = load_settings(path)
    suite = ROOT / "tasks" / "test_small.json"
    plan = plan_suite(settings, SuiteRequest(suite=suite, agent="replay", out=tmp_path / "out"))
    assert plan.config.episode.reference_osworld == str(checkout)
