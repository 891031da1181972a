"""Our extensions: /capabilities, /input through XTest (exact Unicode, clicks, drags), /stream."""

from __future__ import annotations

import io
import shlex

import pytest
from PIL import Image

from osw_studio.core.actions import Click, DragTo, Hotkey, Typing, dump_actions
from tests.fakes.desktop import Desktop
from tests.guest.helpers import execute, wait_for


def send(desktop: Desktop, actions: list[dict[str, object]]) -> dict[str, object]:
    response = desktop.client.post("/input", json={"actions": actions})
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def shell_output(desktop: Desktop, command: str) -> str:
    return str(execute(desktop, command, shell=True)["output"]).strip()


def test_capabilities(desktop: Desktop) -> None:
    caps = desktop.client.get("/capabilities").json()
    assert caps["server"] == "osw-studio"
    assert caps["input"] is True and caps["stream"] is True and caps["unicode_typing"] is True
    assert caps["screen"] == [1920, 1080]
    assert caps["display"] == desktop.display
    assert caps["accessibility"] is True
    assert caps["screenshot_formats"] == ["png", "jpeg"]


def test_jpeg_screenshot_scaled(desktop: Desktop) -> None:
    response = desktop.client.get("/screenshot", params={"format": "jpeg", "quality": 60, "max_width": 1280})
    assert response.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(response.content)).size == (1280, 720)


def test_typed_unicode_arrives_exactly_in_mousepad(desktop: Desktop) -> None:
    note = desktop.home / "typed.txt"
    note.write_text("")
    desktop.client.post("/setup/launch", json={"command": ["mousepad", str(note)], "shell": False})
    # The window manager lists the window (and so the guest can activate it) a moment after it maps.
    activated = wait_for(
        lambda: desktop.client.post("/setup/activate_window", json={"window_name": "typed.txt"}),
        lambda response: response.headers.get("x-osw-window") == "found",
    )
    assert activated.headers["x-osw-window"] == "found", "the mousepad window appeared and was activated"
    text = 'Hello, World! ~`|{}"<>?\\ 123\nÜnïcode € 日本 ß ç ñ — ✓ 🙂'
    actions = [Hotkey(keys=["ctrl", "a"]), Typing(text=text), Hotkey(keys=["ctrl", "s"])]
    assert send(desktop, dump_actions(actions)) == {"status": "success", "executed": 3}
    saved = wait_for(lambda: note.read_text(encoding="utf-8"), lambda content: content == text)
    assert saved == text
    desktop.client.post("/setup/close_window", json={"window_name": "typed.txt"})


def _window_geometry(desktop: Desktop, title: str) -> tuple[int, int]:
    """The top-left of the window's client area once it is on screen (xwininfo's absolute position)."""
    command = f"xwininfo -name {shlex.quote(title)} 2>/dev/null | grep -E 'Absolute upper-left|Map State'"
    out = wait_for(lambda: shell_output(desktop, command), lambda text: "IsViewable" in text)
    x, y = (int(line.rsplit(":", 1)[1]) for line in out.splitlines() if "Absolute" in line)
    return x, y


def test_click_lands_where_asked(desktop: Desktop) -> None:
    for title, place in (("left-term", "+40+40"), ("right-term", "+900+500")):
        command = ["xterm", "-T", title, "-geometry", f"40x10{place}", "-e", "sleep", "600"]
        desktop.client.post("/setup/launch", json={"command": command, "shell": False})
    # Both windows first: a window that maps late takes the focus and would undo a click.
    for title in ("left-term", "right-term"):
        _window_geometry(desktop, title)

    def click_into(title: str) -> str:
        x, y = _window_geometry(desktop, title)  # read again: the window manager may still move it
        send(desktop, dump_actions([Click(x=x + 60, y=y + 40)]))
        assert desktop.client.get("/cursor_position").json() == [x + 60, y + 40]
        return shell_output(desktop, "xdotool getactivewindow getwindowname")

    for title in ("left-term", "right-term", "left-term"):
        active = wait_for(lambda title=title: click_into(title), lambda name, title=title: name == title)
        assert active == title
    for title in ("left-term", "right-term"):
        desktop.client.post("/setup/close_window", json={"window_name": title, "strict": True})


