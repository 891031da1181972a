"""Ctrl+C stops a real CLI process in any phase, within a bound, keeping what was recorded.

The guest is a scripted OSWorld-style server on 127.0.0.1 whose answer to one request never comes: the
evaluation's getter, or the step's action. Before, one Ctrl+C during the evaluation waited for its
600 s timeout (``run`` and ``eval run``), and one during an action for the execute timeout (120 s).
Now the evaluation is abandoned at once and an action in flight gets
:data:`~osw_studio.core.limits.STOP_GRACE_S`. Each process gets SIGINT by its PID and is killed (by
its PID) if it outlives the bound.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from osw_studio.core.limits import STOP_GRACE_S
from tests.envs.fake_guest import FakeGuest, Reply, Request, json_reply, osworld_guest
from tests.fakes.machine import fresh_env
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.openai_server import Reply as ModelReply

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tasks" / "os" / "write-hello-file.json"
OK = {"status": "success", "output": "", "error": "", "returncode": 0}
BOUND_S = STOP_GRACE_S + 10.0  # the stop, the result written, the env closed, on a loaded machine
"""Seconds from the SIGINT to the end of the process."""


class HangingGuest:
    """An OSWorld-style guest whose ``/execute`` never answers a command containing ``marker``."""

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.hung = threading.Event()
        self.release = threading.Event()
        self.fake: FakeGuest = osworld_guest((1280, 800))
        buffer = io.BytesIO()
        Image.new("RGB", (1280, 800), "navy").save(buffer, "PNG")
        png = buffer.getvalue()
        self.fake.route("GET", "/screenshot", lambda r: (200, "image/png", png))
        self.fake.route("POST", "/execute", self._execute)

    def _execute(self, request: Request) -> Reply:
        if self.marker in request.body:
            self.hung.set()
            self.release.wait(60)  # far past the bound; released when the test ends
        return json_reply(OK)


@pytest.fixture
def guest_for(request: pytest.FixtureRequest) -> Iterator[tuple[HangingGuest, str]]:
    guest = HangingGuest(request.param)
    url = guest.fake.start()
    try:
        yield guest, url
    finally:
        guest.release.set()
        guest.fake.stop()


def _command(kind: str, tmp_path: Path, url: str) -> list[str]:
    config = tmp_path / "settings.json"
    config.write_text("{}", encoding="utf-8")
    common = ["--agent", "replay", "--out", str(tmp_path / "out"), "--provider", "remote", url]
    if kind == "run":
        return ["--config", str(config), "run", str(HELLO), *common]
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "os").symlink_to(HELLO.parent)
    (suite / "one.json").write_text(json.dumps({"os": ["write-hello-file"]}), encoding="utf-8")
    return ["--config", str(config), "eval", "run", str(suite / "one.json"), *common]


def _start(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """The CLI running ``command`` in a process of its own, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "osw_studio", *command],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_until_hung(guest: HangingGuest) -> None:
    assert guest.hung.wait(40), "the guest was never asked the hanging request"
    time.sleep(0.3)  # the process is now waiting on the answer


def _interrupt_when_hung(guest: HangingGuest, command: list[str], tmp_path: Path) -> tuple[int, str, float]:
    """Start the CLI, SIGINT it once the guest hangs; its exit code, stderr and seconds to exit."""
    proc = _start(command, fresh_env(tmp_path / "home", OSW_GUEST_TOKEN="guest-token-0c1d"))
    _wait_until_hung(guest)
    sent = time.monotonic()
    err = _interrupt(proc)
    return proc.returncode, err, time.monotonic() - sent


def _interrupt(proc: subprocess.Popen[str]) -> str:
    """SIGINT ``proc`` (by its PID) and wait for it to end within the bound; its stderr.

    A process still running then is killed, by its PID, and the test fails.
    """
    try:
        proc.send_signal(signal.SIGINT)
        try:
            return proc.communicate(timeout=BOUND_S)[1]
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"still running {BOUND_S:g} s after Ctrl+C: {proc.communicate()[1][-2000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _result(tmp_path: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    (result,) = (tmp_path / "out").rglob("result.json")
    steps = [json.loads(line) for line in (result.parent / "steps.jsonl").read_text().splitlines()]
    return json.loads(result.read_text()), steps


@pytest.mark.parametrize(("kind", "guest_for"), [("run", b"cat "), ("eval", b"cat ")], indirect=["guest_for"])
def test_ctrl_c_during_an_evaluation_that_hangs_stops_at_once(
    kind: str, guest_for: tuple[HangingGuest, str], tmp_path: Path
) -> None:
    guest, url = guest_for  # the solution's actions go through /execute too; the evaluation's `cat` hangs
    code, err, seconds = _interrupt_when_hung(guest, _command(kind, tmp_path, url), tmp_path)
    assert "Traceback" not in err, err
    assert code == 1, err  # not solved (run), stopped (eval run)
    result, steps = _result(tmp_path)
    assert result["status"] == "stopped" and result["score"] is None
    assert [s["index"] for s in steps] == [1, 2, 3]  # the agent's steps are all kept
    assert seconds < BOUND_S


@pytest.mark.parametrize("guest_for", [b"echo hello"], indirect=True)
def test_ctrl_c_during_an_action_the_guest_never_finishes_stops_after_the_grace(
    guest_for: tuple[HangingGuest, str], tmp_path: Path
) -> None:
    guest, url = guest_for
    code, err, seconds = _interrupt_when_hung(guest, _command("run", tmp_path, url), tmp_path)
    assert "Traceback" not in err, err
    assert code == 1, err
    result, steps = _result(tmp_path)
    assert result["status"] == "stopped"
    assert [s["index"] for s in steps] == [1, 2]  # the step whose action hung is kept, saying why
    assert "had not finished the execute" in str(steps[1]["error"])
    assert STOP_GRACE_S - 1 < seconds < BOUND_S


