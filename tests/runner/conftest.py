"""Fixtures for runner tests: a real local sandbox desktop per test, and tasks that run on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.envs.registry import make_env

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox() -> AsyncIterator[Env]:
    """A local sandbox (Xvfb, openbox, guest server) shared by a test module's tests.

    Modules that use it run their tests on the module's event loop
    (``pytest.mark.asyncio(loop_scope="module")``); each task's setup opens its own terminal.
    """
    env = await make_env("local")
    try:
        yield env
    finally:
        await env.close()


def terminal_task(expected: str) -> Task:
    """A task with a terminal open; it is solved when ``~/out.txt`` holds ``expected`` and a newline."""
    return Task.model_validate(
        {
            "id": "runner-test",
            "instruction": f"Write {expected} into ~/out.txt using the terminal.",
            "config": [
                {"type": "execute", "parameters": {"command": "rm -f ~/out.txt", "shell": True}},
                {"type": "launch", "parameters": {"command": ["xterm", "-geometry", "100x30+200+150"]}},
                {"type": "sleep", "parameters": {"seconds": 1}},
            ],
            "evaluator": {
                "func": "exact_match",
                "result": {"type": "vm_command_line", "command": "cat ~/out.txt", "shell": True},
                "expected": {"type": "rule", "rules": {"expected": f"{expected}\n"}},
            },
        }
    )
