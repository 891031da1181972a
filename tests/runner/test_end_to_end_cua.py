"""End to end on the local sandbox: GPT-5.4's agent, scripted by the fake Responses server, solves a task.

One computer call carries the whole batch (a click and the typing), approved as one proposal and run in
order; the next request answers it with the screen after the batch; a final message ends the task.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.cua_openai import GPT54Agent
from osw_studio.cli import main
from osw_studio.core.actions import Click, Done, Typing
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from osw_studio.tasks.load import load_task
from osw_studio.trajectory.requests import RequestExpander, image_refs, responses_input
from osw_studio.trajectory.store import RunStore
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message, reasoning
from tests.runner.conftest import TASKS

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]


async def run_task(
    agent: Any, sandbox: Env, tmp_path: Path, secret: str
) -> tuple[Any, RunStoreWriter, list[str]]:
    """The bundled write-hello-file task run by ``agent`` into a new run store; the tokens it streamed."""
    entry = load_task(TASKS / "os" / "write-hello-file.json")
    store = RunStoreWriter.create(
        tmp_path, entry.task, domain=entry.domain, model=agent.model_name, agent=agent.name,
        screen_size=sandbox.screen_size, secrets=[secret],
    )  # fmt: skip
    episode = Episode(entry.task, agent, sandbox, store=store, domain=entry.domain)
    tokens: list[str] = []
    episode.model_token.connect(tokens.append)
    try:
        result = await asyncio.wait_for(episode.run(), 90)
    finally:
        await agent.aclose()
    return result, store, tokens


async def test_gpt54_solves_a_task_through_the_responses_api(sandbox: Env, tmp_path: Path) -> None:
    batch = computer_call(
        {"type": "click", "x": 500, "y": 340, "button": "left"},
        {"type": "type", "text": "echo hello > ~/Desktop/hello.txt\n"},
    )
    with FakeResponsesServer() as server:
        server.queue(
            Script([reasoning("The terminal is open."), batch]), Script([message("The file is written.")])
        )
        settings = Settings.model_validate(
            {"profiles": {"g": {"preset": "gpt-5.4", "base_url": server.base_url, "max_retries": 0}}}
        )
        agent = GPT54Agent(settings.resolve_profile("g"), api_key="sk-test-secret-key")
        result, store, tokens = await run_task(agent, sandbox, tmp_path, "sk-test-secret-key")
        requests = [r.json for r in server.response_requests]

    assert (result.status, result.success, result.score, result.steps) == ("finished", True, 1.0, 2)
    steps = list(RunStore(store.path).iter_steps())
    assert [s.executed for s in steps] == [
        [Click(x=500, y=340), Typing(text="echo hello > ~/Desktop/hello.txt\n")],
        [Done(message="The file is written.")],
    ]
    assert steps[0].thought == "The terminal is open."
    assert steps[0].usage is not None and steps[0].usage.total_tokens == 120
    assert "[computer_call: " in "".join(tokens)
    assert requests[1]["previous_response_id"] == "resp_1"
    assert requests[1]["input"][0]["type"] == "computer_call_output"
    assert steps[1].request is not None and steps[1].request.params["previous_response_id"] == "resp_1"
    # The requests are stored as sent, each screenshot a reference to the stored screen.
    reader = RunStore(store.path)
    expander = RequestExpander()
    for step, sent in zip(steps, requests, strict=True):
        items = expander.messages(step)
        assert items is not None
        [ref] = image_refs(items)
        assert ref["file"] == step.screenshot

        def url(ref: Mapping[str, Any]) -> str:
            data = (reader.path / "screens" / ref["file"]).read_bytes()
            return f"data:{ref['mime']};base64,{base64.b64encode(data).decode()}"

        assert responses_input(items, url) == sent["input"]
    assert len((store.path / "steps.jsonl").read_bytes()) < 20_000

    # The chat export writes the run as a tool-call conversation: the batch is the computer tool's call,
    # the screen after it the tool's answer.
    out = tmp_path / "sft"
    assert main(["export", "-q", "--format", "sft-messages", "--out", str(out), str(store.path)]) == 0
    last = json.loads((out / "data.jsonl").read_text().splitlines()[-1])["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant"]
    [call] = last[1]["tool_calls"]
    assert call["id"] == "call_1_1" and call["function"]["name"] == "computer"
    assert json.loads(call["function"]["arguments"])["actions"] == [
        {"type": "click", "button": "left", "x": 500, "y": 340},
        {"type": "type", "text": "echo hello > ~/Desktop/hello.txt\n"},
    ]
    assert last[2]["tool_call_id"] == "call_1_1" and last[2]["content"][0]["type"] == "image_url"
    for file in store.path.rglob("*"):
        if file.is_file():
            assert b"sk-test-secret-key" not in file.read_bytes(), file


async def test_claude_solves_a_task_through_the_messages_api(sandbox: Env, tmp_path: Path) -> None:
    """Claude's tool uses (a click in the tool's 1280x720 frame, then typing) run as one proposal."""
    from osw_studio.agent.cua_anthropic import ClaudeAgent
    from tests.fakes.messages_server import FakeMessagesServer, Turn, text, thinking, tool_use

    width, height = sandbox.screen_size
    point = [500 * 1280 // width, 340 * 720 // height]  # the terminal, in the tool's frame
    uses = [
        tool_use("computer", {"action": "left_click", "coordinate": point}),
        tool_use("computer", {"action": "type", "text": "echo hello > ~/Desktop/hello.txt\n"}),
    ]
    model = "claude-sonnet-4-5-20250929"
    with FakeMessagesServer(api_key="sk-ant-secret-key", models=(model,)) as server:
        server.queue(Turn([thinking("The terminal is open."), *uses]), Turn([text("The file is written.")]))
        settings = Settings.model_validate(
            {
                "profiles": {
                    "c": {"preset": "claude-sonnet-4.5", "base_url": server.base_url, "max_retries": 0}
                }
            }
        )
        agent = ClaudeAgent(settings.resolve_profile("c"), api_key="sk-ant-secret-key")
        result, store, tokens = await run_task(agent, sandbox, tmp_path, "sk-ant-secret-key")
        requests = [r.json for r in server.message_requests]

    assert (result.status, result.success, result.score, result.steps) == ("finished", True, 1.0, 2)
    steps = list(RunStore(store.path).iter_steps())
    x, y = (int(point[0] * width / 1280), int(point[1] * height / 720))
    assert [s.executed for s in steps] == [
        [Click(x=x, y=y), Typing(text="echo hello > ~/Desktop/hello.txt\n")],
        [Done(message="The file is written.")],
    ]
    assert steps[0].thought == "The terminal is open."
    assert "[tool_use computer: " in "".join(tokens)
    # The second request answers both tool uses, the last with the screen after the batch at 1280x720.
    first, second = requests
    assert first["tools"][0]["type"] == "computer_20251124" and first["thinking"]["budget_tokens"] == 2048
    answers = [m["content"][0] for m in second["messages"][2:]]
    assert [a["tool_use_id"] for a in answers] == ["toolu_1_1", "toolu_1_2"]
    assert [len(a["content"]) for a in answers] == [1, 2]
    shot = base64.b64decode(answers[1]["content"][1]["source"]["data"])
    assert shot[16:24] == (1280).to_bytes(4, "big") + (720).to_bytes(4, "big")  # the PNG's size
    # The requests are stored as sent, each screenshot a reference to a stored file.
    from osw_studio.trajectory.requests import anthropic_messages

    reader = RunStore(store.path)
    expander = RequestExpander()
    for step, sent in zip(steps, requests, strict=True):
        items = expander.messages(step)
        assert items is not None

        def data(ref: Mapping[str, Any]) -> str:
            return base64.b64encode((reader.path / "screens" / ref["file"]).read_bytes()).decode()

        assert anthropic_messages(items, data) == sent["messages"]
    assert len((store.path / "steps.jsonl").read_bytes()) < 20_000

    # The chat export writes the run as a tool-call conversation: each tool use a call of the computer
    # function with its input, each tool result a tool message.
    out = tmp_path / "sft"
    assert main(["export", "-q", "--format", "sft-messages", "--out", str(out), str(store.path)]) == 0
    last = json.loads((out / "data.jsonl").read_text().splitlines()[-1])["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "tool", "assistant"]
    calls = last[1]["tool_calls"]
    assert [c["id"] for c in calls] == ["toolu_1_1", "toolu_1_2"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"action": "left_click", "coordinate": point}
    assert last[3]["tool_call_id"] == "toolu_1_2" and last[3]["content"][1]["type"] == "image_url"
    for fmt in ("osworld", "html", "parquet", "sft-sharegpt", "rollouts"):  # the run goes into every layout
        assert main(["export", "-q", "--format", fmt, "--out", str(tmp_path / fmt), str(store.path)]) == 0, (
            fmt
        )
    for file in store.path.rglob("*"):
        if file.is_file():
            assert b"sk-ant-secret-key" not in file.read_bytes(), file
