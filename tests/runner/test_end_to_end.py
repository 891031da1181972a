"""End to end on the local sandbox: a scripted model on a local OpenAI-compatible server solves a task.

The model is the real OSWorld prompt agent talking HTTP to ``tests.fakes.openai_server``; the desktop is
a real local sandbox; the evaluator is the real one; the store is read back from disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from osw_studio.agent.osworld import OSWorldAgent
from osw_studio.core.actions import Click, Done, Typing
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from osw_studio.tasks.load import load_task
from osw_studio.trajectory.layout import image_size
from osw_studio.trajectory.store import RunStore
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server
from tests.runner.conftest import TASKS

__all__ = ["openai_server"]

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

REPLIES = [
    "The terminal is open; I click into it first.\n"
    "```python\nimport pyautogui\npyautogui.click(500, 340)\n```",
    "Now I write the file.\n```python\npyautogui.typewrite('echo hello > ~/Desktop/hello.txt\\n')\n```",
    "DONE",
]


def model_agent(server: FakeOpenAIServer) -> OSWorldAgent:
    settings = Settings.model_validate(
        {"model_provider": {"base_url": server.base_url, "model": "test-model", "max_retries": 0}}
    )
    return OSWorldAgent(settings.resolve_profile(), api_key="sk-test-secret-key")


async def test_scripted_model_solves_a_task_and_every_step_is_stored(
    sandbox: Env, openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    for text in REPLIES:
        openai_server.queue(Reply(text=text))
    entry = load_task(TASKS / "os" / "write-hello-file.json")
    agent = model_agent(openai_server)
    store = RunStoreWriter.create(
        tmp_path,
        entry.task,
        domain=entry.domain,
        model="test-model",
        agent="osworld",
        screen_size=sandbox.screen_size,
        secrets=["sk-test-secret-key"],
    )
    episode = Episode(entry.task, agent, sandbox, store=store, domain=entry.domain)
    tokens: list[str] = []
    episode.model_token.connect(tokens.append)
    try:
        result = await asyncio.wait_for(episode.run(), 90)
    finally:
        await agent.aclose()

    assert (result.status, result.success, result.score, result.steps) == ("finished", True, 1.0, 3)
    assert (result.task_id, result.domain, result.model) == ("write-hello-file", "os", "test-model")
    reader = RunStore(store.path)
    assert reader.status == "finished" and not reader.interrupted
    assert reader.result is not None and reader.result.score == 1.0
    steps = list(reader.iter_steps())
    assert [s.index for s in steps] == [1, 2, 3]
    assert [s.response for s in steps] == REPLIES
    assert [s.executed for s in steps] == [
        [Click(x=500, y=340)],
        [Typing(text="echo hello > ~/Desktop/hello.txt\n")],
        [Done()],
    ]
    assert [s.verdict for s in steps] == ["auto"] * 3
    assert steps[0].thought == "The terminal is open; I click into it first."
    for step in steps:
        screen = reader.screenshot_path(step)
        assert screen is not None and screen.name == f"step_{step.index:04d}.png"
        assert image_size(screen.read_bytes()) == (1920, 1080)
        assert step.usage is not None and step.usage.total_tokens > 0
        assert step.timings["predict"] >= 0 and step.finished_at is not None
    assert reader.final_screen_path() is not None
    # The model saw one screenshot per step; its streamed text reached the listeners.
    chats = [r for r in openai_server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 3
    assert "".join(tokens) == "".join(REPLIES)
    # The key never reaches the store.
    for file in store.path.rglob("*"):
        if file.is_file():
            assert b"sk-test-secret-key" not in file.read_bytes(), file


async def test_stop_cancels_a_slow_model_call(
    sandbox: Env, openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.queue(Reply(text=REPLIES[0]))
    openai_server.queue(Reply(text=REPLIES[1], delay=60))
    entry = load_task(TASKS / "os" / "write-hello-file.json")
    agent = model_agent(openai_server)
    store = RunStoreWriter.create(tmp_path, entry.task, model="test-model")
    episode = Episode(entry.task, agent, sandbox, store=store, config=EpisodeConfig(max_steps=5))

    def on_state(new: str, old: str) -> None:
        if new == "predicting" and episode.step_index == 1:
            asyncio.get_running_loop().call_later(0.5, episode.stop)

    episode.state_changed.connect(on_state)
    try:
        # Far less than the reply's 60 s delay: the call in flight was cancelled, not awaited.
        result = await asyncio.wait_for(episode.run(), 30)
    finally:
        await agent.aclose()
    assert (result.status, result.score, result.steps) == ("stopped", None, 1)
    reader = RunStore(store.path)
    assert reader.status == "stopped"
    assert [s.index for s in reader.iter_steps()] == [1]
