"""Action parity on real replies: DART-GUI's own OSWorld parser against our ``dart`` agent's.

Each reply of ``corpus/uitars_replies.txt`` (UI-TARS-1.5 format, the one DART-GUI-7B writes; where it was
published beside it) goes through ``mm_agents/dart_gui/utils.py`` from OSWorld's code at the tasks' commit
(``parse_action_to_structure_output`` then ``parsing_response_to_pyautogui_code`` per action, as
``dart_gui_agent.py`` calls them, ``qwen25vl`` on a 1920x1080 screen) and through the reply parser of our
``dart`` agent with DART-GUI's failure words read from the same code. The actions must be equal, or the
reply must be listed with why we differ: the replies the UI-TARS corpus test lists, for the same reasons
(DART-GUI's parser is UI-TARS-1.5's), but for an apostrophe inside ``finished(content=...)``, which
DART-GUI's parser escapes as ours reads it; and ``call_user()``, FAIL in DART-GUI's parser, a hand-back here
that the ``dart-gui-7b`` preset fails unattended (compared as a fail).
"""

from __future__ import annotations

from typing import Any

import pytest

from osw_studio.actions import CoordinateSpace
from osw_studio.agent.dart import DartAgent
from osw_studio.agent.model_client import ModelClient
from osw_studio.core.actions import Action, CallUser, Fail
from osw_studio.core.errors import ActionParseError
from osw_studio.settings import Settings
from tests.parity.conftest import UPSTREAM
from tests.parity.reference import Reference
from tests.parity.test_agents_corpus import CASES, SPACE, comparable, reference_actions
from tests.parity.test_agents_corpus import DIFFERENCES as UITARS_DIFFERENCES

DIFFERENCES = {
    name: why
    for name, why in UITARS_DIFFERENCES.items()
    # DART-GUI's parser escapes quotes inside finished(content='...'), as ours reads them
    if name != "dart-gui-test-finished-quoted-path"
}
"""Replies on which we deliberately differ from DART-GUI's parser, and why."""

REFERENCE_PARSE = """
try:
    parsed = m0.parse_action_to_structure_output(
        reply, 1000, 1080, 1920, "qwen25vl", 16384 * 28 * 28, 100 * 28 * 28
    )
    result = {"code": [m0.parsing_response_to_pyautogui_code(item, 1080, 1920, False) for item in parsed]}
except Exception as exc:
    result = {"error": f"{type(exc).__name__}: {exc}"}
"""


@pytest.fixture(scope="module")
def parse(monkeypatch_module: pytest.MonkeyPatch) -> Any:
    """Our ``dart`` agent's reply parser in the corpus' frame, with DART-GUI's failure words."""
    monkeypatch_module.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    profile = Settings.model_validate({"profiles": {"d": {"preset": "dart-gui-7b"}}}).resolve_profile("d")
    agent = DartAgent(profile, client=ModelClient(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0))
    assert agent.prompt_info["faithful"], agent.prompt_info
    space: CoordinateSpace = SPACE
    return agent.reply_parser(space)


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def theirs_as_actions(code: list[str]) -> list[Action] | str:
    """The reference's per-action code, its FAIL word included, as our actions."""
    actions: list[Action] = []
    for item in code:
        if item == "FAIL":
            actions.append(Fail())
            continue
        read = reference_actions([item])
        if isinstance(read, str):
            return read
        actions += read
    return actions


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_real_replies_give_dart_guis_actions(upstream: Reference, parse: Any, case: dict[str, str]) -> None:
    theirs = upstream.exec(
        f"reply = {case['reply']!r}\n" + REFERENCE_PARSE, modules=("mm_agents.dart_gui.utils",)
    )
    try:
        ours: list[Action] | str = [Fail() if isinstance(a, CallUser) else a for a in parse(case["reply"])[1]]
    except ActionParseError as exc:
        ours = f"error: {exc}"
    expected = theirs_as_actions(theirs["code"]) if "code" in theirs else f"reference: {theirs['error']}"
    if isinstance(ours, str) or isinstance(expected, str):
        same = isinstance(ours, str) and isinstance(expected, str)
    else:
        same = comparable(ours) == comparable(expected)
    if case["name"] in DIFFERENCES:
        assert not same, f"{case['name']} no longer differs: drop it from DIFFERENCES"
    else:
        assert same, f"{case['name']}: ours {ours!r}, reference {expected!r}"
