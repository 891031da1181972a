"""Why a run ended: each way an episode can end gets its one outcome kind, in result.json and summary.json."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from osw_studio.core.actions import Action
from osw_studio.core.errors import EvaluationError, GuestError, ModelError
from osw_studio.core.observation import Observation
from osw_studio.core.outcome import OutcomeKind
from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.store import RunStoreWriter
from osw_studio.runner.summary import TaskOutcome, compute_stats, load_outcomes
from osw_studio.tasks.assets import AssetMissing
from tests.fakes.recorded_run import ScreenEnv
from tests.runner.scripted import ScriptedAgent

CLICK = "```python\npyautogui.click(500, 340)\n```"


def task(func: str = "exact_match") -> Task:
    return Task.model_validate({"id": "t1", "instruction": "Do it.", "evaluator": {"func": func}})


def scored(score: float) -> Any:
    async def evaluate(env: Env, task: Task, actions: Sequence[Action]) -> float:
        return score

    return evaluate


class BrokenEnv(ScreenEnv):
    """A ScreenEnv whose guest fails: at reset, or at the n-th execute."""

    def __init__(self, *, reset_error: Exception | None = None, execute_fails_at: int | None = None) -> None:
        super().__init__()
        self.reset_error = reset_error
        self.execute_fails_at = execute_fails_at
        self.executes = 0

    async def reset(self, task: Task | None = None, *, task_dir: Path | None = None) -> Observation:
        if self.reset_error is not None:
            raise self.reset_error
        return await super().reset(task, task_dir=task_dir)

    async def execute(self, actions: Sequence[Action]) -> None:
        self.executes += 1
        if self.executes == self.execute_fails_at:
            raise GuestError("the guest server does not answer", where="http://127.0.0.1:1/execute")
        await super().execute(actions)


class ModelDown(ScriptedAgent):
    async def predict(self, instruction: str, observation: Observation, **kwargs: Any) -> Any:
        raise ModelError("the endpoint answered 503 after 3 retries", where="http://127.0.0.1:1/v1")


async def run(
    tmp_path: Path,
    replies: list[str],
    *,
    env: Env | None = None,
    agent: ScriptedAgent | None = None,
    func: str = "exact_match",
    score: float = 0.0,
    evaluate: Any = None,
    max_steps: int = 3,
) -> tuple[Any, dict[str, Any]]:
    the_task = task(func)
    store = RunStoreWriter.create(tmp_path, the_task, domain="os", model="scripted")
    episode = Episode(
        the_task,
        agent or ScriptedAgent(replies),
        env or ScreenEnv(),
        config=EpisodeConfig(max_steps=max_steps, settle=SettlePolicy.off()),
        store=store,
        evaluate=evaluate or scored(score),
        domain="os",
    )
    result = await episode.run()
    return result, json.loads((store.path / "result.json").read_text())


@pytest.mark.parametrize(
    ("replies", "func", "score", "kind", "status"),
    [
        (["DONE"], "exact_match", 1.0, "solved", "finished"),
        (["DONE"], "exact_match", 0.0, "failed", "failed"),
        (["FAIL"], "infeasible", 1.0, "infeasible", "finished"),
        ([CLICK, CLICK, CLICK], "exact_match", 0.0, "step_limit", "failed"),
        ([CLICK, CLICK, CLICK], "exact_match", 1.0, "solved", "finished"),
    ],
)
async def test_an_ended_episode_records_its_kind(
    tmp_path: Path, replies: list[str], func: str, score: float, kind: str, status: str
) -> None:
    result, stored = await run(tmp_path, replies, func=func, score=score)
    assert (result.kind, result.status) == (kind, status)
    assert stored["kind"] == kind


async def test_errors_get_the_kind_of_whatever_failed(tmp_path: Path) -> None:
    lost = BrokenEnv(execute_fails_at=2)
    result, stored = await run(tmp_path / "guest", [CLICK, CLICK], env=lost)
    assert (result.status, stored["kind"]) == ("error", "env_error")
    assert "step 2" in result.error

    result, stored = await run(tmp_path / "model", [], agent=ModelDown([]))
    assert (result.status, stored["kind"]) == ("error", "model_error")

    missing = BrokenEnv(reset_error=AssetMissing("not in the asset cache", where="https://example.org/a"))
    result, stored = await run(tmp_path / "asset", [], env=missing)
    assert stored["kind"] == "asset_missing"

    setup = BrokenEnv(reset_error=GuestError("setup step 1 (launch) failed"))
    result, stored = await run(tmp_path / "setup", [], env=setup)
    assert stored["kind"] == "env_error"

    async def broken(env: Env, task: Task, actions: Sequence[Action]) -> float:
        raise EvaluationError("unknown metric 'nope'")

    result, stored = await run(tmp_path / "eval", ["DONE"], evaluate=broken)
    assert (result.status, stored["kind"]) == ("error", "evaluator_error")


async def test_a_stopped_episode_is_stopped(tmp_path: Path) -> None:
    agent = ScriptedAgent([CLICK])
    the_task = task()
    episode = Episode(the_task, agent, ScreenEnv(), config=EpisodeConfig(settle=SettlePolicy.off()))
    episode.step_finished.connect(lambda _step: episode.stop())
    result = await episode.run()
    assert (result.status, result.kind) == ("stopped", OutcomeKind.STOPPED)


def test_the_two_rates_and_the_counts_per_kind(tmp_path: Path) -> None:
    """OSWorld's rate counts every started task (errors as 0); the valid-run rate leaves errors out."""
    rows = [
        TaskOutcome(task_id="a", domain="os", score=1.0, success=True, kind=OutcomeKind.SOLVED),
        TaskOutcome(task_id="b", domain="os", score=0.5, status="failed", kind=OutcomeKind.FAILED),
        TaskOutcome(task_id="c", domain="os", score=0.0, status="failed", kind=OutcomeKind.STEP_LIMIT),
        TaskOutcome(task_id="d", domain="os", status="error", kind=OutcomeKind.ENV_ERROR),
        TaskOutcome(task_id="e", domain="gimp", status="error", kind=OutcomeKind.MODEL_ERROR),
        TaskOutcome(task_id="f", domain="gimp", score=1.0, success=True, kind=OutcomeKind.INFEASIBLE),
        # written before kinds: read from the status and the batch's timeout wording
        TaskOutcome(
            task_id="g", domain="gimp", status="error", error="timed out after 9 s (the task timeout)"
        ),
    ]
    stats = compute_stats(rows, "m")
    total = stats.total
    assert (total.tasks, total.valid) == (7, 4)
    assert total.rate == pytest.approx(100 * 2.5 / 7)  # errors count as 0
    assert total.valid_rate == pytest.approx(100 * 2.5 / 4)
    assert total.kinds == {
        "solved": 1,
        "failed": 1,
        "step_limit": 1,
        "env_error": 1,
        "model_error": 1,
        "infeasible": 1,
        "timeout": 1,
    }
    os_row = next(r for r in stats.domains if r.name == "os")
    assert (os_row.tasks, os_row.valid, os_row.valid_rate) == (4, 3, 50.0)


def test_summary_json_carries_the_kind(tmp_path: Path) -> None:
    from osw_studio.runner.summary import BatchSummary, write_summary

    summary = BatchSummary(
        model="m", tasks=[TaskOutcome(task_id="a", domain="os", status="error", kind=OutcomeKind.ENV_ERROR)]
    )
    write_summary(tmp_path, summary)
    assert json.loads((tmp_path / "summary.json").read_text())["tasks"][0]["kind"] == "env_error"
    _, outcomes = load_outcomes(tmp_path)
    assert outcomes[0].outcome is OutcomeKind.ENV_ERROR
