"""``call_user``: an attended run asks the person; an unattended one waits N times, then fails; never a hang.

Each episode runs on a real local sandbox and is read back from its run store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from osw_studio.agent.base import Prediction, TokenCallback
from osw_studio.core.actions import CallUser, Fail, Wait
from osw_studio.core.observation import Observation
from osw_studio.envs.base import Env
from tests.runner.scripted import ScriptedAgent
from tests.runner.test_controls import start, stored, wait_until, write

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

HELP = "CALL_USER"


class HandingBackAgent(ScriptedAgent):
    """The scripted agent, whose reply ``CALL_USER`` proposes a hand-back to the person."""

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        if self.replies and self.replies[0] == HELP:
            self.calls += 1
            self.replies.pop(0)
            return Prediction(response="call_user()", actions=[CallUser(message="I need a password")])
        return await super().predict(instruction, observation, on_token=on_token)


def handing_back(sandbox: Env, tmp_path: Path, replies: list[str], **config: object):  # type: ignore[no-untyped-def]
    episode, _, store = start(sandbox, tmp_path, [], "handed", **config)
    agent = HandingBackAgent(replies)
    episode.agent = agent
    return episode, agent, store


async def test_unattended_call_user_waits_its_tries_then_fails(sandbox: Env, tmp_path: Path) -> None:
    episode, agent, store = handing_back(sandbox, tmp_path, [HELP, HELP, HELP, "DONE"], call_user_tries=2)
    result = await asyncio.wait_for(episode.run(), 60)  # a hang would time out here
    assert result.status == "failed" and result.steps == 3 and agent.calls == 3
    _, steps = stored(store)
    assert [s.executed for s in steps] == [[Wait()], [Wait()], [Fail(message=steps[2].executed[0].message)]]
    assert all(s.proposed == [CallUser(message="I need a password")] for s in steps), "the proposal is kept"
    notes = [s.model_dump().get("note", "") for s in steps]
    assert "1 of 2 taken as a wait" in notes[0] and "the task fails" in notes[2]
    assert not episode.paused


async def test_unattended_call_user_with_no_tries_fails_at_once(sandbox: Env, tmp_path: Path) -> None:
    # DART-GUI's runner, and the default: the first hand-back ends the task as failed.
    episode, agent, store = handing_back(sandbox, tmp_path, [HELP, "DONE"])
    result = await asyncio.wait_for(episode.run(), 60)
    assert (result.status, result.steps, agent.calls) == ("failed", 1, 1)
    _, steps = stored(store)
    assert isinstance(steps[0].executed[0], Fail)


async def test_the_agents_own_tries_apply_when_the_run_does_not_set_them(
    sandbox: Env, tmp_path: Path
) -> None:
    episode, agent, store = handing_back(sandbox, tmp_path, [HELP, "DONE"])
    agent.call_user_tries = 3  # as a UI-TARS profile sets it
    result = await asyncio.wait_for(episode.run(), 60)
    assert result.steps == 2 and agent.calls == 2
    _, steps = stored(store)
    assert steps[0].executed == [Wait()] and steps[1].executed[0].kind == "done"


async def test_an_attended_run_pauses_and_asks_then_goes_on(sandbox: Env, tmp_path: Path) -> None:
    episode, agent, store = handing_back(
        sandbox, tmp_path, [HELP, write("handed"), "DONE"], attended=True, call_user_tries=0
    )
    asked: list[str] = []
    episode.help_requested.connect(asked.append)
    run = asyncio.ensure_future(episode.run())
    await wait_until(lambda: episode.paused and len(episode.steps) == 1, "the pause after call_user")
    assert asked == ["I need a password"]
    await asyncio.sleep(0.5)  # an attended run does not go on by itself
    assert agent.calls == 1 and not run.done()
    episode.resume()  # the person helped and hands back
    result = await asyncio.wait_for(run, 60)
    assert (result.status, result.steps, result.score) == ("finished", 3, 1.0)
    _, steps = stored(store)
    assert steps[0].executed == [CallUser(message="I need a password")]
