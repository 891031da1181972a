"""Differential tests: our ``qwen3vl`` agent against OSWorld's ``mm_agents/qwen3vl_agent.py`` Qwen3VLAgent.

Why the reference "cannot run" in desktop-env 1.0.2: the module imports ``smart_resize`` from
``mm_agents.utils.qwen_vl_utils``, and the 1.0.2 wheel ships no ``mm_agents/utils`` package at all (its
RECORD has no such file; ``qwen25vl_agent``, ``jedi_3b_agent`` and ``jedi_7b_agent`` import it too), so
``import mm_agents.qwen3vl_agent`` fails with ModuleNotFoundError. OSWorld's repository has that file (a
copy of Qwen's ``qwen_vl_utils.smart_resize``); the wheel has the same function, copied from the same
Qwen source, in ``mm_agents/opencua/utils.py``. Here the missing module is stood in by that one (its
arguments and arithmetic are those of Qwen's: rounding to ``factor``, scaling into ``min_pixels`` ..
``max_pixels``; only its checks of tiny or extreme images differ, which these screenshots never reach).
The model SDKs it imports at the top (dashscope, openai, google.api_core) are stubbed: the compared path
is ``api_backend="openai"``, whose ``openai.OpenAI`` client is replaced by a recorder of the request it
is asked to send. With that, the agent's own ``predict`` runs unchanged.

The agent runs with its class defaults (``coordinate_type="relative"``, ``history_n=4``,
``max_tokens=32768``), and with ``coordinate_type="absolute"``; ours runs the ``qwen3-vl`` preset with
``prompts: reference``. Requests must be equal (see :mod:`tests.parity.episodes`): the same messages,
images (smart-resized to multiples of 32, bicubic, PNG) and sampling keys (``model`` and ``max_tokens``
only: the reference's OpenAI path leaves temperature and top_p to the server). Actions must be equal
too: the reference's pyautogui code, read by our parser, against what our agent parsed. Its DashScope
path (``api_backend="dashscope"``, the class default) converts the same messages to DashScope's format
and adds ``vl_high_resolution_images``: not an OpenAI-compatible request, not compared.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from osw_studio.agent.qwen3vl import Qwen3VLAgent
from osw_studio.core.actions import Click
from tests.parity.episodes import (
    SCRIPTED_OPENAI,
    STUBS,
    assert_same_requests,
    observations,
    run_ours,
    screen,
    site_packages,
)
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."


def call(action: str, **arguments: Any) -> str:
    """A tool call as Qwen3-VL writes it."""
    payload = json.dumps({"name": "computer_use", "arguments": {"action": action, **arguments}})
    return f"<tool_call>\n{payload}\n</tool_call>"


REPLIES = [
    "Action: Click the File menu.\n" + call("left_click", coordinate=[500, 500]),
    "Action: Type the file name.\n" + call("type", text="report.odt"),
    "Action: Save with the shortcut.\n" + call("key", keys=["ctrl", "s"]),
    "Action: Confirm.\n" + call("key", keys=["Return"]),
    "Action: Scroll down the list.\n" + call("scroll", pixels=-5),
    "Action: Open the file.\n" + call("double_click", coordinate=[998, 3]),
    "Action: Open its menu.\n" + call("right_click", coordinate=[250, 750]),
    "Action: Point at the handle.\n" + call("mouse_move", coordinate=[100, 200]),
    "Action: Drag it right.\n" + call("left_click_drag", coordinate=[600, 200]),
    "Action: Paste the selection.\n" + call("middle_click", coordinate=[333, 666]),
    # no Action: line: the history names the step after its first call
    call("left_click", coordinate=[10, 990]),
    "Action: Wait for the dialog.\n" + call("wait", time=2),
    "Action: The document is saved.\n" + call("terminate", status="success"),
]

REFERENCE_EPISODE = (
    SCRIPTED_OPENAI
    + """
import base64, copy, sys, types
# desktop-env 1.0.2 ships no mm_agents/utils: stand in its own copy of Qwen's smart_resize (module docs).
utils = load("mm_agents.opencua.utils")
package = types.ModuleType("mm_agents.utils")
package.__path__ = []
qwen_vl_utils = types.ModuleType("mm_agents.utils.qwen_vl_utils")
qwen_vl_utils.smart_resize = utils.smart_resize
sys.modules["mm_agents.utils"] = package
sys.modules["mm_agents.utils.qwen_vl_utils"] = qwen_vl_utils
agent_module = load("mm_agents.qwen3vl_agent")


agent_module.openai = types.SimpleNamespace(OpenAI=Client)
agent = agent_module.Qwen3VLAgent(model=model, api_backend="openai", coordinate_type=coordinate_type)
agent.reset()
for shot in shots:
    _, code = agent.predict(instruction, {"screenshot": base64.b64decode(shot)})
    actions.append(code)
result = {"requests": requests, "actions": actions}
"""
)


def reference_episode(
    reference: Reference, coordinate_type: str, size: tuple[int, int], replies: list[str]
) -> dict[str, Any]:
    reference.stub(*STUBS)
    shots = [base64.b64encode(screen(i, size)).decode() for i in range(1, len(replies) + 1)]
    code = (
        f"model = 'qwen3-vl'\ncoordinate_type = {coordinate_type!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nreplies = {replies!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code)  # type: ignore[no-any-return]


# The whole episode at full size; the first six replies (the history window overflows once) elsewhere,
# to keep CI's time (each step encodes and compares a full-size screenshot on both sides).
CASES = [
    ("relative", "rel999", (1920, 1080), len(REPLIES)),
    ("relative", "rel999", (1280, 720), 6),
    ("absolute", "abs", (1920, 1080), 6),
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
    replies = REPLIES[:steps]
    theirs = reference_episode(reference, coordinate_type, size, replies)
    predictions, requests = await run_ours(
        Qwen3VLAgent, "qwen3-vl", "qwen3-vl", INSTRUCTION, replies, observations(steps, size),
        coordinate_mode=mode,
    )  # fmt: skip
    assert len(requests) == steps
    assert_same_requests(requests, theirs["requests"])
    ours, thoughts = [p.actions for p in predictions], [p.thought for p in predictions]
    assert_same_actions(ours, theirs["actions"])
    if steps > 10:
        assert thoughts[10] == "Performing click action"
    if mode == "rel999":
        # 500/999 of the screen, truncated as OSWorld computes it
        assert ours[0] == [Click(x=int(500 * (size[0] / 999)), y=int(500 * (size[1] / 999)))]
    # the last request shows four screenshots of history and the current one, as the reference's
    images = [p for m in requests[-1]["messages"] for p in m["content"] if p.get("type") == "image_url"]
    assert len(images) == 5
