"""A real VNC server for tests: x11vnc on a private Xvfb, listening on 127.0.0.1 only.

Each process runs in its own process group and is stopped by that group's id.
"""

from __future__ import annotations

import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from osw_studio.envs.local import free_port
from tests.fakes.desktop import start, start_xvfb, stop

PAINT = """
import sys
from Xlib import display
d = display.Display(sys.argv[1])
root = d.screen().root
root.change_attributes(background_pixel=int(sys.argv[2], 16))
root.clear_area(0, 0, 0, 0)
d.sync()
d.close()
"""
"""What ``xsetroot -solid`` does, in python-xlib (already a dependency)."""


@dataclass
class VncDisplay:
    """An Xvfb display and the x11vnc servers watching it."""

    display: str
    size: tuple[int, int]

    def paint(self, rgb: str) -> None:
        """Fill the root window with one colour, ``#rrggbb``."""
        subprocess.run([sys.executable, "-c", PAINT, self.display, rgb.lstrip("#")], check=True, timeout=10)


@contextmanager
def xvfb(size: tuple[int, int] = (640, 480)) -> Iterator[VncDisplay]:
    """A private Xvfb display (its number chosen by Xvfb)."""
    process, display = start_xvfb(size)
    try:
        yield VncDisplay(display, size)
    finally:
        stop(process)


@contextmanager
def x11vnc(display: VncDisplay, password_file: Path | None = None) -> Iterator[int]:
    """x11vnc on ``display``, on 127.0.0.1 only; yields its port once it listens."""
    port = free_port()
    auth = ["-rfbauth", str(password_file)] if password_file else ["-nopw"]
    command = ["x11vnc", "-display", display.display, "-rfbport", str(port), "-localhost", *auth]
    command += ["-forever", "-shared", "-quiet", "-noxrecord", "-nowf"]
    process = start(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(process.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=20) and process.stdout.readline().strip() == f"PORT={port}".encode()
        if not ready:
            pytest.fail(f"x11vnc did not listen on port {port}")
        yield port
    finally:
        stop(process)


def store_password(path: Path, password: str) -> Path:
    """Write an ``-rfbauth`` file as ``x11vnc -storepasswd`` does."""
    subprocess.run(
        ["x11vnc", "-storepasswd", password, str(path)], check=True, capture_output=True, timeout=10
    )
    return path


@pytest.fixture(scope="module")
def vnc_screen() -> Iterator[VncDisplay]:
    """A 640x480 Xvfb display for the module's VNC servers."""
    with xvfb((640, 480)) as display:
        yield display


@pytest.fixture(scope="module")
def vnc_open_port(vnc_screen: VncDisplay) -> Iterator[int]:
    """The port of an x11vnc on ``vnc_screen`` that asks for no password."""
    with x11vnc(vnc_screen) as port:
        yield port


VNC_PASSWORD = "secret"


@pytest.fixture(scope="module")
def vnc_locked_port(vnc_screen: VncDisplay, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of an x11vnc on ``vnc_screen`` that asks for :data:`VNC_PASSWORD`."""
    password_file = store_password(tmp_path_factory.mktemp("vnc") / "passwd", VNC_PASSWORD)
    with x11vnc(vnc_screen, password_file) as port:
        yield port
