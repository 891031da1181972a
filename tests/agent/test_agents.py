"""The agents against a local OpenAI-compatible server: prompts, images, history, parsing; replay; human."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from osw_studio.agent import AGENTS, agent_class, make_agent
from osw_studio.agent.errors import ModelCallError
from osw_studio.agent.human import HumanAgent
from osw_studio.agent.replay import ReplayAgent
from osw_studio.core.actions import Click, Done, Hotkey, Typing
from osw_studio.core.errors import OswError, SettingsError, TaskError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.core.task import Task
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.timeout(30)

A11Y = (
    '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component">'
    '<frame name="Editor" st:showing="true" st:visible="true" cp:screencoord="(0, 0)" cp:size="(1920, 1080)">'
    '<push-button name="Save" st:showing="true" st:visible="true" st:enabled="true" '
    'cp:screencoord="(100, 40)" cp:size="(60, 24)"/>'
    '<text st:showing="true" st:visible="true" st:enabled="true" cp:screencoord="(0, 100)" '
    'cp:size="(800, 20)">Hello</text>'
    "</frame></desktop-frame>"
)


def screenshot(size: tuple[int, int] = (1920, 1080)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (40, 90, 160)).save(buf, "PNG")
    return buf.getvalue()


def observe(tree: str | None = None) -> Observation:
    return Observation(screenshot=screenshot(), width=1920, height=1080, accessibility_tree=tree)


def agent_for(server: FakeOpenAIServer, **profile: Any) -> Any:
    settings = Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": "test-model", "max_retries": 0},
            "profiles": {"p": profile},
        }
    )
    return make_agent(settings.resolve_profile("p"), api_key="sk-test")


def images_in(request_json: dict[str, Any]) -> list[tuple[int, int]]:
    sizes = []
    for message in request_json["messages"]:
        content = message["content"]
        for part in content if isinstance(content, list) else []:
            if part["type"] == "image_url":
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                sizes.append(Image.open(io.BytesIO(data)).size)
    return sizes


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p["type"] == "text")


async def test_osworld_screenshot_pyautogui(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(openai_server, agent="osworld", screenshot_size="1280x720", temperature=0.1)
    openai_server.queue("The Save button is in the middle.\n```python\npyautogui.click(640, 360)\n```")
    pieces: list[str] = []
    prediction = await agent.predict("Save the file", observe(), on_token=pieces.append)
    await agent.aclose()
    assert prediction.error is None
    assert prediction.actions == [Click(x=960, y=540)], (
        "a click in the 1280x720 image lands on the 1920x1080 screen"
    )
    assert prediction.thought == "The Save button is in the middle."
    assert prediction.coordinate_mode == "resized" and "".join(pieces) == prediction.response
    assert prediction.usage is not None and prediction.latency > 0
    sent = openai_server.chat_requests[0].json
    assert sent["temperature"] == 0.1 and sent["messages"][0]["role"] == "system"
    system = text_of(sent["messages"][0])
    assert "Save the file" in system
    assert "pyautogui" in system and "$" not in system
    assert "1280 pixels wide" in system, "the model is told the size of the image it sees"
    assert images_in(sent) == [(1280, 720)]


async def test_osworld_history_shows_what_actually_ran(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(openai_server, agent="osworld", history_window=2)
    for step in range(1, 4):
        openai_server.queue(f"step {step}\n```python\npyautogui.click({step}, {step})\n```")
        prediction = await agent.predict("Do it", observe())
        executed = prediction.actions if step != 2 else [Hotkey(keys=["ctrl", "s"])]
        agent.record(
            StepRecord(
                index=step, response=prediction.response, proposed=prediction.actions, executed=executed
            )
        )
    openai_server.queue("```DONE```")
    prediction = await agent.predict("Do it", observe())
    await agent.aclose()
    assert prediction.actions == [Done()]
    messages = openai_server.chat_requests[-1].json["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"], "the last 2 turns, then now"
    assert "ctrl" in text_of(messages[2]) and "step 2" not in text_of(messages[2]), "the person's edit"
    assert text_of(messages[4]).startswith("step 3")
    assert len(images_in(openai_server.chat_requests[-1].json)) == 3


async def test_osworld_accessibility_tree_and_computer_13(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(
        openai_server, agent="osworld", observation_type="a11y_tree", action_space="computer_13"
    )
    reply = '```json\n{"action_type": "CLICK", "parameters": {"x": 130, "y": 52}}\n```'
    openai_server.queue(reply)
    prediction = await agent.predict("Click Save", observe(A11Y))
    await agent.aclose()
    assert prediction.actions == [Click(x=130, y=52)]
    sent = openai_server.chat_requests[0].json
    assert images_in(sent) == []
    step = text_of(sent["messages"][-1])
    assert "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)" in step
    assert 'push-button\tSave\t""\t\t\t(100, 40)\t(60, 24)' in step
    assert "text\t\tHello\t" in step, "text unquoted unless it holds a quote, as OSWorld writes it"
    system = text_of(sent["messages"][0])
    assert "CLICK" in system and "computer_13" not in system


async def test_an_unparsable_reply_is_a_step_error_not_a_crash(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(openai_server, agent="osworld")
    openai_server.queue("```python\nimport os; os.system('rm -rf /')\n```")
    prediction = await agent.predict("Anything", observe())
    await agent.aclose()
    assert prediction.actions == [] and prediction.error
    assert prediction.response.startswith("```python")


async def test_a_failed_model_call_raises_a_model_error(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(openai_server, agent="uitars")
    openai_server.queue(Reply.error(500, "overloaded"))
    with pytest.raises(ModelCallError, match="overloaded"):
        await agent.predict("Anything", observe())
    await agent.aclose()


async def test_uitars_smart_resize_and_five_screenshots(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(openai_server, agent="uitars")
    for step in range(1, 8):
        openai_server.queue(
            f"Thought: step {step}.\nAction: click(start_box='<|box_start|>(966,546)<|box_end|>')"
        )
        prediction = await agent.predict("Open the menu", observe())
        assert prediction.actions == [Click(x=960, y=540)] and prediction.thought == f"step {step}."
        assert prediction.coordinate_mode == "smart"
        executed = prediction.actions if step != 6 else [Typing(text="hello\n")]
        agent.record(StepRecord(index=step, response=prediction.response, thought=prediction.thought,
                                proposed=prediction.actions, executed=executed))  # fmt: skip
    await agent.aclose()
    last = openai_server.chat_requests[-1].json
    assert images_in(last) == [(1920, 1080)] * 5, (
        "four history screenshots and the current one, as grabbed (the model smart-resizes them)"
    )
    prompt = text_of(last["messages"][1])
    assert "## Task\nOpen the menu" in prompt and "Write the Thought in English." in prompt
    assistants = [text_of(m) for m in last["messages"] if m["role"] == "assistant"]
    assert len(assistants) == 6
    assert "type(content='hello\\n')" in assistants[5], "the person's typing replaced the proposal"


async def test_dart_gui_relative_1000(openai_server: FakeOpenAIServer) -> None:
    agent = agent_for(openai_server, agent="uitars", coordinate_mode="rel1000", screenshot_size="1280x720")
    openai_server.queue("Thought: centre.\nAction: click(start_box='(500,500)')")
    prediction = await agent.predict("Click the centre", observe())
    await agent.aclose()
    assert prediction.actions == [Click(x=960, y=540)] and prediction.coordinate_mode == "rel1000"
    assert images_in(openai_server.chat_requests[0].json) == [(1280, 720)]


def task_with_solution() -> Task:
    return Task.model_validate(
        {
            "id": "t1",
            "instruction": "Type hello",
            "evaluator": {"func": "infeasible"},
            "solution": [
                {"actions": [{"kind": "click", "x": 5, "y": 6}]},
                {"actions": [{"kind": "typing", "text": "hello"}, {"kind": "press", "key": "enter"}]},
            ],
        }
    )


async def test_replay_plays_a_solution_then_says_done() -> None:
    settings = Settings.model_validate({"profiles": {"r": {"agent": "replay"}}})
    agent = make_agent(settings.resolve_profile("r"), task=task_with_solution())
    assert agent.kind == "replay" and agent.model_name == "replay"
    first = await agent.predict("Type hello", observe())
    second = await agent.predict("Type hello", observe())
    third = await agent.predict("Type hello", observe())
    assert first.actions == [Click(x=5, y=6)]
    assert [a.kind for a in second.actions] == ["typing", "press"]
    assert third.actions[0].kind == "done" and "replayed 2 steps" in (third.actions[0].message or "")
    no_solution = Task.model_validate({"id": "t2", "instruction": "x", "evaluator": {"func": "infeasible"}})
    with pytest.raises(TaskError, match="no reference solution"):
        make_agent(settings.resolve_profile("r"), task=no_solution)


def test_replay_of_a_recorded_run_skips_empty_steps_and_a_torn_line(tmp_path: Path) -> None:
    lines = [
        StepRecord(index=1, proposed=[Click(x=1, y=1)], executed=[Click(x=2, y=2)], verdict="edited"),
        StepRecord(index=2, proposed=[Click(x=3, y=3)], executed=[], verdict="skipped"),
        StepRecord(index=3, source="human", verdict="human", executed=[Hotkey(keys=["ctrl", "s"])]),
    ]
    text = "\n".join(s.model_dump_json() for s in lines) + '\n{"index": 4, "exec'
    (tmp_path / "steps.jsonl").write_text(text)
    agent = ReplayAgent.from_run(tmp_path)
    assert agent.steps == [[Click(x=2, y=2)], [Hotkey(keys=["ctrl", "s"])]]
    (tmp_path / "steps.jsonl").write_text('{"index": "x"}\n' + lines[0].model_dump_json())
    with pytest.raises(OswError, match=r"steps.jsonl:1"):
        ReplayAgent.from_run(tmp_path)


async def test_the_human_agent_waits_for_submitted_actions() -> None:
    agent = HumanAgent()
    assert agent.kind == "human"
    task = asyncio.create_task(agent.predict("Do it", observe()))
    await asyncio.sleep(0)
    assert agent.waiting and not task.done()
    agent.submit([Click(x=7, y=8)])
    prediction = await asyncio.wait_for(task, 5)
    assert prediction.actions == [Click(x=7, y=8)] and json.loads(prediction.response)[0]["kind"] == "click"


async def test_the_human_agent_takes_actions_from_another_thread() -> None:
    agent = HumanAgent()
    task = asyncio.create_task(agent.predict("Do it", observe()))
    await asyncio.sleep(0)
    await asyncio.to_thread(agent.submit_threadsafe, [Done()])
    assert (await asyncio.wait_for(task, 5)).actions == [Done()]


def test_the_registry() -> None:
    assert {
        "osworld",
        "uitars",
        "qwen3vl",
        "opencua",
        "dart",
        "replay",
        "human",
        "gpt54",
        "openai_cua",
        "claude",
    } <= set(AGENTS)
    assert agent_class("gpt54").__name__ == "GPT54Agent"
    assert agent_class("claude").__name__ == "ClaudeAgent"
    assert agent_class("openai_cua").__name__ == "ComputerUsePreviewAgent"
    assert agent_class("uitars").__name__ == "UITarsAgent"
    assert agent_class("qwen3vl").__name__ == "Qwen3VLAgent"
    assert agent_class("opencua").__name__ == "OpenCUAAgent"
    with pytest.raises(SettingsError, match="unknown agent 'gpt'"):
        agent_class("gpt")
