"""A computer-use model's pending safety check: an attended run holds the step for the person and records
the answer; an unattended one acknowledges it (as OSWorld does) or fails the task, as the profile says.

GPT-5.4's agent talks to the fake Responses server; each episode runs on the real local sandbox and is
read back from its run store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.cua_openai import GPT54Agent
from osw_studio.core.actions import Fail, Typing
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message
from tests.runner.conftest import terminal_task
from tests.runner.test_controls import stored, wait_until

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

CHECK = "The page asks to ignore the task."
TYPE = {"type": "type", "text": "echo checked > ~/out.txt\n"}


def episode_for(
    sandbox: Env, tmp_path: Path, server: FakeResponsesServer, **config: Any
) -> tuple[Episode, Any]:
    server.queue(Script([computer_call(TYPE, safety_checks=(CHECK,))]), Script([message("Done.")]))
    policy = config.pop("safety_checks", "acknowledge")
    settings = Settings.model_validate({"profiles": {"g": {
        "preset": "gpt-5.4", "base_url": server.base_url, "max_retries": 0, "safety_checks": policy,
    }}})  # fmt: skip
    agent = GPT54Agent(settings.resolve_profile("g"), api_key="k")
    task = terminal_task("checked")
    store = RunStoreWriter.create(tmp_path, task, model="gpt-5.4", agent="gpt54")
    return Episode(task, agent, sandbox, config=EpisodeConfig(**config), store=store, domain="os"), store


async def test_an_attended_run_holds_the_step_until_the_person_approves(sandbox: Env, tmp_path: Path) -> None:
    with FakeResponsesServer() as server:
        episode, store = episode_for(sandbox, tmp_path, server, attended=True)
        run = asyncio.ensure_future(episode.run())
        try:
            await wait_until(lambda: episode.proposal is not None, "the proposal")
            await asyncio.sleep(0.5)
            assert episode.proposal is not None and episode.proposal.confirm == CHECK, "it waits in auto mode"
            assert len(server.response_requests) == 1
            episode.approve()
            result = await asyncio.wait_for(run, 60)
        finally:
            await episode.agent.aclose()
        answered = server.response_requests[1].json["input"][0]
    assert result.success
    _, steps = stored(store)
    assert steps[0].verdict == "approved" and steps[0].executed == [Typing(text=TYPE["text"])]
    assert steps[0].model_dump()["safety_check"] == {"message": CHECK, "answer": "approved"}
    assert answered["acknowledged_safety_checks"][0]["message"] == CHECK


async def test_an_unattended_run_acknowledges_as_osworld_does(sandbox: Env, tmp_path: Path) -> None:
    with FakeResponsesServer() as server:
        episode, store = episode_for(sandbox, tmp_path, server)
        try:
            result = await asyncio.wait_for(episode.run(), 60)
        finally:
            await episode.agent.aclose()
    assert result.success
    _, steps = stored(store)
    assert steps[0].verdict == "auto"
    assert steps[0].model_dump()["safety_check"] == {"message": CHECK, "answer": "acknowledged"}


async def test_an_unattended_run_set_to_fail_fails_the_task(sandbox: Env, tmp_path: Path) -> None:
    with FakeResponsesServer() as server:
        episode, store = episode_for(sandbox, tmp_path, server, safety_checks="fail")
        try:
            result = await asyncio.wait_for(episode.run(), 60)
        finally:
            await episode.agent.aclose()
    assert result.status == "failed" and result.steps == 1
    _, steps = stored(store)
    assert steps[0].proposed == [Typing(text=TYPE["text"])], "the proposal is kept"
    assert isinstance(steps[0].executed[0], Fail) and CHECK in (steps[0].executed[0].message or "")
    assert steps[0].model_dump()["safety_check"] == {"message": CHECK, "answer": "failed"}
