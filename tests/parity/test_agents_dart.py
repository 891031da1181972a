"""Differential tests: our ``dart`` agent (the ``dart-gui-7b`` preset) against DART-GUI's own OSWorld agent.

The reference is ``mm_agents/dart_gui_agent.py``'s ``DartAgent`` in its ``dart_mode``, loaded from
OSWorld's code at the tasks' commit (``../shared/osworld/upstream/``, put first on the reference worker's
path), with the runtime settings of ``scripts/python/run_multienv_dart_gui.py``; its OpenAI client is
replaced by a recorder of the request it sends. Ours runs the ``dart-gui-7b`` preset with its prompt read
from the same checkout, against the OpenAI-compatible test server. Requests must be equal (see
:mod:`tests.parity.episodes`: messages, images and their sizes, the history it keeps, sampling), and the
actions too (compared as in ``test_agents_uitars.py``).

Deliberate differences (not compared): the reference returns its ``DONE`` / ``WAIT`` / ``FAIL`` words
where we keep a ``finished`` reply's content as the ``Done`` message and a wait's length; a reply with
no readable action gives the reference an empty step and us a done (the preset's ``parse_exhausted``);
``call_user()`` is FAIL in the reference and a hand-back here that the preset's ``call_user_tries`` of 0
fails unattended (tests/runner/test_hand_back.py).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from osw_studio.agent.dart import DartAgent
from osw_studio.core.actions import Click, Done, Fail
from tests.parity.conftest import UPSTREAM
from tests.parity.episodes import SCRIPTED_VLM, assert_same_requests, observations, run_ours, screen
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import INSTRUCTION, REPLIES, assert_same_actions

pytestmark = pytest.mark.timeout(120)

# A finish whose reply holds one of DART-GUI's failure words ends the task as failed.
GIVING_UP = "Thought: 无法完成这个任务。\nAction: finished(content='无法完成')"
RUNTIME = {  # run_multienv_dart_gui.py's runtime_conf in dart_mode, with its argument defaults
    "infer_mode": "dart_mode",
    "prompt_style": "dart_style",
    "input_swap": False,
    "language": "English",
    "history_n": 5,
    "max_pixels": 16384 * 28 * 28,
    "min_pixels": 100 * 28 * 28,
    "temperature": 0.0,
    "top_k": -1,
    "top_p": 1.0,
    "max_tokens": 500,
    "max_images": 5,
    "max_texts": 35,
}

REFERENCE_EPISODE = (
    """
import base64, copy, types
agent = m0.DartAgent(
    model=model, runtime_conf=runtime, observation_type="screenshot", model_type="qwen25vl",
    max_trajectory_length=15,
)
"""
    + SCRIPTED_VLM
)


def reference_episode(
    reference: Reference, replies: list[str], size: tuple[int, int], **runtime: Any
) -> dict[str, Any]:
    shots = [base64.b64encode(screen(i, size)).decode() for i in range(1, len(replies) + 1)]
    code = (
        f"model = 'dart-gui-7b'\nruntime = { ({**RUNTIME, **runtime})!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nreplies = {replies!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code, modules=("mm_agents.dart_gui_agent",))  # type: ignore[no-any-return]


async def test_requests_and_actions_match_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    theirs = reference_episode(upstream, REPLIES, (1920, 1080))
    steps = observations(len(REPLIES))
    predictions, requests = await run_ours(
        DartAgent, "dart-gui-7b", "dart-gui-7b", INSTRUCTION, REPLIES, steps
    )
    # Nine steps: the first screenshot leaves the prompt turn at the sixth, and only five are ever sent.
    assert [sum("image_url" in str(p) for p in r["messages"]) for r in requests] == [
        1,
        2,
        3,
        4,
        5,
        5,
        5,
        5,
        5,
    ]
    assert_same_requests(requests, theirs["requests"])
    ours = [p.actions for p in predictions]
    assert_same_actions(ours, theirs["actions"])
    assert ours[0] == [Click(x=1181, y=548)]
    assert requests[0]["temperature"] == 0.0 and requests[0]["top_p"] == 1.0
    assert requests[0]["max_tokens"] == 500 and requests[0]["frequency_penalty"] == 1.0


async def test_short_history_and_a_failure_word_match_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer screenshots and replies kept than the episode has steps, on a smaller screen, then giving up."""
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    replies = [*REPLIES[:6], GIVING_UP]
    theirs = reference_episode(upstream, replies, (1280, 720), max_images=2, max_texts=3)
    steps = observations(len(replies), (1280, 720))
    predictions, requests = await run_ours(
        DartAgent,
        "dart-gui-7b",
        "dart-gui-7b",
        INSTRUCTION,
        replies,
        steps,
        history_window=2,
        history_texts=3,
    )
    assert_same_requests(requests, theirs["requests"])
    assert_same_actions([p.actions for p in predictions], theirs["actions"])
    assert isinstance(predictions[-1].actions[-1], Fail)
    assert not any(isinstance(a, Done) for p in predictions for a in p.actions)
