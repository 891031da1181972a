"""RemoteEnv on an OSWorld guest (no /capabilities): actions go as pyautogui code through /execute."""

from __future__ import annotations

import pytest

from osw_studio.actions.pyautogui import render_pyautogui
from osw_studio.core.actions import Click, Done, Hotkey, Typing, Wait
from osw_studio.core.errors import GuestError
from osw_studio.envs.guest_client import RetryPolicy
from osw_studio.envs.registry import make_env
from osw_studio.envs.remote import RemoteEnv
from tests.envs.fake_guest import FakeGuest, json_reply

FAST = RetryPolicy(attempts=2, delay=0.01)


async def test_actions_become_the_exact_execute_body_osworld_sends(osworld: FakeGuest) -> None:
    env = await make_env("remote", url=osworld.start(), retry=FAST)
    async with env:
        assert isinstance(env, RemoteEnv) and env.capabilities is None
        assert env.screen_size == (1920, 1080)
        await env.execute([Click(x=100, y=100)])
        await env.execute([Hotkey(keys=["ctrl", "s"]), Typing(text="hi"), Wait(), Done()])
        await env.execute([Done()])  # nothing to send
    bodies = [r.json() for r in osworld.calls("/execute")]
    assert bodies[0] == {
        "command": [
            "python",
            "-c",
            "import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(100, 100)",
        ],
        "shell": False,
    }
    prefix = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
    code = render_pyautogui([Hotkey(keys=["ctrl", "s"]), Typing(text="hi")])
    assert bodies[1] == {"command": ["python", "-c", prefix + code], "shell": False}
    assert len(bodies) == 2
    assert osworld.calls("/input") == []


async def test_a_failing_pyautogui_run_is_an_error_with_its_output(osworld: FakeGuest) -> None:
    failed = {"status": "error", "output": "", "error": "ModuleNotFoundError: pyautogui", "returncode": 1}
    osworld.route("POST", "/execute", lambda r: json_reply(failed))
    async with await RemoteEnv.open(osworld.start(), retry=FAST) as env:
        with pytest.raises(GuestError, match="ModuleNotFoundError: pyautogui"):
            await env.execute([Click(x=1, y=2)])


async def test_unknown_providers_say_what_to_use() -> None:
    with pytest.raises(GuestError, match="choose one of: docker, local, remote"):
        await make_env("vmware")