@pytest.mark.parametrize("guest_for", [b"cat "], indirect=True)
def test_run_task_timeout_stops_an_evaluation_that_hangs(
    guest_for: tuple[HangingGuest, str], tmp_path: Path
) -> None:
    guest, url = guest_for
    command = [*_command("run", tmp_path, url), "--task-timeout", "4"]
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", *command],
        cwd=ROOT,
        env=fresh_env(tmp_path / "home", OSW_GUEST_TOKEN="guest-token-0c1d"),
        capture_output=True,
        text=True,
        timeout=4 + BOUND_S + 20,  # the start of the process on a loaded machine
        check=False,
    )
    assert guest.hung.is_set() and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert "timed out after 4 s (the task timeout)" in proc.stderr
    result, steps = _result(tmp_path)
    assert result["status"] == "error" and "the task timeout" in str(result["error"])
    assert len(steps) == 3
    assert time.monotonic() - started < 4 + BOUND_S + 20


@pytest.mark.parametrize("guest_for", [b"echo hello"], indirect=True)
def test_a_second_ctrl_c_quits_at_once_keeping_the_steps(
    guest_for: tuple[HangingGuest, str], tmp_path: Path
) -> None:
    guest, url = guest_for
    proc = _start(
        _command("run", tmp_path, url), fresh_env(tmp_path / "home", OSW_GUEST_TOKEN="guest-token-0c1d")
    )
    try:
        _wait_until_hung(guest)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)  # inside the action's grace
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=STOP_GRACE_S)  # sooner than the grace would end
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err and "interrupted" in err, err
    assert proc.returncode == 130
    (steps,) = (tmp_path / "out").rglob("steps.jsonl")
    assert [json.loads(line)["index"] for line in steps.read_text().splitlines()] == [1]  # step 1 kept


def _processes_running(marker: str) -> list[int]:
    """PIDs whose command line holds ``marker`` (the sandbox's processes are visible from the host)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(entry.name))
    return found


def _hanging_setup_task(tmp_path: Path, marker: str) -> Path:
    """A folder with one task whose setup step runs ``marker`` (a long ``sleep``) in the guest."""
    folder = tmp_path / "os"
    folder.mkdir()
    task = {
        "id": "hang-setup",
        "instruction": "x",
        "config": [{"type": "execute", "parameters": {"command": marker, "shell": True}}],
        "evaluator": {"func": "infeasible"},
        "solution": [{"actions": [{"kind": "done"}]}],
    }
    (folder / "hang-setup.json").write_text(json.dumps(task))
    return folder


@pytest.mark.xvfb
def test_ctrl_c_during_tasks_check_setup_that_hangs_ends_it_and_its_guest(tmp_path: Path) -> None:
    marker = "sleep 617.25"
    folder = _hanging_setup_task(tmp_path, marker)
    proc = _start(["tasks", "check", str(folder)], fresh_env(tmp_path / "home"))
    deadline = time.monotonic() + 60
    while not _processes_running(marker) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    if not _processes_running(marker):
        proc.kill()
        pytest.fail(f"the setup step never started: {proc.communicate()}")
    err = _interrupt(proc)
    assert "Traceback" not in err, err
    assert proc.returncode == 130
    deadline = time.monotonic() + 5
    while _processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _processes_running(marker), "the guest's setup process outlived tasks check"


@pytest.mark.parametrize("guest_for", [b"\0 nothing hangs on the guest"], indirect=True)
def test_ctrl_c_during_a_model_call_that_never_answers_stops_at_once(
    guest_for: tuple[HangingGuest, str], tmp_path: Path
) -> None:
    _, url = guest_for
    with FakeOpenAIServer() as server:
        server.queue(ModelReply(text="DONE", delay=60))
        command = _command("run", tmp_path, url)  # writes an empty settings.json, replaced here
        command[command.index("replay")] = "osworld"
        (tmp_path / "settings.json").write_text(
            json.dumps({"model_provider": {"base_url": server.base_url, "model": "test-model"}})
        )
        proc = _start(
            command,
            fresh_env(tmp_path / "home", OSW_GUEST_TOKEN="guest-token-0c1d", OSW_STUDIO_API_KEY="sk-test"),
        )
        deadline = time.monotonic() + 40
        while not any(r.path.endswith("/chat/completions") for r in server.requests):
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"the model was never asked: {proc.communicate()}")
            time.sleep(0.1)
        time.sleep(0.3)
        err = _interrupt(proc)
    assert "Traceback" not in err, err
    assert proc.returncode == 1, err
    result, steps = _result(tmp_path)
    assert result["status"] == "stopped" and steps == []


@pytest.mark.xvfb
def test_tasks_check_task_timeout_fails_a_task_whose_setup_hangs(tmp_path: Path) -> None:
    marker = "sleep 618.25"
    folder = _hanging_setup_task(tmp_path, marker)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", str(folder), "--task-timeout", "15"],
        cwd=ROOT,
        env=fresh_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=15 + BOUND_S + 20,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "FAIL hang-setup" in proc.stdout and "timed out after 15 s (the task timeout)" in proc.stdout
    assert time.monotonic() - started < 15 + BOUND_S + 20
    deadline = time.monotonic() + 5
    while _processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _processes_running(marker), "the guest's setup process outlived its check"
