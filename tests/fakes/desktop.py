"""Real desktops for tests and benchmarks: Xvfb on a free display, a D-Bus session, the guest server.

Every process is started in a process group of its own and stopped by that group's id, which also stops
what it started (the apps the guest server launched, AT-SPI's helpers). :func:`desktop` is the one
session-scoped desktop (Xvfb, openbox, D-Bus and the guest server) that the guest and getter tests share.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from osw_studio.envs.ready import parse_ready


@dataclass
class Desktop:
    """A running guest: its display, server URL, token and a client that sends the token."""

    display: str
    url: str
    token: str
    client: httpx.Client
    home: Path
    pids: list[int] = field(default_factory=list)


def start(command: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``command`` in a process group of its own (``kwargs`` go to :class:`subprocess.Popen`)."""
    return subprocess.Popen(command, start_new_session=True, **kwargs)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process``'s group: SIGTERM, then SIGKILL what is left after 5 s."""
    if process.stdout is not None:
        process.stdout.close()
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def start_xvfb(size: tuple[int, int] = (1920, 1080)) -> tuple[subprocess.Popen[bytes], str]:
    """Xvfb on a display number it picks itself (``-displayfd``); the process and ``:N``.

    ``-noreset``: without it Xvfb resets when its last client disconnects, and refuses connections
    while it does, which a guest server that opens and closes connections runs into.

    Raises:
        RuntimeError: If Xvfb did not start.
    """
    read_fd, write_fd = os.pipe()
    screen = f"{size[0]}x{size[1]}x24"
    xvfb = start(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp", "-noreset"],
        pass_fds=(write_fd,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    if not number:
        stop(xvfb)
        raise RuntimeError("Xvfb did not start")
    return xvfb, f":{number}"


def start_dbus(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """A session D-Bus; the process and its address.

    Raises:
        RuntimeError: If dbus-daemon did not start.
    """
    dbus = start(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert dbus.stdout is not None
    address = dbus.stdout.readline().decode().strip()
    if not address:
        stop(dbus)
        raise RuntimeError("dbus-daemon did not start")
    return dbus, address


def start_guest(display: str, ready: Path, *args: str, **kwargs: Any) -> subprocess.Popen[bytes]:
    """``python -m osw_studio.guest`` on ``display`` and a free port, writing its ready line to ``ready``.

    ``args`` are more options of the server; ``kwargs`` go to :class:`subprocess.Popen` (``env``, ...).
    """
    argv = [sys.executable, "-m", "osw_studio.guest", "--display", display, "--port", "0"]
    return start([*argv, "--ready-file", str(ready), *args], **kwargs)


def wait_ready(server: subprocess.Popen[bytes], ready: Path, seconds: float = 30) -> tuple[str, str]:
    """Wait for the guest server's ready file; its URL and token (``none`` when it wants none).

    Raises:
        RuntimeError: If the server exits or is not ready within ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while not ready.exists():  # the server writes the file whole (a rename), so it exists complete
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the guest server did not get ready")
        time.sleep(0.05)
    announced = parse_ready(ready.read_text())
    if announced is None:
        raise RuntimeError(f"the guest server wrote no ready line: {ready.read_text()!r}")
    return announced.url, announced.token or "none"


@pytest.fixture(scope="session")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    """Xvfb + openbox + D-Bus session + the guest server on a free 127.0.0.1 port, one per test session."""
    home = tmp_path_factory.mktemp("guest-home")
    xvfb, display = start_xvfb()
    processes = [xvfb]
    try:
        env = {**os.environ, "DISPLAY": display, "HOME": str(home), "LANG": "C.UTF-8"}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        dbus, address = start_dbus(env)
        processes.append(dbus)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        processes.append(start(["openbox"], env=env, stderr=subprocess.DEVNULL))
        token = secrets.token_urlsafe(16)
        server = start_guest(display, home / "ready", env={**env, "OSW_GUEST_TOKEN": token})
        processes.append(server)
        url, announced = wait_ready(server, home / "ready")
        assert announced == token
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            yield Desktop(display, url, token, client, home, [p.pid for p in processes])
    finally:
        for process in reversed(processes):
            stop(process)
