"""Coordinates through the real guest: in every mode and screenshot size, a click lands on its target.

A local sandbox shows a magenta window at a known place. For each profile, the agent first asks the
model once (to see the image it sends), the test finds the target in that image and writes the reply a
model would write in the profile's frame (pixels of the image, of its Qwen smart-resize, 0-1000, 0-999 or
0-1), in the reply format of the profile's agent (pyautogui, computer_13, UI-TARS, Qwen3-VL tool calls,
OpenCUA code);
then the agent predicts from that reply, the guest runs the actions, and the pointer must be on the
target.
"""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image

from osw_studio.actions import smart_resize
from osw_studio.agent.registry import make_agent
from osw_studio.core.observation import Observation
from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.envs.registry import make_env
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

MAGENTA = (255, 0, 255)
TARGET = Task.model_validate(
    {
        "id": "coordinates",
        "instruction": "Click the magenta window.",
        "config": [
            {"type": "launch", "parameters": {"command": [
                "xterm", "-bg", "#ff00ff", "-fg", "#ff00ff", "-geometry", "24x4+1310+690"]}},
            {"type": "sleep", "parameters": {"seconds": 1}},
        ],
        "evaluator": {"func": "infeasible"},
    }
)  # fmt: skip


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guest() -> AsyncIterator[tuple[Env, Observation]]:
    env = await make_env("local")
    try:
        observation = await env.reset(TARGET)
        yield env, observation
    finally:
        await env.close()


def magenta_box(png: bytes) -> tuple[int, int, int, int]:
    """The bounding box (left, top, right, bottom) of the magenta pixels of an image."""
    with Image.open(io.BytesIO(png)) as image:
        rgb = image.convert("RGB")
        mask = Image.eval(rgb.split()[0], lambda v: 255 if v > 220 else 0)
        green = Image.eval(rgb.split()[1], lambda v: 255 if v < 40 else 0)
        blue = Image.eval(rgb.split()[2], lambda v: 255 if v > 220 else 0)
        both = Image.composite(
            mask, Image.new("L", rgb.size), Image.composite(green, Image.new("L", rgb.size), blue)
        )
        box = both.getbbox()
    assert box is not None, "the magenta target is not on the screen"
    return box


def sent_image(request: dict[str, Any]) -> bytes:
    last = request["messages"][-1]["content"]
    url = next(p["image_url"]["url"] for p in last if p["type"] == "image_url")
    return base64.b64decode(url.split(",", 1)[1])


def model_point(mode: str, centre: tuple[float, float], image: tuple[int, int]) -> tuple[str, str]:
    """What a model in ``mode`` writes for ``centre`` (pixels of the image it was sent)."""
    x, y = centre
    width, height = image
    if mode in ("abs", "resized"):
        return str(round(x)), str(round(y))
    if mode == "smart":
        h_bar, w_bar = smart_resize(height, width, min_pixels=100 * 28 * 28)
        return str(round(x * w_bar / width)), str(round(y * h_bar / height))
    if mode == "rel1000":
        return str(round(x * 1000 / width)), str(round(y * 1000 / height))
    if mode == "rel999":
        return str(round(x * 999 / width)), str(round(y * 999 / height))
    return f"{x / width:.4f}", f"{y / height:.4f}"  # norm


def waiting(agent: str) -> str:
    """A reply that only waits, in the agent's format."""
    return {
        "osworld": "```WAIT```",
        "uitars": "Action: wait()",
        "qwen3vl": 'Action: Wait.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "wait"}}\n'
        "</tool_call>",
        "opencua": "## Action:\nWait.\n\n## Code:\n```code\ncomputer.wait()\n```",
    }[agent]


