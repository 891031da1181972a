"""Differential tests: our ``uitars`` agent (UI-TARS-1.5) against OSWorld's uitars15_v1 agent.

The reference is OSWorld's ``mm_agents/uitars15_v1.py`` ``UITARSAgent`` with ``model_type="qwen25vl"`` (how
OSWorld runs UI-TARS-1.5: the model writes pixels of the smart-resized screenshot) and
its run script's defaults; its OpenAI client is replaced by a recorder of the request it sends. Ours runs
the ``uitars-1.5`` preset (also with a DART-GUI-7B reply) with ``prompts: reference`` against the
OpenAI-compatible test server. Requests must be equal (see :mod:`tests.parity.episodes`), and the
actions too: the reference's pyautogui code, read by our parser, against what our agent parsed.

The reference's code paces typing with ``time.sleep`` (not compared: our guest types at its own pace), and
a ``wait()`` lasts what OSWorld's env sleeps for ``WAIT`` (2 s), where ours waits the 5 s the prompt's
action space promises: waits are compared without their length. ``finished(content=...)`` keeps its
content as the ``Done`` message here (OSWorld's ``DONE`` has none): not compared.
Deliberate differences: the reference turns ``call_user()`` into WAIT itself (then FAIL after its
tolerance), where our agent proposes a hand-back and the episode applies the same policy
(tests/runner/test_hand_back.py); it ``eval``s the model's boxes, we parse numbers (its re-ask after an
unparsable reply, which the presets copy, is compared in tests/parity/test_agents_reask.py); it cannot
read a box written with its tokens (``start_box='<|box_start|>(5,6)<|box_end|>'``, float() fails and
it asks again), which we read as the point it is.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from osw_studio.actions import canonical_actions, parse_pyautogui
from osw_studio.agent.uitars import UITarsAgent
from osw_studio.core.actions import Action, Click, Done, Fail, Wait
from tests.parity.episodes import (
    SCRIPTED_VLM,
    STUBS,
    assert_same_requests,
    observations,
    run_ours,
    screen,
    site_packages,
)
from tests.parity.reference import Reference

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."
REPLIES = [
    # DART-GUI-7B's reply from the issue: smart-resized pixels of the 1920x1080 screenshot.
    "Thought: The File menu is at the top left; I click the Save button first.\n"
    "Action: click(start_box='(1188,554)')",
    "Thought: Type the name.\nAction: type(content='report.odt')",
    "Thought: Open the menu.\nAction: hotkey(key='ctrl s')",
    "Thought: Select the text.\nAction: drag(start_box='(100,200)', end_box='(400,200)')",
    "Thought: Look further down.\nAction: scroll(start_box='(966,546)', direction='down')",
    "Thought: Double-click the file.\nAction: left_double(start_box='(500,300)')",
    "Thought: Right-click it.\nAction: right_single(start_box='(500, 300)')",
    "Thought: Wait for the dialog.\nAction: wait()",
    "Thought: It is saved.\nAction: finished(content='saved')",
]
RUNTIME = {
    "infer_mode": "qwen25vl_normal",
    "prompt_style": "qwen25vl_normal",
    "input_swap": False,
    "language": "English",
    "history_n": 5,
    "max_pixels": 16384 * 28 * 28,
    "min_pixels": 100 * 28 * 28,
    "callusr_tolerance": 3,
    "temperature": 1.0,
    "top_p": 0.9,
    "top_k": -1,
    "max_tokens": 500,
}

REFERENCE_EPISODE = (
    """
import base64, copy, os, types
os.environ.setdefault("DOUBAO_API_URL", "http://127.0.0.1:9/v1")
os.environ.setdefault("DOUBAO_API_KEY", "unused")
agent = m0.UITARSAgent(
    model=model, runtime_conf=runtime, observation_type="screenshot", model_type="qwen25vl"
)
"""
    + SCRIPTED_VLM
)


def reference_episode(reference: Reference, model: str, size: tuple[int, int]) -> dict[str, Any]:
    reference.stub(*STUBS)
    shots = [base64.b64encode(screen(i, size)).decode() for i in range(1, len(REPLIES) + 1)]
    code = (
        f"model = {model!r}\nruntime = {RUNTIME!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nreplies = {REPLIES!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code, modules=("mm_agents.uitars15_v1",))  # type: ignore[no-any-return]


_DOCSTRING = re.compile(r"'''.*?'''\n", re.DOTALL)
_PACING = re.compile(r"^time\.sleep\([^)]*\)$", re.MULTILINE)


def reference_actions(produced: list[str]) -> list[Action]:
    """The reference's pyautogui code (or DONE / WAIT / FAIL) for one step, as our actions."""
    words = {"WAIT": Wait(), "DONE": Done(), "FAIL": Fail()}
    actions: list[Action] = []
    for item in produced:
        if item in words:
            actions.append(words[item])
        else:  # its code starts with a string holding the thought, and paces typing with sleeps
            code = _PACING.sub("", _DOCSTRING.sub("", item))
            actions += parse_pyautogui(f"```python\n{code}\n```")
    return actions


def unpaced(actions: list[Action]) -> list[Action]:
    """Canonical actions with every wait's length and every finish's message dropped (see the module docs)."""
    plain = {Wait: Wait(), Done: Done(), Fail: Fail()}
    return [plain.get(type(a), a) for a in canonical_actions(actions)]


def assert_same_actions(ours: list[list[Action]], produced: list[list[str]]) -> None:
    """Our actions of each step against the reference's output for it, :func:`unpaced`."""
    assert len(ours) == len(produced)
    for step, (mine, theirs) in enumerate(zip(ours, produced, strict=True), 1):
        assert unpaced(mine) == unpaced(reference_actions(theirs)), f"step {step}"


CASES = [
    ("uitars-1.5", "ui-tars-1.5-7b", (1920, 1080)),
    ("uitars-1.5", "dart-gui-7b", (1920, 1080)),
    ("uitars-1.5", "ui-tars-1.5-7b", (1280, 720)),
]


@pytest.mark.parametrize(("preset", "model", "size"), CASES, ids=[f"{m}-{s[0]}x{s[1]}" for _, m, s in CASES])
async def test_requests_and_actions_match_the_reference(
    reference: Reference, monkeypatch: pytest.MonkeyPatch, preset: str, model: str, size: tuple[int, int]
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    theirs = reference_episode(reference, model, size)
    steps = observations(len(REPLIES), size)
    predictions, requests = await run_ours(UITarsAgent, model, preset, INSTRUCTION, REPLIES, steps)
    assert len(requests) == len(REPLIES)
    assert_same_requests(requests, theirs["requests"])
    ours = [p.actions for p in predictions]
    assert_same_actions(ours, theirs["actions"])
    if size == (1920, 1080):
        # The example: (1188, 554) in the smart-resized frame is about (1181, 548) on the screen.
        assert ours[0] == [Click(x=1181, y=548)]
