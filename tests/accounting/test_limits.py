"""Budgets and loop guards end a run cleanly: its own status, its end state scored, not rerun on resume.

The looping model is the local OpenAI-compatible server answering the same click again and again; the
env's screen never changes, as when a click lands on nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent import make_agent
from osw_studio.agent.base import Prediction
from osw_studio.core.actions import Action
from osw_studio.core.observation import Observation
from osw_studio.core.price import Price
from osw_studio.core.step import Usage
from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.runner.batch import Batch
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.plan import plan_recipe
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.slot import EnvSlot, SlotConfig
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from osw_studio.tasks.load import load_tasks
from tests.accounting.test_retry_errors import suite
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.recorded_run import ScreenEnv
from tests.runner.scripted import ScriptedAgent

CLICK = "Click the button.\n```python\npyautogui.click(960, 540)\n```"


class StillEnv(ScreenEnv):
    """A screen that never changes, whatever the agent does."""

    async def execute(self, actions: Sequence[Action]) -> None:
        self.executed += actions


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(models=["looper"]) as fake:
        yield fake


class Scored:
    """An evaluator that counts its calls: a run a limit ended is still scored."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, env: Env, task: Task, actions: Sequence[Action]) -> float:
        self.calls += 1
        return 0.0


async def looping_run(
    server: FakeOpenAIServer,
    tmp_path: Path,
    profile: dict[str, Any],
    replies: Sequence[str | Reply],
    env: Env | None = None,
    **config: Any,
) -> tuple[Any, Scored, Episode]:
    """Run a model agent whose replies are ``replies`` (text: 1100 tokens each) on a still screen."""
    server.queue(*[Reply(text=r, usage=(1000, 100)) if isinstance(r, str) else r for r in replies])
    settings = Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": "looper", "max_retries": 0},
            "evaluation": {"max_steps": 12},
            "profiles": {"p": profile},
            "active_profile": "p",
        }
    )
    recipe = plan_recipe(settings, api_key="sk-test-loop-0001")
    assert recipe.profile is not None
    agent = make_agent(recipe.profile, api_key="sk-test-loop-0001")
    task = Task.model_validate(
        {"id": "loop", "instruction": "Press it.", "evaluator": {"func": "exact_match"}}
    )
    store = RunStoreWriter.create(tmp_path, task, domain="os", model="looper")
    recipe.config.settle = SettlePolicy.off()
    for name, value in config.items():
        setattr(recipe.config, name, value)
    scored = Scored()
    episode = Episode(
        task, agent, env or StillEnv(), config=recipe.config, store=store, evaluate=scored, domain="os"
    )
    try:
        result = await asyncio.wait_for(episode.run(), 30)
    finally:
        await agent.aclose()
    return result, scored, episode


