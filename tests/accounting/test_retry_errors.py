"""``--retry-errors``: a task that ended in an environment or model error runs again; each attempt is kept."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.base import Agent, Prediction
from osw_studio.core.observation import Observation
from osw_studio.envs.base import Env
from osw_studio.runner.batch import Batch
from osw_studio.runner.episode import EpisodeConfig
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.slot import EnvMaker, EnvSlot, SlotConfig
from osw_studio.runner.summary import read_summary
from osw_studio.tasks.load import TaskEntry, load_tasks
from osw_studio.trajectory.store import RunStore, iter_runs
from tests.accounting.test_outcomes import CLICK, BrokenEnv
from tests.fakes.recorded_run import ScreenEnv
from tests.runner.scripted import ScriptedAgent


def suite(root: Path, count: int = 2) -> list[TaskEntry]:
    """``count`` infeasible tasks: the agent clicks once, then says FAIL, which scores 1."""
    folder = root / "suite" / "os"
    folder.mkdir(parents=True)
    for i in range(count):
        task = {"id": f"task-{i}", "instruction": "Is it possible?", "evaluator": {"func": "infeasible"}}
        (folder / f"task-{i}.json").write_text(json.dumps(task))
    return load_tasks([root / "suite"]).entries


def config() -> SlotConfig:
    return SlotConfig(episode=EpisodeConfig(max_steps=4, settle=SettlePolicy.off()), task_timeout=60.0)


def attempts(out: Path) -> dict[str, list[str | None]]:
    """Per task, the kinds of its runs in ``out/runs``, oldest first."""
    found: dict[str, list[str | None]] = {}
    for store in sorted(iter_runs([out / "runs"]), key=lambda s: (s.meta.started_at, s.run_id)):
        assert store.result is not None
        found.setdefault(store.meta.task_id, []).append(getattr(store.result, "kind", None))
    return found


@pytest.mark.parametrize("retries", [0, 1])
async def test_a_lost_guest_is_run_again_with_retry_errors(tmp_path: Path, retries: int) -> None:
    entries = suite(tmp_path)
    made: list[Env] = []

    async def envs() -> Env:
        # the first env's guest is lost at its first action; every later env works
        env: Env = BrokenEnv(execute_fails_at=1) if not made else ScreenEnv()
        made.append(env)
        return env

    slot = EnvSlot(
        "env-1", envs, lambda entry: ScriptedAgent([CLICK, "FAIL"]), tmp_path / "out" / "runs", config()
    )
    batch = Batch(entries, tmp_path / "out", [slot], retry_errors=retries)
    summary = await batch.run()

    first = next(t for t in summary.tasks if t.task_id == "task-0")
    runs = attempts(tmp_path / "out")
    if retries:
        assert (first.kind, first.score, first.attempts) == ("infeasible", 1.0, 2)
        assert runs["task-0"] == ["env_error", "infeasible"]  # the failed attempt stays in the store
    else:
        assert (first.kind, first.status, first.attempts) == ("env_error", "error", 1)
        assert runs["task-0"] == ["env_error"]
    assert runs["task-1"] == ["infeasible"]
    stored = read_summary(tmp_path / "out")
    assert stored is not None and stored.tasks[0].kind == first.kind


class KillsItsGuest(Agent):
    """On its first step, kills the guest server of the env it acts on (a process this test started)."""

    name = kind = "killer"
    model_name = "scripted"

    def __init__(self, slot: EnvSlot, kill: bool) -> None:
        super().__init__()
        self.slot, self.kill, self.calls = slot, kill, 0

    async def predict(self, instruction: str, observation: Observation, **_: Any) -> Prediction:
        from osw_studio.actions import parse_reply

        self.calls += 1
        if self.kill and self.calls == 1:
            env: Any = self.slot.env
            env.session.processes["guest"].send_signal(signal.SIGKILL)
        thought, actions = parse_reply(CLICK if self.calls == 1 else "FAIL", "pyautogui")
        return Prediction(response="", thought=thought, actions=actions, coordinate_mode="abs")


@pytest.mark.xvfb
@pytest.mark.timeout(120)
async def test_a_guest_killed_mid_run_is_an_env_error_retried_on_a_fresh_desktop(tmp_path: Path) -> None:
    entries = suite(tmp_path, 1)
    agents: list[KillsItsGuest] = []

    def make(entry: TaskEntry) -> Agent:
        agents.append(KillsItsGuest(slot, kill=not agents))
        return agents[-1]

    slot = EnvSlot("env-1", EnvMaker("local"), make, tmp_path / "out" / "runs", config())
    summary = await Batch(entries, tmp_path / "out", [slot], retry_errors=1).run()

    runs = sorted(iter_runs([tmp_path / "out" / "runs"]), key=lambda s: (s.meta.started_at, s.run_id))
    killed: RunStore = runs[0]
    assert killed.result is not None and killed.result.status == "error"
    assert getattr(killed.result, "kind", None) == "env_error", killed.result.error
    assert [getattr(r.result, "kind", None) for r in runs] == ["env_error", "infeasible"]
    (outcome,) = summary.tasks
    assert (outcome.kind, outcome.attempts, outcome.score) == ("infeasible", 2, 1.0)
    assert slot.recycled["error"] >= 1  # the killed desktop was not used again
