"""Activating a window that no window manager lists: it has not taken it yet, or there is none."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.fakes.desktop import start, start_guest, start_xvfb, stop, wait_ready
from tests.guest.helpers import wait_for

pytestmark = pytest.mark.timeout(60)


@dataclass
class BareDesktop:
    display: str
    client: httpx.Client


@pytest.fixture
def bare_desktop(tmp_path: Path) -> Iterator[BareDesktop]:
    """Xvfb and the guest server, with no window manager (as when it lags or has died)."""
    xvfb, display = start_xvfb((800, 600))
    processes = [xvfb]
    try:
        env = {**os.environ, "DISPLAY": display, "HOME": str(tmp_path), "OSW_GUEST_TOKEN": "t0ken"}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        server = start_guest(display, tmp_path / "ready", env=env)
        processes.append(server)
        url, _ = wait_ready(server, tmp_path / "ready")
        headers = {"Authorization": "Bearer t0ken"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            yield BareDesktop(display, client)
    finally:
        for process in reversed(processes):
            stop(process)


def focused_window_name(display: str) -> str:
    command = ["xdotool", "getwindowfocus", "getwindowname"]
    done = subprocess.run(command, env={**os.environ, "DISPLAY": display}, capture_output=True, text=True)
    return done.stdout.strip()


def test_a_window_on_screen_but_not_managed_is_activated_and_focused(bare_desktop: BareDesktop) -> None:
    env = {**os.environ, "DISPLAY": bare_desktop.display}
    terms = [
        start(["xterm", "-T", title, "-e", "sleep", "60"], env=env, stderr=subprocess.DEVNULL)
        for title in ("first-term", "second-term")
    ]
    try:
        found = wait_for(
            lambda: bare_desktop.client.post("/setup/activate_window", json={"window_name": "FIRST-term"}),
            lambda response: response.headers.get("x-osw-window") == "found",
        )
        assert found.status_code == 200, "an xterm on screen is found with no window manager running"
        assert (
            wait_for(lambda: focused_window_name(bare_desktop.display), "first-term".__eq__) == "first-term"
        )
        missing = bare_desktop.client.post("/setup/activate_window", json={"window_name": "no-such-window"})
        # 200 as on OSWorld's server (its wmctrl call says nothing); our header tells.
        assert missing.status_code == 200
        assert missing.headers["x-osw-window"] == "not-found"
    finally:
        for term in terms:
            stop(term)
