"""An episode meets a hostile model: a reply too long to keep, a lone surrogate, waits that add up to hours.

The model is a real OpenAI-compatible server on 127.0.0.1 (or the scripted agent, for the waits); the
env is in-process; the run store is read back from disk.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent import make_agent
from osw_studio.agent.base import Agent
from osw_studio.core import limits
from osw_studio.core.step import EpisodeResult, ReplyAttempt, StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.settle import SettlePolicy
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.recorded_run import SCREEN, ScreenEnv
from tests.runner.scripted import ScriptedAgent

pytestmark = pytest.mark.timeout(60)

TASK = Task.model_validate({"id": "hostile", "instruction": "Do it.", "evaluator": {"func": "infeasible"}})


async def _score(*_: Any) -> float:
    return 1.0


def _model_agent(server: FakeOpenAIServer) -> Agent:
    settings = Settings.model_validate(
        {"model_provider": {"base_url": server.base_url, "model": "test-model", "max_retries": 0}}
    )
    return make_agent(settings.resolve_profile(), api_key="sk-test-episode-limits-0001")


def _episode(agent: Agent, root: Path, **config: Any) -> tuple[Episode, RunStoreWriter]:
    store = RunStoreWriter.create(root, TASK, domain="os", model="test-model", screen_size=SCREEN)
    settings = {"max_steps": 5, "settle": SettlePolicy.off(), **config}
    episode = Episode(
        TASK, agent, ScreenEnv(), config=EpisodeConfig(**settings), store=store, evaluate=_score
    )
    return episode, store


async def _run_model(root: Path, *replies: Reply) -> tuple[EpisodeResult, RunStoreWriter]:
    """An episode of a model agent whose endpoint answers ``replies``."""
    with FakeOpenAIServer() as server:
        server.queue(*replies)
        agent = _model_agent(server)
        episode, store = _episode(agent, root)
        try:
            return await asyncio.wait_for(episode.run(), 45), store
        finally:
            await agent.aclose()


def _lines(store: RunStoreWriter) -> list[dict[str, Any]]:
    raw = (store.path / "steps.jsonl").read_bytes()
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # strict UTF-8


async def test_a_reply_over_the_cap_ends_the_run_clearly_and_only_its_start_is_stored(tmp_path: Path) -> None:
    result, store = await _run_model(
        tmp_path, Reply(text="a" * (limits.MODEL_REPLY_CHARS + 100_000), chunk_chars=65536)
    )
    assert result.status == "error", result
    assert result.error is not None and "over the cap" in result.error, result.error
    (line,) = _lines(store)
    assert line["verdict"] == "error" and "over the cap" in line["error"]
    assert len(line["response"]) == limits.STORED_REPLY_CHARS
    assert line["response_chars"] > limits.MODEL_REPLY_CHARS
    assert (store.path / "steps.jsonl").stat().st_size < 2 * limits.STORED_REPLY_CHARS


async def test_a_lone_surrogate_in_a_reply_keeps_the_step_and_the_run(tmp_path: Path) -> None:
    reply = "I click \ud800 the button \udfff.\n```python\npyautogui.click(10, 20)\n```"
    result, store = await _run_model(tmp_path, Reply(text=reply), Reply(text="DONE"))
    assert result.status == "finished", result
    lines = _lines(store)
    assert len(lines) == 2
    assert lines[0]["response"] == reply.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")
    assert [(a["kind"], a["x"], a["y"]) for a in lines[0]["executed"]] == [("click", 10, 20)]
    (store.path / "result.json").read_bytes().decode("utf-8")


SLEEPS = "```python\nimport time\n" + "time.sleep(100)\n" * 200 + "pyautogui.click(5, 5)\n```"


async def test_the_waits_of_one_step_share_one_budget(tmp_path: Path) -> None:
    episode, store = _episode(ScriptedAgent([SLEEPS, "DONE"]), tmp_path, phase_timeouts={"execute": 1.0})
    started = time.monotonic()
    result = await asyncio.wait_for(episode.run(), 30)
    assert time.monotonic() - started < 10
    assert result.status == "finished"
    assert _lines(store)[0]["executed"][-1]["x"] == 5


async def test_a_stop_ends_a_long_wait_at_once_and_keeps_the_step(tmp_path: Path) -> None:
    reply = "```python\nimport time\npyautogui.click(7, 7)\ntime.sleep(50)\n```"
    episode, store = _episode(ScriptedAgent([reply, "DONE"]), tmp_path)
    executing = asyncio.Event()
    episode.state_changed.connect(lambda new, old: executing.set() if new == "executing" else None)
    run = asyncio.ensure_future(episode.run())
    await asyncio.wait_for(executing.wait(), 10)
    await asyncio.sleep(0.3)
    started = time.monotonic()
    episode.stop()
    result = await asyncio.wait_for(run, 20)
    assert time.monotonic() - started < 3
    assert result.status == "stopped"
    assert [line["index"] for line in _lines(store)] == [1]


def test_the_store_keeps_only_the_start_of_long_replies_and_attempts_in_valid_utf8(tmp_path: Path) -> None:
    store = RunStoreWriter.create(tmp_path, TASK, domain="os", model="test-model", screen_size=SCREEN)
    long = "x" * (limits.STORED_REPLY_CHARS * 4)
    step = StepRecord(
        index=1, response=long, thought="t\ud800", attempts=[ReplyAttempt(response=long, error="bad")]
    )
    store.write_step(step)
    store.finish(EpisodeResult(success=False, steps=1, task_id="hostile", error="guest said \udc80"))
    store.close()
    result = json.loads((store.path / "result.json").read_bytes().decode("utf-8"))
    assert result["error"] == "guest said \ufffd"
    (line,) = _lines(store)
    assert len(line["response"]) == limits.STORED_REPLY_CHARS and line["response_chars"] == len(long)
    assert len(line["attempts"][0]["response"]) == limits.STORED_REPLY_CHARS
    assert line["attempts_chars"] == [len(long)] and line["thought"] == "t\ufffd"
