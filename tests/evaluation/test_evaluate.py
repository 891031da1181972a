"""OSWorld's evaluate() semantics: infeasible, FAIL, single func, and/or lists, missing files, errors.

These use an in-process stand-in for the guest (files in a dict, commands answered from a dict): only
the combination logic is under test here; the getters are tested against the real guest server.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from osw_studio.core.actions import Action, Done, Fail
from osw_studio.core.errors import EvaluationError, TaskError
from osw_studio.core.observation import Observation
from osw_studio.core.task import SetupStep, Task
from osw_studio.envs.base import Env
from osw_studio.envs.guest_client import CommandResult
from osw_studio.evaluation.evaluate import evaluate


class StandInGuest:
    def __init__(self, files: dict[str, bytes], outputs: dict[str, str]) -> None:
        self.files, self.outputs = files, outputs

    async def get_file(self, path: str) -> bytes | None:
        return self.files.get(path)

    async def execute(self, command: str | list[str], *, shell: bool = False) -> CommandResult:
        key = command if isinstance(command, str) else " ".join(command)
        return CommandResult(output=self.outputs.get(key, ""))


class StandInEnv(Env):
    def __init__(self, files: dict[str, bytes] | None = None, outputs: dict[str, str] | None = None) -> None:
        self._guest = StandInGuest(files or {}, outputs or {})

    @property
    def guest(self) -> Any:
        return self._guest

    @property
    def screen_size(self) -> tuple[int, int]:
        return (1920, 1080)

    async def reset(self, task: Task | None = None, *, task_dir: Path | None = None) -> Observation:
        raise NotImplementedError

    async def observe(self, *, accessibility_tree: bool = False) -> Observation:
        raise NotImplementedError

    async def execute(self, actions: Sequence[Action]) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None


def task(evaluator: dict[str, Any]) -> Task:
    return Task.model_validate({"id": "t1", "instruction": "do it", "evaluator": evaluator})


def cmd(command: str, expected: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"type": "vm_command_line", "command": command}, {"type": "rule", "rules": {"expected": expected}}


ENV = StandInEnv(outputs={"echo yes": "yes", "echo no": "no"})


async def test_infeasible_scores_1_only_when_the_last_action_is_fail() -> None:
    t = task({"func": "infeasible"})
    assert (await evaluate(ENV, t, [Done(), Fail()])).score == 1.0
    assert (await evaluate(ENV, t, [Fail(), Done()])).score == 0.0
    assert (await evaluate(ENV, t, [])).score == 0.0


async def test_a_final_fail_on_a_feasible_task_scores_0() -> None:
    result, expected = cmd("echo yes", "yes")
    t = task({"func": "exact_match", "result": result, "expected": expected})
    assert (await evaluate(ENV, t, [Done()])).score == 1.0
    failed = await evaluate(ENV, t, [Fail()])
    assert failed.score == 0.0
    assert "FAIL" in failed.reason


async def test_single_func_reports_getters_and_verdict() -> None:
    result, expected = cmd("echo no", "yes")
    outcome = await evaluate(ENV, task({"func": "exact_match", "result": result, "expected": expected}), [])
    assert outcome.score == 0.0
    metric = outcome.metrics[0]
    assert metric.func == "exact_match" and metric.score == 0.0
    assert [(g.role, g.type, g.summary) for g in metric.getters] == [
        ("result", "vm_command_line", "'no'"),
        ("expected", "rule", "{'expected': 'yes'}"),
    ]


def listed(conj: str | None, *answers: str) -> Task:
    pairs = [cmd(f"echo {a}", "yes") for a in answers]
    ev: dict[str, Any] = {
        "func": ["exact_match"] * len(answers),
        "result": [p[0] for p in pairs],
        "expected": [p[1] for p in pairs],
    }
    if conj:
        ev["conj"] = conj
    return task(ev)


async def test_and_stops_at_the_first_zero_else_averages() -> None:
    first_zero = await evaluate(ENV, listed("and", "no", "yes"), [])
    assert first_zero.score == 0.0
    assert [m.score for m in first_zero.metrics] == [0.0, None]  # the second was not reached
    assert (await evaluate(ENV, listed(None, "yes", "yes"), [])).score == 1.0  # conj defaults to and


async def test_or_stops_at_the_first_one_else_takes_the_max() -> None:
    first_one = await evaluate(ENV, listed("or", "yes", "no"), [])
    assert first_one.score == 1.0 and [m.score for m in first_one.metrics] == [1.0, None]
    assert (await evaluate(ENV, listed("or", "no", "no"), [])).score == 0.0


async def test_and_averages_partial_scores(tmp_path: Path) -> None:
    env = StandInEnv(
        files={"/a.txt": b"l1\nl2\nl3\nl4\n", "/b.txt": b"l1\nl2\n"}, outputs={"echo yes": "yes"}
    )
    result, expected = cmd("echo yes", "yes")
    t = task(
        {
            "func": ["exact_match", "diff_text_file"],
            "conj": "and",
            "result": [result, {"type": "vm_file", "path": "/a.txt", "dest": "a.txt"}],
            "expected": [expected, {"type": "vm_file", "path": "/b.txt", "dest": "b.txt"}],
            "options": [None, {}],
        }
    )
    outcome = await evaluate(env, t, [], cache_dir=tmp_path)
    ratio = 2 * 2 / (4 + 2)  # difflib's ratio of the line lists
    assert outcome.score == pytest.approx((1.0 + ratio) / 2)
    assert (tmp_path / "t1" / "a.txt").read_bytes() == b"l1\nl2\nl3\nl4\n"


async def test_a_missing_result_file_scores_0() -> None:
    t = task(
        {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/nope.txt", "dest": "x.txt"},
            "expected": {"type": "vm_file", "path": "/nope2.txt", "dest": "y.txt"},
        }
    )
    outcome = await evaluate(ENV, t, [])
    assert outcome.score == 0.0
    assert "result file missing: /nope.txt" in outcome.metrics[0].reason
    assert outcome.metrics[0].getters[0].missing


async def test_unknown_func_getter_or_option_raises_naming_it() -> None:
    with pytest.raises(EvaluationError, match="unknown metric 'compare_nothing'"):
        await evaluate(ENV, task({"func": "compare_nothing"}), [])
    with pytest.raises(EvaluationError, match="unknown getter 'crystal_ball'"):
        await evaluate(ENV, task({"func": "exact_match", "result": {"type": "crystal_ball"}}), [])
    pptx = {
        "func": "compare_pptx_files",
        "result": {"type": "vm_file", "path": "/a", "dest": "a"},
        "expected": {"type": "vm_file", "path": "/b", "dest": "b"},
        "options": {"examine_sparkles": False},
    }
    with pytest.raises(EvaluationError, match="compare_pptx_files:examine_sparkles"):
        await evaluate(ENV, task(pptx), [])


async def test_a_crashing_metric_raises_instead_of_inventing_a_score() -> None:
    result, _ = cmd("echo yes", "yes")
    t = task({"func": "exact_match", "result": result, "expected": {"type": "rule", "rules": {}}})
    with pytest.raises(EvaluationError, match="metric 'exact_match' failed: KeyError"):
        await evaluate(ENV, t, [])


async def test_postconfig_runs_before_the_getters() -> None:
    ran: list[str] = []

    async def run_steps(steps: Sequence[SetupStep]) -> None:
        ran.extend(s.type for s in steps)
        ENV.guest.outputs["echo later"] = "yes"

    result, expected = cmd("echo later", "yes")
    t = task(
        {
            "func": "exact_match",
            "result": result,
            "expected": expected,
            "postconfig": [{"type": "sleep", "parameters": {"seconds": 0}}],
        }
    )
    assert (await evaluate(ENV, t, [], run_steps=run_steps)).score == 1.0
    assert ran == ["sleep"]


class ResetEnv(StandInEnv):
    """A stand-in env that was reset with a task from ``folder``."""

    def __init__(self, folder: Path, files: dict[str, bytes]) -> None:
        super().__init__(files=files)
        self.folder = folder

    @property
    def task_dir(self) -> Path | None:
        return self.folder


async def test_relative_expected_files_resolve_in_the_folder_the_env_was_reset_with(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "expected.txt").write_text("hello\n")
    env = ResetEnv(tmp_path, {"/home/user/out.txt": b"hello\n"})
    t = task(
        {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/home/user/out.txt", "dest": "out.txt"},
            "expected": {"type": "cloud_file", "path": "assets/expected.txt", "dest": "expected.txt"},
        }
    )
    assert (await evaluate(env, t, [Done()])).score == 1.0
    with pytest.raises(TaskError, match="relative to the task's folder, which is not known here"):
        await evaluate(StandInEnv(files=env.guest.files), t, [Done()])
