"""The live viewer polls a hostile guest's ``/screenshot``: a gzip bomb is cut at the screenshot cap.

The guest has no ``/stream`` (as OSWorld's), so the viewer polls; each answer decodes to 256 MiB. The
viewer's status says what happened and memory stays far below the answer's decoded size.
"""

from __future__ import annotations

import tracemalloc

from pytestqt.qtbot import QtBot

from osw_studio.core import limits
from osw_studio.ui.frames import FrameStream
from tests.security.hostile_http import HostileServer, compressed, repeated
from tests.ui.waiting import until

BOMB = compressed(repeated(b"\0" * limits.MIB, 256 * limits.MIB), "gzip")


async def test_the_viewer_cuts_a_screenshot_bomb_at_the_cap(qtbot: QtBot) -> None:
    pieces = [BOMB[i : i + 65536] for i in range(0, len(BOMB), 65536)]
    routes = {"/screenshot": lambda: ({"Content-Encoding": "gzip"}, pieces)}
    statuses: list[str] = []
    with HostileServer(routes) as server:
        stream = FrameStream(server.url, None, poll_interval=0.1)
        stream.status_changed.connect(statuses.append)
        tracemalloc.start()
        try:
            stream.start()
            await until(lambda: any("cap" in s for s in statuses), 30)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            await stream.stop()
    status = next(s for s in statuses if "cap" in s)
    assert "the guest's screen is over the 32.0 MiB cap (decoded size)" in status, statuses
    assert peak < 3 * limits.GUEST_SCREENSHOT_BYTES, f"peak {peak / limits.MIB:.0f} MiB"
    assert stream.decoded == 0
