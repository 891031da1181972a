"""Differential tests: our ``evocua`` agent against OSWorld's EvoCUAAgent (``mm_agents/evocua/``, style S2).

The reference is loaded from OSWorld's code at the tasks' commit (``../shared/osworld/upstream/``) with
the defaults of ``scripts/python/run_multienv_evocua.py`` (prompt style S2, coordinate type relative,
temperature 0, top_p 0.9, 32768 tokens, three turns of history, resize factor 32); the OpenAI client its
``call_llm`` makes is replaced by a recorder of the request it is asked to send, so its own ``predict``
runs unchanged. Ours runs the ``evocua-s2`` preset with the prompt evaluated from the same code. Requests
must be equal (see :mod:`tests.parity.episodes`: messages, images smart-resized to multiples of 32 at most
16*16*4*12800 pixels, bicubic, PNG; history; sampling) and the actions too.

Deliberate differences: its ``type`` presses one key per character where we type the text (checked
below: the same keys in the same order); a past step without an ``Action:`` line is named after its
first call's pyautogui name in both, but it names a typing step ``press``, a finish ``done`` and a wait
``wait`` where we write ``typewrite``, ``terminate`` and ``wait`` (no such step here); it shortens the
history when the server says the context is too large, where our model call reports the error; at its
``max_steps`` it turns the last action into ``FAIL``, where our runner stops at ``evaluation.max_steps``.
"""

from __future__ import annotations

from typing import Any

import pytest

from osw_studio.agent.evocua import EvoCUAAgent
from osw_studio.agent.faithful import faithfulness
from osw_studio.core.actions import Click, Fail, Typing
from osw_studio.settings import Settings
from tests.parity.conftest import UPSTREAM
from tests.parity.episodes import assert_same_requests, observations, openai_agent_episode, run_ours
from tests.parity.reference import Reference
from tests.parity.test_agents_qwen3vl import call  # EvoCUA writes its tool calls as Qwen3-VL does
from tests.parity.test_agents_uitars import assert_same_actions, reference_actions, unpaced

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."


TYPED = 1
"""The step whose ``type`` the reference presses key by key."""
REPLIES = [  # 999ths of the screen
    "Action: Click the File menu.\n" + call("left_click", coordinate=[500, 500]),
    "Action: Type the file name.\n" + call("type", text="report.odt"),
    "Action: Save with the shortcut.\n" + call("key", keys=["ctrl", "s"]),
    "Action: Confirm.\n" + call("key", keys=["Return"]),
    "Action: Scroll down the list.\n" + call("scroll", pixels=-5),
    "Action: Open the file.\n" + call("double_click", coordinate=[998, 3]),
    "Action: Open its menu.\n" + call("right_click", coordinate=[250, 700]),
    # no Action: line: the history names the step after its first call
    call("left_click", coordinate=[10, 990]),
    "Action: Point at the handle.\n" + call("mouse_move", coordinate=[100, 200]),
    "Action: Wait for the dialog.\n" + call("wait", time=2),
    "Action: Select the paragraph.\n" + call("triple_click", coordinate=[400, 420]),
    "Action: The file cannot be saved.\n" + call("terminate", status="failure"),
]
RUN_SCRIPT = {
    "max_tokens": 32768,
    "top_p": 0.9,
    "temperature": 0.0,
    "prompt_style": "S2",
    "max_history_turns": 3,
    "coordinate_type": "relative",
    "resize_factor": 32,
    "password": "osworld-public-evaluation",
    "max_steps": 50,
}


def reference_episode(reference: Reference, size: tuple[int, int], replies: list[str]) -> dict[str, Any]:
    arguments = {**RUN_SCRIPT, "screen_size": size}
    return openai_agent_episode(
        reference,
        "mm_agents.evocua.evocua_agent:EvoCUAAgent",
        "EvoCUA-S2",
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
        EvoCUAAgent, "EvoCUA-S2", "evocua-s2", INSTRUCTION, replies, observations(steps, size)
    )
    assert len(requests) == steps
    assert_same_requests(requests, theirs["requests"])
    ours = [p.actions for p in predictions]
    # Typing: the reference presses each character; we type the text (the same keys, in order).
    assert ours[TYPED] == [Typing(text="report.odt")]
    pressed = unpaced(reference_actions(theirs["actions"][TYPED][0].splitlines()))
    assert [getattr(a, "key", None) for a in pressed] == list("report.odt")
    assert_same_actions(
        [a for i, a in enumerate(ours) if i != TYPED],
        [a for i, a in enumerate(theirs["actions"]) if i != TYPED],
    )
    assert requests[0]["temperature"] == 0.0 and requests[0]["top_p"] == 0.9
    assert requests[0]["max_tokens"] == 32768
    if size == (1920, 1080):
        assert ours[0] == [Click(x=960, y=540)]  # 500/999 of the screen, truncated
        assert isinstance(ours[-1][-1], Fail)  # terminate with status failure
        task = requests[-1]["messages"][1]["content"][1]["text"]  # steps older than the window, listed
        assert "Step 1: Click the File menu." in task and "Step 8: Performing click action" in task


def test_an_evocua_model_gets_its_preset_and_is_faithful_with_an_osworld_checkout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A profile naming only the model runs the S2 agent; S1 (not reproduced) gets no preset."""
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)
    settings = Settings.model_validate(
        {
            "evaluation": {"reference_osworld": str(UPSTREAM)},
            "profiles": {"s2": {"model": "meituan/EvoCUA-S2"}, "s1": {"model": "EvoCUA-S1"}},
        }
    )
    s2 = settings.resolve_profile("s2")
    assert (s2.agent, s2.preset, s2.preset_inferred) == ("evocua", "evocua-s2", True)
    assert faithfulness(s2).faithful is True
    assert settings.resolve_profile("s1").preset is None
