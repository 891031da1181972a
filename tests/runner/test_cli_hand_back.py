"""``osw-studio run`` when the agent hands back (``call_user``): asked with --approve, else no hang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.test_cli import HELLO, only_run, osw

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(180)]


def handing_back_task(tmp_path: Path) -> Path:
    """The hello task whose solution first asks the person for help."""
    task = json.loads(HELLO.read_text(encoding="utf-8"))
    task["solution"] = [{"actions": [{"kind": "call_user", "message": "Which folder?"}]}, *task["solution"]]
    path = tmp_path / "hand-back.json"
    path.write_text(json.dumps(task), encoding="utf-8")
    return path


def test_approve_asks_the_person_then_resumes(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    # approve the hand-back, resume after helping, then approve the solution's three steps
    proc = osw(
        "run", str(handing_back_task(tmp_path)), "--agent", "replay", "--approve", "--out", str(out),
        home=tmp_path, stdin="\n\n\n\n\n",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the agent asks for your help: Which folder?" in proc.stdout
    assert "[Enter] resume when done, q stop:" in proc.stdout
    run = only_run(out)
    assert run.status == "finished" and [s.index for s in run.iter_steps()] == [1, 2, 3, 4]


def test_unattended_run_fails_at_the_hand_back_instead_of_hanging(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = osw("run", str(handing_back_task(tmp_path)), "--agent", "replay", "--out", str(out), home=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    run = only_run(out)
    assert run.status == "failed"
    steps = list(run.iter_steps())
    assert len(steps) == 1 and steps[0].executed[0].kind == "fail"
