"""The settings dialog: Test connection against a real local endpoint, and the environment it saves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QInputDialog, QPushButton
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings, load_settings
from osw_studio.tasks import TaskLibrary
from osw_studio.tasks.library import BUNDLED_TASKS, task_sources
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.settings_dialog import SettingsDialog
from tests.fakes.memory_keyring import MemoryKeyring
from tests.fakes.openai_server import FakeOpenAIServer


def settings_window(qtbot: QtBot, path: Path, qsettings: QSettings) -> tuple[Settings, MainWindow]:
    """The main window over the bundled tasks, with empty settings loaded from ``path``."""
    path.write_text("{}", encoding="utf-8")
    settings = load_settings(path)
    window = MainWindow(
        TaskLibrary.from_paths(task_sources(None)),
        Services(settings, path.parent / "runs"),
        qsettings=qsettings,
    )
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return settings, window


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


async def test_test_connection_says_ok_then_suggests_the_v1_path(
    qtbot: QtBot, memory_keyring: MemoryKeyring, openai_server: FakeOpenAIServer
) -> None:
    settings = Settings.model_validate(
        {"model_provider": {"base_url": openai_server.base_url, "model": "test-model", "max_retries": 0}}
    )
    dialog = _dialog(qtbot, settings)
    qtbot.keyClicks(dialog.key, "sk-typed-here")

    result = await dialog.test_connection()
    assert result.ok
    shown = dialog.check_label.text()
    assert shown.startswith(f'OK: test-model at {openai_server.base_url} answered "OK" in ')
    assert dialog.test_button.isEnabled()

    dialog.base_url.setText(openai_server.root_url)  # the /v1 left out
    await dialog.test_connection()
    shown = dialog.check_label.text()
    assert shown.startswith("Failed (not_found):")
    assert f"What to do: the API answers at {openai_server.base_url}: set base_url to it" in shown
    assert "sk-typed-here" not in shown


def test_the_environment_is_saved_typed_and_shown_again(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"environment": {"provider": "local"}}), encoding="utf-8")
    dialog = _dialog(qtbot, load_settings(path))
    assert dialog.provider.currentText() == "local" and not dialog.remote_url.isEnabled()
    assert [dialog.provider.itemText(i) for i in range(dialog.provider.count())] == [
        "local",
        "remote",
        "docker",
    ]

    dialog.provider.setCurrentText("remote")
    assert dialog.remote_url.isEnabled()
    dialog.remote_url.setText("  http://10.0.0.5:5000/ ")
    dialog.width_box.setValue(1280)
    dialog.height_box.setValue(800)
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()

    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["environment"] == {
        "provider": "remote",
        "url": "http://10.0.0.5:5000",
        "network": "none",
        "desktop": "studio",
    }
    assert data["evaluation"]["screen_resolution"] == "1280x800"
    again = _dialog(qtbot, load_settings(path))
    assert again.provider.currentText() == "remote"
    assert again.remote_url.text() == "http://10.0.0.5:5000"
    assert not again.keep_desktop.isChecked()  # a fresh desktop per run unless asked
    assert (again.width_box.value(), again.height_box.value()) == (1280, 800)


def test_the_local_sandboxs_network_is_an_explicit_choice_saved_and_shown_again(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    from osw_studio.envs.choice import choice_from_settings

    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"environment": {"provider": "local"}}), encoding="utf-8")
    dialog = _dialog(qtbot, load_settings(path))
    assert dialog.network.currentText() == "none" and dialog.network.isEnabled()
    assert [dialog.network.itemText(i) for i in range(dialog.network.count())] == ["none", "outbound"]
    assert "not even this machine" in dialog.network.toolTip()

    dialog.network.setCurrentText("outbound")
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()

    environment = load_settings(path).environment
    assert environment.network == "outbound"
    # What the app then starts: the same choice as `--provider local network=outbound`.
    choice = choice_from_settings(environment.provider, environment.url, None, environment.network)
    assert str(choice) == "local network=outbound"
    again = _dialog(qtbot, load_settings(path))
    assert again.network.currentText() == "outbound"
    again.provider.setCurrentText("remote")
    assert not again.network.isEnabled()  # only the local sandbox has this setting


def test_the_osworld_desktop_is_a_setting_the_app_and_the_cli_share(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    from osw_studio.envs.choice import choice_from_settings, parse_provider, with_desktop

    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"environment": {"provider": "local"}}), encoding="utf-8")
    dialog = _dialog(qtbot, load_settings(path))
    assert dialog.desktop.currentText() == "studio" and dialog.desktop.isEnabled()
    dialog.desktop.setCurrentText("osworld")
    dialog.save()
    environment = load_settings(path).environment
    assert environment.desktop == "osworld"
    app_choice = choice_from_settings(
        environment.provider, environment.url, None, environment.network, environment.desktop
    )
    cli_choice = parse_provider(with_desktop(["local"], environment.desktop))
    assert str(app_choice) == str(cli_choice) == "local desktop=osworld"
    again = _dialog(qtbot, load_settings(path))
    again.provider.setCurrentText("docker")
    assert again.desktop.isEnabled()  # the docker provider's image has an OSWorld desktop variant
    docker_choice = choice_from_settings("docker", None, None, "none", environment.desktop)
    assert str(docker_choice) == str(parse_provider(with_desktop(["docker"], "osworld")))
    assert str(docker_choice) == "docker studio desktop=osworld"
    again.provider.setCurrentText("remote")
    assert not again.desktop.isEnabled()


async def test_the_task_suite_field_is_checked_saved_and_the_task_list_reloads_from_it(
    qtbot: QtBot,
    tmp_path: Path,
    qsettings: QSettings,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a suite of the person's own: one task (a bundled one under another id)
    suite = tmp_path / "my-suite"
    (suite / "os").mkdir(parents=True)
    task = json.loads((BUNDLED_TASKS / "os" / "write-hello-file.json").read_text(encoding="utf-8"))
    (suite / "os" / "my-own-task.json").write_text(
        json.dumps({**task, "id": "my-own-task"}), encoding="utf-8"
    )
    (tmp_path / "empty").mkdir()
    path = tmp_path / "settings.json"
    settings, window = settings_window(qtbot, path, qsettings)
    bundled = len(window.library)
    assert not window.tasks.select_task("my-own-task")

    dialog = window.open_settings()
    assert dialog.task_suite.text() == "" and dialog.task_suite.placeholderText() == "the bundled tasks only"
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    save = buttons.button(QDialogButtonBox.StandardButton.Save)

    dialog.task_suite.setText(str(tmp_path / "nowhere"))
    save.click()  # refused, and the dialog says why
    assert dialog.isVisible() and "does not exist" in dialog.error.text()

    picked = [str(tmp_path / "empty")]
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args: picked.pop(0))
    folder_button = dialog.findChild(QPushButton, "browseSuiteFolder")
    assert folder_button is not None
    folder_button.click()  # Folder…: a folder without tasks
    assert dialog.task_suite.text() == str(tmp_path / "empty")
    save.click()
    assert dialog.isVisible() and "no task could be loaded" in dialog.error.text()
    assert settings.evaluation.task_suite is None and not window.tasks.select_task("my-own-task")

    picked.append(str(suite))
    folder_button.click()
    save.click()
    assert not dialog.isVisible()
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["evaluation"]["task_suite"] == str(suite)
    # the task list now shows the suite's task beside the bundled ones
    assert f"{bundled + 1} tasks from {suite}" in window.status.currentMessage()
    assert window.tasks.select_task("my-own-task") and window.tasks.select_task("write-hello-file")
    assert len(window.library) == bundled + 1

    again = window.open_settings()  # the saved suite is shown again; emptying it lists the bundled ones
    assert again.task_suite.text() == str(suite)
    again.task_suite.clear()
    again.save()
    assert not window.tasks.select_task("my-own-task") and len(window.library) == bundled
    assert "task_suite" not in json.loads(path.read_text(encoding="utf-8")).get("evaluation", {})
    await window.shutdown()


def test_two_new_profiles_in_one_session_are_both_saved_without_a_false_error(
    qtbot: QtBot,
    tmp_path: Path,
    qsettings: QSettings,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "settings.json"
    _, window = settings_window(qtbot, path, qsettings)
    dialog = window.open_settings()
    names = ["alpha", "beta"]
    monkeypatch.setattr(QInputDialog, "getText", lambda *_args: (names.pop(0), True))
    new_button = next(b for b in dialog.findChildren(QPushButton) if b.text() == "New…")

    new_button.click()
    assert dialog.profile.currentText() == "alpha" and dialog.error.text() == ""
    dialog.model.setText("model-a")
    new_button.click()
    assert dialog.profile.currentText() == "beta" and dialog.error.text() == ""
    assert dialog.model.text() == "model-a"  # a new profile starts from the form it was made from
    dialog.model.setText("model-b")
    dialog.profile.setCurrentText("alpha")  # back to alpha: its edit is still there
    assert dialog.model.text() == "model-a" and dialog.error.text() == ""
    dialog.profile.setCurrentText("beta")
    assert dialog.model.text() == "model-b"
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Save).click()

    assert not dialog.isVisible()
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["profiles"]["alpha"]["model"] == "model-a"
    assert saved["profiles"]["beta"]["model"] == "model-b"
    assert saved["active_profile"] == "beta"
