"""Action parity on real replies: OSWorld's Qwen3-VL and OpenCUA parsers against ours.

Each reply of ``corpus/qwen3vl_replies.txt`` goes through OSWorld's ``Qwen3VLAgent.parse_response``
(``coordinate_type="relative"`` on a 1920x1080 screen, a 1920x1088 image) and through our
:func:`~osw_studio.actions.qwen3vl.parse_qwen3vl` in the ``rel999`` frame; each of
``corpus/opencua_replies.txt`` (OpenCUA's OSWorld trajectories, 0-1 coordinates) through OSWorld's
``parse_response_to_cot_and_action`` (``relative``, 1920x1080) and our
:func:`~osw_studio.actions.opencua.parse_opencua` in the ``norm`` frame. The actions (and the step's
low-level instruction) must be equal, or the reply must be listed in a ``DIFFERENCES`` with why. Replies
that come with what OSWorld executed for them in a published run (``--- executed``) must give that too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from osw_studio.actions import CoordinateSpace
from osw_studio.actions.opencua import parse_opencua
from osw_studio.actions.qwen3vl import parse_qwen3vl
from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError
from tests.parity.episodes import STUBS
from tests.parity.reference import Reference
from tests.parity.test_agents_corpus import comparable, reference_actions

CORPUS = Path(__file__).parent / "corpus"

QWEN3VL_DIFFERENCES: dict[str, str] = {
    "qwen3vl-8b-thinking-impress-5d901039-step10": (
        "the drag ends at the model's y=999, which OSWorld scales to 1080, one row past a 1080-high screen "
        "(pyautogui passes it on and the X server keeps the pointer on the last row); we clamp to the "
        "screen, 1079: the pointer ends on the same pixel"
    ),
}
"""Qwen3-VL replies on which we deliberately differ from the reference, and why."""
OPENCUA_DIFFERENCES: dict[str, str] = {}
"""OpenCUA replies on which we deliberately differ from the reference, and why."""


def load(name: str) -> list[dict[str, str]]:
    cases: list[dict[str, Any]] = []
    section = ""
    for line in (CORPUS / name).read_text(encoding="utf-8").split("\n"):
        if line.startswith("### "):
            cases.append({"name": line[4:].strip()})
            section = ""
        elif line.startswith("--- ") and line[4:].strip() in ("source", "reply", "executed"):
            section = line[4:].strip()
            cases[-1][section] = []
        elif section:
            cases[-1][section].append(line)
    return [{k: v if k == "name" else "\n".join(v).rstrip("\n") for k, v in case.items()} for case in cases]


QWEN3VL = load("qwen3vl_replies.txt")
OPENCUA = load("opencua_replies.txt")

QWEN3VL_PARSE = """
import logging, sys, types
if "mm_agents.utils.qwen_vl_utils" not in sys.modules:  # not in desktop-env 1.0.2 (test_agents_qwen3vl.py)
    package = types.ModuleType("mm_agents.utils")
    package.__path__ = []
    utils = types.ModuleType("mm_agents.utils.qwen_vl_utils")
    utils.smart_resize = load("mm_agents.opencua.utils").smart_resize
    sys.modules["mm_agents.utils"] = package
    sys.modules["mm_agents.utils.qwen_vl_utils"] = utils
module = load("mm_agents.qwen3vl_agent")
agent = module.Qwen3VLAgent(api_backend="openai")
agent.reset()
try:
    instruction, code = agent.parse_response(reply, 1920, 1080, 1920, 1088)
    result = {"instruction": instruction, "code": code}
except Exception as exc:
    result = {"error": f"{type(exc).__name__}: {exc}"}
"""

OPENCUA_PARSE = """
import logging
module = load("mm_agents.opencua.opencua_agent")
module.logger = logging.getLogger("desktopenv.agent")
instruction, code, sections = module.parse_response_to_cot_and_action(reply, (1920, 1080), "relative")
result = {"instruction": instruction, "code": code}
"""


def outcome(ours: list[Action] | str, expected: list[Action] | str) -> bool:
    if isinstance(ours, str) or isinstance(expected, str):
        return isinstance(ours, str) and isinstance(expected, str)  # both refuse the reply
    return comparable(ours) == comparable(expected)


@pytest.mark.parametrize("case", QWEN3VL, ids=[c["name"] for c in QWEN3VL])
def test_qwen3vl_replies_give_the_reference_actions(reference: Reference, case: dict[str, str]) -> None:
    assert case.get("source"), "every corpus reply names where it was published"
    reference.stub(*STUBS)
    theirs = reference.exec(f"reply = {case['reply']!r}\n" + QWEN3VL_PARSE)
    space = CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc")
    instruction: str | None = None
    try:
        instruction, actions = parse_qwen3vl(case["reply"], space)
        ours: list[Action] | str = actions
    except ActionParseError as exc:
        ours = f"error: {exc}"
    expected = reference_actions(theirs["code"]) if "code" in theirs else f"reference: {theirs['error']}"
    same = outcome(ours, expected) and (instruction is None or instruction == theirs.get("instruction"))
    if "executed" in case:  # what OSWorld ran in the published trajectory
        same = same and outcome(ours, reference_actions(case["executed"].split("\n")))
    if case["name"] in QWEN3VL_DIFFERENCES:
        assert not same, f"{case['name']} no longer differs: drop it from QWEN3VL_DIFFERENCES"
    else:
        assert same, f"{case['name']}: ours {ours!r} {instruction!r}, reference {expected!r} {theirs}"


@pytest.mark.parametrize("case", OPENCUA, ids=[c["name"] for c in OPENCUA])
def test_opencua_replies_give_the_reference_actions(reference: Reference, case: dict[str, str]) -> None:
    assert case.get("source"), "every corpus reply names where it was published"
    reference.stub(*STUBS, "httpx")
    theirs = reference.exec(f"reply = {case['reply']!r}\n" + OPENCUA_PARSE)
    try:
        parsed = parse_opencua(case["reply"], CoordinateSpace(screen=(1920, 1080), mode="norm"))
        ours: list[Action] | str = parsed.actions
    except ActionParseError as exc:
        ours = f"error: {exc}"
    failed = theirs["code"] == ["FAIL"] and theirs["instruction"].startswith("<Error>")
    expected = f"reference: {theirs['instruction'][:200]}" if failed else reference_actions(theirs["code"])
    same = outcome(ours, expected)
    if "executed" in case:  # what OSWorld ran in the published trajectory
        ran = reference_actions([case["executed"]])
        same = same and outcome(ours, ran)
    if case["name"] in OPENCUA_DIFFERENCES:
        assert not same, f"{case['name']} no longer differs: drop it from OPENCUA_DIFFERENCES"
    else:
        assert same, f"{case['name']}: ours {ours!r}, reference {expected!r}"
