"""OSWorld's own host code against our guest server: its PythonController and SetupController (from the
``desktop-env`` package in .venv-ref) call our server, and in the same run OSWorld's own server
(``../shared/osworld/server/``, unmodified, in .venv-osworld-server) on the same display, wherever the two
are meant to agree.

A call "works" when the controller returns what it returns on success and logs no error (OSWorld's
controllers log and retry instead of raising). The controllers' retry pause is shortened to keep
failures quick; nothing else of theirs is changed.
"""

from __future__ import annotations

import http.server
import os
import secrets
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from osw_studio.envs.local import free_port
from tests.fakes.desktop import start, start_dbus, start_guest, start_xvfb, stop, wait_ready
from tests.parity.reference import ROOT, Reference, reference_python

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(600)]

OSWORLD_SERVER = ROOT.parent / "shared" / "osworld" / "server"
OSWORLD_PYTHON = ROOT / ".venv-osworld-server" / "bin" / "python"

needs_reference = pytest.mark.skipif(
    not reference_python().exists() or not OSWORLD_PYTHON.exists() or not OSWORLD_SERVER.is_dir(),
    reason="needs .venv-ref, .venv-osworld-server and ../shared/osworld/server (make setup)",
)

_PREAMBLE = """
import logging
class _Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.seen = []
    def emit(self, record):
        self.seen.append(record.getMessage())
ERRORS = _Errors()
logging.getLogger("desktopenv").addHandler(ERRORS)
logging.getLogger("desktopenv").setLevel(logging.INFO)
"""


@dataclass
class Side:
    """One server under test: ours or OSWorld's, on the shared display."""

    name: str
    port: int
    home: Path


