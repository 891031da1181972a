"""A real guest server on its own Xvfb display, with openbox and a D-Bus session (for AT-SPI).

Session-scoped: one desktop for all guest tests. Every process is started in its own process group and
stopped by that group's id at the end, which also stops the apps the server launched.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.guest.helpers import Desktop


def _start(command: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, start_new_session=True, **kwargs)  # type: ignore[call-overload, no-any-return]


def _start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    read_fd, write_fd = os.pipe()
    xvfb = _start(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    if not number:
        xvfb.kill()
        pytest.fail("Xvfb did not start")
    return xvfb, f":{number}"


def _start_dbus(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    dbus = _start(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert dbus.stdout is not None
    address = dbus.stdout.readline().decode().strip()
    if not address:
        dbus.kill()
        pytest.fail("dbus-daemon did not start")
    return dbus, address


def _stop(process: subprocess.Popen[bytes]) -> None:
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


@pytest.fixture(scope="session")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    """Xvfb + openbox + D-Bus session + the guest server on a free 127.0.0.1 port."""
    home = tmp_path_factory.mktemp("guest-home")
    xvfb, display = _start_xvfb()
    processes = [xvfb]
    try:
        env = {**os.environ, "DISPLAY": display, "HOME": str(home), "LANG": "C.UTF-8"}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        dbus, address = _start_dbus(env)
        processes.append(dbus)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        processes.append(_start(["openbox"], env=env, stderr=subprocess.DEVNULL))
        token = secrets.token_urlsafe(16)
        ready = home / "ready"
        ready_args = ["--ready-file", str(ready)]
        server = _start(
            [sys.executable, "-m", "osw_studio.guest", "--display", display, "--port", "0", *ready_args],
            env={**env, "OSW_GUEST_TOKEN": token},
        )
        processes.append(server)
        deadline = time.monotonic() + 30
        while not ready.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the guest server did not get ready")
            time.sleep(0.05)
        line = ready.read_text().strip()
        url = line.split(" on ")[1].split(" token=")[0]
        assert line.endswith(f"token={token}")
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            yield Desktop(display, url, token, client, home, [p.pid for p in processes])
    finally:
        for process in reversed(processes):
            _stop(process)
