"""The qwen3vl and opencua agents with OSW Studio's own prompts (desktop-env not installed).

Their requests with OSWorld's prompts are compared with OSWorld's agents in tests/parity; here: the
fallback when the package is missing, the history window, what is sent with the messages, and the
history of a step a person changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.opencua import OpenCUAAgent
from osw_studio.agent.qwen3vl import Qwen3VLAgent
from osw_studio.core.actions import Action, Click, Hotkey
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.parity.episodes import screen

pytestmark = pytest.mark.timeout(60)

QWEN_REPLY = (
    'Action: Click Save.\n<tool_call>\n{"name": "computer_use", "arguments": '
    '{"action": "left_click", "coordinate": [500, 500]}}\n</tool_call>'
)
OPENCUA_REPLY = (
    "## Thought:\nSave.\n\n## Action:\nClick Save.\n\n## Code:\n```python\npyautogui.click(x=966, y=546)\n```"
)


def profile(server: FakeOpenAIServer, preset: str) -> Any:
    settings = Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": "m", "max_retries": 0},
            "profiles": {"p": {"preset": preset}},
        }
    )
    return settings.resolve_profile("p")


async def run(
    agent: Any, server: FakeOpenAIServer, reply: str, steps: int, *, edit: int | None = None
) -> None:
    agent.reset()
    for index in range(1, steps + 1):
        server.queue(reply)
        observation = Observation(screenshot=screen(index, (640, 360)), width=640, height=360)
        prediction = await agent.predict("Save the file.", observation)
        assert prediction.error is None, prediction.error
        executed: list[Action] = prediction.actions
        if index == edit:
            executed = [Hotkey(keys=["ctrl", "s"])]
        agent.record(
            StepRecord(index=index, response=prediction.response, thought=prediction.thought,
                       proposed=prediction.actions, executed=executed)
        )  # fmt: skip


def images(request: dict[str, Any]) -> int:
    return sum(
        1
        for m in request["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    )


@pytest.fixture(autouse=True)
def no_reference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(tmp_path))  # a folder without mm_agents


async def test_qwen3vl_own_prompts_window_and_sampling() -> None:
    with FakeOpenAIServer(models=["m"]) as server:
        agent = Qwen3VLAgent(profile(server, "qwen3-vl"), api_key="k")
        assert agent.prompt_info["faithful"] is False and "desktop-env" in agent.prompt_info["reason"]
        try:
            await run(agent, server, QWEN_REPLY, 6, edit=5)
        finally:
            await agent.aclose()
        requests = [r.json for r in server.chat_requests]
    first, last = requests[0], requests[-1]
    assert first["max_tokens"] == 32768 and "temperature" not in first and "top_p" not in first
    system = first["messages"][0]["content"][0]["text"]
    assert '"name": "computer_use"' in system and "1000x1000" in system
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    # step 6: step 1 listed as text, steps 2-5 as screenshot + reply, then the current screenshot
    task = last["messages"][1]["content"][1]["text"]
    assert task.endswith("\nStep 1: Click Save.") and "Step 2" not in task
    assert images(last) == 5 and len(last["messages"]) == 1 + 2 * 4 + 1
    assert last["messages"][1]["content"][0]["type"] == "image_url"
    # the image sent is the Qwen3-VL smart-resize (multiples of 32) of the screenshot
    assert agent.image_size((640, 360)) == (640, 352)
    # step 5 was changed by a person: its history shows what ran, as a tool call
    edited = last["messages"][-2]["content"][0]["text"]
    assert '"action": "key", "keys": ["ctrl", "s"]' in edited


async def test_opencua_own_prompts_window_and_coordinates() -> None:
    with FakeOpenAIServer(models=["m"]) as server:
        agent = OpenCUAAgent(profile(server, "opencua-7b"), api_key="k")
        assert agent.prompt_info["faithful"] is False
        try:
            await run(agent, server, OPENCUA_REPLY, 5)
            server.queue(OPENCUA_REPLY)
            prediction = await agent.predict(
                "Save the file.", Observation(screenshot=screen(9), width=1920, height=1080)
            )
        finally:
            await agent.aclose()
        requests = [r.json for r in server.chat_requests]
    first, last = requests[0], requests[-1]
    assert (first["temperature"], first["top_p"], first["max_tokens"]) == (0.0, 0.9, 1500)
    assert isinstance(first["messages"][0]["content"], str) and "password" in first["messages"][0]["content"]
    # step 6: steps 1-3 as one text turn, steps 4-5 each with its screenshot, then the current one
    roles = [m["role"] for m in last["messages"]]
    assert roles == ["system", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert last["messages"][1]["content"].count("# Step") == 3
    assert "# Step 5:\n## Action:\nClick Save." in last["messages"][5]["content"]
    assert images(last) == 3
    # (966, 546) in the 1932x1092 frame the model saw is the middle of the screen
    assert prediction.actions == [Click(x=960, y=540)] and prediction.coordinate_mode == "smart"


async def test_qwen3vl_history_keeps_the_instruction_of_a_reply_that_did_not_parse() -> None:
    broken = 'Action: Open the menu.\n<tool_call>\n{"name": "computer_use", "arguments": {\n</tool_call>'
    with FakeOpenAIServer(models=["m"]) as server:
        agent = Qwen3VLAgent(
            profile(server, "qwen3-vl").model_copy(update={"history_window": 1}), api_key="k"
        )
        agent.reset()
        try:
            server.queue(broken)
            observation = Observation(screenshot=screen(1, (640, 360)), width=640, height=360)
            prediction = await agent.predict("Save the file.", observation)
            assert prediction.error is not None and prediction.thought is None
            agent.record(StepRecord(index=1, response=prediction.response, proposed=[], executed=[]))
            server.queue(QWEN_REPLY)
            second = await agent.predict("Save the file.", observation)
            agent.record(
                StepRecord(
                    index=2, response=second.response, thought=second.thought, proposed=[], executed=[]
                )
            )
            server.queue(QWEN_REPLY)
            await agent.predict("Save the file.", observation)
        finally:
            await agent.aclose()
        task = server.chat_requests[-1].json["messages"][1]["content"][1]["text"]
    assert task.endswith("Step 1: Open the menu.")


@pytest.mark.parametrize(
    ("own", "first", "later"),
    [
        ({}, 0.0, 0.2),  # the preset: OSWorld's max(0.2, 0)
        ({"temperature": 0.7}, 0.7, 0.7),  # a user's own temperature above the floor stays
        ({"temperature": 0.1, "reask_temperature": 1.0}, 0.1, 1.0),  # a fixed re-ask temperature, floored
        ({"reask_min_temperature": None, "parse_tries": 2}, 0.0, 0.0),  # no floor: unchanged
    ],
)
async def test_opencua_asks_again_at_the_floored_temperature(
    own: dict[str, Any], first: float, later: float
) -> None:
    bad = "## Action:\nClick.\n"  # no code block
    with FakeOpenAIServer(models=["opencua-7b"]) as server:
        server.queue(bad, bad, bad, bad, bad)
        settings = Settings.model_validate(
            {
                "model_provider": {"base_url": server.base_url, "model": "opencua-7b", "max_retries": 0},
                "profiles": {"p": {"preset": "opencua-7b", **own}},
            }
        )
        agent = OpenCUAAgent(settings.resolve_profile("p"), api_key="k")
        agent.reset()
        try:
            prediction = await agent.predict(
                "Do it.", Observation(screenshot=screen(1), width=1920, height=1080)
            )
        finally:
            await agent.aclose()
        sent = [r.json["temperature"] for r in server.chat_requests]
    tries = own.get("parse_tries", 5)
    assert sent == [first] + [later] * (tries - 1)
    assert [a.temperature for a in prediction.attempts] == sent
    assert prediction.actions[0].kind == "fail" and prediction.error is None
