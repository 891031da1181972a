"""``osw-studio run`` as a user runs it: a subprocess on a fresh local sandbox, with no API key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osw_studio.trajectory.store import RunStore
from tests.fakes.machine import fresh_env
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.runner.conftest import ROOT, TASKS

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(180)]

HELLO = TASKS / "os" / "write-hello-file.json"


def osw(
    *args: str, home: Path, stdin: str | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osw_studio", *args],
        cwd=ROOT,
        env=fresh_env(home, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def only_run(out: Path) -> RunStore:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return RunStore(runs[0])


def test_replay_runs_a_bundled_task_with_no_key(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = osw("run", str(HELLO), "--agent", "replay", "--out", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("task write-hello-file (os): Use the open terminal")
    assert any(line.startswith("step  1  agent/auto  click(500, 340)") for line in lines)
    assert any(
        line.startswith("step  2  agent/auto  typing('echo hello > ~/Desktop/hello.txt\\n')")
        for line in lines
    )
    assert lines[-1].startswith("score 1.00 (finished) after 3 steps; run stored in ")
    assert lines[-2] == "outcome solved; 0 tokens, cost unknown"  # replay asks no model
    run = only_run(out)
    assert run.status == "finished" and run.result is not None and run.result.score == 1.0
    assert run.meta.agent == "replay" and run.meta.provider == "local"
    assert [s.index for s in run.iter_steps()] == [1, 2, 3]
    assert proc.stderr == ""


def test_approve_asks_on_the_terminal_and_records_the_edit(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    edit = json.dumps([{"kind": "typing", "text": "echo hello > ~/Desktop/hello.txt\n"}])
    answers = f"\ne\n{edit}\ny\n"
    proc = osw(
        "run", str(HELLO), "--agent", "replay", "--approve", "--out", str(out), home=tmp_path, stdin=answers
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("run it? [Enter] yes, s skip, e edit, q stop:") == 3
    run = only_run(out)
    assert [(s.index, s.verdict) for s in run.iter_steps()] == [
        (1, "approved"),
        (2, "edited"),
        (3, "approved"),
    ]


def test_unsolved_task_exits_1_and_a_bad_task_exits_2(tmp_path: Path) -> None:
    task = json.loads(HELLO.read_text())
    task["solution"] = [{"actions": [{"kind": "done"}]}]
    lazy = tmp_path / "os" / "lazy.json"
    lazy.parent.mkdir()
    lazy.write_text(json.dumps(task))
    proc = osw("run", str(lazy), "--agent", "replay", "--out", str(tmp_path / "runs"), home=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("score 0.00 (failed) after 1 steps")

    proc = osw("run", str(tmp_path / "missing.json"), "--agent", "replay", home=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_kill_9_mid_episode_keeps_every_completed_step(tmp_path: Path) -> None:
    """The runner dies hard while the model thinks about step 3: steps 1 and 2 read back, run interrupted."""
    with FakeOpenAIServer() as server:
        server.queue(Reply(text="```python\npyautogui.click(500, 340)\n```"))
        server.queue(Reply(text="```python\npyautogui.write('echo hello\\n')\n```"))
        server.queue(Reply(text="DONE", delay=60))
        config = tmp_path / "settings.json"
        config.write_text(
            json.dumps({"model_provider": {"base_url": server.base_url, "model": "test-model"}})
        )
        out = tmp_path / "runs"
        env = fresh_env(tmp_path, OSW_STUDIO_API_KEY="sk-test")
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "osw_studio",
                "--config",
                str(config),
                "run",
                str(HELLO),
                "--agent",
                "osworld",
                "--out",
                str(out),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 90
            while len([r for r in server.requests if r.path.endswith("/chat/completions")]) < 3:
                assert child.poll() is None, "the run ended before step 3"
                assert time.monotonic() < deadline, "step 3 never started"
                time.sleep(0.05)
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(10)
    run = only_run(out)
    assert run.status == "interrupted" and run.interrupted and run.result is None
    steps = list(run.iter_steps())
    assert [s.index for s in steps] == [1, 2]
    assert not run.torn
    for step in steps:
        screen = run.screenshot_path(step)
        assert screen is not None and screen.read_bytes().startswith(b"\x89PNG")
    assert run.meta.model == "test-model"


def test_an_instruction_runs_without_a_task_file(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.queue(Reply(text="```python\npyautogui.click(500, 340)\n```"))
        server.queue(Reply(text="DONE"))
        config = tmp_path / "settings.json"
        config.write_text(
            json.dumps(
                {"model_provider": {"base_url": server.base_url, "model": "test-model", "max_retries": 0}}
            )
        )
        out = tmp_path / "runs"
        proc = osw(
            "--config",
            str(config),
            "run",
            "--instruction",
            "Click the terminal.",
            "--agent",
            "osworld",
            "--out",
            str(out),
            home=tmp_path,
            OSW_STUDIO_API_KEY="sk-test",
        )
        assert proc.returncode == 0, proc.stderr
        prompt = json.dumps(server.requests[0].json)
        assert "Click the terminal." in prompt
    assert (
        proc.stdout.splitlines()[0].startswith("task instruction-") and "Click the terminal." in proc.stdout
    )
    run = only_run(out)
    assert run.meta.domain == "instructions" and run.meta.instruction == "Click the terminal."
    assert run.result is not None and run.result.score == 1.0 and run.result.steps == 2

    proc = osw("run", "--agent", "replay", home=tmp_path)  # neither a task nor an instruction
    assert proc.returncode == 2 and "give a task file or --instruction TEXT" in proc.stderr
