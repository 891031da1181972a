"""Differential tests: our ``jedi`` agent against OSWorld's ``mm_agents/jedi_7b_agent.py`` JediAgent7B.

The reference is loaded from OSWorld's code at the tasks' commit (``../shared/osworld/upstream/``) with its
class defaults (OSWorld has no run script for it: planner ``gpt-4o``, executor ``jedi-7b``, temperature
0.5, top_p 0.9, 1500 tokens, 15 steps); its ``call_llm`` (one method for both models) is replaced by a
recorder of the payload it is asked to send, so its own ``predict`` runs unchanged. Ours runs the
``jedi-7b`` preset with its prompts read from the same code, planner and grounder on one test server on
127.0.0.1 (so the calls of both models come in one order). Requests must be equal (see
:mod:`tests.parity.episodes`: messages, images, history, sampling, the model of each call; the reminder
after a reply without code) and the actions too.

Deliberate differences: a grounder reply with no tool call makes OSWorld's agent write a call that cannot
run (``doubleClick(, [])``: its parser returns an empty pair there); ours writes the same into the
history but does not run that code block, and the step reports why (nothing runs in either); OSWorld's
agent retries a failing call every 30 s up to ten times, where our model client retries as the profile
says; at its ``max_steps`` it does nothing special, as here.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from osw_studio.agent.faithful import faithfulness
from osw_studio.agent.images import prepare_image
from osw_studio.agent.jedi import JediAgent, grounded_point, planner_codes
from osw_studio.core.actions import Click, Done, Fail, Hotkey, Typing, Wait
from osw_studio.core.step import StepRecord
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.parity.conftest import UPSTREAM
from tests.parity.episodes import assert_same_requests, observations, play, screen, settings_for
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."


def grounding(x: int, y: int) -> str:
    """A grounder reply pointing at ``(x, y)`` of its resized frame."""
    call = {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


def plan(caption: str, thought: str, code: str) -> str:
    return f"Observation:\n{caption}\nThought:\n{thought}\nAction:\n```python\n{code}\n```\n"


BROKEN = 3
"""The step whose grounder reply has no tool call (0-based)."""
REPLIES = [  # in call order: each planner reply, then a grounder reply per commented pointer call
    plan("A text editor.", "Open the File menu.", "# The File menu in the top bar\npyautogui.click(100, 20)"),
    grounding(50, 30),
    plan(
        "The File menu is open.",
        "Name the file.",
        "# the file name field\npyautogui.click(x=300, y=400, duration=0.5)\n"
        "pyautogui.typewrite('report.odt')",
    ),
    grounding(966, 546),
    "I am not sure what to do.",  # no code: asked again with the reminder
    plan("The name is typed.", "Save it.", "pyautogui.hotkey('ctrl', 's')"),
    plan("A dialog.", "Confirm.", "# the Save button\npyautogui.doubleClick(500, 500)"),
    "I cannot find it.",
    plan("Saved.", "Close the dialog.", "# OK button\npyautogui.click(960, 540)\nDONE"),
    "<tool_call>\nnot json\n</tool_call>",  # no coordinate: both scale (-1, -1), which truncates to 0
    "WAIT",
    "```\nFAIL\n```",
]
STEPS = 7


REFERENCE_EPISODE = """
import base64, copy, sys, types
sys.modules["backoff"] = types.SimpleNamespace(on_exception=lambda *a, **k: (lambda f: f), constant=None)
stub(["google.api_core.exceptions", "requests", "requests.exceptions", "openai"])
agent_module = load("mm_agents.jedi_7b_agent")
requests, actions = [], []
replies_left = list(replies)

def call_llm(payload, model):
    requests.append(copy.deepcopy(payload))
    return replies_left.pop(0)

agent = agent_module.JediAgent7B()
agent.call_llm = call_llm
agent.reset()
for shot in shots:
    _, acts = agent.predict(instruction, {"screenshot": base64.b64decode(shot)})
    actions.append(acts)
