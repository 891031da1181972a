"""OSWorld host code's requests, as OSWorld's python controller sends them, against our guest server."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
from PIL import Image

from tests.fakes.desktop import Desktop
from tests.guest.helpers import execute, wait_for


def test_pyautogui_code_runs_through_execute(desktop: Desktop) -> None:
    code = "import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(100, 100)"
    result = execute(desktop, ["python", "-c", code])
    assert result["status"] == "success"
    assert result["returncode"] == 0, result["error"]
    assert desktop.client.get("/cursor_position").json() == [100, 100]


def test_execute_shell_string_and_failure(desktop: Desktop) -> None:
    result = execute(desktop, "echo $((6 * 7)) && echo oops >&2 && exit 3", shell=True)
    assert result == {"status": "success", "output": "42\n", "error": "oops\n", "returncode": 3}
    missing = desktop.client.post("/execute", json={"command": ["no-such-program-xyz"], "shell": False})
    assert missing.status_code == 500
    assert missing.json()["status"] == "error"


def test_file_returns_bytes_and_404_when_missing(desktop: Desktop) -> None:
    target = desktop.home / "data.bin"
    execute(desktop, f"head -c 200 /dev/urandom > {target}", shell=True)
    response = desktop.client.post("/file", data={"file_path": str(target)})
    assert response.status_code == 200
    assert response.content == target.read_bytes()
    assert len(response.content) == 200
    missing = desktop.client.post("/file", data={"file_path": str(desktop.home / "nope.txt")})
    assert missing.status_code == 404


def test_large_files_come_whole_by_sendfile(desktop: Desktop) -> None:
    """Files above SENDFILE_FROM go out by sendfile: every byte, the declared length, on one connection."""
    import os

    from osw_studio.guest.files_api import SENDFILE_FROM

    for size in (SENDFILE_FROM + 1, 3 << 20):
        target = desktop.home / f"big-{size}.bin"
        target.write_bytes(os.urandom(size))
        response = desktop.client.post("/file", data={"file_path": str(target)})
        assert response.status_code == 200
        assert response.headers["content-length"] == str(size)
        assert response.content == target.read_bytes()
    assert desktop.client.get("/platform").text == "Linux"  # the connection still serves requests


def test_upload_then_list_directory(desktop: Desktop) -> None:
    payload = "naïve ☃ data\n".encode() * 1000
    destination = desktop.home / "uploads" / "deep" / "file.txt"
    response = desktop.client.post(
        "/setup/upload",
        data={"file_path": str(destination)},
        files={"file_data": ("file.txt", payload, "application/octet-stream")},
    )
    assert response.status_code == 200, response.text
    assert response.text == f"File Uploaded: {len(payload)} bytes"
    assert desktop.client.post("/file", data={"file_path": str(destination)}).content == payload
    tree = desktop.client.post("/list_directory", json={"path": str(desktop.home / "uploads")}).json()
    assert tree == {
        "directory_tree": {
            "type": "directory",
            "name": "uploads",
            "children": [
                {"type": "directory", "name": "deep", "children": [{"type": "file", "name": "file.txt"}]}
            ],
        }
    }
    not_dir = desktop.client.post("/list_directory", json={"path": str(destination)})
    assert not_dir.status_code == 400


def test_screenshot_is_full_png_with_cursor(desktop: Desktop) -> None:
    desktop.client.post("/input", json={"actions": [{"kind": "move_to", "x": 700, "y": 700}]})
    with_cursor = Image.open(io.BytesIO(desktop.client.get("/screenshot").content))
    assert with_cursor.format == "PNG"
    assert with_cursor.size == (1920, 1080)
    without = Image.open(io.BytesIO(desktop.client.get("/screenshot", params={"cursor": 0}).content))
    box = (700, 700, 720, 720)
    assert with_cursor.crop(box).tobytes() != without.crop(box).tobytes()
    far = (1500, 50, 1520, 70)
    assert with_cursor.crop(far).tobytes() == without.crop(far).tobytes()


def test_screen_facts(desktop: Desktop) -> None:
    assert desktop.client.post("/screen_size").json() == {"width": 1920, "height": 1080}
    platform = desktop.client.get("/platform")
    assert platform.text == "Linux"
    terminal = desktop.client.get("/terminal")
    assert terminal.status_code == 200
    assert "output" in terminal.json()


def test_launch_mousepad_then_accessibility_tree_shows_it(desktop: Desktop) -> None:
    note = desktop.home / "a11y-note.txt"
    note.write_text("accessible text\n")
    launched = desktop.client.post("/setup/launch", json={"command": ["mousepad", str(note)], "shell": False})
    assert launched.status_code == 200
    assert launched.text == f"mousepad {note} launched successfully"  # OSWorld's text, not JSON

    def tree() -> str:
        response = desktop.client.get("/accessibility")
        assert response.status_code == 200, response.text
        return str(response.json()["AT"])

    xml = wait_for(tree, lambda text: "a11y-note.txt" in text)
    root = ET.fromstring(xml)
    assert root.tag == "desktop-frame"
    apps = [app.get("name") for app in root]
    assert "mousepad" in apps
    st = "https://accessibility.ubuntu.example.org/ns/state"
    cp = "https://accessibility.ubuntu.example.org/ns/component"
    frames = [f for f in root.iter("frame") if "a11y-note.txt" in (f.get("name") or "")]
    assert frames, "the mousepad window is in the tree"
    assert frames[0].get(f"{{{st}}}showing") == "true"
    x, y = (int(v) for v in frames[0].get(f"{{{cp}}}screencoord", "").strip("()").split(", "))
    width, height = (int(v) for v in frames[0].get(f"{{{cp}}}size", "").strip("()").split(", "))
    assert 0 <= x < 1920 and 0 <= y < 1080 and width > 100 and height > 100
    size = desktop.client.post("/window_size", data={"app_class_name": "mousepad"})
    assert size.status_code == 200
    closed = desktop.client.post("/setup/close_window", json={"window_name": "a11y-note.txt"})
    assert closed.status_code == 200
    assert closed.headers["x-osw-window"] == "found"
    assert wait_for(tree, lambda text: "a11y-note.txt" not in text) is not None


def test_tree_read_with_calls_in_flight_is_pyatspis_one_call_at_a_time(desktop: Desktop) -> None:
    """The helper's fast walk (atspi_bus) writes the very XML pyatspi's walk writes, menus and all."""
    from osw_studio.guest import atspi_dump

    note = desktop.home / "walk-note.txt"
    note.write_text("walked text\n" * 30)
    desktop.client.post("/setup/launch", json={"command": ["mousepad", str(note)], "shell": False})
    helper = [atspi_dump.__file__.replace(".pyc", ".py")]

    def walk(*flags: str) -> str:
        result = execute(desktop, ["/usr/bin/python3", *helper, *flags])
        assert result["returncode"] == 0, result["error"]
        return str(result["output"])

    assert "walk-note.txt" in wait_for(walk, lambda text: "walk-note.txt" in text)
    for _ in range(3):  # a desktop that changed between the two walks is walked again
        fast, slow = walk("--bus"), walk("--pyatspi")
        if fast == slow:
            break
    assert fast == slow
    keys = {key.split("}")[0] for element in ET.fromstring(fast).iter() for key in element.attrib}
    for prefix in ("st", "attr", "cp", "act"):  # states, attributes, extents, actions all compared
        assert "{" + atspi_dump.NAMESPACES[prefix] in keys, prefix
    # ... and GTK's applications were read from one GetTree listing each, not level by level.
    result = execute(desktop, ["/usr/bin/python3", "-c", _COUNT_CALLS, str(Path(helper[0]).parent)])
    assert result["returncode"] == 0, result["error"]
    asked = json.loads(str(result["output"]))
    assert asked["GetTree"] >= 1 and asked["GetState"] > 10
    assert asked["GetInterfaces"] == asked["GetChildren"] == 0  # what a level-by-level walk asks
    assert asked["direct"] >= 1  # GTK's applications answer on connections of their own, not via the bus
    desktop.client.post("/setup/close_window", json={"window_name": "walk-note.txt"})


_COUNT_CALLS = """
import collections, json, sys
sys.path.insert(0, sys.argv[1])
import atspi_bus
bus = atspi_bus.Bus()
asked = collections.Counter()
call = bus.call
def counted(target, interface, method, *rest):
    asked[method] += 1
    call(target, interface, method, *rest)
