"""``osw-studio tasks check`` tells a good task from a broken one, one line per task, on real sandboxes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def file_task(task_id: str, *, setup: str, solution: list[dict[str, Any]] | None) -> dict[str, Any]:
    """A task solved when ~/out.txt holds ``ok``."""
    task: dict[str, Any] = {
        "id": task_id,
        "instruction": "Write ok into out.txt in my home folder.",
        "config": [{"type": "execute", "parameters": {"command": setup, "shell": True}}],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": "cat ~/out.txt 2>/dev/null", "shell": True},
            "expected": {"type": "rule", "rules": {"expected": "ok\n"}},
        },
    }
    if solution is not None:
        task["solution"] = solution
    return task


def write(folder: Path, task: dict[str, Any]) -> None:
    (folder / f"{task['id']}.json").write_text(json.dumps(task))


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    done = [{"actions": [{"kind": "done"}]}]
    write(folder, file_task("does-nothing", setup="rm -f ~/out.txt", solution=done))
    write(folder, file_task("already-solved", setup="echo ok > ~/out.txt", solution=done))
    write(folder, file_task("no-solution", setup="true", solution=None))
    write(
        folder,
        {
            "id": "say-no",
            "instruction": "Make the screen 16K.",
            "evaluator": {"func": "infeasible"},
            "solution": [{"actions": [{"kind": "fail"}]}],
        },
    )
    return folder


def test_check_prints_one_line_per_task_and_exits_1_on_any_failure(suite: Path) -> None:
    done = check(str(suite), "--envs", "2")
    lines = {
        line.split()[1].rstrip(":"): line
        for line in done.stdout.splitlines()
        if line[:5] in ("PASS ", "FAIL ", "SKIP ")
    }
    assert done.returncode == 1, done.stdout + done.stderr
    assert set(lines) == {"does-nothing", "already-solved", "no-solution", "say-no"}
    assert lines["say-no"].startswith("PASS say-no solution=1.0 empty=0.0 (")
    assert lines["does-nothing"].startswith("FAIL does-nothing: the solution scored 0, not 1.0")
    assert lines["already-solved"].startswith("FAIL already-solved: doing nothing scored 1.0, not 0.0")
    # Without a solution only the untouched end state is scored: it must be 0.0.
    assert lines["no-solution"].startswith("PASS no-solution (no solution) empty=0.0 (")
    assert done.stdout.splitlines()[-1] == "2 passed, 2 failed, 0 skipped"
    assert "Traceback" not in done.stderr


def test_filter_checks_only_matching_tasks_and_exits_0_when_they_pass(suite: Path) -> None:
    done = check(str(suite), "-k", "say")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split()[:2] for line in done.stdout.splitlines()[:-2]] == [["PASS", "say-no"]]


def test_a_filter_that_matches_nothing_is_a_user_error(suite: Path) -> None:
    done = check(str(suite), "-k", "nothing-has-this-id")
    assert done.returncode == 2
    assert "no task to check" in done.stderr
    assert "Traceback" not in done.stderr


def test_running_guest_servers_are_refused_as_they_cannot_be_fresh(suite: Path) -> None:
    done = check(str(suite), "--provider", "remote", "http://127.0.0.1:9")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "tasks check needs a fresh guest for every run" in done.stderr
    assert "--provider local or --provider docker" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_docker_engine_that_is_not_there_fails_each_task_with_the_reason(
    suite: Path, tmp_path: Path
) -> None:
    socket = tmp_path / "no-docker.sock"
    done = check(str(suite), "-k", "say", "--provider", "docker", f"docker_host=unix://{socket}")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("FAIL say-no: no guest for the solution run: no Docker socket at unix://")
    assert "checked 1 tasks on the studio desktop (docker:studio)" in done.stdout
    assert lines[-1] == "0 passed, 1 failed, 0 skipped"
