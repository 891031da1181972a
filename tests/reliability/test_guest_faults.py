"""Guest faults on a real local sandbox: the server killed mid-step, a hung or slow server, a display that
dies. Each ends the episode with a clear error naming the step, in bounded time, and the store keeps every
step recorded before it.

Faults are real: the guest server's process is sent SIGKILL or SIGSTOP, Xvfb is killed. They are injected
while the agent thinks about step 2, so step 2's actions meet them.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from osw_studio.core.actions import MoveTo
from osw_studio.core.task import Task
from osw_studio.envs.guest_client import RetryPolicy
from osw_studio.envs.local import LocalEnv, LocalProvider
from osw_studio.runner.episode import Episode, EpisodeConfig, SettlePolicy
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.store import RunStore
from tests.runner.scripted import ScriptedAgent

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(90)]

MOVE = "```python\npyautogui.moveTo(100, 100)\n```"
TIMEOUT = 2.0
TASK = Task.model_validate(
    {"id": "guest-faults", "instruction": "Do nothing.", "config": [], "evaluator": {"func": "infeasible"}}
)


@pytest_asyncio.fixture
async def env() -> AsyncIterator[LocalEnv]:
    """A fresh sandbox per test (the faults break it), with short timeouts and quick retries."""
    created = await LocalProvider(accessibility=False).create(
        retry=RetryPolicy(attempts=2, delay=0.2), timeout=TIMEOUT, action_timeout=TIMEOUT
    )
    assert isinstance(created, LocalEnv)
    try:
        yield created
    finally:
        await created.close()


def pid_of(env: LocalEnv, needle: str) -> int:
    """The PID of the env's process whose command line holds ``needle`` (inside bwrap, not bwrap)."""
    for pid in sorted(env.pids()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0] != b"bwrap" and any(needle.encode() in part for part in argv):
            return pid
    raise AssertionError(f"no {needle} process in the env")


async def run_with_fault(env: LocalEnv, out: Path, fault: Callable[[], None], replies: int = 3) -> RunStore:
    """Run an episode of moves; ``fault()`` runs when the agent starts thinking about step 2."""
    agent = ScriptedAgent([MOVE] * replies + ["DONE"])
    store = RunStoreWriter.create(out, TASK, model="scripted")
    config = EpisodeConfig(
        max_steps=replies + 1,
        phase_timeouts={"observe": 10, "execute": 10},
        settle=SettlePolicy(poll_interval=0.05, stable_frames=1, cap=0.5),
    )
    episode = Episode(TASK, agent, env, config=config, store=store)

    def on_state(new: str, old: str) -> None:
        if new == "predicting" and episode.step_index == 1:
            fault()

    episode.state_changed.connect(on_state)
    await episode.run()
    return RunStore(store.path)


def assert_error_at_step_2(run: RunStore, *phrases: str, noticed_by: int = 2) -> str:
    """The run ended in error at step 2 (or, for faults noticed late, by step ``noticed_by``), saying
    so readably; every step before it is kept whole, the failed one too when its actions failed.
    """
    assert run.result is not None and run.result.status == "error", run.result
    error = run.result.error or ""
    failed = int(error.split()[1]) if error.startswith("step ") else 0
    assert 2 <= failed <= noticed_by, error
    for phrase in phrases:
        assert phrase in error, error
    steps = list(run.iter_steps())
    for step in steps[: failed - 1]:
        assert step.executed == [MoveTo(x=100, y=100)] and step.error is None
        assert run.screenshot_path(step) is not None
    assert [s.index for s in steps] == list(range(1, len(steps) + 1))
    if len(steps) == failed:  # the step whose actions failed is kept, with the error
        assert steps[-1].verdict == "error" and steps[-1].error
    assert len(steps) <= failed and not run.torn
    return error


@pytest.mark.asyncio
async def test_the_guest_server_killed_mid_step(env: LocalEnv, tmp_path: Path) -> None:
    server = pid_of(env, "osw_studio.guest")
    run = await run_with_fault(env, tmp_path, lambda: os.kill(server, signal.SIGKILL))
    error = assert_error_at_step_2(run, env.url)
    # The kept-alive connection drops, or a new one is refused: either way the message says so.
    assert "dropped the connection" in error or "cannot connect to the guest server" in error, error
    assert "running" in error


@pytest.mark.asyncio
async def test_a_hung_guest_server(env: LocalEnv, tmp_path: Path) -> None:
    server = pid_of(env, "osw_studio.guest")
    try:
        run = await run_with_fault(env, tmp_path, lambda: os.kill(server, signal.SIGSTOP))
    finally:
        os.kill(server, signal.SIGCONT)
    assert_error_at_step_2(run, f"did not answer within {TIMEOUT:g} s")


@pytest.mark.asyncio
async def test_a_slow_guest_within_the_timeout_is_no_error(env: LocalEnv, tmp_path: Path) -> None:
    """The server freezes for half the timeout (slow screenshots, a busy guest): the episode goes on."""
    server = pid_of(env, "osw_studio.guest")
    loop = asyncio.get_running_loop()

    def freeze_briefly() -> None:
        os.kill(server, signal.SIGSTOP)
        loop.call_later(TIMEOUT / 2, os.kill, server, signal.SIGCONT)

    run = await run_with_fault(env, tmp_path, freeze_briefly)
    assert run.result is not None and run.result.status in ("finished", "failed"), run.result
    assert [s.index for s in run.iter_steps()] == [1, 2, 3, 4]
    assert all(s.error is None for s in run.iter_steps())


@pytest.mark.asyncio
async def test_a_display_that_dies(env: LocalEnv, tmp_path: Path) -> None:
    xvfb = env.session.processes["xvfb"].pid
    run = await run_with_fault(env, tmp_path, lambda: os.kill(xvfb, signal.SIGKILL))
    # XTest input may still be taken before the server notices: then the next screenshot fails.
    error = assert_error_at_step_2(run, env.url, noticed_by=3)
    assert "the guest" in error, error
