"""The viewer shows the live MJPEG stream of a real local sandbox guest."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pytestqt.qtbot import QtBot

from osw_studio.envs.base import Env
from osw_studio.envs.registry import make_env
from osw_studio.ui.frames import FrameStream
from osw_studio.ui.viewer import VmViewer
from tests.ui.waiting import until


@pytest.fixture
async def sandbox() -> AsyncIterator[Env]:
    env = await make_env("local", screen=(1280, 720))
    try:
        yield env
    finally:
        await env.close()


async def test_viewer_streams_the_guest_screen(qtbot: QtBot, sandbox: Env) -> None:
    viewer = VmViewer()
    qtbot.addWidget(viewer)
    viewer.resize(800, 520)
    viewer.show()
    guest = sandbox.guest
    stream = FrameStream(guest.base_url, guest.token, fit=viewer.canvas.fit_size)
    viewer.attach_stream(stream, sandbox.screen_size)
    try:
        await until(lambda: stream.decoded >= 1)
        assert "streaming" in viewer.source_label.text()
        rect = viewer.canvas.screen_rect()
        assert abs(rect.width / rect.height - 1280 / 720) < 0.01  # aspect-correct
        shown = viewer.canvas.grab().toImage()
        centre = shown.pixelColor(rect.x + rect.width // 2, rect.y + rect.height // 2)
        assert centre.isValid()
        # the screen changes (xterm opens and text is typed): new frames arrive
        before = stream.decoded
        await sandbox.guest.launch(["xterm", "-geometry", "80x20+100+100"])
        await until(lambda: stream.decoded > before)
        await until(lambda: viewer.fps_label.text() != "– fps", seconds=5)
    finally:
        await viewer.detach_stream()
    assert not stream.running
