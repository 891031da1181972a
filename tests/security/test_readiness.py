"""After setup, the first observation waits for the windows that ``launch`` steps started."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass

import pytest

from osw_studio.core.errors import GuestError
from osw_studio.envs.guest_client import GuestClient
from osw_studio.envs.setup import SetupOptions, SetupRunner
from tests.guest.test_unmanaged_windows import BareDesktop, bare_desktop  # noqa: F401 - the fixture

pytestmark = pytest.mark.timeout(60)


@dataclass
class Desktop:
    display: str
    url: str


@pytest.fixture
def desktop(bare_desktop: BareDesktop) -> Desktop:  # noqa: F811 - the imported fixture
    """Xvfb and the guest server, no window manager: the windows are the apps' own."""
    return Desktop(bare_desktop.display, str(bare_desktop.client.base_url).rstrip("/"))


def window_shown(display: str, title: str) -> bool:
    command = ["xdotool", "search", "--onlyvisible", "--name", title]
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(command, env=env, capture_output=True).returncode == 0


def launch(command: str) -> dict[str, object]:
    return {"type": "launch", "parameters": {"command": command, "shell": True}}


async def test_setup_returns_only_once_a_slow_apps_window_is_on_screen(desktop: Desktop) -> None:
    # An app that takes 2 s to map its window, as on a loaded machine.
    steps = [launch("sleep 2; exec xterm -T late-window -e sleep 60")]
    async with GuestClient(desktop.url, "t0ken") as guest:
        await SetupRunner(guest).run(steps, task_id="late")
    assert window_shown(desktop.display, "late-window")


async def test_a_windowless_program_is_not_waited_for_past_its_grace(desktop: Desktop) -> None:
    # A port forwarder (OSWorld's chrome tasks launch socat): it never loads X, so no window is due.
    async with GuestClient(desktop.url, "t0ken") as guest:
        started = time.monotonic()
        await SetupRunner(guest).run([launch("sleep 60")], task_id="daemon")
    assert time.monotonic() - started < 15


async def test_a_window_that_never_comes_fails_the_setup_naming_the_step(desktop: Desktop) -> None:
    steps = [{"type": "sleep", "parameters": {"seconds": 0}}, launch("sleep 30; exec xterm")]
    async with GuestClient(desktop.url, "t0ken") as guest:
        with pytest.raises(GuestError) as caught:
            await SetupRunner(guest, SetupOptions(ready_timeout=1.5)).run(steps, task_id="never")
    assert caught.value.where is not None and caught.value.where.startswith("config[1] (type 'launch')")
    assert "showed no window within 1.5 s" in caught.value.message
