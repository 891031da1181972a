"""Differential tests: our ``qwen25vl`` agent against OSWorld's ``mm_agents/qwen25vl_agent.py`` Qwen25VLAgent.

The reference is loaded from OSWorld's code at the tasks' commit (``../shared/osworld/upstream/``, which
has the ``mm_agents/utils/qwen_vl_utils.py`` the desktop-env 1.0.2 wheel lacks), with the defaults of
``scripts/python/run_multienv_qwen25vl.py`` (temperature 1.0, top_p 0.9, 1500 tokens) and the agent's
own (four steps of history); the OpenAI client its ``call_llm`` makes is replaced by a recorder of the
request it is asked to send, so its own ``predict`` runs unchanged. Ours runs the ``qwen2.5-vl`` preset
with the prompt evaluated from the same code. Requests must be equal (see :mod:`tests.parity.episodes`:
messages, images smart-resized to multiples of 28 at most 14*14*4*1280 pixels, bicubic, PNG; history;
sampling) and the actions too. Its ``terminate`` is DONE whatever the status (not in these replies: ours
fails a ``failure``); its code types with ``typewrite('...')`` unescaped (no quote in these replies); a
point past the image's edge (1288 wide for a 1280 screen) lands past the screen's in its code, where we
clamp it to the last pixel (no such point here).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from osw_studio.agent.qwen25vl import Qwen25VLAgent
from osw_studio.core.actions import Click
from tests.parity.conftest import UPSTREAM
from tests.parity.episodes import assert_same_requests, observations, openai_agent_episode, run_ours
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."


def call(action: str, **arguments: Any) -> str:
    """A tool call as Qwen2.5-VL writes it."""
    payload = json.dumps({"name": "computer_use", "arguments": {"action": action, **arguments}})
    return f"<tool_call>\n{payload}\n</tool_call>"


REPLIES = [  # pixels of the 1316x728 image a 1920x1080 screen is sent as
    "Action: Click the File menu.\n" + call("left_click", coordinate=[658, 364]),
    "Action: Type the file name.\n" + call("type", text="report.odt"),
    "Action: Save with the shortcut.\n" + call("key", keys=["ctrl", "s"]),
    "Action: Confirm.\n" + call("key", keys=["Return"]),
    "Action: Scroll down the list.\n" + call("scroll", pixels=-5),
    "Action: Open the file.\n" + call("double_click", coordinate=[1270, 3]),
    "Action: Open its menu.\n" + call("right_click", coordinate=[250, 700]),
    # no Action: line: the history names the step after its first call
    call("left_click", coordinate=[10, 720]),
    "Action: Point at the handle.\n" + call("mouse_move", coordinate=[100, 200]),
    "Action: Wait for the dialog.\n" + call("wait", time=2),
    "Action: The document is saved.\n" + call("terminate", status="success"),
]
RUN_SCRIPT = {"max_tokens": 1500, "top_p": 0.9, "temperature": 1.0}


def reference_episode(reference: Reference, size: tuple[int, int], replies: list[str]) -> dict[str, Any]:
    arguments = {**RUN_SCRIPT}
    return openai_agent_episode(
        reference,
        "mm_agents.qwen25vl_agent:Qwen25VLAgent",
        "qwen2.5-vl",
        arguments,
        INSTRUCTION,
        size,
        replies,
    )


CASES = [((1920, 1080), len(REPLIES)), ((1280, 720), 6)]


@pytest.mark.parametrize(("size", "steps"), CASES, ids=[f"{s[0]}x{s[1]}" for s, _ in CASES])
async def test_requests_and_actions_match_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], steps: int
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    replies = REPLIES[:steps]
    theirs = reference_episode(upstream, size, replies)
    predictions, requests = await run_ours(
        Qwen25VLAgent, "qwen2.5-vl", "qwen2.5-vl", INSTRUCTION, replies, observations(steps, size)
    )
    assert len(requests) == steps
    assert_same_requests(requests, theirs["requests"])
    ours = [p.actions for p in predictions]
    assert_same_actions(ours, theirs["actions"])
    if size == (1920, 1080):
        assert ours[0] == [Click(x=960, y=540)]  # 658/1316 and 364/728 of the screen, truncated
        task = requests[-1]["messages"][1]["content"][1]["text"]  # steps older than the window, listed
        assert (
            "Step 1: Action: Click the File menu." in task and "Step 8: Performing click action" not in task
        )
