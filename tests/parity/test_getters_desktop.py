"""Differential tests: the desktop getters and OSWorld's, on one real guest with real applications.

One desktop serves the module: Xvfb, a D-Bus session (AT-SPI), openbox and our guest server on
127.0.0.1 (``--no-token``, as OSWorld's host code sends none), with galculator (an accessible GTK app),
a small Tk window that stands in for VS Code's command palette, and a real VLC playing a WAV file with
its HTTP interface on 127.0.0.1. OSWorld's getters get an ``env`` whose ``vm_ip``, ``server_port``,
``vlc_port`` and ``PythonController`` point at that guest; its controller's retry pause is cut to
0.2 s (it retries the same requests, only sooner). Each side saves into its own cache folder; values
must be equal, files byte for byte.

- ``accessibility_tree``: the guest's tree with galculator's window in it.
- ``vm_window_size``: the Tk window's size, and a class no window has (both None).
- ``vm_wallpaper``: the image set through ``/setup/change_wallpaper``.
- ``default_video_player``: ``xdg-mime`` answers from the guest's ``~/.config/mimeapps.list``.
- ``vlc_playing_info``: VLC's ``status.xml`` while paused and stopped, and a server without VLC.
- ``vscode_config``: VS Code is not in Debian, so its palette command cannot run here; the getter's
  part (Ctrl+Shift+P, type the command, Enter, then fetch the file) is checked against a Tk window that
  writes what its "palette" received. OSWorld's side types with pyautogui through ``/execute`` (the
  guest's ``python`` is .venv-osworld-server's, which has it, as on OSWorld's images); ours through
  ``/input``.

Cost in CI: the desktop's start (about 3 s), VLC's (about 2 s) and the getters' own waits (the
VS Code getter sleeps 1 s a side; ``default_video_player`` runs ``xdg-mime`` 44 times here, 85 times
in OSWorld's).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from osw_studio.envs.guest_client import GuestClient
from osw_studio.envs.local import free_port
from osw_studio.evaluation.getters.vlc import VIDEO_TYPES
from osw_studio.evaluation.registry import GETTERS, GetterContext
from tests.fakes.desktop import start, start_dbus, start_guest, start_xvfb, stop, wait_ready
from tests.parity.reference import ROOT, Reference, ReferenceError

OSWORLD_PYTHON = ROOT / ".venv-osworld-server" / "bin" / "python"
VLC = shutil.which("vlc")
GALCULATOR = shutil.which("galculator")
TK_PYTHON = "/usr/bin/python3"
"""The system Python, with tkinter (python3-tk) for the palette window."""

pytestmark = pytest.mark.xvfb


def _require(ok: bool, what: str) -> None:
    """Skip without ``what`` here; under CI, which installs it, fail instead."""
    if not ok:
        message = f"needs {what} (make setup; make setup-osworld)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


PALETTE = r"""
import json, sys, tkinter as tk

path = sys.argv[1]
root = tk.Tk(className="OswPalette")
root.title("palette")
root.geometry("432x188+40+40")
state = {"open": False, "text": ""}

def key(event):
    if event.keysym in ("p", "P") and event.state & 0x4 and event.state & 0x1:
        state.update(open=True, text="")
    elif event.keysym == "Return" and state["open"]:
        with open(path, "w") as f:
            json.dump({"command": state["text"]}, f)
        state["open"] = False
    elif state["open"] and event.char and event.char.isprintable():
        state["text"] += event.char

root.bind("<Key>", key)
root.focus_force()
root.mainloop()
"""
"""A window standing in for VS Code's palette: Ctrl+Shift+P opens it, Enter writes what was typed."""

PLAYER_TYPES = VIDEO_TYPES[:26]
MIMEAPPS = "[Default Applications]\n" + "".join(f"video/{kind}=player.desktop\n" for kind in PLAYER_TYPES)
"""The user's player for 26 of the 43 types; Debian's VLC is the system's default for the rest."""

PLAYER = "[Desktop Entry]\nType=Application\nName=Player\nExec=xterm -e true %U\n"
"""The user's player (xdg-mime passes over an entry whose program is not installed)."""


