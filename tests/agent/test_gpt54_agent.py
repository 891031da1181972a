"""GPT-5.4's computer-tool agent on the fake Responses server: chaining, batches, safety checks, edits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from osw_studio.agent.cua_openai import GPT54Agent
from osw_studio.core.actions import (
    Action,
    Click,
    Done,
    DragTo,
    Fail,
    Hotkey,
    MouseDown,
    MouseUp,
    MoveTo,
    Press,
    Scroll,
    Typing,
    Wait,
)
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings import Settings
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message, reasoning
from tests.parity.episodes import screen

pytestmark = pytest.mark.timeout(60)

_MADE: list[GPT54Agent] = []


@pytest.fixture(autouse=True)
async def _close_agents() -> AsyncIterator[None]:
    yield
    while _MADE:
        await _MADE.pop().aclose()


def agent(server: FakeResponsesServer, **profile: Any) -> GPT54Agent:
    settings = Settings.model_validate(
        {"profiles": {"g": {"preset": "gpt-5.4", "base_url": server.base_url, "max_retries": 0, **profile}}}
    )
    made = GPT54Agent(settings.resolve_profile("g"), api_key="k")
    _MADE.append(made)
    return made


def observe(step: int, size: tuple[int, int] = (1280, 720)) -> Observation:
    return Observation(screenshot=screen(step, size), width=size[0], height=size[1])


def record(gpt: GPT54Agent, index: int, proposed: list[Action], executed: list[Action] | None = None) -> None:
    gpt.record(
        StepRecord(index=index, proposed=proposed, executed=proposed if executed is None else executed)
    )


async def test_a_batch_is_one_proposal_and_the_next_request_answers_it(
    responses_server: FakeResponsesServer,
) -> None:
    batch = computer_call(
        {"type": "click", "x": 100, "y": 200, "button": "left"},
        {"type": "type", "text": "héllo"},
        {"type": "keypress", "keys": ["CTRL", "S"]},
        {"type": "keypress", "keys": ["Return"]},
        {"type": "wait"},
        {"type": "screenshot"},
    )
    responses_server.queue(Script([reasoning("Save it."), batch]), Script([message("The file is saved.")]))
    gpt = agent(responses_server)
    gpt.reset()
    first = await gpt.predict("Save the file.", observe(1))
    assert first.error is None
    assert first.actions == [
        Click(x=100, y=200), Typing(text="héllo"), Hotkey(keys=["ctrl", "s"]), Press(key="enter"),
        Wait(seconds=1.0), Wait(seconds=0.1),
    ]  # fmt: skip
    assert first.thought == "Save it."
    assert first.usage is not None and first.usage.prompt_tokens == 100
    record(gpt, 1, first.actions)
    second = await gpt.predict("Save the file.", observe(2))
    assert second.actions == [Done(message="The file is saved.")]

    one, two = (r.json for r in responses_server.response_requests)
    assert one["tools"] == [{"type": "computer"}] and one["parallel_tool_calls"] is False
    assert one["reasoning"] == {"effort": "xhigh", "summary": "concise"} and one["truncation"] == "auto"
    assert "temperature" not in one and "top_p" not in one and "previous_response_id" not in one
    [task] = one["input"]
    assert [p["type"] for p in task["content"]] == ["input_text", "input_image"]
    assert task["content"][1]["detail"] == "original"
    assert two["previous_response_id"] == "resp_1"
    [output] = two["input"]
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_1_1"
    assert output["output"]["image_url"].startswith("data:image/png;base64,")
    assert output["output"]["image_url"] != task["content"][1]["image_url"]  # the screen after the batch
    assert "acknowledged_safety_checks" not in output
    assert second.request is not None and second.request.params["previous_response_id"] == "resp_1"


async def test_drags_scrolls_and_moves_map_to_core_actions(responses_server: FakeResponsesServer) -> None:
    responses_server.queue(Script([computer_call(
        {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 30, "y": 40}]},
        {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 5, "y": 6}, {"x": 30, "y": 40}]},
        {"type": "scroll", "x": 50, "y": 60, "scroll_x": 0, "scroll_y": 3},
        {"type": "move", "x": 7, "y": 8},
    )]))  # fmt: skip
    gpt = agent(responses_server)
    prediction = await gpt.predict("Drag.", observe(1))
    assert prediction.actions == [
        DragTo(start_x=1, start_y=2, x=30, y=40),
        MouseDown(x=1, y=2), MoveTo(x=5, y=6), MouseUp(x=30, y=40),
        Scroll(x=50, y=60, dy=-3),
        MoveTo(x=7, y=8),
    ]  # fmt: skip


async def test_points_in_a_smaller_screenshot_land_where_the_model_pointed(
    responses_server: FakeResponsesServer,
) -> None:
    responses_server.queue(Script([computer_call({"type": "click", "x": 640, "y": 360, "button": "right"})]))
    gpt = agent(responses_server, screenshot_size="1280x720")
    prediction = await gpt.predict("Open the menu.", observe(1, (1920, 1080)))
    assert [a.model_dump() for a in prediction.actions] == [{"kind": "right_click", "x": 960, "y": 540}]
    assert prediction.coordinate_mode == "resized"


async def test_safety_checks_are_acknowledged_or_fail_the_task(responses_server: FakeResponsesServer) -> None:
    risky = computer_call(
        {"type": "click", "x": 1, "y": 1}, safety_checks=("The page asks to ignore the task.",)
    )
    responses_server.queue(Script([risky]), Script([message("ok")]))
    gpt = agent(responses_server)
    first = await gpt.predict("Click.", observe(1))
    record(gpt, 1, first.actions)
    await gpt.predict("Click.", observe(2))
    [output] = responses_server.response_requests[1].json["input"]
    assert output["acknowledged_safety_checks"][0]["id"] == "sc_0"

    responses_server.queue(Script([risky]))
    strict = agent(responses_server, safety_checks="fail")
    held = await strict.predict("Click.", observe(1))
    assert held.actions == [Click(x=1, y=1)] and held.confirm == "The page asks to ignore the task."
    assert strict.safety_checks == "fail"  # what the episode does with it when no one attends


async def test_an_infeasible_answer_fails_and_an_unknown_action_is_a_step_error(
    responses_server: FakeResponsesServer,
) -> None:
    responses_server.queue(Script([message("[INFEASIBLE]")]), Script([computer_call({"type": "teleport"})]))
    gpt = agent(responses_server)
    assert (await gpt.predict("Fly.", observe(1))).actions == [Fail(message="[INFEASIBLE]")]
    gpt.reset()
    broken = await gpt.predict("Fly.", observe(1))
    assert broken.error == "action 1 of 1: the computer tool sent an unknown action 'teleport'"
    assert broken.actions == []


async def test_an_edited_step_is_told_to_the_model_in_the_tools_shape(
    responses_server: FakeResponsesServer,
) -> None:
    responses_server.queue(
        Script([computer_call({"type": "click", "x": 10, "y": 10})]), Script([message("ok")])
    )
    gpt = agent(responses_server)
    first = await gpt.predict("Click.", observe(1))
    record(gpt, 1, first.actions, [Click(x=20, y=30), Typing(text="x")])
    await gpt.predict("Click.", observe(2))
    output, note = responses_server.response_requests[1].json["input"]
    assert output["type"] == "computer_call_output"
    assert note["role"] == "user"
    assert note["content"][0]["text"] == (
        'A person changed your actions; what ran: [{"type": "click", "button": "left", "x": 20, "y": 30}, '
        '{"type": "type", "text": "x"}]'
    )


async def test_streamed_tokens_show_the_batch_as_it_arrives(responses_server: FakeResponsesServer) -> None:
    responses_server.queue(
        Script([reasoning("Saving."), computer_call({"type": "keypress", "keys": ["ctrl", "s"]})])
    )
    pieces: list[str] = []
    await agent(responses_server).predict("Save.", observe(1), on_token=pieces.append)
    assert "".join(pieces) == "Saving.\n\n[computer_call: keypress keys=['ctrl', 's']]\n"
