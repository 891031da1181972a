"""Action parity on real replies: OSWorld's UI-TARS parser against ours, on tests/parity/corpus.

Each reply of ``corpus/uitars_replies.txt`` (a UI-TARS-family model's output, with where it was published)
goes through OSWorld's ``uitars15_v1.parse_action_to_structure_output`` and
``parsing_response_to_pyautogui_code`` (``qwen25vl`` on a 1920x1080 screen, as OSWorld runs UI-TARS-1.5 and
DART-GUI-7B) and through our :func:`~osw_studio.actions.parse_uitars` in the same smart frame. The
actions must be equal, or the reply must be listed in :data:`DIFFERENCES` with why we differ. A reply that
comes with the code OSWorld executed for it in a published run (``--- executed``) must give that too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from osw_studio.actions import CoordinateSpace, canonical_actions, parse_pyautogui, parse_uitars
from osw_studio.core.actions import Action, Done, Fail, Wait
from osw_studio.core.errors import ActionParseError
from tests.parity.episodes import STUBS
from tests.parity.reference import Reference

CORPUS = Path(__file__).parent / "corpus" / "uitars_replies.txt"
SPACE = CoordinateSpace(screen=(1920, 1080), mode="smart", image=(1920, 1080), min_pixels=100 * 28 * 28)

_CRASH = "OSWorld's parser raises (so its runner records no action); we read the point the model wrote"
DIFFERENCES: dict[str, str] = {
    "uitars10-chinese-bbox": f"a box written <bbox>x1 y1 x2 y2</bbox>: {_CRASH}",
    "uitars-think-point": f"click(point='<point>x y</point>'), UI-TARS-1.5's newer form: {_CRASH}",
    "uitars10-chinese-list-box": f"a box written [x1,y1,x2,y2]: {_CRASH}",
    "uitars-browser-four-numbers": f"a box written [x1, y1, x2, y2]: {_CRASH} (its centre)",
    "uitars-box-tokens-two-points": f"box tokens around two points: {_CRASH} (their centre)",
    "uitars-7b-gguf-numbered-reasoning": (
        f"box tokens around one point, the UI-TARS-1.0 form, which uitars15_v1 does not strip: {_CRASH}"
    ),
    **{
        f"uitars-dart-rollout-gimp-step{step}": (
            f"a point wrapped in box tokens, the form UI-TARS agents keep in their history: {_CRASH}"
        )
        for step in (1, 3, 4, 5, 6, 13, 14, 15)
    },
    "dart-gui-test-finished-quoted-path": (
        "an unescaped apostrophe inside finished(content='...'): OSWorld's parser raises (so its runner "
        "records no action); we end the task as the model declared, with its message"
    ),
    "uitars-concatenated-steps": (
        "several Thought/Action pairs run together (a model writing ahead): OSWorld keeps only the text "
        "after the last 'Action:' and so finishes the task; we refuse the reply as malformed (a step "
        "error the next step can recover from) rather than end a task the model never judged done"
    ),
}
"""Replies on which we deliberately differ from the reference, and why."""


def load() -> list[dict[str, str]]:
    cases: list[dict[str, Any]] = []
    section = ""
    for line in CORPUS.read_text(encoding="utf-8").split("\n"):
        if line.startswith("### "):
            cases.append({"name": line[4:].strip()})
            section = ""
        elif line.startswith("--- ") and line[4:].strip() in ("source", "reply", "executed"):
            section = line[4:].strip()
            cases[-1][section] = []
        elif section:
            cases[-1][section].append(line)
    return [{k: v if k == "name" else "\n".join(v).rstrip("\n") for k, v in case.items()} for case in cases]


CASES = load()

REFERENCE_PARSE = """
code = None
try:
    parsed = m0.parse_action_to_structure_output(
        reply, 1000, 1080, 1920, "qwen25vl", 16384 * 28 * 28, 100 * 28 * 28
    )
    code = []
    for item in parsed:
        if item["action_type"] == "finished":
            code.append("DONE")
        elif item["action_type"] == "wait":
            code.append("WAIT")
        elif item["action_type"] == "call_user":
            code.append("CALL_USER")
        else:
            code.append(m0.parsing_response_to_pyautogui_code(item, 1080, 1920, False))
    result = {"code": code}
except Exception as exc:
    result = {"error": f"{type(exc).__name__}: {exc}"}
"""

_DOCSTRING = re.compile(r"'''.*?'''\n", re.DOTALL)
_PACING = re.compile(r"^time\.sleep\([^)]*\)$", re.MULTILINE)


def reference_actions(code: list[str]) -> list[Action] | str:
    actions: list[Action] = []
    for item in code:
        if item in ("DONE", "WAIT"):
            actions.append(Done() if item == "DONE" else Wait())
            continue
        body = _PACING.sub("", _DOCSTRING.sub("", item))
        calls = [line for line in body.splitlines() if line.strip() and not line.startswith("import ")]
        try:
            actions += parse_pyautogui("```python\n" + "\n".join(calls) + "\n```") if calls else []
        except ActionParseError as exc:
            return f"our parser cannot read the reference's code: {exc}"
    return actions


def comparable(actions: list[Action]) -> list[Action]:
    plain = {Wait: Wait(), Done: Done(), Fail: Fail()}
    return [plain.get(type(a), a) for a in canonical_actions(actions)]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_real_replies_give_the_reference_actions(reference: Reference, case: dict[str, str]) -> None:
    assert case.get("source"), "every corpus reply names where it was published"
    reference.stub(*STUBS)
    theirs = reference.exec(
        f"reply = {case['reply']!r}\n" + REFERENCE_PARSE, modules=("mm_agents.uitars15_v1",)
    )
    try:
        ours: list[Action] | str = parse_uitars(case["reply"], SPACE).actions
    except ActionParseError as exc:
        ours = f"error: {exc}"
    expected = reference_actions(theirs["code"]) if "code" in theirs else f"reference: {theirs['error']}"
    if isinstance(ours, str) or isinstance(expected, str):
        same = isinstance(ours, str) and isinstance(expected, str)  # both refuse the reply
    else:
        same = comparable(ours) == comparable(expected)
    if "executed" in case:  # the code OSWorld ran for this reply in a published trajectory
        ran = reference_actions([case["executed"]])
        same = (
            same
            and not isinstance(ours, str)
            and not isinstance(ran, str)
            and comparable(ours) == comparable(ran)
        )
    if case["name"] in DIFFERENCES:
        assert not same, f"{case['name']} no longer differs: drop it from DIFFERENCES"
    else:
        assert same, f"{case['name']}: ours {ours!r}, reference {expected!r}"
