"""Differential test: asking again after an unparsable reply, as OSWorld's UI-TARS agent does.

OSWorld's ``mm_agents/uitars15_v1.py`` asks the model up to three times in one step while its reply does
not parse, the later calls with the same messages at temperature 1; when none parses, it ends the episode
as ``DONE``. PromptAgent (``mm_agents/agent.py``) never asks again. The ``uitars-1.5`` preset does the
same (``parse_tries: 3``, ``reask_temperature: 1``, ``parse_exhausted: done``): here both run a scripted
episode whose step 1 parses at the third reply and whose step 2 never parses, ours against the
OpenAI-compatible test server on 127.0.0.1, and the requests (messages and sampling), their number and
the actions must be equal. Each unparsable reply is kept in the step's ``attempts`` in the run store.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.osworld import OSWorldAgent
from osw_studio.agent.uitars import UITarsAgent
from osw_studio.core.actions import Click, Done
from osw_studio.core.task import Task
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.store import RunStore
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.recorded_run import ScreenEnv
from tests.parity.episodes import (
    STUBS,
    assert_same_requests,
    observations,
    play,
    run_ours,
    screen,
    settings_for,
    site_packages,
)
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import INSTRUCTION, REFERENCE_EPISODE, RUNTIME

pytestmark = pytest.mark.timeout(120)

BAD = "Thought: Click the Save button.\nAction: click(start_box='(12,')"
"""A reply neither OSWorld's parser nor ours can read (the point is cut off)."""
GOOD = "Thought: Click the Save button.\nAction: click(start_box='(1188,554)')"
REPLIES = [BAD, BAD, GOOD, BAD, BAD, BAD]
"""Step 1 parses at the third call; step 2 never does."""
TEMPERATURE = 0.0
"""The first call's temperature (OSWorld's run scripts default to 0), so that the re-ask's 1 shows."""


def reference_episode(reference: Reference) -> dict[str, Any]:
    reference.stub(*STUBS)
    shots = [base64.b64encode(screen(i)).decode() for i in (1, 2)]
    runtime = {**RUNTIME, "temperature": TEMPERATURE}
    code = (
        f"model = 'ui-tars-1.5-7b'\nruntime = {runtime!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nreplies = {REPLIES!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code, modules=("mm_agents.uitars15_v1",))  # type: ignore[no-any-return]


async def test_unparsable_replies_are_asked_again_as_the_reference_does(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    theirs = reference_episode(reference)
    predictions, requests = await run_ours(
        UITarsAgent,
        "ui-tars-1.5-7b",
        "uitars-1.5",
        INSTRUCTION,
        REPLIES,
        observations(2),
        temperature=TEMPERATURE,
    )
    assert len(requests) == len(REPLIES)
    assert [r["temperature"] for r in requests] == [TEMPERATURE, 1, 1, TEMPERATURE, 1, 1]
    assert_same_requests(requests, theirs["requests"], "call")
    assert theirs["actions"][1] == ["DONE"]
    first, second = predictions
    assert first.actions == [Click(x=1181, y=548)] and first.error is None
    assert [a.response for a in first.attempts] == [BAD, BAD]
    assert [a.temperature for a in first.attempts] == [TEMPERATURE, 1]
    assert len(second.actions) == 1 and isinstance(second.actions[0], Done) and second.error is None
    assert [a.response for a in second.attempts] == [BAD, BAD, BAD]
    assert "3 tries" in (second.actions[0].message or "")


async def test_prompt_agent_never_asks_again(tmp_path: Path) -> None:
    with FakeOpenAIServer(models=["gpt-4o"]) as server:
        server.queue("I am not sure what to do next.")
        agent = OSWorldAgent(settings_for(server, "osworld", prompts="own").resolve_profile("p"), api_key="k")
        [prediction] = await play(agent, INSTRUCTION, observations(1), errors=True)
        assert len(server.chat_requests) == 1
    assert prediction.error is not None and prediction.attempts == [] and prediction.actions == []


async def test_each_attempt_is_kept_in_the_run_store(tmp_path: Path) -> None:
    replies = ["no code here", "still none", "```python\npyautogui.click(10, 20)\n```", "```DONE```"]
    with FakeOpenAIServer(models=["gpt-4o"]) as server:
        server.queue(*replies)
        profile = settings_for(server, "osworld", prompts="own", parse_tries=3).resolve_profile("p")
        agent = OSWorldAgent(profile, api_key="k")
        task = Task.model_validate(
            {"id": "t", "instruction": INSTRUCTION, "evaluator": {"func": "infeasible"}}
        )
        store = RunStoreWriter.create(tmp_path / "runs", task, run_id="r")
        config = EpisodeConfig(max_steps=5, settle=SettlePolicy.off())
        episode = Episode(task, agent, ScreenEnv(), config=config, store=store, evaluate=_score)
        tokens: list[str] = []
        episode.model_token.connect(tokens.append)
        try:
            result = await asyncio.wait_for(episode.run(), 60)
        finally:
            await agent.aclose()
        assert len(server.chat_requests) == 4
    assert result.status == "finished" and result.steps == 2
    steps = list(RunStore(store.path).iter_steps())
    assert [a.response for a in steps[0].attempts] == ["no code here", "still none"]
    assert all("no code block" in a.error or "no actions" in a.error for a in steps[0].attempts), steps[0]
    assert steps[0].response == replies[2] and steps[0].executed == [Click(x=10, y=20)]
    assert steps[1].attempts == []
    # The live view is told, between the streamed replies, why a new one starts.
    assert "".join(tokens).count("asking again") == 2 and "still none" in "".join(tokens)


async def _score(env: Any, task: Task, actions: Any) -> float:
    return 1.0
