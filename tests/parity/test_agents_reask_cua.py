"""Differential tests: what OpenCUA's and Qwen3-VL's agents do with a reply they cannot read.

OSWorld's ``mm_agents/opencua`` agent asks up to five times in one step while a reply does not parse
(no code block, no ``## Action:``, a ``computer.terminate`` without a status), the first call at the
agent's temperature and the later ones at ``max(0.2, temperature)``; when none parses, it returns
``FAIL``. The ``opencua-7b`` preset does the same (``parse_tries: 5``, ``reask_min_temperature: 0.2``,
``parse_exhausted: fail``). Both run a scripted episode (step 1 parses at the third reply, step 2 at
once, step 3 never), at the preset's temperature 0 (re-asks at 0.2) and at a user's 0.7 (re-asks at
0.7), and the requests (messages and sampling), their number and the actions must be equal.

OSWorld's ``qwen3vl_agent.py`` never asks again: a tool call it cannot read (bad JSON, no ``action``) or
a reply with none runs nothing, and the reply stays in the next steps' history. The ``qwen3-vl``
preset makes one call per step too; the step is a step error (or no action) and the run goes on with
the same history.
"""

from __future__ import annotations

import json

import pytest

from osw_studio.agent.opencua import OpenCUAAgent
from osw_studio.agent.qwen3vl import Qwen3VLAgent
from osw_studio.core.actions import Action, Click, Fail
from tests.parity import test_agents_opencua as opencua
from tests.parity import test_agents_qwen3vl as qwen3vl
from tests.parity.episodes import assert_same_requests, observations, run_ours, site_packages
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

SIZE = (1280, 720)
"""Small screenshots, for CI time (the coordinate arithmetic is covered in the agents' own tests)."""

NO_CODE = "## Thought:\nThe menu is open.\n\n## Action:\nClick Save."
NO_ACTION = "## Thought:\nThe menu is open.\n\n```python\npyautogui.click(x=400, y=200)\n```"
NO_STATUS = opencua.reply("Finish.", "computer.terminate()", fence="code")
GOOD = [
    opencua.reply("Click the File menu.", "pyautogui.click(x=640, y=364)"),
    opencua.reply("Type the name.", "pyautogui.write(message='report.odt')"),
]
OPENCUA_REPLIES = [NO_CODE, NO_ACTION, GOOD[0], GOOD[1], NO_STATUS, NO_CODE, NO_ACTION, NO_CODE, NO_CODE]
"""Step 1 parses at the third call, step 2 at the first; step 3 never (five calls)."""


@pytest.mark.parametrize(("temperature", "reask"), [(None, 0.2), (0.7, 0.7)], ids=["preset", "user-0.7"])
async def test_opencua_asks_again_as_the_reference_does(
    reference: Reference, monkeypatch: pytest.MonkeyPatch, temperature: float | None, reask: float
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    first = 0.0 if temperature is None else temperature
    theirs = opencua.reference_episode(reference, "qwen25", SIZE, OPENCUA_REPLIES, steps=3, temperature=first)
    own = {} if temperature is None else {"temperature": temperature}
    predictions, requests = await run_ours(
        OpenCUAAgent, "opencua-7b", "opencua-7b", opencua.INSTRUCTION, OPENCUA_REPLIES, observations(3, SIZE),
        errors=True, **own,
    )  # fmt: skip
    assert len(requests) == len(OPENCUA_REPLIES)
    assert_same_requests(requests, theirs["requests"], "call")
    assert [r["temperature"] for r in requests] == [first, reask, reask, first, first] + [reask] * 4
    assert theirs["actions"][2] == ["FAIL"]
    assert_same_actions([p.actions for p in predictions], theirs["actions"])
    one, two, three = predictions
    assert [a.response for a in one.attempts] == [NO_CODE, NO_ACTION]
    assert [a.temperature for a in one.attempts] == [first, reask]
    assert isinstance(one.actions[0], Click) and two.attempts == []
    assert len(three.actions) == 1 and isinstance(three.actions[0], Fail) and three.error is None
    assert [a.response for a in three.attempts] == [NO_STATUS, NO_CODE, NO_ACTION, NO_CODE, NO_CODE]
    assert "5 tries" in (three.actions[0].message or "")


def tool_call(payload: str) -> str:
    return f"<tool_call>\n{payload}\n</tool_call>"


QWEN_REPLIES = [
    # cut off inside the JSON: neither side can read it; its Action: line is step 1's instruction
    "Action: Click the File menu.\n" + tool_call('{"name": "computer_use", "arguments": {"action": "left_'),
    "Action: Click the File menu.\n" + qwen3vl.call("left_click", coordinate=[500, 500]),
    # arguments without an action (OSWorld: a KeyError it logs)
    "Action: Type the name.\n" + tool_call(json.dumps({"name": "computer_use", "arguments": {"text": "x"}})),
    "I cannot find the name field.",
    "Action: Type the name.\n" + qwen3vl.call("type", text="report.odt"),
    "Action: Save.\n" + qwen3vl.call("key", keys=["ctrl", "s"]),
]
"""Steps 1, 3 and 4 run nothing; at step 6 step 1 has left the four-step window for the text history."""


async def test_qwen3vl_never_asks_again_and_keeps_the_reply(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    theirs = qwen3vl.reference_episode(reference, "relative", SIZE, QWEN_REPLIES)
    predictions, requests = await run_ours(
        Qwen3VLAgent, "qwen3-vl", "qwen3-vl", qwen3vl.INSTRUCTION, QWEN_REPLIES,
        observations(len(QWEN_REPLIES), SIZE), errors=True,
    )  # fmt: skip
    assert_same_requests(requests, theirs["requests"], "call")
    assert len(requests) == len(QWEN_REPLIES)
    ran: list[list[Action]] = [[] if p.error else p.actions for p in predictions]
    assert_same_actions(ran, theirs["actions"])
    assert [i for i, actions in enumerate(ran, 1) if not actions] == [1, 3, 4]
    assert [p.error is not None for p in predictions] == [True, False, True, False, False, False]
    assert all(p.attempts == [] for p in predictions)
    last_text = requests[-1]["messages"][1]["content"][1]["text"]
    assert "Step 1: Click the File menu." in last_text
