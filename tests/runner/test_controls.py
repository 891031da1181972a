"""Pause, resume, step once, approve, override, skip, stop and takeover, on a real local sandbox.

Each test drives an :class:`Episode` only through its public controls and signals, as the UI does, and
then reads the run store back from disk to check exactly what was recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from osw_studio.core.actions import Typing
from osw_studio.core.errors import OswError
from osw_studio.core.step import StepRecord
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, EpisodeConfig, EpisodeState, Proposal
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.store import RunStore
from tests.runner.conftest import terminal_task
from tests.runner.scripted import HANG, ScriptedAgent

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

CLICK = "Focus the terminal.\n```python\npyautogui.click(500, 340)\n```"


def write(word: str) -> str:
    return f"```python\npyautogui.write('echo {word} > ~/out.txt\\n')\n```"


def typed(word: str) -> Typing:
    return Typing(text=f"echo {word} > ~/out.txt\n")


async def wait_until(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    """Poll ``condition`` until it holds; fail the test, saying what was awaited, after ``limit`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def start(sandbox: Env, tmp_path: Path, replies: list[str], expected: str, **config: object):
    task = terminal_task(expected)
    agent = ScriptedAgent(replies)
    store = RunStoreWriter.create(tmp_path, task, model="scripted", agent="scripted")
    episode = Episode(task, agent, sandbox, config=EpisodeConfig(**config), store=store, domain="os")  # type: ignore[arg-type]
    return episode, agent, store


def stored(store: RunStoreWriter) -> tuple[RunStore, list[StepRecord]]:
    reader = RunStore(store.path)
    return reader, list(reader.iter_steps())


def rows(steps: list[StepRecord]) -> list[tuple[int, str, str]]:
    return [(s.index, s.source, s.verdict) for s in steps]


def assert_screens(reader: RunStore, steps: list[StepRecord]) -> None:
    for step in steps:
        path = reader.screenshot_path(step)
        assert path is not None, f"step {step.index} has no screenshot"
        assert path.name == f"step_{step.index:04d}.png"
        assert path.read_bytes().startswith(b"\x89PNG")


async def test_pause_holds_between_steps_and_resume_finishes(sandbox: Env, tmp_path: Path) -> None:
    episode, agent, store = start(sandbox, tmp_path, [CLICK, write("resumed"), "DONE"], "resumed")
    episode.step_finished.connect(lambda step: episode.pause() if step.index == 1 else None)
    run = asyncio.ensure_future(episode.run())

    await wait_until(lambda: len(episode.steps) == 1 and episode.paused, "the pause after step 1")
    await asyncio.sleep(0.5)  # a runaway episode would take step 2 now
    reader, steps = stored(store)
    assert rows(steps) == [(1, "agent", "auto")]
    assert agent.calls == 1
    assert reader.status == "interrupted"  # no result yet
    assert not episode.state.is_final

    episode.resume()
    result = await asyncio.wait_for(run, 60)
    assert (result.status, result.score, result.steps) == ("finished", 1.0, 3)
    reader, steps = stored(store)
    assert rows(steps) == [(1, "agent", "auto"), (2, "agent", "auto"), (3, "agent", "auto")]
    assert steps[1].executed == [typed("resumed")]
    assert reader.status == "finished" and reader.result is not None and reader.result.score == 1.0
    assert_screens(reader, steps)


async def test_step_once_runs_exactly_one_step_then_pauses(sandbox: Env, tmp_path: Path) -> None:
    episode, agent, store = start(sandbox, tmp_path, [CLICK, write("once"), "DONE"], "once")
    paused: list[bool] = []
    episode.paused_changed.connect(paused.append)
    episode.step_finished.connect(lambda step: episode.pause() if step.index == 1 else None)
    run = asyncio.ensure_future(episode.run())

    await wait_until(lambda: len(episode.steps) == 1 and episode.paused, "the pause after step 1")
    episode.step_once()
    await wait_until(lambda: len(episode.steps) == 2 and episode.paused, "one more step, paused again")
    await asyncio.sleep(0.5)
    _, steps = stored(store)
    assert rows(steps) == [(1, "agent", "auto"), (2, "agent", "auto")]
    assert agent.calls == 2
    assert paused == [True, False, True]

    episode.resume()
    result = await asyncio.wait_for(run, 60)
    assert (result.status, result.score, result.steps) == ("finished", 1.0, 3)


async def test_approve_mode_holds_each_proposal_and_override_keeps_both(sandbox: Env, tmp_path: Path) -> None:
    episode, _, store = start(sandbox, tmp_path, [CLICK, write("model"), "DONE"], "edited", mode="approve")
    proposals: list[Proposal] = []
    episode.step_proposed.connect(proposals.append)
    run = asyncio.ensure_future(episode.run())

    await wait_until(lambda: episode.proposal is not None, "the first proposal")
    await asyncio.sleep(0.5)  # the gate must hold it
    assert episode.state == EpisodeState.GATING
    assert stored(store)[1] == []
    episode.approve()
    await wait_until(lambda: len(proposals) == 2 and episode.proposal is not None, "the second proposal")
    assert proposals[1].actions == [typed("model")]
    episode.approve([typed("edited")])
    await wait_until(lambda: len(proposals) == 3 and episode.proposal is not None, "the third proposal")
    episode.approve()
    result = await asyncio.wait_for(run, 60)

    # The score proves that the person's version ran, not the model's.
    assert (result.status, result.score) == ("finished", 1.0)
    reader, steps = stored(store)
    assert rows(steps) == [(1, "agent", "approved"), (2, "agent", "edited"), (3, "agent", "approved")]
    assert steps[1].proposed == [typed("model")]
    assert steps[1].executed == [typed("edited")]
    assert steps[1].response == write("model")
    assert_screens(reader, steps)


async def test_skip_drops_the_proposal(sandbox: Env, tmp_path: Path) -> None:
    episode, _, store = start(
        sandbox, tmp_path, [write("skipped"), write("kept"), "DONE"], "kept", mode="approve"
    )
    episode.step_proposed.connect(
        lambda p: asyncio.get_running_loop().call_soon(episode.skip if p.index == 1 else episode.approve)
    )
    result = await asyncio.wait_for(episode.run(), 60)
    assert (result.status, result.score) == ("finished", 1.0)
    _, steps = stored(store)
    assert rows(steps) == [(1, "agent", "skipped"), (2, "agent", "approved"), (3, "agent", "approved")]
    assert steps[0].proposed == [typed("skipped")]
    assert steps[0].executed == []


async def test_stop_cancels_the_model_call_in_flight(sandbox: Env, tmp_path: Path) -> None:
    episode, agent, store = start(sandbox, tmp_path, [CLICK, HANG], "never")

    def on_state(new: str, old: str) -> None:
        if new == "predicting" and episode.step_index == 1:
            asyncio.get_running_loop().call_later(0.2, episode.stop)

    episode.state_changed.connect(on_state)
    result = await asyncio.wait_for(episode.run(), 60)
    assert (result.status, result.score, result.steps, result.success) == ("stopped", None, 1, False)
    assert agent.cancelled == 1
    assert episode.state == EpisodeState.STOPPED
    reader, steps = stored(store)
    assert rows(steps) == [(1, "agent", "auto")]
    assert reader.status == "stopped"


async def test_takeover_records_human_steps_and_the_agent_goes_on(sandbox: Env, tmp_path: Path) -> None:
    episode, agent, store = start(sandbox, tmp_path, [CLICK, "DONE"], "human")
    takeover: list[bool] = []
    episode.takeover_changed.connect(takeover.append)
    episode.step_finished.connect(lambda step: episode.begin_takeover() if step.index == 1 else None)
    run = asyncio.ensure_future(episode.run())

    await wait_until(lambda: len(episode.steps) == 1 and episode.in_takeover, "the takeover")
    await asyncio.sleep(0.3)
    assert agent.calls == 1  # the agent is held
    human = await episode.human_act([typed("human")])
    assert (human.index, human.source, human.verdict, human.executed) == (
        2,
        "human",
        "human",
        [typed("human")],
    )
    episode.end_takeover()
    result = await asyncio.wait_for(run, 60)

    assert (result.status, result.score, result.steps) == ("finished", 1.0, 3)
    assert takeover == [True, False]
    reader, steps = stored(store)
    assert rows(steps) == [(1, "agent", "auto"), (2, "human", "human"), (3, "agent", "auto")]
    assert steps[1].proposed == [] and steps[1].executed == [typed("human")]
    assert_screens(reader, steps)
    # The agent saw the person's step in its history and went on from a fresh screen.
    assert [s.source for s in agent.history] == ["agent", "human", "agent"]
    assert agent.seen[1].timestamp > steps[1].started_at


async def test_human_act_outside_a_takeover_is_refused(sandbox: Env, tmp_path: Path) -> None:
    episode, _, _ = start(sandbox, tmp_path, ["DONE"], "x")
    with pytest.raises(OswError, match="only taken during a takeover"):
        await episode.human_act([typed("x")])
