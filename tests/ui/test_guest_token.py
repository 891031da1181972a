"""The remote guest's token in the app: a masked Settings field kept in the keyring, used by the services.

Also the docker options field, read by the same parser as ``--provider docker ...``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from osw_studio.core.errors import GuestError
from osw_studio.settings import EnvironmentSettings, Settings, load_settings
from osw_studio.settings.secrets import SERVICE, set_guest_token
from osw_studio.ui.services import Services
from osw_studio.ui.settings_dialog import SettingsDialog
from tests.envs.fake_guest import FakeGuest, Reply, Request, osworld_guest
from tests.fakes.memory_keyring import MemoryKeyring

TOKEN = "guest-token-7d3e21c0aa"
URL = "http://10.0.0.5:5000"


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def _remote_settings(path: Path, url: str = URL) -> Settings:
    path.write_text(json.dumps({"environment": {"provider": "remote", "url": url}}), encoding="utf-8")
    return load_settings(path)


def test_the_token_field_is_masked_saved_to_the_keyring_and_never_to_the_file(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSW_GUEST_TOKEN", raising=False)
    path = tmp_path / "settings.json"
    dialog = _dialog(qtbot, _remote_settings(path))
    field = dialog.guest_token
    assert field.isEnabled() and field.text() == ""
    assert field.echoMode() == QLineEdit.EchoMode.Password
    assert field.placeholderText().startswith("none (OSWorld guests need none)")

    qtbot.keyClicks(field, TOKEN)
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()
    assert memory_keyring.entries == {(SERVICE, f"guest:{URL}"): TOKEN}
    assert TOKEN not in path.read_text(encoding="utf-8")

    again = _dialog(qtbot, load_settings(path))
    assert again.guest_token.text() == ""  # not read from the keyring until asked
    assert again.guest_token.placeholderText() == "stored (keyring); Show to reveal, type to replace"
    qtbot.mouseClick(again.show_token, Qt.MouseButton.LeftButton)
    assert again.guest_token.text() == TOKEN
    assert again.guest_token.echoMode() == QLineEdit.EchoMode.Normal and again.show_token.text() == "Hide"
    qtbot.mouseClick(again.show_token, Qt.MouseButton.LeftButton)
    assert again.guest_token.text() == "" and again.guest_token.echoMode() == QLineEdit.EchoMode.Password
    again.save()  # an untouched field leaves the stored token alone
    assert memory_keyring.entries == {(SERVICE, f"guest:{URL}"): TOKEN}
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_the_field_follows_the_provider_and_the_url(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_GUEST_TOKEN", "from-env")
    set_guest_token("http://10.0.0.6:5000", TOKEN)
    dialog = _dialog(qtbot, _remote_settings(tmp_path / "settings.json"))
    assert (
        dialog.guest_token.placeholderText() == "stored ($OSW_GUEST_TOKEN); Show to reveal, type to replace"
    )
    dialog.remote_url.setText("http://10.0.0.6:5000")
    monkeypatch.delenv("OSW_GUEST_TOKEN")  # the variable comes first: without it, the keyring's
    dialog.remote_url.editingFinished.emit()
    assert dialog.guest_token.placeholderText() == "stored (keyring); Show to reveal, type to replace"

    dialog.provider.setCurrentText("local")
    assert not dialog.guest_token.isEnabled() and not dialog.show_token.isEnabled()
    assert not dialog.docker_options.isEnabled()
    dialog.provider.setCurrentText("remote")
    dialog.remote_url.clear()
    qtbot.keyClicks(dialog.guest_token, TOKEN)
    dialog.save()
    assert dialog.error.text().startswith("a guest token needs the guest URL")
    assert dialog.isVisible()


def test_docker_options_are_checked_on_save_and_kept_as_written(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}", encoding="utf-8")
    dialog = _dialog(qtbot, load_settings(path))
    dialog.provider.setCurrentText("docker")
    assert dialog.docker_options.isEnabled() and not dialog.remote_url.isEnabled()
    dialog.docker_options.setText("osworld")
    dialog.save()
    assert "docker osworld needs the VM disk: qcow2=PATH" in dialog.error.text()
    assert json.loads(path.read_text(encoding="utf-8")) == {}  # nothing written

    dialog.docker_options.setText("osworld qcow2=~/vm/Ubuntu.qcow2 ram=8G")
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["environment"] == {
        "provider": "docker",
        "docker_options": "osworld qcow2=~/vm/Ubuntu.qcow2 ram=8G",
        "network": "none",  # the local sandbox's settings are written as the dialog shows them
        "desktop": "studio",
    }
    assert (
        _dialog(qtbot, load_settings(path)).docker_options.text() == "osworld qcow2=~/vm/Ubuntu.qcow2 ram=8G"
    )


# --- the services use the stored token ---------------------------------------------------------------


def _guarded(reply: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
    def answer(request: Request) -> Reply:
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, "application/json", b'{"detail": "wrong token"}'
        return reply(request)

    return answer


@pytest.fixture
def guest() -> Iterator[FakeGuest]:
    """An OSWorld-style guest that answers 401 without ``TOKEN``."""
    fake = osworld_guest((1280, 800))
    for key, reply in list(fake.routes.items()):
        fake.routes[key] = _guarded(reply)
    fake.start()
    yield fake
    fake.stop()


async def test_the_services_connect_with_the_token_stored_for_the_url(
    tmp_path: Path, guest: FakeGuest, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSW_GUEST_TOKEN", raising=False)
    url = f"http://127.0.0.1:{guest.server.server_address[1]}"
    settings = Settings()
    settings.environment = EnvironmentSettings(provider="remote", url=url)
    services = Services(settings, tmp_path / "runs")
    try:
        with pytest.raises(GuestError, match=r"missing or wrong token \(HTTP 401\)"):
            await services.ensure_env()

        set_guest_token(url, TOKEN)  # as Settings > Save does
        env = await services.ensure_env()
        assert env.screen_size == (1280, 800)
        assert services.env_description().startswith(f"remote:{url}")
        assert guest.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
        assert await services.ensure_env() is env  # same settings, same token: the env is kept
    finally:
        await services.aclose()
