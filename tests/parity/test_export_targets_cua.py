"""A person's steps in Qwen3-VL and OpenCUA runs are exported in the model's own reply format.

A recorded run of each agent (tests/fakes/recorded_run.py: an approved step, an edited step, a
takeover step, two approved steps, against the OpenAI-compatible test server on 127.0.0.1) is exported
as ``sft-messages``. Each sample is the recorded request plus its target: the raw reply where the model
decided, else the person's actions written as that model writes them (Qwen3-VL: an ``Action:`` line and
``computer_use`` tool calls in 999ths of the screen; OpenCUA: ``## Thought`` / ``## Action`` / a code
block in pixels of the smart-resized screenshot). Every such target, and the replies written for a wide
set of actions, is read back by our parser and by OSWorld's own (``Qwen3VLAgent.parse_response``,
``opencua_agent.parse_response_to_cot_and_action``, in the side environment): both give the same
actions, and those are what ran, to the pixel where the model's units allow (Qwen3-VL's 999ths are
coarser than a pixel on a 1920-wide screen).

OSWorld's Qwen3-VL reader takes every ``terminate`` as DONE, whatever its status, and so does ours: a
person's give-up is written as Qwen3-VL says it (``terminate`` with ``status: failure``) and reads back
as done on both sides. That reader types text inside ``'...'`` unescaped, so the typed texts here have
no quotes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from osw_studio.actions import smart_resize
from osw_studio.actions.canonical import canonical_actions
from osw_studio.actions.coords import CoordinateSpace
from osw_studio.actions.opencua import parse_opencua
from osw_studio.actions.qwen3vl import parse_qwen3vl
from osw_studio.agent.qwen3vl import FACTOR, MAX_PIXELS, MIN_PIXELS
from osw_studio.core.actions import (
    Action,
    CallUser,
    Click,
    Done,
    DoubleClick,
    DragTo,
    Fail,
    Hotkey,
    KeyDown,
    MoveTo,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
    Wait,
)
from osw_studio.trajectory.export import export_options, export_runs
from osw_studio.trajectory.exporters.replies import Language, write_reply
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.recorded_run import EDIT, SCREEN, TAKEOVER, RecordedRun, record_run
from tests.parity.episodes import STUBS
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import reference_actions, unpaced

pytestmark = pytest.mark.timeout(180)

ACTIONS: list[list[Action]] = [
    [Click(x=960, y=540)],
    [Click(x=0, y=1079)],
    [Click(x=1919, y=0, button="right")],
    [Click(x=300, y=200, button="middle")],
    [DoubleClick(x=641, y=359)],
    [RightClick(x=5, y=6)],
    [MoveTo(x=1000, y=700)],
    [DragTo(x=1500, y=800, start_x=100, start_y=120)],
    [Scroll(dy=-5, x=700, y=300)],
    [Typing(text="report final")],
    [Press(key="enter")],
    [Hotkey(keys=["ctrl", "shift", "s"])],
    [Click(x=400, y=401), Typing(text="hello")],
    [Wait()],
    [Done()],
    [Fail()],
]
"""Steps a person may have taken, in screen pixels of a 1920x1080 screen."""

QWEN3VL_NOT: list[list[Action]] = [
    [KeyDown(key="shift")],
    [Scroll(dx=3)],
    [TripleClick(x=5, y=5)],
    [CallUser()],
]
OPENCUA_NOT: list[list[Action]] = [[Click(x=10, y=10), Done()], [Typing(text="x"), Wait()], [CallUser()]]
"""Steps the language cannot say as they ran: no target is written for them."""

QWEN3VL_SPACE = CoordinateSpace(screen=SCREEN, mode="rel999", rounding="trunc")
OPENCUA_SPACE = CoordinateSpace(screen=SCREEN, mode="smart", rounding="trunc")

REFERENCE_PARSERS = """
import sys, types
utils = load("mm_agents.opencua.utils")
package = types.ModuleType("mm_agents.utils")
package.__path__ = []
qwen_vl_utils = types.ModuleType("mm_agents.utils.qwen_vl_utils")
qwen_vl_utils.smart_resize = utils.smart_resize
sys.modules["mm_agents.utils"] = package
sys.modules["mm_agents.utils.qwen_vl_utils"] = qwen_vl_utils
qwen3vl = load("mm_agents.qwen3vl_agent")
opencua = load("mm_agents.opencua.opencua_agent")
import logging
opencua.logger = logging.getLogger("desktopenv.agent")  # as its agent's reset() would set it
agent = qwen3vl.Qwen3VLAgent(model="qwen3-vl", api_backend="openai", coordinate_type="relative")
result = {
    "qwen3vl": [agent.parse_response(t, size[0], size[1], sent[0], sent[1])[1] for t in qwen3vl_texts],
    "opencua": [opencua.parse_response_to_cot_and_action(t, tuple(size), "qwen25")[1] for t in opencua_texts],
}
"""


def reference_parse(
    reference: Reference, qwen3vl_texts: list[str], opencua_texts: list[str]
) -> dict[str, Any]:
    """OSWorld's readers' code (or WAIT / DONE / FAIL) for each text."""
    reference.stub(*STUBS, "httpx")
    height, width = smart_resize(SCREEN[1], SCREEN[0], FACTOR, MIN_PIXELS, MAX_PIXELS)
    code = (
        f"size = {list(SCREEN)!r}\nsent = {[width, height]!r}\nqwen3vl_texts = {qwen3vl_texts!r}\n"
        f"opencua_texts = {opencua_texts!r}\n" + REFERENCE_PARSERS
    )
    return reference.exec(code)  # type: ignore[no-any-return]


def near(got: list[Action], want: list[Action], space: CoordinateSpace) -> bool:
    """The same actions, their points within what the model's units can hold."""
    a, b = canonical_actions(got), canonical_actions(want)
    if len(a) != len(b):
        return False
    tolerance = space.round_trip_error
    for x, y in zip(a, b, strict=True):
        dx, dy = x.model_dump(), y.model_dump()
        for key in dx.keys() | dy.keys():
            if (
                key in ("x", "y", "start_x", "start_y")
                and dx.get(key) is not None
                and dy.get(key) is not None
            ):
                if abs(dx[key] - dy[key]) > tolerance:
                    return False
            elif key != "seconds" and key != "message" and dx.get(key) != dy.get(key):
                return False
    return True


