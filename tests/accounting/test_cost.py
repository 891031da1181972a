"""Tokens and cost per step, run, task, domain and suite, against costs worked out by hand.

The model agent talks to the local OpenAI-compatible server, which reports each reply's usage (with the
cached and reasoning token details the OpenAI API sends); prices come from the settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent import make_agent
from osw_studio.core.actions import Action
from osw_studio.core.price import Price
from osw_studio.core.step import Usage
from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.runner.accounting import format_accounting
from osw_studio.runner.episode import Episode
from osw_studio.runner.plan import plan_recipe
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.store import RunStoreWriter
from osw_studio.runner.summary import TaskOutcome, compute_stats, outcome_of
from osw_studio.settings import Settings
from osw_studio.trajectory.store import RunStore
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.recorded_run import ScreenEnv

CLICK = "Click it.\n```python\npyautogui.click(960, 540)\n```"

# Step 1: 1000 prompt tokens (400 from the cache), 100 completion (30 of them reasoning).
# Step 2: 2000 prompt tokens (none cached), 50 completion.
REPLIES = [
    Reply(text=CLICK, usage=(1000, 100), cached_tokens=400, reasoning_tokens=30),
    Reply(text="Done.\n```DONE```", usage=(2000, 50), cached_tokens=0, reasoning_tokens=0),
]
PRICE = {"input": 2.5, "cached_input": 1.25, "output": 10.0}
# by hand, per million: step 1 = 600 * 2.5 + 400 * 1.25 + 100 * 10 = 3000 -> $0.003
#                       step 2 = 2000 * 2.5 + 50 * 10 = 5500 -> $0.0055
STEP_COSTS = [0.003, 0.0055]


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(models=["priced-model"]) as fake:
        yield fake


async def one_point(env: Env, task: Task, actions: Sequence[Action]) -> float:
    return 1.0


async def run(server: FakeOpenAIServer, root: Path, settings: dict[str, Any]) -> RunStore:
    server.queue(*REPLIES)
    loaded = Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": "priced-model", "max_retries": 0},
            **settings,
        }
    )
    recipe = plan_recipe(loaded, api_key="sk-test-cost-0001")
    assert recipe.profile is not None
    agent = make_agent(recipe.profile, api_key="sk-test-cost-0001")
    task = Task.model_validate(
        {"id": "priced", "instruction": "Click.", "evaluator": {"func": "exact_match"}}
    )
    store = RunStoreWriter.create(root, task, domain="os", model="priced-model")
    config = recipe.config
    config.settle = SettlePolicy.off()
    episode = Episode(task, agent, ScreenEnv(), config=config, store=store, evaluate=one_point, domain="os")
    try:
        result = await episode.run()
    finally:
        await agent.aclose()
    assert result.status == "finished", result.error
    return RunStore(store.path)


async def test_each_step_and_the_run_cost_what_the_price_says(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    store = await run(server, tmp_path, {"prices": {"priced-model": PRICE}})
    steps = list(store.iter_steps())
    assert [s.usage for s in steps] == [
        Usage(
            prompt_tokens=1000,
            completion_tokens=100,
            total_tokens=1100,
            reasoning_tokens=30,
            cached_tokens=400,
        ),
        Usage(
            prompt_tokens=2000, completion_tokens=50, total_tokens=2050, reasoning_tokens=0, cached_tokens=0
        ),
    ]
    assert [s.cost for s in steps] == pytest.approx(STEP_COSTS)
    result = json.loads((store.path / "result.json").read_text())
    assert result["cost"] == pytest.approx(0.0085)
    assert result["usage"] == {
        "prompt_tokens": 3000,
        "completion_tokens": 150,
        "total_tokens": 3150,
        "reasoning_tokens": 30,
        "cached_tokens": 400,
    }
    meta = json.loads((store.path / "run.json").read_text())
    assert meta["cost"] == pytest.approx(0.0085) and meta["usage"]["total_tokens"] == 3150
    outcome = outcome_of(store)
    assert outcome.cost == pytest.approx(0.0085) and outcome.usage is not None


async def test_a_profile_price_overrides_the_settings_price(server: FakeOpenAIServer, tmp_path: Path) -> None:
    store = await run(
        server,
        tmp_path,
        {
            "prices": {"priced-model": PRICE},
            "profiles": {"cheap": {"price": {"input": 1.0, "cached_input": 0.5, "output": 2.0}}},
            "active_profile": "cheap",
        },
    )
    # by hand: (600 * 1 + 400 * 0.5 + 100 * 2) + (2000 * 1 + 50 * 2) = 1000 + 2100 = 3100 per million
    assert json.loads((store.path / "result.json").read_text())["cost"] == pytest.approx(0.0031)


@pytest.mark.parametrize(
    ("prices", "step_costs"),
    [
        ({}, [None, None]),  # no price for the model: unknown
        # step 1 read cached tokens, which have no price; step 2 read none
        ({"priced-model": {"input": 2.5, "output": 10.0}}, [None, 0.0055]),
    ],
)
async def test_an_unknown_price_gives_no_cost_never_a_guess(
    server: FakeOpenAIServer, tmp_path: Path, prices: dict[str, Any], step_costs: list[float | None]
) -> None:
    store = await run(server, tmp_path, {"prices": prices})
    assert [s.cost for s in store.iter_steps()] == step_costs
    result = json.loads((store.path / "result.json").read_text())
    assert result["cost"] is None and result["usage"]["total_tokens"] == 3150


def test_costs_add_up_per_domain_and_suite_and_unpriced_runs_are_counted_apart() -> None:
    def outcome(task: str, domain: str, cost: float | None, tokens: int) -> TaskOutcome:
        usage = Usage(prompt_tokens=tokens, total_tokens=tokens)
        return TaskOutcome(task_id=task, domain=domain, score=0.0, status="failed", usage=usage, cost=cost)

    stats = compute_stats(
        [outcome("a", "os", 0.25, 100), outcome("b", "os", 0.5, 200), outcome("c", "gimp", None, 50)], "m"
    )
    rows = {r.name: r for r in [*stats.domains, stats.total]}
    assert (rows["os"].cost, rows["os"].usage.total_tokens, rows["os"].unpriced) == (0.75, 300, 0)
    assert (rows["gimp"].cost, rows["gimp"].unpriced) == (0.0, 1)
    assert (rows["total"].cost, rows["total"].usage.total_tokens, rows["total"].unpriced) == (0.75, 350, 1)
    table = {line.split()[0]: line for line in format_accounting(stats).splitlines()}
    assert "0.7500+?" in table["total"] and "unknown" in table["gimp"]
    data = stats.to_json()
    assert data["total"]["cost"] == 0.75 and data["total"]["usage"]["total_tokens"] == 350


def test_price_arithmetic() -> None:
    price = Price(**PRICE)
    assert price.cost(Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400)) == 0.003
    assert price.cost(Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)) == 12.5
    assert Price(output=1.0).cost(Usage()) is None