@dataclass
class Guest:
    url: str
    home: Path
    display: str
    vlc_port: int
    env: dict[str, str]

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].rstrip("/"))


def _tone(path: Path) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"".join(struct.pack("<h", (i * 37) % 2000) for i in range(8000 * 5)))


def _vlc_command(media: Path, port: int) -> list[str]:
    assert VLC is not None
    command = [
        VLC,
        "-I",
        "dummy",
        "--extraintf",
        "http",
        "--http-host",
        "127.0.0.1",
        f"--http-port={port}",
        "--http-password=password",
        "--no-video",
        "--aout=dummy",
        "--start-paused",
        str(media),
    ]
    # VLC refuses to run as root (tests run as root in CI): run it as nobody.
    return (
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        if os.getuid() == 0
        else command
    )


def _wait(what: str, check: Any, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = check()
            if value:
                return value
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        time.sleep(0.3)


@pytest.fixture(scope="module")
def guest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guest]:
    tools = VLC is not None and GALCULATOR is not None and shutil.which("xdg-mime") is not None
    _require(tools, "vlc, galculator and xdg-utils")
    home = tmp_path_factory.mktemp("desktop-getters")
    (home / ".config").mkdir()
    (home / ".config" / "mimeapps.list").write_text(MIMEAPPS)
    apps = home / ".local" / "share" / "applications"
    apps.mkdir(parents=True)
    (apps / "player.desktop").write_text(PLAYER)
    # VLC may run as nobody (below), who cannot enter pytest's private folders: its own, under /tmp.
    shared = Path(tempfile.mkdtemp(prefix="osw-vlc-"))
    shared.chmod(0o755)
    _tone(shared / "tone.wav")
    vlc_home = shared / "home"
    vlc_home.mkdir(mode=0o777)
    vlc_home.chmod(0o777)
    xvfb, display = start_xvfb((1280, 800))
    processes = [xvfb]
    try:
        env = {**os.environ, "DISPLAY": display, "HOME": str(home), "LANG": "C.UTF-8"}
        for name in ("DBUS_SESSION_BUS_ADDRESS", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CURRENT_DESKTOP"):
            env.pop(name, None)
        dbus, address = start_dbus(env)
        processes.append(dbus)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        if OSWORLD_PYTHON.is_file():
            env["PATH"] = f"{OSWORLD_PYTHON.parent}:{env['PATH']}"  # the guest's `python` has pyautogui
        processes.append(start(["openbox"], env=env, stderr=subprocess.DEVNULL))
        server = start_guest(display, home / "ready", "--no-token", env=env)
        processes.append(server)
        url, _ = wait_ready(server, home / "ready")
        vlc_port = free_port()
        vlc_env = {**env, "HOME": str(vlc_home)}
        processes.append(
            start(
                _vlc_command(shared / "tone.wav", vlc_port),
                env=vlc_env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        processes.append(start([TK_PYTHON, "-c", PALETTE, str(home / "palette.json")], env=env))
        processes.append(start([GALCULATOR or "galculator"], env=env, stderr=subprocess.DEVNULL))
        with httpx.Client(base_url=url, timeout=60) as client:
            _wait(
                "galculator's window in the accessibility tree",
                lambda: "galculator" in client.get("/accessibility").text,
            )
            _wait(
                "the palette window",
                lambda: client.post("/window_size", data={"app_class_name": "OswPalette"}).status_code == 200,
            )
        _wait(
            "VLC's HTTP interface",
            lambda: (
                httpx.get(
                    f"http://127.0.0.1:{vlc_port}/requests/status.xml", auth=("", "password")
                ).status_code
                == 200
            ),
        )
        yield Guest(url, home, display, vlc_port, env)
    finally:
        for process in reversed(processes):
            stop(process)
        shutil.rmtree(shared, ignore_errors=True)


ENV = """
class Env:
    vm_ip = "127.0.0.1"
    vm_platform = "Linux"
    vm_machine = "x86_64"  # upstream getters read the guest's architecture
    server_port = {port}
    vlc_port = {vlc_port}
    cache_dir = {cache!r}
    controller = load("desktop_env.controllers.python").PythonController("127.0.0.1", {port})
    controller.retry_interval = 0.2

    class setup_controller:  # the one call of SetupController upstream's vscode_config makes
        @staticmethod
        def _activate_window_setup(window_name, strict=False, by_class=False):
            import requests
            body = {{"window_name": window_name, "strict": strict, "by_class": by_class}}
            requests.post("http://127.0.0.1:{port}/setup/activate_window", json=body, timeout=10)
"""

THEIRS = {
    "accessibility_tree": ("desktop_env.evaluators.getters.misc", "get_accessibility_tree"),
    "vm_window_size": ("desktop_env.evaluators.getters.info", "get_vm_window_size"),
    "vm_wallpaper": ("desktop_env.evaluators.getters.info", "get_vm_wallpaper"),
    "default_video_player": ("desktop_env.evaluators.getters.vlc", "get_default_video_player"),
    "vlc_playing_info": ("desktop_env.evaluators.getters.vlc", "get_vlc_playing_info"),
    "vscode_config": ("desktop_env.evaluators.getters.vscode", "get_vscode_config"),
}


def theirs(
    ref: Reference, guest: Guest, cache: Path, kind: str, spec: dict[str, Any], vlc_port: int = 0
) -> Any:
    module, func = THEIRS[kind]
    env = ENV.format(port=guest.port, vlc_port=vlc_port or guest.vlc_port, cache=str(cache))
    return ref.exec(env + f"result = m0.{func}(Env(), {spec!r})", modules=(module,))


async def ours(guest: Guest, cache: Path, kind: str, spec: dict[str, Any], vlc_port: int = 0) -> Any:
    async with GuestClient(guest.url) as client:
        vlc = f"http://127.0.0.1:{vlc_port or guest.vlc_port}"
        ctx = GetterContext(guest=client, cache_dir=cache, task_dir=cache, vlc_url=vlc)
        return await GETTERS.get(kind)(ctx, dict(spec))


@pytest.fixture
def caches(tmp_path: Path) -> tuple[Path, Path]:
    for side in ("ours", "theirs"):
        (tmp_path / side).mkdir()
    return tmp_path / "ours", tmp_path / "theirs"


def _same_file(a: str, b: str, caches: tuple[Path, Path]) -> bytes:
    assert Path(a).relative_to(caches[0]) == Path(b).relative_to(caches[1])
    data = Path(a).read_bytes()
    assert data == Path(b).read_bytes()
    return data


async def test_accessibility_tree(
    metric_reference: Reference, guest: Guest, caches: tuple[Path, Path]
) -> None:
    a = await ours(guest, caches[0], "accessibility_tree", {})
    assert a == theirs(metric_reference, guest, caches[1], "accessibility_tree", {})
    assert 'name="galculator"' in a


@pytest.mark.parametrize("app", ["OswPalette", "NoSuchClass"])
async def test_vm_window_size(
    metric_reference: Reference, guest: Guest, caches: tuple[Path, Path], app: str
) -> None:
    spec = {"app_class_name": app}
    a = await ours(guest, caches[0], "vm_window_size", spec)
    assert a == theirs(metric_reference, guest, caches[1], "vm_window_size", spec)
    assert a == ({"width": 432, "height": 188} if app == "OswPalette" else None)


async def test_vm_wallpaper(metric_reference: Reference, guest: Guest, caches: tuple[Path, Path]) -> None:
    from PIL import Image

    image = guest.home / "wallpaper.png"
    Image.new("RGB", (64, 40), (12, 120, 200)).save(image)
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{guest.url}/setup/change_wallpaper", json={"path": str(image)})
        response.raise_for_status()
    a = await ours(guest, caches[0], "vm_wallpaper", {"dest": "wallpaper.png"})
    b = theirs(metric_reference, guest, caches[1], "vm_wallpaper", {"dest": "wallpaper.png"})
    assert _same_file(a, b, caches) == image.read_bytes()


async def test_default_video_player(
    metric_reference: Reference, guest: Guest, caches: tuple[Path, Path]
) -> None:
    a = await ours(guest, caches[0], "default_video_player", {})
    assert a == theirs(metric_reference, guest, caches[1], "default_video_player", {})
    assert a == "player.desktop\n"  # the user's choice, read from the guest's mimeapps.list


@pytest.mark.parametrize("state", ["paused", "stopped", "no-vlc"])
async def test_vlc_playing_info(
    metric_reference: Reference, guest: Guest, caches: tuple[Path, Path], state: str
) -> None:
    spec = {"dest": "status.xml"}
    if state == "no-vlc":
        # A server that answers but is no VLC (404): both give None.
        server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            port = server.server_address[1]
            assert await ours(guest, caches[0], "vlc_playing_info", spec, vlc_port=port) is None
            assert theirs(metric_reference, guest, caches[1], "vlc_playing_info", spec, vlc_port=port) is None
        finally:
            server.shutdown()
            server.server_close()
        return
    status = f"http://127.0.0.1:{guest.vlc_port}/requests/status.xml"
    async with httpx.AsyncClient(auth=("", "password")) as http:
        if state == "stopped":
            (await http.get(status, params={"command": "pl_stop"})).raise_for_status()
        for _ in range(100):
            shown = (await http.get(status)).text
            if f"<state>{state}</state>" in shown:
                break
            await asyncio.sleep(0.3)
        else:
            raise AssertionError(f"VLC is not {state}: {shown}")
    a = await ours(guest, caches[0], "vlc_playing_info", spec)
    b = theirs(metric_reference, guest, caches[1], "vlc_playing_info", spec)
    data = _same_file(a, b, caches)
    assert f"<state>{state}</state>".encode() in data


async def test_vlc_playing_info_where_nothing_listens(
    metric_reference: Reference, guest: Guest, caches: tuple[Path, Path]
) -> None:
    # Deliberate: OSWorld's getter lets the refused connection raise (the task is left without a
    # score); ours gives None, as for any answer but 200, and the VLC metrics score that 0.
    spec = {"dest": "status.xml"}
    port = free_port()
    assert await ours(guest, caches[0], "vlc_playing_info", spec, vlc_port=port) is None
    with pytest.raises(ReferenceError, match="ConnectionError"):
        theirs(metric_reference, guest, caches[1], "vlc_playing_info", spec, vlc_port=port)


class _NotFound(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


async def test_vscode_config(metric_reference: Reference, guest: Guest, caches: tuple[Path, Path]) -> None:
    _require(OSWORLD_PYTHON.is_file(), ".venv-osworld-server (pyautogui for OSWorld's side)")
    written = guest.home / "palette.json"
    spec = {"vscode_extension_command": "OpenProject", "path": str(written), "dest": "config.json"}
    results = []
    for side, cache in zip(("ours", "theirs"), caches, strict=True):
        written.unlink(missing_ok=True)
        body = {"window_name": "OswPalette", "by_class": True}
        async with httpx.AsyncClient() as http:
            activated = await http.post(f"{guest.url}/setup/activate_window", json=body)
        assert activated.headers["x-osw-window"] == "found"
        if side == "ours":
            results.append(await ours(guest, cache, "vscode_config", spec))
        else:
            results.append(theirs(metric_reference, guest, cache, "vscode_config", spec))
    assert json.loads(_same_file(results[0], results[1], caches)) == {"command": "OpenProject"}
    # The command wrote nothing: both fall back to VS Code's workspace storage (none on this guest).
    gone = {**spec, "path": str(guest.home / "never-written.json")}
    assert await ours(guest, caches[0], "vscode_config", gone) == ""
    assert theirs(metric_reference, guest, caches[1], "vscode_config", gone) == ""


def test_the_getters_compared_here_are_listed_as_differential_tested() -> None:
    from osw_studio.evaluation.parity import is_differential_tested

    assert all(is_differential_tested("getter", name) for name in THEIRS)
