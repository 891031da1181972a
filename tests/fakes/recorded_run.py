"""A model-agent run with a person in the loop, recorded against the local OpenAI-compatible server.

The episode runs in approve mode on an in-process env whose screen changes after every action: step 1
the model's reply approved, step 2 the model's reply edited by a person, step 3 a person's takeover step,
steps 4 and 5 the model's replies approved (the last one finishes). Exporter tests compare what they
write with the requests the server received.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from osw_studio.agent import make_agent
from osw_studio.core.actions import Action, Click, Typing
from osw_studio.core.observation import Observation
from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, EpisodeConfig, Proposal
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer

SCREEN = (1920, 1080)
EDIT: list[Action] = [Typing(text="hello")]
TAKEOVER = [Click(x=700, y=400)]

REPLIES = {
    "osworld": [
        "The terminal is in the middle.\n```python\npyautogui.click(960, 540)\n```",
        "Type the word.\n```python\npyautogui.write('helo')\n```",
        "Save it.\n```python\npyautogui.hotkey('ctrl', 's')\n```",
        "The file is saved.\n```DONE```",
    ],
    "uitars": [
        "Thought: Click the terminal.\nAction: click(start_box='<|box_start|>(966,546)<|box_end|>')",
        "Thought: Type the word.\nAction: type(content='helo')",
        "Thought: Save it.\nAction: hotkey(key='ctrl s')",
        "Thought: The file is saved.\nAction: finished(content='saved')",
    ],
    "qwen3vl": [
        'Action: Click the terminal.\n<tool_call>\n{"name": "computer_use", "arguments": '
        '{"action": "left_click", "coordinate": [500, 500]}}\n</tool_call>',
        'Action: Type the word.\n<tool_call>\n{"name": "computer_use", "arguments": '
        '{"action": "type", "text": "helo"}}\n</tool_call>',
        'Action: Save it.\n<tool_call>\n{"name": "computer_use", "arguments": '
        '{"action": "key", "keys": ["ctrl", "s"]}}\n</tool_call>',
        'Action: The file is saved.\n<tool_call>\n{"name": "computer_use", "arguments": '
        '{"action": "terminate", "status": "success"}}\n</tool_call>',
    ],
    "opencua": [
        "## Thought:\nThe terminal is in the middle.\n\n## Action:\nClick the terminal.\n\n## Code:\n"
        "```python\npyautogui.click(x=966, y=546)\n```",
        "## Thought:\nIt is focused.\n\n## Action:\nType the word.\n\n## Code:\n"
        "```python\npyautogui.write(message='helo')\n```",
        "## Thought:\nSave the file.\n\n## Action:\nSave it.\n\n## Code:\n"
        "```python\npyautogui.hotkey('ctrl', 's')\n```",
        "## Thought:\nThe file is saved.\n\n## Action:\nFinish.\n\n## Code:\n"
        "```code\ncomputer.terminate(status='success')\n```",
    ],
}


def screen_png(shade: int) -> bytes:
    """A full-size PNG screen of its own colour (each observation differs)."""
    buf = io.BytesIO()
    image = Image.new("RGB", SCREEN, (shade % 256, 90, 160))
    image.paste((255, 255, 255), (100 + shade, 100, 300 + shade, 200))
    image.save(buf, "PNG")
    return buf.getvalue()


class _Guest:
    def __init__(self, env: ScreenEnv) -> None:
        self.env = env

    async def screenshot(self, **_: Any) -> bytes:
        return self.env.screen


class ScreenEnv(Env):
    """An env whose screen changes after every batch of actions; it records what it executed."""

    name = "screens"

    def __init__(self) -> None:
        self.shade = 0
        self.screen = screen_png(0)
        self.executed: list[Action] = []

    @property
    def guest(self) -> Any:
        return _Guest(self)

    @property
    def screen_size(self) -> tuple[int, int]:
        return SCREEN

    async def reset(self, task: Task | None = None, *, task_dir: Path | None = None) -> Observation:
        return await self.observe()

    async def observe(self, *, accessibility_tree: bool = False) -> Observation:
        return Observation(screenshot=self.screen, width=SCREEN[0], height=SCREEN[1])

    async def execute(self, actions: Sequence[Action]) -> None:
        self.executed += actions
        self.shade += 37
        self.screen = screen_png(self.shade)

    async def close(self) -> None:
        return None


@dataclass
class RecordedRun:
    """The run folder and the chat requests the server received, in order."""

    path: Path
    requests: list[dict[str, Any]]
    replies: list[str]


async def _score(env: Env, task: Task, actions: Sequence[Action]) -> float:
    return 1.0


async def record_run(server: FakeOpenAIServer, root: Path, agent: str, **profile: Any) -> RecordedRun:
    """Run the scripted episode with ``agent`` (a key of :data:`REPLIES`) and return its store."""
    replies = REPLIES[agent]
    server.queue(*replies)
    settings = Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": "test-model", "max_retries": 0},
            "profiles": {"p": {"agent": agent, "temperature": 0.25, **profile}},
        }
    )
    resolved = settings.resolve_profile("p")
    model_agent = make_agent(resolved, api_key="sk-test-recorded-run-key-0001")
    task = Task.model_validate(
        {"id": "recorded", "instruction": "Write hello and save.", "evaluator": {"func": "infeasible"}}
    )
    store = RunStoreWriter.create(
        root,
        task,
        domain="os",
        model="test-model",
        agent=agent,
        action_space=resolved.action_space,
        observation_type=resolved.observation_type,
        screen_size=SCREEN,
        secrets=model_agent.secrets,
    )
    env = ScreenEnv()
    episode = Episode(
        task,
        model_agent,
        env,
        config=EpisodeConfig(mode="approve", max_steps=10, settle=SettlePolicy.off()),
        store=store,
        evaluate=_score,
        domain="os",
    )
    loop = asyncio.get_running_loop()

    def decide(proposal: Proposal) -> None:
        if proposal.index == 2:
            loop.call_soon(episode.approve, list(EDIT))
        else:
            loop.call_soon(episode.approve)

    episode.step_proposed.connect(decide)
    episode.step_finished.connect(lambda step: episode.begin_takeover() if step.index == 2 else None)
    run = asyncio.ensure_future(episode.run())
    deadline = loop.time() + 30
    while not (episode.in_takeover and len(episode.steps) == 2):
        assert loop.time() < deadline, "the takeover did not begin"
        await asyncio.sleep(0.01)
    await episode.human_act(list(TAKEOVER))
    episode.end_takeover()
    result = await asyncio.wait_for(run, 30)
    await model_agent.aclose()
    assert result.status == "finished", result
    return RecordedRun(store.path, [r.json for r in server.chat_requests], replies)