bus.call = counted
apps = atspi_bus.desktop_apps(bus)
bus.connect_directly(apps)
asked.clear()
atspi_bus.walk_trees(bus, apps, max_depth=50, max_width=1024, max_nodes=20000)
asked["direct"] = len(bus._direct)
print(json.dumps({m: asked[m] for m in ("GetTree", "GetState", "GetInterfaces", "GetChildren", "direct")}))
"""


def test_recording_gives_an_mp4(desktop: Desktop) -> None:
    started = desktop.client.post("/start_recording")
    assert started.status_code == 200, started.text
    desktop.client.post("/input", json={"actions": [{"kind": "move_to", "x": 10, "y": 10}]})
    time.sleep(1)
    video = desktop.client.post("/end_recording")
    assert video.status_code == 200
    assert video.content[4:8] == b"ftyp"
    assert desktop.client.post("/end_recording").status_code == 400


def test_run_python_and_bash_script(desktop: Desktop) -> None:
    python = desktop.client.post("/run_python", json={"code": "print(sum(range(5)))"}).json()
    assert python["status"] == "success"
    assert python["output"] == "10\n"
    bash = desktop.client.post("/run_bash_script", json={"script": "echo hi; echo err >&2"}).json()
    assert bash == {"status": "success", "output": "hi\nerr\n", "error": "", "returncode": 0}


def test_no_token_no_service(desktop: Desktop) -> None:
    for method, path in [("GET", "/screenshot"), ("POST", "/execute"), ("GET", "/openapi.json")]:
        assert httpx.request(method, desktop.url + path).status_code == 401
        wrong = httpx.request(method, desktop.url + path, headers={"Authorization": "Bearer wrong"})
        assert wrong.status_code == 401
        assert wrong.json() == {"detail": "missing or wrong token"}
    schema = httpx.get(desktop.url + "/openapi.json", params={"token": desktop.token})
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for route in ("/input", "/stream", "/capabilities", "/screenshot", "/setup/upload", "/accessibility"):
        assert route in paths


def test_no_token_mode_serves_osworld_clients_without_auth(desktop: Desktop) -> None:
    ready = desktop.home / "no-token.ready"
    options = ["--port", "0", "--no-token", "--ready-file", str(ready)]
    server = subprocess.Popen(
        [sys.executable, "-m", "osw_studio.guest", "--display", desktop.display, *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        line = wait_for(lambda: ready.read_text() if ready.exists() else "", lambda text: "ready on" in text)
        assert line.strip().endswith("token=none")
        url = line.split(" on ")[1].split(" token=")[0]
        assert httpx.post(url + "/screen_size").json() == {"width": 1920, "height": 1080}
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=10)
    assert b"--no-token" in stderr


def test_a_command_that_leaves_a_program_holding_its_output_returns_at_once(desktop: Desktop) -> None:
    """``xclip -i`` stays in the background owning the selection (and the command's stdout): the
    answer must not wait for it (OSWorld's server waits out its 120 s timeout)."""
    import time

    started = time.monotonic()
    result = execute(desktop, "printf held | xclip -i -selection clipboard; echo done", shell=True)
    assert result["output"] == "done\n" and result["returncode"] == 0
    assert time.monotonic() - started < 10
    assert execute(desktop, ["xclip", "-o", "-selection", "clipboard"])["output"] == "held"


def test_python_in_guest_commands_is_the_systems_with_pyautogui(desktop: Desktop) -> None:
    """As on OSWorld's VMs: ``python`` and ``python3`` are the system's (gi, pyatspi), and OSWorld's
    ``python -c "import pyautogui; ..."`` works."""
    code = "import sys, gi, pyautogui; print(sys.prefix, pyautogui.size().width)"
    for python in ("python", "python3"):
        result = execute(desktop, [python, "-c", code])
        assert result["returncode"] == 0, result["error"]
        assert result["output"] == "/usr 1920\n"
