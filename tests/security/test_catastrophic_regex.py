"""A task's catastrophic regular expression (``(a+)+$`` on guest text) is stopped within a bound.

Python's ``re`` holds the interpreter's lock while it backtracks: before, the evaluation hung for
hours, and neither Ctrl+C nor ``--task-timeout`` could end it. Now the search runs in a worker that is
killed after :data:`~osw_studio.core.limits.REGEX_SECONDS`; the event loop stays free meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osw_studio.core import limits
from osw_studio.core.actions import Done
from osw_studio.core.errors import EvaluationError
from osw_studio.core.task import Task
from osw_studio.evaluation.evaluate import evaluate
from osw_studio.evaluation.rules import match_value_to_rule
from tests.evaluation.test_evaluate import StandInEnv
from tests.fakes.machine import fresh_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
EVIL = "(a+)+$"
TEXT = "a" * 40 + "b"


def _task() -> Task:
    return Task.model_validate(
        {
            "id": "evil-regex",
            "instruction": "x",
            "evaluator": {
                "func": "check_list",
                "result": {"type": "vm_file", "path": "/home/user/notes.txt", "dest": "notes.txt"},
                "expected": {"type": "rule", "rules": {"expect": [EVIL]}},
            },
        }
    )


async def test_an_evaluation_with_a_catastrophic_regex_ends_with_a_clear_error(tmp_path: Path) -> None:
    env = StandInEnv(files={"/home/user/notes.txt": f"{TEXT}\n".encode()})
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.1)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    started = time.monotonic()
    try:
        with pytest.raises(EvaluationError, match=r"ran longer than .* and was stopped"):
            await evaluate(env, _task(), [Done()], cache_dir=tmp_path)
    finally:
        ticker.cancel()
    took = time.monotonic() - started
    assert took < limits.REGEX_SECONDS + 5, took
    assert ticks >= (limits.REGEX_SECONDS - 1) / 0.1 * 0.5, ticks  # the loop ran all along


def test_a_rule_with_a_catastrophic_regex_is_stopped() -> None:
    started = time.monotonic()
    with pytest.raises(EvaluationError, match="backtracks catastrophically"):
        match_value_to_rule(TEXT, {"method": "re", "ref": EVIL})
    assert time.monotonic() - started < limits.REGEX_SECONDS + 3
    assert match_value_to_rule("Total: 12", {"method": "re.I", "ref": "total"})  # the next call works


@pytest.mark.xvfb
@pytest.mark.timeout(240)
def test_tasks_check_of_a_task_with_a_catastrophic_regex_ends_with_a_clear_failure(tmp_path: Path) -> None:
    data = {
        "id": "evil-regex",
        "instruction": "x",
        "config": [
            {
                "type": "execute",
                "parameters": {"command": f"printf '{TEXT}\\n' > /home/user/notes.txt", "shell": True},
            }
        ],
        "evaluator": json.loads(_task().evaluator.model_dump_json(exclude_none=True)),
    }
    folder = tmp_path / "os"
    folder.mkdir()
    (folder / "evil-regex.json").write_text(json.dumps(data))
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", str(folder)],
        cwd=ROOT,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "FAIL evil-regex" in proc.stdout and "backtracks catastrophically" in proc.stdout, proc.stdout
    assert time.monotonic() - started < 150
