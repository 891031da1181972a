"""The setup-step executor against a recording OSWorld-style guest: preflight, files, commands."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from osw_studio.core.errors import GuestError, TaskError
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.envs.setup import SetupOptions, SetupRunner, preflight
from osw_studio.tasks.hostfetch import FetchPolicy
from tests.envs.fake_guest import FakeGuest, Request, json_reply

FAST = RetryPolicy(attempts=2, delay=0.01)


def step(kind: str, **parameters: object) -> dict[str, object]:
    return {"type": kind, "parameters": parameters}


def test_preflight_names_an_unsupported_step_by_index_and_type() -> None:
    steps = [step("sleep", seconds=0), step("tidy_desktop")]
    with pytest.raises(TaskError) as caught:
        preflight(steps)
    assert str(caught.value).startswith("config[1]: unsupported setup step type 'tidy_desktop'")


def test_preflight_names_a_malformed_step() -> None:
    steps = [step("sleep", seconds=0), step("open", path="/a"), step("download", files=[{"url": "x"}])]
    with pytest.raises(TaskError) as caught:
        preflight(steps, label="postconfig")
    text = str(caught.value)
    assert text.startswith("postconfig[2] (type 'download'): malformed step")
    assert "files.0.path" in text


def test_preflight_accepts_every_osworld_task_but_the_google_ones(osworld_dir: Path) -> None:
    refused: dict[str, str] = {}
    files = sorted((osworld_dir / "examples").glob("*/*.json"))
    for path in files:
        task = json.loads(path.read_text())
        steps = task.get("config", []) + task["evaluator"].get("postconfig", [])
        try:
            preflight(steps)
        except TaskError as exc:
            refused[path.stem] = str(exc)
    assert len(files) == 369
    assert refused, "OSWorld has Google Drive tasks"
    assert all("needs Google credentials" in text for text in refused.values()), refused
    assert len(refused) <= 16


async def test_a_bad_step_stops_the_setup_before_the_first_step_runs(osworld: FakeGuest) -> None:
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        with pytest.raises(TaskError):
            await SetupRunner(guest).run(
                [step("launch", command=["xterm"]), step("login", settings_file="s", platform="p")]
            )
    assert osworld.calls("/setup/launch") == []


async def test_download_from_a_relative_path_the_suite_assets_and_asset_cache(
    osworld: FakeGuest, tmp_path: Path
) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "notes.txt").write_text("relative Ünï")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "shared.txt").write_bytes(b"suite asset")
    url = "https://huggingface.co/datasets/x/resolve/main/calc/t1/Report.xlsx"
    cached = tmp_path / "cache" / "t1" / f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_Report.xlsx"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"from the cache")
    files = [
        {"url": "../assets/shared.txt", "path": "/home/user/shared.txt"},
        {"url": "notes.txt", "path": "/home/user/notes.txt"},
        {"url": url, "path": "/home/user/Report.xlsx"},
    ]
    options = SetupOptions(cache_dir=tmp_path / "cache", task_dir=tmp_path / "task")
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        await SetupRunner(guest, options).run([step("download", files=files)], task_id="t1")
    uploads = [r.form() for r in osworld.calls("/setup/upload")]
    assert uploads == [
        {"file_path": b"/home/user/shared.txt", "file_data": b"suite asset"},
        {"file_path": b"/home/user/notes.txt", "file_data": "relative Ünï".encode()},
        {"file_path": b"/home/user/Report.xlsx", "file_data": b"from the cache"},
    ]


async def test_http_download_fills_the_cache_and_offline_says_how_to_seed_it(
    osworld: FakeGuest, fake_guest: FakeGuest, tmp_path: Path
) -> None:
    fake_guest.route("GET", "/files/a.docx", lambda r: (200, "application/octet-stream", b"docx bytes"))
    url = f"{fake_guest.start()}/files/a.docx"
    # The file server is on this machine: allowed by name, as a user allows a mirror of their own.
    policy = FetchPolicy.of(["127.0.0.1"])
    options = SetupOptions(cache_dir=tmp_path, download_retry_delay=0.01, fetch_policy=policy)
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        runner = SetupRunner(guest, options)
        await runner.run([step("download", files=[{"url": url, "path": "/home/user/a.docx"}])], task_id="t2")
        assert (
            tmp_path / "t2" / f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_a.docx"
        ).read_bytes() == b"docx bytes"
        fake_guest.stop()
        missing = url.replace("a.docx", "b.docx")
        with pytest.raises(GuestError) as caught:
            await runner.run(
                [step("download", files=[{"url": missing, "path": "/home/user/b.docx"}])], task_id="t2"
            )
        del fake_guest.server  # already stopped
    text = str(caught.value)
    assert text.startswith("config[0] (type 'download') of 1 steps:")
    assert missing in text and f"{tmp_path}/t2/" in text
    assert osworld.calls("/setup/upload")[0].form()["file_data"] == b"docx bytes"


async def test_execute_fills_placeholders_and_repeats_until_the_condition_holds(osworld: FakeGuest) -> None:
    answers = iter([1, 1, 0, 0])

    def execute(request: Request) -> tuple[int, str, bytes]:
        return json_reply({"status": "success", "output": "", "error": "", "returncode": next(answers)})

    osworld.route("POST", "/setup/execute", execute)
    command = ["python", "-c", "click({SCREEN_WIDTH_HALF}, {SCREEN_HEIGHT_HALF}); sudo('{CLIENT_PASSWORD}')"]
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        steps = [
            step("execute", command=command, until={"returncode": 0}),
            step("command", command="ls", shell="true"),
        ]
        await SetupRunner(guest, SetupOptions(client_password="pw")).run(steps)
    bodies = [r.json() for r in osworld.calls("/setup/execute")]
    assert bodies[:3] == [{"command": ["python", "-c", "click(960, 540); sudo('pw')"], "shell": False}] * 3
    assert bodies[3:] == [{"command": "ls", "shell": True}]
    assert len(osworld.calls("/screen_size")) == 1


async def test_launch_open_and_windows_send_osworld_bodies(osworld: FakeGuest) -> None:
    steps = [
        step("launch", command="mousepad /tmp/a.txt"),
        step("open", path="/home/user/a.xlsx"),
        step("activate_window", window_name="a.xlsx - LibreOffice Calc", strict=True),
        step("sleep", seconds=0.01),
    ]
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        await SetupRunner(guest).run(steps)
    assert osworld.calls("/setup/launch")[0].json() == {"command": ["mousepad", "/tmp/a.txt"], "shell": False}
    assert osworld.calls("/setup/open_file")[0].json() == {"path": "/home/user/a.xlsx"}
    assert osworld.calls("/setup/activate_window")[0].json() == {
        "window_name": "a.xlsx - LibreOffice Calc",
        "strict": True,
        "by_class": False,
    }


async def test_a_window_that_appears_late_is_waited_for(osworld: FakeGuest) -> None:
    answers = iter([404, 404, 200])
    osworld.route(
        "POST",
        "/setup/activate_window",
        lambda r: (next(answers), "text/plain", b"Window notes.txt not found"),
    )
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        await SetupRunner(guest).run([step("activate_window", window_name="notes.txt")])
    assert len(osworld.calls("/setup/activate_window")) == 3


async def test_a_missing_window_is_logged_and_setup_goes_on(
    osworld: FakeGuest, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("osw_studio.envs.setup.WINDOW_WAIT", 0.3)
    for path in ("/setup/activate_window", "/setup/close_window"):
        osworld.route("POST", path, lambda r: (404, "text/plain", b"Window ghost not found"))
    steps = [
        step("activate_window", window_name="ghost"),
        step("close_window", window_name="ghost"),
        step("launch", command="xterm"),
    ]
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        await SetupRunner(guest).run(steps)
    assert len(osworld.calls("/setup/launch")) == 1
    assert "no window matches 'ghost' to activate" in caplog.text
    assert "no window matches 'ghost' to close" in caplog.text


async def test_browser_tabs_without_a_devtools_port_fail_clearly(osworld: FakeGuest) -> None:
    options = SetupOptions(devtools_wait=0.2)
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        steps = [
            step("launch", command=["google-chrome", "--remote-debugging-port=1"]),
            step("chrome_open_tabs", urls_to_open=["https://a.org"]),
        ]
        with pytest.raises(GuestError) as caught:
            await SetupRunner(guest, options).run(steps)
    text = str(caught.value)
    assert "config[1] (type 'chrome_open_tabs')" in text
    assert "no browser DevTools endpoint" in text and "127.0.0.1:1" in text