class Controllers:
    """OSWorld's controllers in the reference worker, one pair per server."""

    def __init__(self, worker: Reference, sides: list[Side], cache: Path) -> None:
        self.worker = worker
        worker.stub("playwright", "playwright.sync_api", "pydrive", "pydrive.auth", "pydrive.drive", "dotenv")
        worker.exec(_PREAMBLE + "\nresult = None", modules=("desktop_env.controllers.python",))
        # setup.py imports the evaluators' URL helper, which pulls in the spreadsheet stack; unused here.
        worker.stub("desktop_env.evaluators.metrics.utils")
        for side in sides:
            code = (
                f"c = m0.PythonController('127.0.0.1', {side.port}); c.retry_interval = 0.2\n"
                f"s = m1.SetupController('127.0.0.1', {side.port}, cache_dir={str(cache)!r})\n"
                f"CONTROLLERS = globals().setdefault('CONTROLLERS', {{}})\n"
                f"import builtins; builtins.CONTROLLERS = getattr(builtins, 'CONTROLLERS', {{}})\n"
                f"builtins.CONTROLLERS[{side.name!r}] = (c, s)\nresult = None"
            )
            worker.exec(code, modules=("desktop_env.controllers.python", "desktop_env.controllers.setup"))

    def run(self, side: Side, expression: str) -> tuple[Any, list[str]]:
        """Evaluate ``expression`` with ``c`` (PythonController) and ``s`` (SetupController) of ``side``.

        Returns:
            Its value (bytes as their length and first 8 bytes) and the error lines the controllers logged.
        """
        code = (
            "import builtins, logging\n"
            f"c, s = builtins.CONTROLLERS[{side.name!r}]\n"
            "handler = [h for h in logging.getLogger('desktopenv').handlers if hasattr(h, 'seen')][0]\n"
            "handler.seen.clear()\n"
            f"value = {expression}\n"
            "if isinstance(value, (bytes, bytearray)):\n"
            "    small = value.hex() if len(value) < 4096 else None\n"
            "    value = {'bytes': len(value), 'head': value[:8].hex(), 'all': small}\n"
            "result = [value, list(handler.seen)]"
        )
        value, errors = self.worker.exec(code)
        return value, errors


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Controllers, dict[str, Side], Path]]:
    """Xvfb, openbox, a D-Bus session with AT-SPI, a mousepad window; our server and OSWorld's."""
    home = tmp_path_factory.mktemp("compat-home")
    (home / "Desktop").mkdir()
    cache = tmp_path_factory.mktemp("compat-cache")
    xvfb, display = start_xvfb((1280, 800))
    processes = [xvfb]
    worker: Reference | None = None
    try:
        env = {**os.environ, "DISPLAY": display, "HOME": str(home), "LANG": "C.UTF-8"}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        env.pop("OSW_GUEST_TOKEN", None)
        dbus, address = start_dbus(env)
        processes.append(dbus)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] = "1"
        env["GTK_MODULES"] = "gail:atk-bridge"
        processes.append(start(["openbox"], env=env, stderr=subprocess.DEVNULL))
        note = home / "compat-note.txt"
        note.write_text("compat\n")
        processes.append(start(["mousepad", str(note)], env=env, stderr=subprocess.DEVNULL))
        ours = start_guest(
            display,
            home / "ready",
            "--no-token",
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(ours)
        url, _ = wait_ready(ours, home / "ready")
        # Its /screenshot writes beside its own main.py, so it runs from a copy outside the checkout.
        server_dir = tmp_path_factory.mktemp("osworld-server")
        for name in ("main.py", "pyxcursor.py"):
            shutil.copy(OSWORLD_SERVER / name, server_dir / name)
        port = free_port()
        osworld_env = {**env, "PATH": f"{OSWORLD_PYTHON.parent}:{env['PATH']}"}  # its `python` has pyautogui
        theirs = start(
            [
                str(OSWORLD_PYTHON),
                "-m",
                "flask",
                "--app",
                "main",
                "run",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=server_dir,
            env=osworld_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(theirs)
        _wait_http(f"http://127.0.0.1:{port}/platform")
        sides = {
            "ours": Side("ours", int(url.rsplit(":", 1)[1]), home),
            "osworld": Side("osworld", port, home),
        }
        worker = Reference(reference_python())
        yield Controllers(worker, list(sides.values()), cache), sides, home
    finally:
        if worker is not None:
            worker.close()
        for process in reversed(processes):
            stop(process)


def _wait_http(url: str, seconds: float = 60) -> None:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def both(scene: Any, expression: str) -> dict[str, tuple[Any, list[str]]]:
    controllers, sides, _ = scene
    return {name: controllers.run(side, expression) for name, side in sides.items()}


# --- PythonController --------------------------------------------------------------------------------

AGREE = [
    ("platform", "c.get_vm_platform()"),
    ("screen_size", "c.get_vm_screen_size()"),
    ("desktop_path", "c.get_vm_desktop_path()"),
    ("file", "c.get_file(HOME + '/compat-note.txt')"),
    ("missing_file", "c.get_file('/nonexistent/compat')"),
    ("python_command", "c.execute_python_command('print(pyautogui.size().width, flush=True)')"),
    ("python_gi", "c.execute_python_command('import gi; print(gi.__name__)')"),
    ("run_python", "c.run_python_script('import sys; print(sys.executable); print(6 * 7)')"),
    ("run_python_error", "c.run_python_script('raise SystemExit(3)')"),
    ("window_size", "c.get_vm_window_size('mousepad')"),
    ("window_size_missing", "c.get_vm_window_size('no-such-class')"),
    ("terminal", "c.get_terminal_output()"),
]


@needs_reference
@pytest.mark.parametrize(("name", "expression"), AGREE, ids=[name for name, _ in AGREE])
def test_python_controller_gets_what_osworlds_server_gives(scene: Any, name: str, expression: str) -> None:
    results = both(scene, expression.replace("HOME", repr(str(scene[2]))))
    ours, theirs = results["ours"], results["osworld"]
    if name in ("window_size_missing",):
        # OSWorld's server answers a bare 500 (its route returns nothing), ours a 404: the controller
        # logs and returns None for both.
        assert ours[0] is None and theirs[0] is None
        return
    assert ours == theirs, f"ours: {ours}\nOSWorld's: {theirs}"
    if name not in ("missing_file",):
        assert ours[1] == [], f"the controller logged errors against our server: {ours[1]}"


@needs_reference
def test_run_bash_script_works_against_ours(scene: Any) -> None:
    """OSWorld's own /run_bash_script fails in this copy of its server (it calls an undefined
    ``_append_event``), so ours is held to what its code means: output merged, the exit code kept."""
    value, errors = both(scene, "c.run_bash_script('echo out; echo err >&2; exit 4', timeout=20)")["ours"]
    assert value == {"status": "error", "output": "out\nerr\n", "error": "", "returncode": 4}
    assert errors == []


@needs_reference
def test_screenshot_and_accessibility_tree_work_against_ours(scene: Any) -> None:
    for expression in ("c.get_screenshot()", "c.get_accessibility_tree()"):
        results = both(scene, expression)
        for side, (value, errors) in results.items():
            assert errors == [], (side, expression, errors)
            assert value, (side, expression)
    shot = both(scene, "c.get_screenshot()")
    assert shot["ours"][0]["head"] == shot["osworld"][0]["head"] == "89504e470d0a1a0a"  # PNG both
    tree = both(scene, "c.get_accessibility_tree()")
    assert tree["ours"][0].startswith("<desktop-frame") and tree["osworld"][0].startswith("<desktop-frame")
    assert "compat-note.txt" in tree["ours"][0] and "compat-note.txt" in tree["osworld"][0]


@needs_reference
def test_directory_trees_agree_including_symlinked_folders(scene: Any) -> None:
    _, _, home = scene
    top = home / "tree"
    (top / "a" / "b").mkdir(parents=True, exist_ok=True)
    for name in ("z.txt", "m.txt", "a/one.txt", "a/b/two.txt"):
        (top / name).write_text(name)
    if not (top / "link").exists():
        (top / "link").symlink_to(top / "a")
    results = both(scene, f"c.get_vm_directory_tree({str(top)!r})")
    assert results["ours"] == results["osworld"]
    assert results["ours"][1] == []


@needs_reference
def test_actions_run_without_errors(scene: Any) -> None:
    actions = [
        {"action_type": "MOVE_TO", "parameters": {"x": 300, "y": 200}},
        {"action_type": "CLICK", "parameters": {"button": "left", "x": 640, "y": 400, "num_clicks": 1}},
        {"action_type": "SCROLL", "parameters": {"dx": 0, "dy": -1}},
        {"action_type": "KEY_DOWN", "parameters": {"key": "shift"}},
        {"action_type": "KEY_UP", "parameters": {"key": "shift"}},
        {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "home"]}},
        {"action_type": "MOVE_TO", "parameters": {"x": 10, "y": 10}},
    ]
    for action in actions:
        results = both(scene, f"c.execute_action({action!r})")
        for side, (_, errors) in results.items():
            assert errors == [], (side, action, errors)


@needs_reference
def test_recording_works_against_ours(scene: Any, tmp_path: Path) -> None:
    if shutil.which("ffmpeg") is None:
        pytest.skip("no ffmpeg")
    _, errors = both(scene, "c.start_recording()")["ours"]
    assert errors == []
    dest = tmp_path / "ours.mp4"
    _, errors = both(scene, f"(__import__('time').sleep(1.5), c.end_recording({str(dest)!r}))")["ours"]
    assert errors == [] and dest.stat().st_size > 0


# --- SetupController -----------------------------------------------------------------------------------


class _Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def file_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A loopback HTTP server for ``download`` steps."""
    root = tmp_path_factory.mktemp("served")
    handler = lambda *a, **k: _Files(*a, directory=str(root), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


@needs_reference
def test_setup_steps_work_against_ours_as_against_osworlds(
    scene: Any, file_server: tuple[str, Path], tmp_path: Path
) -> None:
    controllers, sides, home = scene
    url, served = file_server
    (served / "asset.txt").write_text("downloaded asset\n")
    upload = tmp_path / "upload.txt"
    upload.write_text("uploaded\n")
    wallpaper = home / "wall.png"
    from PIL import Image

    Image.new("RGB", (64, 48), (10, 120, 200)).save(wallpaper)
    for name, side in sides.items():
        tag = f"{name}-{secrets.token_hex(3)}"
        config = [
            {"type": "execute", "parameters": {"command": ["bash", "-c", f"echo {tag} > ~/exec-{tag}.txt"]}},
            {
                "type": "execute",
                "parameters": {"command": "echo to-cache", "shell": True, "stdout": f"{tag}.out"},
            },
            {"type": "command", "parameters": {"command": ["touch", str(home / f"cmd-{tag}")]}},
            {"type": "launch", "parameters": {"command": ["sleep", "1"]}},
            {"type": "launch", "parameters": {"command": "sleep 1", "shell": True}},
            {"type": "sleep", "parameters": {"seconds": 0.2}},
            {
                "type": "upload_file",
                "parameters": {"files": [{"local_path": str(upload), "path": f"~/up-{tag}.txt"}]},
            },
            {
                "type": "download",
                "parameters": {"files": [{"url": f"{url}/asset.txt", "path": f"~/dl-{tag}.txt"}]},
            },
            {"type": "activate_window", "parameters": {"window_name": "compat-note.txt"}},
            {"type": "activate_window", "parameters": {"window_name": "mousepad", "by_class": True}},
            {"type": "activate_window", "parameters": {"window_name": "no-such-window"}},
            {"type": "close_window", "parameters": {"window_name": "no-such-window"}},
            {"type": "change_wallpaper", "parameters": {"path": str(wallpaper)}},
            {
                "type": "execute_with_verification",
                "parameters": {
                    "command": ["true"],
                    "verification": {"command_success": f"test -f ~/exec-{tag}.txt"},
                    "max_wait_time": 5,
                    "check_interval": 0.5,
                },
            },
        ]
        value, errors = controllers.run(side, f"s.setup({config!r})")
        assert value is True, (name, errors)
        assert errors == [], (name, errors)
        assert (home / f"exec-{tag}.txt").read_text() == f"{tag}\n"
        assert (home / f"cmd-{tag}").exists()
        assert (home / f"up-{tag}.txt").read_text() == "uploaded\n"
        assert (home / f"dl-{tag}.txt").read_text() == "downloaded asset\n"
    ours, _ = controllers.run(sides["ours"], "c.get_vm_wallpaper()")
    assert ours is not None and ours["all"] == wallpaper.read_bytes().hex()


# --- Our client's actions on both guests ------------------------------------------------------------

TYPED = "naïve café – 日本語 ✓ Ωmega\nzweite Zeile ß"
"""Text pyautogui cannot type: our client pastes it through pyperclip on an OSWorld guest."""


@needs_reference
@pytest.mark.parametrize("name", ["ours", "osworld"])
def test_non_ascii_text_typed_by_our_client_arrives_on_both_guests(scene: Any, name: str) -> None:
    """The pyautogui code our client sends OSWorld guests (a clipboard paste for non-ASCII text)
    types the text exactly into an editor, and /execute answers at once: the clipboard program
    holding the selection in the background no longer keeps OSWorld's captured output open."""
    import asyncio
    import time

    from osw_studio.core.actions import Hotkey, Typing
    from osw_studio.envs.guest_client import GuestClient
    from osw_studio.envs.remote import RemoteEnv, pyautogui_command

    _, sides, home = scene
    side = sides[name]
    ours_url = f"http://127.0.0.1:{sides['ours'].port}"
    target = home / f"typed-{name}-{secrets.token_hex(3)}.txt"
    target.write_text("")
    with httpx.Client(base_url=ours_url, timeout=30) as control:
        control.post("/setup/launch", json={"command": ["mousepad", "--disable-server", str(target)]})

        def activated() -> bool:
            response = control.post("/setup/activate_window", json={"window_name": target.name})
            return response.headers.get("x-osw-window") == "found"

        deadline = time.monotonic() + 30
        while not activated() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert activated(), "the editor window did not appear"
        time.sleep(1)  # the text view takes the focus
        actions = [Typing(text=TYPED), Hotkey(keys=["ctrl", "s"])]

        async def type_it() -> tuple[bool, float]:
            url = f"http://127.0.0.1:{side.port}"
            if name == "osworld":  # the whole client: it finds no /capabilities, so it sends pyautogui
                env = await RemoteEnv.open(url)
                started = time.monotonic()
                try:
                    assert env.capabilities is None
                    await env.execute(actions)
                finally:
                    await env.close()
                return True, time.monotonic() - started
            async with GuestClient(url, timeout=150) as client:  # ours: that same command via /execute
                command = pyautogui_command(actions)
                assert command is not None and "pyperclip" in command[2]
                started = time.monotonic()
                result = await client.execute(command)
                return result.ok, time.monotonic() - started

        ok, seconds = asyncio.run(type_it())
        assert ok
        assert seconds < 30, f"/execute took {seconds:.0f} s"
        deadline = time.monotonic() + 15
        while target.read_text(encoding="utf-8") != TYPED and time.monotonic() < deadline:
            time.sleep(0.3)
        control.post("/setup/close_window", json={"window_name": target.name})
    assert target.read_text(encoding="utf-8") == TYPED
