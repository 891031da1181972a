"""Differential tests: our ``owl15`` agent against OSWorld's ``mm_agents/owl15_agent.py`` Owl15Agent.

The reference is loaded from OSWorld's code at the tasks' commit (``../shared/osworld/upstream/``) with
the defaults of ``scripts/python/run_multienv_gui_owl15.py`` and its ``openai`` engine (temperature 0,
top_p 0.9, top_k 1, five steps of history, 50 steps); its OpenAI client is replaced by a recorder of
the request it sends, so its own ``predict`` runs unchanged. Ours runs the ``gui-owl-1.5`` preset with
its prompts read from the same code. Requests must be equal (see :mod:`tests.parity.episodes`: the
trimmed conversation, images smart-resized by 32 within 2645 tokens, PNG; the old steps' conclusions;
sampling; the re-ask after a reply that cannot be read) and the actions too.

Deliberate differences: it uploads each screenshot to a cloud bucket (``get_image_url``, replaced here by
the same image inline) where we send it inline; it sends ``repetition_penalty`` 1.05 and ``top_k`` in the
request's extra body, which we do not send; it maps thousandths onto its run script's 1920x1080 whatever
the screen, where we map them onto the screen (the same on OSWorld's screen, the only size compared); at
its ``max_trajectory_length`` it turns the last action into ``FAIL``, where our runner stops at
``evaluation.max_steps``; its typing writes with a 0.1 s interval, ours at the executor's pace.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from osw_studio.agent.faithful import faithfulness
from osw_studio.agent.owl15 import Owl15Agent
from osw_studio.core.actions import Click, Done, Fail, Typing, Wait
from osw_studio.settings import Settings
from tests.parity.conftest import UPSTREAM
from tests.parity.episodes import SCRIPTED_VLM, assert_same_requests, observations, run_ours, screen
from tests.parity.reference import Reference
from tests.parity.test_agents_qwen3vl import call
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."
UNREADABLE = "Action: I am not sure what to do."
"""A reply with no tool call: both ask again with the same request."""
REPLIES = [  # thousandths of the screen
    "Action: Click the File menu.\n" + call("left_click", coordinate=[500, 500]),
    "I should name the file.\nAction: Type the file name.\n"
    + call("type", text="report.odt", clear=1, enter=1),
    UNREADABLE,
    "Action: Save with the shortcut.\n" + call("key", keys=["ctrl", "s"]),
    "Action: Scroll down the list.\n" + call("scroll", pixels=-5),
    "Action: Open the file.\n" + call("double_click", coordinate=[999, 3]),
    "Action: Open its menu.\n" + call("right_click", coordinate=[250, 700]),
    "Action: Drag the handle.\n" + call("left_click_drag", coordinate=[300, 200]),
    "Action: Point at the handle.\n" + call("mouse_move", coordinate=[100, 200]),
    "Action: Select the paragraph.\n" + call("triple_click", coordinate=[400, 400]),
    "Action: Wait for the dialog.\n" + call("wait", time=2),
    "Action: The file cannot be saved.\n" + call("terminate", status="failure"),
]
WAITED = 9
"""The step that waits (counted in steps, not replies)."""
STEPS = len(REPLIES) - 1  # the unreadable reply is asked again within its step
RUN_SCRIPT = {
    "history_n": 5,
    "action_space": "pyautogui",
    "observation_type": "screenshot",
    "max_trajectory_length": 50,
    "top_p": 0.9,
    "top_k": 1,
    "temperature": 0.0,
    "engine": "openai",
    "keep_full_response": 0,
}

REFERENCE_EPISODE = """
import base64, types
stub(["oss2"])
agent_module = load("mm_agents.owl15_agent")
agent_module.get_image_url = lambda image: "data:image/png;base64," + image  # inline, not uploaded
agent_module.time = types.SimpleNamespace(sleep=lambda seconds: None)
agent = agent_module.Owl15Agent(model=model, api_url="http://127.0.0.1:9/v1", api_key="sk-test", **run_script)
agent.reset = lambda: type(agent).reset(agent, None)
""" + SCRIPTED_VLM.replace("agent.vlm = ", "agent.llm_client = ")


def reference_episode(reference: Reference, replies: list[str], steps: int) -> dict[str, Any]:
    shots = [base64.b64encode(screen(i)).decode() for i in range(1, steps + 1)]
    code = (
        f"model = 'gui-owl-1.5'\nrun_script = {RUN_SCRIPT!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nreplies = {replies!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code)  # type: ignore[no-any-return]


def without_extra_body(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference's requests without the extra body we do not send (see the module docs)."""
    return [{k: v for k, v in r.items() if k != "extra_body"} for r in requests]


async def test_requests_and_actions_match_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    theirs = reference_episode(upstream, REPLIES, STEPS)
    predictions, requests = await run_ours(
        Owl15Agent, "gui-owl-1.5", "gui-owl-1.5", INSTRUCTION, REPLIES, observations(STEPS)
    )
    assert len(requests) == len(REPLIES)  # one step asked twice
    assert requests[2]["messages"] == requests[3]["messages"]
    assert_same_requests(requests, without_extra_body(theirs["requests"]))
    assert theirs["requests"][0]["extra_body"] == {"repetition_penalty": 1.05, "top_k": 1}
    ours = [p.actions for p in predictions]
    # Its wait is a bare time.sleep of the call's time, which no pyautogui reader takes: compared here.
    assert theirs["actions"][WAITED][0].endswith("\ntime.sleep(2)") and ours[WAITED] == [Wait(seconds=2)]
    assert_same_actions(
        [a for i, a in enumerate(ours) if i != WAITED],
        [a for i, a in enumerate(theirs["actions"]) if i != WAITED],
    )
    assert ours[0] == [Click(x=960, y=540)]
    assert Typing(text="report.odt") in ours[1] and isinstance(ours[-1][-1], Fail)
    # The old steps' conclusions: a reply that starts with its Action: line keeps the word, as OSWorld's.
    task = requests[-1]["messages"][1]["content"][0]["text"]
    assert (
        "Previous actions:\nStep1: Action: Click the File menu." in task
        and "Step2: Type the file name." in task
    )
    assert (
        requests[0]["temperature"] == 0.0
        and requests[0]["top_p"] == 0.9
        and requests[0]["max_tokens"] == 4096
    )
    assert not any(isinstance(a, Done) for p in predictions for a in p.actions)


def test_gui_owl_models_get_the_preset_and_it_is_faithful_with_an_osworld_checkout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)
    settings = Settings.model_validate(
        {
            "evaluation": {"reference_osworld": str(UPSTREAM)},
            "profiles": {"owl": {"model": "mPLUG/GUI-Owl-1.5-7B"}},
        }
    )
    profile = settings.resolve_profile("owl")
    assert (profile.agent, profile.preset, profile.preset_inferred) == ("owl15", "gui-owl-1.5", True)
    assert faithfulness(profile).faithful is True