async def test_a_run_past_its_token_budget_ends_budget_and_is_scored(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # 1100 tokens a step: 2200 after step 2, 3300 after step 3, past the 2500 of the budget
    profile = {"budget": {"tokens": 2500}, "loop_repeats": 0, "loop_still_steps": 0}
    result, scored, episode = await looping_run(server, tmp_path, profile, [CLICK] * 12)
    assert (result.status, result.kind, result.steps) == ("budget", "budget", 3)
    assert result.limit == "token budget of 2500 used up (3300 tokens)"
    assert scored.calls == 1 and result.score == 0.0
    assert len(server.chat_requests) == 3  # no model call after the budget ran out
    stored = json.loads((episode.run_dir / "result.json").read_text())  # type: ignore[operator]
    assert (stored["status"], stored["kind"], stored["usage"]["total_tokens"]) == ("budget", "budget", 3300)


async def test_the_same_click_on_an_unchanged_screen_ends_the_run_stuck(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    result, scored, _ = await looping_run(server, tmp_path, {"loop_repeats": 3}, [CLICK] * 12)
    assert (result.status, result.kind, result.steps) == ("stuck", "stuck", 3)
    assert result.limit == "loop guard: the same actions ran 3 times on an unchanged screen"
    assert scored.calls == 1
    assert len(server.chat_requests) == 3


async def test_steps_without_a_change_on_the_screen_end_the_run_stuck(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    clicks = [f"```python\npyautogui.click({100 + 10 * i}, 540)\n```" for i in range(12)]  # all different
    result, _, _ = await looping_run(server, tmp_path, {"loop_repeats": 0, "loop_still_steps": 4}, clicks)
    assert (result.status, result.steps) == ("stuck", 4)
    assert result.limit == "loop guard: the screen did not change in 4 steps in a row"


async def test_the_loop_guard_switched_off_lets_the_run_use_its_steps(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    profile = {"loop_repeats": 0, "loop_still_steps": 0}
    result, _, _ = await looping_run(server, tmp_path, profile, [CLICK] * 12, max_steps=6)
    assert (result.status, result.kind, result.steps) == ("failed", "step_limit", 6)


async def test_an_attended_stuck_run_is_held_for_the_person(server: FakeOpenAIServer, tmp_path: Path) -> None:
    asks: list[str] = []
    loop = asyncio.get_running_loop()

    def on_help(text: str) -> None:
        asks.append(text)
        loop.call_soon(episode_ref[0].stop)  # the person looks, then stops the run

    episode_ref: list[Episode] = []
    original = Episode.__init__

    def capture(self: Episode, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        episode_ref.append(self)
        self.help_requested.connect(on_help)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Episode, "__init__", capture)
        result, scored, episode = await looping_run(
            server, tmp_path, {"loop_repeats": 3}, [CLICK] * 12, attended=True
        )
    assert asks == ["The run looks stuck: the same actions ran 3 times on an unchanged screen."]
    assert episode.paused or result.status == "stopped"
    assert (result.status, result.steps, scored.calls) == ("stopped", 3, 0)


class PricedAgent(ScriptedAgent):
    """A scripted agent whose every reply used 1000 prompt and 100 completion tokens."""

    async def predict(self, instruction: str, observation: Observation, **kwargs: Any) -> Prediction:
        prediction = await super().predict(instruction, observation, **kwargs)
        prediction.usage = Usage(prompt_tokens=1000, completion_tokens=100, total_tokens=1100)
        return prediction


def slot_config(**episode: Any) -> SlotConfig:
    # $1 per million input and output tokens: each step costs $0.0011
    price = Price(input=1.0, output=1.0)
    config = EpisodeConfig(max_steps=4, settle=SettlePolicy.off(), price=price, **episode)
    return SlotConfig(episode=config, task_timeout=60.0)


async def test_a_suite_cost_budget_starts_no_more_tasks(tmp_path: Path) -> None:
    entries = suite(tmp_path, 4)
    # each task: a click and FAIL, two priced steps, $0.0022; the budget is reached after the second task
    slot = EnvSlot(
        "env-1",
        lambda: _env(),
        lambda entry: PricedAgent(["```python\npyautogui.click(5, 5)\n```", "FAIL"]),
        tmp_path / "out" / "runs",
        slot_config(),
    )
    batch = Batch(entries, tmp_path / "out", [slot], cost_budget=0.004)
    summary = await batch.run()
    assert [t.task_id for t in summary.tasks] == ["task-0", "task-1"]
    assert summary.budget_note == "suite cost budget of 0.004 used up (0.0044)"
    assert [t.cost for t in summary.tasks] == pytest.approx([0.0022, 0.0022])


async def _env() -> Env:
    return ScreenEnv()


async def test_a_resumed_suite_does_not_rerun_a_budget_run_unless_asked(tmp_path: Path) -> None:
    from osw_studio.core.budget import RunBudget

    entries = suite(tmp_path, 1)
    out = tmp_path / "out"
    clicks = ["```python\npyautogui.click(5, 5)\n```"] * 4

    def make_slot() -> EnvSlot:
        config = slot_config(budget=RunBudget(tokens=2000))
        return EnvSlot("env-1", _env, lambda entry: PricedAgent(clicks), out / "runs", config)

    first = await Batch(entries, out, [make_slot()]).run()
    assert (first.tasks[0].status, first.tasks[0].kind) == ("budget", "budget")
    assert first.tasks[0].score is not None  # scored, as OSWorld scores a run that ends

    again = Batch(load_tasks([tmp_path / "suite"]).entries, out, [make_slot()], resume=True)
    assert again.pending() == []
    asked = Batch(entries, out, [make_slot()], resume=True, rerun_budget=True)
    assert [e.task.id for e in asked.pending()] == ["task-0"]


async def test_a_wall_time_budget_cuts_a_model_call_short_and_the_run_is_scored(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    replies = [Reply(text=CLICK, usage=(10, 10)), Reply(text=CLICK, delay=20.0)]
    loop = asyncio.get_running_loop()
    started = loop.time()
    result, scored, _ = await looping_run(
        server, tmp_path, {"budget": {"seconds": 1.5}}, replies, ScreenEnv()
    )
    assert loop.time() - started < 8  # not the 20 s the model would have taken
    assert (result.status, result.kind, result.steps, scored.calls) == ("budget", "budget", 1, 1)
    assert result.limit == "wall-time budget of 1.5 s used up during a model call"
