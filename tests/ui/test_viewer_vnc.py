"""A guest without a live stream (OSWorld's) shows in the viewer through VNC when a port is given."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from osw_studio.envs.remote import RemoteEnv
from osw_studio.envs.vnc import VncTarget
from osw_studio.settings import EnvironmentSettings, Settings, load_settings
from osw_studio.settings.secrets import SERVICE, set_vnc_password
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.frames import FrameStream
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.settings_dialog import SettingsDialog
from osw_studio.ui.viewer import VmViewer
from tests.envs.fake_guest import FakeGuest, osworld_guest
from tests.fakes.memory_keyring import MemoryKeyring
from tests.fakes.vnc_server import VNC_PASSWORD, VncDisplay, vnc_locked_port, vnc_open_port, vnc_screen
from tests.ui.waiting import until

__all__ = ["vnc_locked_port", "vnc_open_port", "vnc_screen"]  # fixtures

ROOT = Path(__file__).resolve().parents[2]


def png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (640, 480), colour).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def guest() -> Iterator[FakeGuest]:
    """An OSWorld-style guest: no /stream; its screenshots are green (the VNC screen never is)."""
    fake = osworld_guest((640, 480))
    shot = png((0, 255, 0))
    fake.route("GET", "/screenshot", lambda r: (200, "image/png", shot))
    fake.start()
    yield fake
    fake.stop()


def url_of(guest: FakeGuest) -> str:
    return f"http://127.0.0.1:{guest.server.server_address[1]}"


def shown_colour(viewer: VmViewer) -> QColor:
    """The colour a person sees near the top left of the guest's screen in the viewer."""
    rect = viewer.canvas.screen_rect()
    return viewer.canvas.grab().toImage().pixelColor(rect.x + 8, rect.y + 8)


def make_viewer(qtbot: QtBot) -> VmViewer:
    viewer = VmViewer()
    qtbot.addWidget(viewer)
    viewer.resize(700, 520)
    viewer.show()
    return viewer


async def test_vnc_frames_replace_polling(
    qtbot: QtBot, guest: FakeGuest, vnc_screen: VncDisplay, vnc_open_port: int
) -> None:
    vnc_screen.paint("#ff0000")
    viewer = make_viewer(qtbot)
    stream = FrameStream(
        url_of(guest), None, fit=viewer.canvas.fit_size, vnc=VncTarget("127.0.0.1", vnc_open_port)
    )
    viewer.attach_stream(stream, (640, 480))
    try:
        await until(lambda: shown_colour(viewer) == QColor(255, 0, 0))
        assert viewer.source_label.text().endswith(f"vnc 127.0.0.1:{vnc_open_port}")
        vnc_screen.paint("#0000ff")  # the screen changes: the viewer follows
        await until(lambda: shown_colour(viewer) == QColor(0, 0, 255))
    finally:
        await viewer.detach_stream()
    assert guest.calls("/stream") and not guest.calls("/screenshot")


async def test_a_refused_vnc_password_is_shown_and_screenshots_are_polled(
    qtbot: QtBot, guest: FakeGuest, vnc_locked_port: int
) -> None:
    viewer = make_viewer(qtbot)
    target = VncTarget("127.0.0.1", vnc_locked_port, "wrong")
    viewer.attach_stream(FrameStream(url_of(guest), None, fit=viewer.canvas.fit_size, vnc=target))
    try:
        await until(lambda: shown_colour(viewer) == QColor(0, 255, 0))
        status = viewer.source_label.text()
        assert "polling (VNC failed" in status and "refused the password" in status
    finally:
        await viewer.detach_stream()


async def test_the_window_uses_the_vnc_port_and_password_from_the_settings(
    qtbot: QtBot,
    tmp_path: Path,
    qsettings: QSettings,
    guest: FakeGuest,
    vnc_screen: VncDisplay,
    vnc_locked_port: int,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OSW_VNC_PASSWORD", raising=False)
    vnc_screen.paint("#ff00ff")
    settings = Settings()
    # a port alone: the VNC server on the guest's own host
    settings.environment = EnvironmentSettings(provider="remote", url=url_of(guest), vnc=str(vnc_locked_port))
    set_vnc_password(f"127.0.0.1:{vnc_locked_port}", VNC_PASSWORD)  # as keys set --vnc does
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    window = MainWindow(library, Services(settings, tmp_path / "runs"), qsettings=qsettings)
    qtbot.addWidget(window)
    window.show()
    env = await RemoteEnv.open(url_of(guest))
    try:
        await window.run_view.watch_env(env)
        viewer = window.viewer
        await until(lambda: shown_colour(viewer) == QColor(255, 0, 255))
        assert f"vnc 127.0.0.1:{vnc_locked_port}" in viewer.source_label.text()
    finally:
        await window.viewer.detach_stream()
        await env.close()


def test_the_settings_dialog_keeps_the_vnc_address_and_its_password_in_the_keyring(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSW_VNC_PASSWORD", raising=False)
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps({"environment": {"provider": "remote", "url": "http://10.0.0.5:5000"}}), encoding="utf-8"
    )
    dialog = SettingsDialog(load_settings(path))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.vnc.isEnabled() and dialog.vnc_password.echoMode() == QLineEdit.EchoMode.Password
    qtbot.keyClicks(dialog.vnc_password, "pw-1")
    dialog.save()
    assert "needs the VNC address" in dialog.error.text() and dialog.isVisible()
    qtbot.keyClicks(dialog.vnc, "5901")
    dialog.save()
    assert not dialog.isVisible()
    assert memory_keyring.entries == {(SERVICE, "vnc:10.0.0.5:5901"): "pw-1"}
    written = path.read_text(encoding="utf-8")
    assert json.loads(written)["environment"]["vnc"] == "5901" and "pw-1" not in written
    again = SettingsDialog(load_settings(path))
    qtbot.addWidget(again)
    assert again.vnc.text() == "5901" and again.vnc_password.text() == ""
    assert again.vnc_password.placeholderText() == "stored; type to replace"
    again.provider.setCurrentText("local")
    assert not again.vnc.isEnabled()