def test_drag_selects_text(desktop: Desktop) -> None:
    command = ["xterm", "-T", "drag-term", "-fn", "fixed", "-geometry", "40x5+300+300", "-e", "sh", "-c"]
    desktop.client.post(
        "/setup/launch", json={"command": [*command, "echo DRAGME; sleep 600"], "shell": False}
    )

    def drag_over_word() -> str:
        x, y = _window_geometry(desktop, "drag-term")
        # xterm's "fixed" font cells are 6x13 px after a 2 px border: select the six cells of "DRAGME".
        row_y = y + 2 + 6
        send(desktop, dump_actions([DragTo(start_x=x + 3, start_y=row_y, x=x + 2 + 6 * 6 - 1, y=row_y)]))
        return shell_output(desktop, "xclip -o -selection primary")

    assert wait_for(drag_over_word, lambda text: text == "DRAGME") == "DRAGME"
    desktop.client.post("/setup/close_window", json={"window_name": "drag-term", "strict": True})


def test_scroll_and_keys_are_accepted(desktop: Desktop) -> None:
    actions = [
        {"kind": "scroll", "dy": -3, "x": 5, "y": 5},
        {"kind": "scroll", "dx": 2},
        {"kind": "press", "key": "shift"},
        {"kind": "key_down", "key": "ctrl"},
        {"kind": "key_up", "key": "ctrl"},
        {"kind": "wait", "seconds": 0},
        {"kind": "done"},
    ]
    assert send(desktop, actions) == {"status": "success", "executed": 7}


@pytest.mark.parametrize(
    ("actions", "where"),
    [
        ([{"kind": "click", "x": "left"}], ["body", "actions", 0, "click", "x"]),
        ([{"kind": "teleport"}], ["body", "actions", 0]),
        (
            [{"kind": "press", "key": "enter"}, {"kind": "press", "key": "hyperdrive"}],
            ["body", "actions", 1, "key"],
        ),
    ],
)
def test_invalid_actions_are_422(
    desktop: Desktop, actions: list[dict[str, object]], where: list[object]
) -> None:
    response = desktop.client.post("/input", json={"actions": actions})
    assert response.status_code == 422
    assert any(error["loc"][: len(where)] == where for error in response.json()["detail"])


def test_stream_yields_jpeg_parts_on_change(desktop: Desktop) -> None:
    parts: list[bytes] = []
    with desktop.client.stream("GET", "/stream", params={"fps": 10, "max_width": 640}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "multipart/x-mixed-replace; boundary=frame"
        buffer = b""
        x = 100
        for chunk in response.iter_bytes():
            buffer += chunk
            while True:
                head_end = buffer.find(b"\r\n\r\n")
                if head_end < 0:
                    break
                head = buffer[:head_end].decode()
                assert head.startswith("--frame\r\n")
                headers = dict(line.split(": ", 1) for line in head.splitlines()[1:])
                assert headers["Content-Type"] == "image/jpeg"
                length = int(headers["Content-Length"])
                if len(buffer) < head_end + 4 + length + 2:
                    break
                parts.append(buffer[head_end + 4 : head_end + 4 + length])
                buffer = buffer[head_end + 4 + length + 2 :]
                x += 40  # move the pointer so the next frame differs
                send(desktop, [{"kind": "move_to", "x": x, "y": 300}])
            if len(parts) >= 3:
                break
    assert len(parts) >= 3
    for part in parts:
        image = Image.open(io.BytesIO(part))
        assert image.format == "JPEG"
        assert image.size == (640, 360)


def test_a_click_waits_for_a_running_batch_and_the_server_stays_responsive(desktop: Desktop) -> None:
    """Clicks run on the server's event loop only when no batch holds the input: never blocking it."""
    import threading
    import time

    import httpx

    slow: dict[str, object] = {}
    started = time.monotonic()

    def hold() -> None:
        with httpx.Client(base_url=str(desktop.client.base_url), headers=desktop.client.headers) as c:
            response = c.post("/input", json={"actions": [{"kind": "wait", "seconds": 1.5}]}, timeout=30)
            slow["result"] = response.json()

    thread = threading.Thread(target=hold)
    thread.start()
    time.sleep(0.3)  # the wait batch holds the input now
    assert desktop.client.get("/platform").text == "Linux"
    assert time.monotonic() - started < 1.5  # answered while the wait still runs
    click = send(desktop, [{"kind": "move_to", "x": 7, "y": 9}, {"kind": "click", "x": 8, "y": 9}])
    clicked_at = time.monotonic()
    thread.join()
    assert click == {"status": "success", "executed": 2}
    assert slow["result"] == {"status": "success", "executed": 1}
    assert clicked_at - started >= 1.5  # the click waited for the wait to end
    assert desktop.client.get("/cursor_position").json() == [8, 9]
