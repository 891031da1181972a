"""Differential tests: our ``uitars15v2`` agent against OSWorld's ``mm_agents/uitars15_v2.py`` UITarsAgent.

The reference is loaded from OSWorld's code at the tasks' commit (``../shared/osworld/upstream/``) with
the defaults of ``scripts/python/run_multienv_uitars15_v2.py`` (model type doubao, temperature 0, no
top_p, 3000 tokens, no thinking, language Chinese, five images); the ``requests.post`` its inference makes
is replaced by a recorder of the payload, so its own ``predict`` runs unchanged. Ours runs the
``uitars-1.5-v2`` preset with its prompt read from the same code. Requests must be equal (see
:mod:`tests.parity.episodes`: messages, images, history, sampling, the re-ask after a reply that cannot
be read) and the actions too (compared as in ``test_agents_uitars.py``).

Deliberate differences: it posts ``"top_p": null`` and ``"thinking": {"type": "disabled"}`` (fields of
the Doubao API it was written for) where we send no top_p and no thinking field, which an
OpenAI-compatible server reads alike; it maps thousandths onto a fixed 1920x1080 frame, where we map them
onto the screen (the same on OSWorld's 1920x1080 screen, the only size compared); its ``DONE`` / ``WAIT``
words where we keep a finish's content and a wait's length.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from osw_studio.agent.faithful import faithfulness
from osw_studio.agent.uitars15v2 import UITars15V2Agent
from osw_studio.core.actions import Click, Fail
from osw_studio.settings import Settings
from tests.parity.conftest import UPSTREAM
from tests.parity.episodes import assert_same_requests, observations, run_ours, screen
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import assert_same_actions

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."
UNREADABLE = "我不确定下一步。"
"""A reply with no ``Action:``: both ask again with the same request."""
REPLIES = [  # thousandths of the screen
    "Thought: 点击文件菜单。\nAction: click(point='<point>500 500</point>')",
    UNREADABLE,
    "Thought: 输入文件名。\nAction: type(content='report.odt')",
    "Thought: 保存。\nAction: hotkey(key='ctrl s')",
    "Thought: 向下滚动。\nAction: scroll(point='<point>400 600</point>', direction='down')",
    "Thought: 打开文件。\nAction: left_double(point='<point>999 3</point>')",
    "Thought: 打开菜单。\nAction: right_single(point='<point>250 700</point>')",
    "Thought: 拖动滑块。\nAction: drag(start_point='<point>100 200</point>', "
    "end_point='<point>300 200</point>')",
    "Thought: 等待对话框。\nAction: wait()",
    "Thought: 完成了。\nAction: finished(content='已保存')",
]
STEPS = len(REPLIES) - 1  # the unreadable reply is asked again within its step
RUN_SCRIPT = {
    "model_type": "doubao",
    "max_tokens": 3000,
    "top_p": None,
    "temperature": 0,
    "max_trajectory_length": None,
    "max_image_history_length": 5,
    "use_thinking": False,
    "language": "Chinese",
}

REFERENCE_EPISODE = """
import base64, copy, logging, os, types
agent_module = load("mm_agents.uitars15_v2")
os.environ["DOUBAO_API_KEY"], os.environ["DOUBAO_API_URL"] = "sk-test", "http://127.0.0.1:9/v1"
requests, actions = [], []
replies_left = list(replies)

def post(url, headers=None, json=None):
    requests.append(copy.deepcopy(json))
    body = {"choices": [{"message": {"content": replies_left.pop(0)}}]}
    return types.SimpleNamespace(status_code=200, json=lambda: body, text="")

agent_module.requests = types.SimpleNamespace(post=post)
agent = agent_module.UITarsAgent(model=model, **run_script)
agent.logger = logging.getLogger("reference")  # loguru's logger, which the worker stubs, is kept at init
agent.reset()
for shot in shots:
    _, code = agent.predict(instruction, {"screenshot": base64.b64decode(shot)})
    actions.append(code)
result = {"requests": requests, "actions": actions}
"""


def reference_episode(
    reference: Reference, size: tuple[int, int], replies: list[str], steps: int
) -> dict[str, Any]:
    shots = [base64.b64encode(screen(i, size)).decode() for i in range(1, steps + 1)]
    code = (
        f"model = 'ui-tars-1.5-7b'\nrun_script = {RUN_SCRIPT!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nreplies = {replies!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code)  # type: ignore[no-any-return]


def without_null_top_p(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference's payloads without the ``"top_p": null`` it posts (see the module docs)."""
    return [{k: v for k, v in r.items() if not (k == "top_p" and v is None)} for r in requests]


async def test_requests_and_actions_match_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    theirs = reference_episode(upstream, (1920, 1080), REPLIES, STEPS)
    predictions, requests = await run_ours(
        UITars15V2Agent, "ui-tars-1.5-7b", "uitars-1.5-v2", INSTRUCTION, REPLIES, observations(STEPS)
    )
    assert len(requests) == len(REPLIES)  # one step asked twice
    assert requests[1]["messages"] == requests[2]["messages"]
    assert_same_requests(requests, without_null_top_p(theirs["requests"]))
    assert [sum("image_url" in str(m) for m in r["messages"]) for r in requests] == [
        1,
        2,
        2,
        3,
        4,
        5,
        5,
        5,
        5,
        5,
    ]
    assert requests[0]["messages"][0]["role"] == "user"  # no system message
    assert (
        "top_p" not in requests[0] and requests[0]["temperature"] == 0.0 and requests[0]["max_tokens"] == 3000
    )
    ours = [p.actions for p in predictions]
    assert_same_actions(ours, theirs["actions"])
    assert ours[0] == [Click(x=960, y=540)]


async def test_three_unreadable_replies_fail_the_task_as_the_reference(
    upstream: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    replies = [REPLIES[0], UNREADABLE, UNREADABLE, UNREADABLE]
    theirs = reference_episode(upstream, (1920, 1080), replies, 2)
    predictions, requests = await run_ours(
        UITars15V2Agent, "ui-tars-1.5-7b", "uitars-1.5-v2", INSTRUCTION, replies, observations(2)
    )
    assert_same_requests(requests, without_null_top_p(theirs["requests"]))
    assert theirs["actions"][-1] == ["FAIL"]
    assert isinstance(predictions[-1].actions[-1], Fail)


def test_the_preset_is_faithful_with_an_osworld_checkout_though_top_p_has_a_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The agent section's top_p fills the profile, but the preset sends none, so it is not a change."""
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)
    settings = Settings.model_validate(
        {
            "evaluation": {"reference_osworld": str(UPSTREAM)},
            "profiles": {"v2": {"model": "ui-tars-1.5-7b", "preset": "uitars-1.5-v2"}},
        }
    )
    profile = settings.resolve_profile("v2")
    assert (profile.agent, profile.coordinate_mode, profile.parse_tries) == ("uitars15v2", "rel1000", 3)
    assert faithfulness(profile).faithful is True