result = {"requests": requests, "actions": actions}
"""


def reference_episode(reference: Reference) -> dict[str, Any]:
    shots = [base64.b64encode(screen(i)).decode() for i in range(1, STEPS + 1)]
    code = f"instruction = {INSTRUCTION!r}\nshots = {shots!r}\nreplies = {REPLIES!r}\n" + REFERENCE_EPISODE
    return reference.exec(code)  # type: ignore[no-any-return]


async def run_ours() -> tuple[list[Any], list[dict[str, Any]]]:
    with FakeOpenAIServer(models=["gpt-4o", "jedi-7b"]) as server:
        server.queue(*REPLIES)
        profile = settings_for(server, "jedi-7b", model="gpt-4o").resolve_profile("p")
        agent = JediAgent(profile, api_key="sk-test")
        assert agent.prompt_info["faithful"], agent.prompt_info
        predictions = await play(agent, INSTRUCTION, observations(STEPS), errors=True)
        return predictions, [r.json for r in server.chat_requests]


async def test_requests_and_actions_match_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    theirs = reference_episode(upstream)
    predictions, requests = await run_ours()
    assert [r["model"] for r in requests] == [r["model"] for r in theirs["requests"]]
    assert_same_requests(requests, theirs["requests"])
    assert [r["model"] for r in requests[:2]] == ["gpt-4o", "jedi-7b"]
    ours = [p.actions for p in predictions]
    assert "(, [])" in theirs["actions"][BROKEN][0] and ours[BROKEN] == []
    assert "no tool call" in (predictions[BROKEN].error or "")
    assert_same_actions(
        [a for i, a in enumerate(ours) if i != BROKEN],
        [a for i, a in enumerate(theirs["actions"]) if i != BROKEN],
    )
    # 1932x1092 is the grounder's frame of a 1920x1080 screen.
    assert ours[0] == [Click(x=49, y=29)]
    assert ours[1][0] == Click(x=960, y=540) and Typing(text="report.odt") in ours[1]
    assert ours[2] == [Hotkey(keys=["ctrl", "s"])] and len(predictions[2].attempts) == 1
    assert ours[4] == [Click(x=0, y=0), Done()]
    assert ours[5] == [Wait()] and ours[6] == [Fail()]
    # The last request shows the oldest step by its caption, the newer five by their screenshots.
    last = requests[-1]["messages"]
    assert last[1]["content"] == [{"type": "text", "text": "Observation: A text editor."}]
    assert "Thought:\nOpen the File menu.\nAction:\n['" in last[2]["content"][0]["text"]
    assert (
        requests[0]["temperature"] == 0.5
        and requests[0]["top_p"] == 0.9
        and requests[0]["max_tokens"] == 1500
    )


def test_planner_code_and_grounder_points() -> None:
    assert planner_codes("DONE") == ["DONE"]
    assert planner_codes("```python\npyautogui.click(1, 2)\nWAIT\n```") == ["pyautogui.click(1, 2)", "WAIT"]
    assert planner_codes("no code") == []
    assert grounded_point(grounding(966, 546), (1920, 1080), (1932, 1092)) == (960, 540)
    assert (
        grounded_point(
            "\u2697" + json.dumps({"arguments": {"coordinate": [-1, -1]}}) + "\u2697",
            (1932, 1092),
            (1932, 1092),
        )
        is None
    )


def test_the_preset_names_both_endpoints_and_a_grounder_section_overrides_field_by_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)
    settings = Settings.model_validate(
        {
            "model_provider": {"base_url": "http://127.0.0.1:8000/v1", "model": "gpt-4o"},
            "evaluation": {"reference_osworld": str(UPSTREAM)},
            "profiles": {
                "jedi": {
                    "preset": "jedi-7b",
                    "grounder": {"base_url": "http://127.0.0.1:8001/v1", "api_key_env": "JEDI_KEY"},
                }
            },
        }
    )
    profile = settings.resolve_profile("jedi")
    assert profile.agent == "jedi" and profile.model == "gpt-4o"
    assert profile.grounder is not None
    assert (profile.grounder.base_url, profile.grounder.model, profile.grounder.api_key_env) == (
        "http://127.0.0.1:8001/v1",
        "jedi-7b",
        "JEDI_KEY",
    )
    assert faithfulness(profile).faithful is True
    again = Settings.model_validate(settings.model_dump(mode="json")).resolve_profile("jedi")
    assert again.grounder == profile.grounder  # a saved settings file names the grounder's unset fields


def test_a_step_not_planned_by_the_agent_is_shown_by_its_reply_words() -> None:
    settings = Settings.model_validate(
        {
            "model_provider": {"base_url": "http://127.0.0.1:9/v1", "model": "gpt-4o", "max_retries": 0},
            "profiles": {"p": {"preset": "jedi-7b", "prompts": "own"}},
        }
    )
    agent = JediAgent(settings.resolve_profile("p"))
    agent.reset()
    agent.record(StepRecord(index=1, response=plan("A dialog.", "Close it.", "pyautogui.press('esc')")))
    observation = observations(1)[0]
    image = prepare_image(observation.screenshot, size=None, fmt="png")
    messages, _ = agent.build_messages(INSTRUCTION, observation, image)
    assert messages[2]["content"][0]["text"] == "Thought:\nClose it.\nAction:\n[]"
