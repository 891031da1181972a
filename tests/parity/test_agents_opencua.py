"""Differential tests: our ``opencua`` agent against OSWorld's ``mm_agents/opencua`` OpenCUAAgent.

The reference runs its own ``predict`` (and ``call_llm``: ``httpx.post`` is replaced by a recorder of the
JSON payload it posts, answering the scripted reply) with ``history_type="action_history"``,
``cot_level="l2"``, three screenshots, ``max_tokens=1500``, ``temperature=0``, ``top_p=0.9``, the
guest's password, and ``coordinate_type`` ``qwen25`` (OpenCUA-7B/32B) or ``relative``; ``screen_size`` is
the screenshots' size. Ours runs the ``opencua-7b`` preset with ``prompts: reference`` (asking again
after an unparsable reply: :mod:`tests.parity.test_agents_reask_cua`). Requests must be equal (see
:mod:`tests.parity.episodes`) and so must the actions: the reference's pyautogui code (or WAIT / DONE /
FAIL), read by our parser, against what our agent parsed.

What cannot run in desktop-env 1.0.2: ``OpenCUAAgent.reset()`` names ``logging``, which the module never
imports (NameError), so the reference agent is used fresh, with the state ``reset()`` would give (its
module logger set as ``reset()`` sets it). Its imports of ``httpx`` and ``loguru`` are stubbed
(``httpx.post`` is the recorder; loguru only logs).
Deliberate differences (not in this episode): a ``computer.wait()`` waits the 20 s the prompt promises
here (OSWorld's WAIT: its env's pause); ``computer.triple_click`` triple-clicks (a NameError there);
coordinates of ``scroll``/``mouseDown``/``mouseUp`` are projected (OSWorld leaves them as written);
``screen_size`` is a constructor argument there; with a ``screenshot_size`` smaller than the screen we
map through the image actually sent.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from osw_studio.actions import smart_resize
from osw_studio.agent.opencua import OpenCUAAgent
from osw_studio.core.actions import Click
from tests.parity.episodes import STUBS, assert_same_requests, observations, run_ours, screen, site_packages
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."


def reply(action: str, code: str, *, fence: str = "python") -> str:
    """An OpenCUA l2 reply."""
    thought = "## Thought:\nI look at the screen and decide.\n\n"
    return thought + f"## Action:\n{action}\n\n## Code:\n```{fence}\n{code}\n```"


def replies(convention: str, size: tuple[int, int]) -> list[str]:
    """The episode's replies, points written for a 1932x1092 frame scaled to the convention's frame
    (qwen25: pixels of the smart-resized screenshot; relative: 0-1).
    """
    height, width = smart_resize(size[1], size[0])

    def at(x: float, y: float) -> str:
        if convention == "qwen25":
            return f"x={round(x * width / 1932)}, y={round(y * height / 1092)}"
        return f"x={round(x / 1932, 4)}, y={round(y / 1092, 4)}"

    return [
        reply("Click the File menu.", f"pyautogui.click({at(966, 546)})"),
        reply("Type the name.", "pyautogui.write(message='report.odt')"),
        reply("Save it.", "pyautogui.hotkey('ctrl', 's')"),
        reply("Open the file.", f"pyautogui.doubleClick({at(500, 300)})"),
        reply("Open its menu.", f"pyautogui.rightClick({at(1500, 900)})"),
        reply(
            "Select the line.",
            f"pyautogui.moveTo({at(100, 200)})\npyautogui.dragTo({at(400, 200)}, duration=0.5)",
        ),
        reply("Scroll down.", "pyautogui.scroll(-5)"),
        reply("Wait for the dialog.", "computer.wait()", fence="code"),
        reply("Confirm.", "pyautogui.press('enter')"),
        reply("Done.", "computer.terminate(status='success')", fence="code"),
    ]


REFERENCE_EPISODE = """
import base64, copy, os, types
os.environ.setdefault("OPENCUA_API_KEY", "unused")
agent_module = load("mm_agents.opencua.opencua_agent")
requests, actions = [], []
replies_left = list(replies)

def post(url, headers=None, json=None, timeout=None, verify=None):
    requests.append(copy.deepcopy(json))
    body = {"choices": [{"finish_reason": "stop", "message": {"content": replies_left.pop(0)}}]}
    return types.SimpleNamespace(status_code=200, json=lambda: body, text="")

agent_module.httpx = types.SimpleNamespace(post=post)
agent = agent_module.OpenCUAAgent(
    model=model, history_type="action_history", max_steps=100, max_image_history_length=3,
    max_tokens=1500, top_p=0.9, temperature=temperature, cot_level="l2", screen_size=tuple(size),
    coordinate_type=coordinate_type, password="password",
)
# no agent.reset(): it raises NameError in 1.0.2 (module docs). A fresh agent is in the state it would
# leave, but for the module's logger, which reset() would set to this one:
import logging
agent_module.logger = logging.getLogger("desktopenv.agent")
for shot in shots:
    _, code, _ = agent.predict(instruction, {"screenshot": base64.b64decode(shot)})
    actions.append(code)
result = {"requests": requests, "actions": actions}
"""


def reference_episode(
    reference: Reference,
    coordinate_type: str,
    size: tuple[int, int],
    episode: list[str],
    *,
    steps: int | None = None,
    temperature: float = 0,
) -> dict[str, Any]:
    """OSWorld's agent through ``steps`` screenshots (default: one per reply), answering ``episode``."""
    reference.stub(*STUBS, "httpx")
    count = len(episode) if steps is None else steps
    shots = [base64.b64encode(screen(i, size)).decode() for i in range(1, count + 1)]
    code = (
        f"model = 'opencua-7b'\ncoordinate_type = {coordinate_type!r}\nsize = {list(size)!r}\n"
        f"temperature = {temperature!r}\n"
        f"instruction = {INSTRUCTION!r}\nshots = {shots!r}\nreplies = {episode!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code)  # type: ignore[no-any-return]


# The whole episode at full size; six steps (the image window overflows) in the other cases, for CI time.
CASES = [
    ("qwen25", "smart", (1920, 1080), 10),
    ("qwen25", "smart", (1280, 720), 6),
    ("relative", "norm", (1920, 1080), 6),
]


@pytest.mark.parametrize(
    ("coordinate_type", "mode", "size", "steps"), CASES, ids=[f"{c}-{s[0]}x{s[1]}" for c, _, s, _ in CASES]
)
async def test_requests_and_actions_match_the_reference(
    reference: Reference,
    monkeypatch: pytest.MonkeyPatch,
    coordinate_type: str,
    mode: str,
    size: tuple[int, int],
    steps: int,
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    episode = replies(coordinate_type, size)[:steps]
    theirs = reference_episode(reference, coordinate_type, size, episode)
    predictions, requests = await run_ours(
        OpenCUAAgent, "opencua-7b", "opencua-7b", INSTRUCTION, episode, observations(steps, size),
        coordinate_mode=mode,
    )  # fmt: skip
    assert len(requests) == steps
    assert_same_requests(requests, theirs["requests"])
    ours = [p.actions for p in predictions]
    assert_same_actions(ours, theirs["actions"])
    if (coordinate_type, size) == ("qwen25", (1920, 1080)):
        # the middle of the 1932x1092 frame the model saw is the middle of the screen
        assert ours[0] == [Click(x=960, y=540)]
    # three screenshots at most: two of history and the current one
    images = [
        p for m in requests[-1]["messages"] if isinstance(m["content"], list)
        for p in m["content"] if p.get("type") == "image_url"
    ]  # fmt: skip
    assert len(images) == 3