@pytest.fixture(scope="module", params=["qwen3vl", "opencua"])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> RecordedRun:
    with FakeOpenAIServer(models=["test-model"]) as server:
        run = record_run(server, tmp_path_factory.mktemp(request.param), request.param)
        return asyncio.run(run)


def test_edited_and_takeover_targets_are_in_the_models_own_format(
    recorded: RecordedRun, tmp_path: Path, reference: Reference
) -> None:
    export_runs([recorded.path], "sft-messages", tmp_path, export_options())
    samples = {s["step"]: s for s in map(json.loads, (tmp_path / "data.jsonl").read_text().splitlines())}
    assert sorted(samples) == [1, 2, 3, 4, 5]
    qwen = "<tool_call>" in recorded.replies[0]
    language: Language = "qwen3vl" if qwen else "opencua"
    space = QWEN3VL_SPACE if qwen else OPENCUA_SPACE
    for step, request_no in {1: 0, 2: 1, 4: 2, 5: 3}.items():
        assert samples[step]["messages"][:-1] == recorded.requests[request_no]["messages"], f"step {step}"
    for step, reply in {1: 0, 4: 2, 5: 3}.items():
        assert samples[step]["messages"][-1]["content"] == recorded.replies[reply]
    targets = {step: samples[step]["messages"][-1]["content"] for step in (2, 3)}
    assert targets[2] == write_reply(language, EDIT, space)
    assert targets[3] == write_reply(language, TAKEOVER, space)
    if qwen:
        assert targets[3].startswith("Action: I click there.\n<tool_call>\n")
        assert '"coordinate": [364, 370]' in targets[3]  # 700x400 of 1920x1080 in 999ths
    else:
        assert targets[3].startswith("## Thought:\n") and "## Action:\n" in targets[3]
        assert "pyautogui.click(x=705, y=405)" in targets[3]  # the 1932x1092 frame it sees
    ours = [parse_qwen3vl(t, space)[1] if qwen else parse_opencua(t, space).actions for t in targets.values()]
    theirs = reference_parse(
        reference, list(targets.values()) if qwen else [], [] if qwen else list(targets.values())
    )
    produced = theirs[language]
    ran: list[list[Action]] = [list(EDIT), list(TAKEOVER)]
    for mine, code, executed in zip(ours, produced, ran, strict=True):
        assert unpaced(mine) == unpaced(reference_actions(code))
        assert near(mine, executed, space), (mine, executed)


def test_every_action_written_reads_back_the_same_with_both_parsers(reference: Reference) -> None:
    qwen_texts = [write_reply("qwen3vl", a, QWEN3VL_SPACE) for a in ACTIONS]
    cua_texts = [write_reply("opencua", a, OPENCUA_SPACE) for a in ACTIONS]
    assert all(isinstance(t, str) for t in qwen_texts + cua_texts)
    assert [write_reply("qwen3vl", a, QWEN3VL_SPACE) for a in QWEN3VL_NOT] == [None] * 4
    assert [write_reply("opencua", a, OPENCUA_SPACE) for a in OPENCUA_NOT] == [None] * 3
    theirs = reference_parse(reference, qwen_texts, cua_texts)  # type: ignore[arg-type]
    for actions, text, code in zip(ACTIONS, qwen_texts, theirs["qwen3vl"], strict=True):
        mine = parse_qwen3vl(text or "", QWEN3VL_SPACE)[1]
        want: list[Action] = (
            [Done()] if actions == [Fail()] else actions
        )  # every terminate is done (module docs)
        assert near(mine, want, QWEN3VL_SPACE), (text, mine)
        assert unpaced(mine) == unpaced(reference_actions(code)), (text, code)
    for actions, text, code in zip(ACTIONS, cua_texts, theirs["opencua"], strict=True):
        mine = parse_opencua(text or "", OPENCUA_SPACE).actions
        assert near(mine, actions, OPENCUA_SPACE) and OPENCUA_SPACE.round_trip_error == 0, (text, mine)
        assert unpaced(mine) == unpaced(reference_actions(code)), (text, code)