def reply(agent: str, space: str, point: tuple[str, str]) -> str:
    x, y = point
    if agent == "qwen3vl":
        call = (
            f'{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{x}, {y}]}}}}'
        )
        return f"Action: Click the magenta window.\n<tool_call>\n{call}\n</tool_call>"
    if agent == "opencua":
        code = f"pyautogui.click(x={x}, y={y})"
        return f"## Action:\nClick the magenta window.\n\n## Code:\n```python\n{code}\n```"
    if agent == "uitars":
        return f"Thought: the magenta window.\nAction: click(start_box='({x},{y})')"
    if space == "computer_13":
        return f'```json\n{{"action_type": "CLICK", "x": {x}, "y": {y}}}\n```'
    return f"The magenta window.\n```python\npyautogui.click({x}, {y})\n```"


CASES = [
    ("osworld", "pyautogui", "abs", None),
    ("osworld", "pyautogui", "abs", "1280x720"),
    ("osworld", "computer_13", "abs", "1280x720"),
    ("osworld", "pyautogui", "norm", "1280x720"),
    ("uitars", "uitars", "smart", None),
    ("uitars", "uitars", "smart", "1280x720"),
    ("uitars", "uitars", "rel1000", None),
    ("uitars", "uitars", "rel1000", "1280x720"),
    # OSWorld's Qwen3-VL agent: 999ths of the screen, or pixels of the smart-resized image it was sent
    ("qwen3vl", "pyautogui", "rel999", None),
    ("qwen3vl", "pyautogui", "rel999", "1280x720"),
    ("qwen3vl", "pyautogui", "abs", None),
    ("qwen3vl", "pyautogui", "abs", "1280x720"),
    # OpenCUA-7B/32B (qwen25: smart-resized pixels) and its relative (0-1) convention
    ("opencua", "pyautogui", "smart", None),
    ("opencua", "pyautogui", "smart", "1280x720"),
    ("opencua", "pyautogui", "norm", "1280x720"),
]


@pytest.mark.parametrize(
    ("agent_kind", "space", "mode", "size"), CASES, ids=[f"{a}-{s}-{m}-{z or 'full'}" for a, s, m, z in CASES]
)
async def test_a_click_lands_on_its_target(
    guest: tuple[Env, Observation], agent_kind: str, space: str, mode: str, size: str | None
) -> None:
    env, _ = guest
    observation = await env.observe()
    left, top, right, bottom = magenta_box(observation.screenshot)
    profile: dict[str, Any] = {"agent": agent_kind, "coordinate_mode": mode, "screenshot_size": size}
    if agent_kind == "osworld":
        profile["action_space"] = space
    with FakeOpenAIServer(models=["m"]) as server:
        settings = Settings.model_validate(
            {"model_provider": {"base_url": server.base_url, "model": "m", "max_retries": 0},
             "profiles": {"p": profile}}
        )  # fmt: skip
        agent = make_agent(settings.resolve_profile("p"), api_key="k")
        try:
            server.queue(waiting(agent_kind))
            await agent.predict(TARGET.instruction, observation)  # to see the image the model is sent
            image = sent_image(server.chat_requests[0].json)
            with Image.open(io.BytesIO(image)) as shown:
                shown_size = shown.size
            box = magenta_box(image)
            centre = ((box[0] + box[2] - 1) / 2, (box[1] + box[3] - 1) / 2)
            agent.reset(TARGET)
            server.queue(reply(agent_kind, space, model_point(mode, centre, shown_size)))
            prediction = await agent.predict(TARGET.instruction, observation)
        finally:
            await agent.aclose()
    assert prediction.error is None, prediction.error
    # pixels of an image that is not the screen are "resized" (Qwen3-VL's image is always smart-resized)
    resized = mode == "abs" and (size is not None or agent_kind == "qwen3vl")
    assert prediction.coordinate_mode == ("resized" if resized else mode)
    await env.execute(prediction.actions)
    x, y = await env.guest.cursor_position()
    assert left <= x < right and top <= y < bottom, (
        f"the click at ({x}, {y}) missed {left, top, right, bottom}"
    )
    screen_centre = ((left + right - 1) / 2, (top + bottom - 1) / 2)
    assert abs(x - screen_centre[0]) <= 3 and abs(y - screen_centre[1]) <= 3, (x, y, screen_centre)
